package kafkaadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// TargetCheck is the check of one source topic against its target topic.
type TargetCheck struct {
	Source           string
	SourcePartitions int32
	Target           string
	// Exists reports whether the target topic exists.
	Exists bool
	// TargetPartitions is the target's partition count when it exists.
	TargetPartitions int32
}

// OK reports whether the target exists with the source's partition count,
// so that partition p of the source is replicated to partition p of the
// target.
func (c TargetCheck) OK() bool {
	return c.Exists && c.TargetPartitions == c.SourcePartitions
}

// Problem describes what is wrong, or "" when OK.
func (c TargetCheck) Problem() string {
	switch {
	case !c.Exists:
		return fmt.Sprintf("target topic %s for source topic %s does not exist", c.Target, c.Source)
	case c.TargetPartitions != c.SourcePartitions:
		return fmt.Sprintf("target topic %s has %d partitions, source topic %s has %d", c.Target, c.TargetPartitions, c.Source, c.SourcePartitions)
	}
	return ""
}

// CheckTargets compares source topics with the target cluster's topics
// under the policy, one check per source topic in sorted order. It is
// pure. Errors: the policy's Validate (offsets.ErrInvalidPolicy).
func CheckTargets(source, target Topics, policy offsets.ReplicationPolicy) ([]TargetCheck, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	out := make([]TargetCheck, 0, len(source))
	for _, name := range source.Names() {
		tname, _ := policy.TargetTopic(name)
		n, ok := target[tname]
		out = append(out, TargetCheck{
			Source: name, SourcePartitions: source[name],
			Target: tname, Exists: ok, TargetPartitions: n,
		})
	}
	return out, nil
}

// CheckTargets reads, from the cluster this Client is configured for (the
// target), the topics the policy maps the source topics to, and checks
// that each exists with the source's partition count. A missing target is
// a failed check, not an error. Errors: the policy's Validate error, the
// context's error, or a Kafka or connection error after retries.
func (r *Client) CheckTargets(ctx context.Context, source Topics, policy offsets.ReplicationPolicy) ([]TargetCheck, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if len(source) == 0 {
		return nil, &ArgumentError{Op: "CheckTargets", Reason: "no source topics"}
	}
	names := make([]string, 0, len(source))
	for _, n := range source.Names() {
		t, _ := policy.TargetTopic(n)
		names = append(names, t)
	}
	target := make(Topics)
	err := r.do(ctx, "check targets", func(s *session) error {
		return r.retry(ctx, "metadata", func(attempt int) error {
			resp, err := s.metadataFresh(names, attempt > 1)
			if err != nil {
				return err
			}
			for _, t := range resp.Topics {
				switch err := kerr(t.Err); {
				case err == nil:
					target[t.Name] = int32(len(t.Partitions))
				case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
				default:
					return fmt.Errorf("topic %s: %w", t.Name, err)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return CheckTargets(source, target, policy)
}
