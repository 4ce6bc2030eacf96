package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

// ConfigSource tells where a configuration's effective value comes from,
// as DescribeConfigs reports it (Kafka's ConfigSource).
type ConfigSource string

// The sources of an effective configuration value.
const (
	// ConfigFromTopic: the topic overrides it (kafka-configs --entity-type
	// topics).
	ConfigFromTopic ConfigSource = "topic"
	// ConfigFromDynamicBroker: set for this one broker with kafka-configs
	// --entity-type brokers --entity-name ID.
	ConfigFromDynamicBroker ConfigSource = "dynamic-broker"
	// ConfigFromDynamicDefaultBroker: set for every broker with
	// kafka-configs --entity-type brokers --entity-default.
	ConfigFromDynamicDefaultBroker ConfigSource = "dynamic-default-broker"
	// ConfigFromStaticBroker: the broker's server.properties.
	ConfigFromStaticBroker ConfigSource = "static-broker"
	// ConfigFromDefault: Kafka's default; nothing sets it.
	ConfigFromDefault ConfigSource = "default"
	// ConfigFromUnknown: the broker did not say.
	ConfigFromUnknown ConfigSource = "unknown"
)

func configSource(s sarama.ConfigSource) ConfigSource {
	switch s {
	case sarama.SourceTopic:
		return ConfigFromTopic
	case sarama.SourceDynamicBroker:
		return ConfigFromDynamicBroker
	case sarama.SourceDynamicDefaultBroker:
		return ConfigFromDynamicDefaultBroker
	case sarama.SourceStaticBroker:
		return ConfigFromStaticBroker
	case sarama.SourceDefault:
		return ConfigFromDefault
	}
	return ConfigFromUnknown
}

// ConfigValue is one configuration's effective value on a topic or broker.
type ConfigValue struct {
	// Value is the effective value. Kafka never returns a sensitive value
	// (a password): it is empty then, and Sensitive is true.
	Value     string       `json:"value"`
	Source    ConfigSource `json:"source"`
	Sensitive bool         `json:"sensitive,omitempty"`
}

// Configs are the effective configurations of one topic or broker, as
// DescribeConfigs returns them: values set on the resource, inherited from
// the brokers, or Kafka's defaults.
type Configs struct {
	// Values holds the configurations read, by name. A name the broker
	// does not know is absent.
	Values map[string]ConfigValue `json:"values,omitempty"`
	// Err is why the resource's configurations could not be read: for
	// example sarama.ErrTopicAuthorizationFailed (no DESCRIBE_CONFIGS on
	// the topic), sarama.ErrClusterAuthorizationFailed (no
	// DESCRIBE_CONFIGS on the cluster, for a broker), or
	// sarama.ErrUnknownTopicOrPartition. Values is nil then. encoding/json
	// skips it (an error has no JSON form).
	Err error `json:"-"`
}

// Int returns the named value as an integer, and whether it was read and
// is one.
func (c Configs) Int(name string) (int64, bool) {
	v, ok := c.Values[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

// TopicConfigs reads the named configurations of the named topics with
// one DescribeConfigs request, answered by any broker: each topic's
// effective values, including those it inherits from the brokers'
// settings and Kafka's defaults (Source says which). Only the named
// configurations are asked for, so no secret is ever read.
//
// A topic that could not be read has its Configs.Err set (an unknown topic
// gives sarama.ErrUnknownTopicOrPartition); transient errors are retried.
// Errors: an [*ArgumentError] for no topic or no name, the context's
// error, or a Kafka or connection error after retries.
func (r *Client) TopicConfigs(ctx context.Context, topics []string, names ...string) (map[string]Configs, error) {
	if err := checkTopicNames("TopicConfigs", topics); err != nil {
		return nil, err
	}
	if err := checkConfigNames("TopicConfigs", names); err != nil {
		return nil, err
	}
	topics = dedupe(topics)
	var out map[string]Configs
	err := r.do(ctx, "describe topic configs", func(s *session) error {
		return r.retry(ctx, "describe configs", func(int) error {
			b, err := s.any()
			if err != nil {
				return err
			}
			req := &sarama.DescribeConfigsRequest{Version: 4}
			for _, t := range topics {
				req.Resources = append(req.Resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: t, ConfigNames: names})
			}
			resp, err := b.DescribeConfigs(req)
			if err != nil {
				s.transportFailed(b)
				return err
			}
			got, err := configsOf(resp, sarama.TopicResource)
			if err != nil {
				return err
			}
			for _, t := range topics {
				if _, ok := got[t]; !ok {
					return fmt.Errorf("topic %s: %w", t, sarama.ErrIncompleteResponse)
				}
			}
			out = got
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BrokerConfigs reads the named configurations of every broker of the
// cluster: one DescribeConfigs request per broker, sent to that broker (a
// broker describes only its own configuration), all in parallel. The
// values are each broker's effective ones: set for it, set for all
// brokers, from its server.properties, or Kafka's defaults.
//
// A broker whose configurations could not be read has its Configs.Err set
// (sarama.ErrClusterAuthorizationFailed without DESCRIBE_CONFIGS on the
// cluster); transient errors are retried. Errors: an [*ArgumentError] for
// no name, the context's error, or a Kafka or connection error after
// retries.
func (r *Client) BrokerConfigs(ctx context.Context, names ...string) (map[int32]Configs, error) {
	if err := checkConfigNames("BrokerConfigs", names); err != nil {
		return nil, err
	}
	out := make(map[int32]Configs)
	err := r.do(ctx, "describe broker configs", func(s *session) error {
		if err := r.retry(ctx, "describe cluster", func(int) error {
			_, err := s.describeCluster(false)
			return err
		}); err != nil {
			return err
		}
		return r.retry(ctx, "describe configs", func(int) error {
			var pending []int32
			for id := range s.nodes {
				if _, done := out[id]; !done {
					pending = append(pending, id)
				}
			}
			slices.Sort(pending)
			type result struct {
				broker *sarama.Broker
				got    Configs
				err    error
			}
			results := make([]result, len(pending))
			var wg sync.WaitGroup
			for i, id := range pending {
				b, err := s.node(id)
				if err != nil {
					results[i].err = err
					continue
				}
				results[i].broker = b
				wg.Go(func() { results[i].got, results[i].err = brokerConfigs(b, id, names) })
			}
			wg.Wait()
			var errs []error
			for i, id := range pending {
				if results[i].err != nil {
					var k sarama.KError
					if results[i].broker != nil && !errors.As(results[i].err, &k) {
						s.transportFailed(results[i].broker)
					}
					errs = append(errs, fmt.Errorf("broker %d: %w", id, results[i].err))
					continue
				}
				out[id] = results[i].got
			}
			return errors.Join(errs...)
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// brokerConfigs asks broker id, over b, for its own configurations. A
// resource error is returned in the Configs unless it is transient.
func brokerConfigs(b *sarama.Broker, id int32, names []string) (Configs, error) {
	name := strconv.Itoa(int(id))
	resp, err := b.DescribeConfigs(&sarama.DescribeConfigsRequest{Version: 4, Resources: []*sarama.ConfigResource{
		{Type: sarama.BrokerResource, Name: name, ConfigNames: names},
	}})
	if err != nil {
		return Configs{}, err
	}
	got, err := configsOf(resp, sarama.BrokerResource)
	if err != nil {
		return Configs{}, err
	}
	c, ok := got[name]
	if !ok {
		return Configs{}, sarama.ErrIncompleteResponse
	}
	return c, nil
}

// configsOf turns a DescribeConfigs response into Configs by resource
// name. A transient resource error fails the whole response (it is
// retried); any other is kept in that resource's Configs.
func configsOf(resp *sarama.DescribeConfigsResponse, typ sarama.ConfigResourceType) (map[string]Configs, error) {
	out := make(map[string]Configs, len(resp.Resources))
	for _, res := range resp.Resources {
		if res.Type != typ {
			continue
		}
		if err := kerr(sarama.KError(res.ErrorCode)); err != nil {
			if retriable(err) && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				return nil, fmt.Errorf("%s: %w", res.Name, err)
			}
			if res.ErrorMsg != "" {
				err = &sarama.DescribeConfigError{Err: sarama.KError(res.ErrorCode), ErrMsg: res.ErrorMsg}
			}
			out[res.Name] = Configs{Err: err}
			continue
		}
		c := Configs{Values: make(map[string]ConfigValue, len(res.Configs))}
		for _, e := range res.Configs {
			v := ConfigValue{Value: e.Value, Source: configSource(e.Source), Sensitive: e.Sensitive}
			if e.Sensitive {
				v.Value = ""
			}
			c.Values[e.Name] = v
		}
		out[res.Name] = c
	}
	return out, nil
}

func checkConfigNames(op string, names []string) error {
	if len(names) == 0 {
		return &ArgumentError{Op: op, Reason: "no configuration names"}
	}
	for _, n := range names {
		if n == "" {
			return &ArgumentError{Op: op, Reason: "empty configuration name"}
		}
	}
	return nil
}

// describeCluster sends one DescribeCluster request (Kafka 2.8 or later)
// and records the brokers' addresses. With includeOps it asks for the
// operations the principal may perform on the cluster. A step client asks
// for them always, and answers every call of the step from its first
// answer (for StepMetadataAge, as the metadata).
func (s *session) describeCluster(includeOps bool) (*sarama.DescribeClusterResponse, error) {
	var resp *sarama.DescribeClusterResponse
	if p := s.pool; p != nil {
		p.dc.Lock()
		defer p.dc.Unlock()
		if p.cluster != nil && time.Since(p.clusterAt) < StepMetadataAge {
			resp = p.cluster
		}
		includeOps = true
	}
	if resp == nil {
		at := time.Now()
		b, err := s.any()
		if err != nil {
			return nil, err
		}
		resp, err = b.DescribeCluster(&sarama.DescribeClusterRequest{Version: 0, IncludeClusterAuthorizedOperations: includeOps})
		if err != nil {
			if !errors.Is(err, sarama.ErrUnsupportedVersion) {
				s.transportFailed(b)
			}
			return nil, err
		}
		if err := kerr(resp.Err); err != nil {
			return nil, err
		}
		if len(resp.Brokers) == 0 {
			return nil, sarama.ErrBrokerNotAvailable
		}
		if s.pool != nil {
			s.pool.cluster, s.pool.clusterAt = resp, at
		}
	}
	s.nodes = make(map[int32]string, len(resp.Brokers))
	for _, nb := range resp.Brokers {
		s.nodes[nb.BrokerID] = net.JoinHostPort(nb.Host, strconv.Itoa(int(nb.Port)))
	}
	return resp, nil
}
