package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// Brokers returns the IDs of the cluster's brokers, sorted, as
// DescribeCluster lists them: the brokers a topic's replicas can be placed
// on. Errors: the context's error, or a Kafka or connection error after
// retries.
func (r *Client) Brokers(ctx context.Context) ([]int32, error) {
	var ids []int32
	err := r.do(ctx, "brokers", func(s *session) error {
		return r.retry(ctx, "describe cluster", func(int) error {
			if _, err := s.describeCluster(false); err != nil {
				return err
			}
			ids = ids[:0]
			for id := range s.nodes {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return nil
		})
	})
	return ids, err
}

// TopicLayout is how a topic is laid out on its cluster.
type TopicLayout struct {
	Partitions int32
	// ReplicationFactor is the number of replicas of its partitions: the
	// smallest, should they differ.
	ReplicationFactor int
}

// TopicLayouts returns the partition count and replication factor of each
// named topic that exists; topics that do not exist are absent from the
// result. Errors: an [*ArgumentError] for an empty list or name, the
// context's error, or a Kafka or connection error after retries.
func (r *Client) TopicLayouts(ctx context.Context, names ...string) (map[string]TopicLayout, error) {
	if err := checkTopicNames("TopicLayouts", names); err != nil {
		return nil, err
	}
	var out map[string]TopicLayout
	err := r.do(ctx, "topic layouts", func(s *session) error {
		return r.retry(ctx, "metadata", func(attempt int) error {
			resp, err := s.metadataFresh(dedupe(names), attempt > 1)
			if err != nil {
				return err
			}
			out = make(map[string]TopicLayout, len(names))
			for _, t := range resp.Topics {
				switch err := kerr(t.Err); {
				case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
					continue
				case err != nil:
					return fmt.Errorf("topic %s: %w", t.Name, err)
				}
				l := TopicLayout{Partitions: int32(len(t.Partitions))}
				for i, p := range t.Partitions {
					if n := len(p.Replicas); i == 0 || n < l.ReplicationFactor {
						l.ReplicationFactor = n
					}
				}
				out[t.Name] = l
			}
			return nil
		})
	})
	return out, err
}

// WithBootstrap returns a Client with the same settings (security, TLS,
// credentials, timeouts) that contacts the cluster at other addresses: to
// ask which cluster another configuration's bootstrap servers reach.
// Errors: a [*ConfigError] for an empty list.
func (r *Client) WithBootstrap(servers []string) (*Client, error) {
	cfg := r.cfg
	cfg.BootstrapServers = slices.Clone(servers)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, tls: r.tls, tokens: r.tokens, krb: r.krb, log: r.log, meter: r.meter, answered: new(atomic.Bool)}, nil // counted with r
}
