package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// coordinator returns the group's coordinator, finding it if needed.
func (s *session) coordinator(group string) (*sarama.Broker, error) {
	if b := s.coord[group]; b != nil {
		if ok, _ := b.Connected(); ok {
			return b, nil
		}
	}
	if s.pool != nil {
		s.pool.finding.Lock()
		defer s.pool.finding.Unlock()
		if addr := s.pool.cachedCoordinator(group); addr != "" {
			if c, err := s.broker(addr); err == nil {
				return c, nil
			}
			s.pool.setCoordinator(group, "")
		}
	}
	b, err := s.any()
	if err != nil {
		return nil, err
	}
	resp, err := b.FindCoordinator(&sarama.FindCoordinatorRequest{
		Version:         2,
		CoordinatorKey:  group,
		CoordinatorType: sarama.CoordinatorGroup,
	})
	if err != nil {
		s.transportFailed(b)
		return nil, err
	}
	if err := kerr(resp.Err); err != nil {
		return nil, err
	}
	if resp.Coordinator == nil {
		return nil, sarama.ErrConsumerCoordinatorNotAvailable
	}
	c, err := s.broker(resp.Coordinator.Addr())
	if err != nil {
		return nil, err
	}
	if s.coord == nil {
		s.coord = make(map[string]*sarama.Broker)
	}
	s.coord[group] = c
	if s.pool != nil {
		s.pool.setCoordinator(group, c.Addr())
	}
	return c, nil
}

// coordinatorFailed reacts to an error from the group's coordinator: a
// transport error or a coordinator error means finding it again.
func (s *session) coordinatorFailed(group string, b *sarama.Broker, err error) {
	if errors.Is(err, sarama.ErrNotCoordinatorForConsumer) || errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) {
		s.forgetCoordinator(group)
		return
	}
	var k sarama.KError
	if !errors.As(err, &k) {
		s.transportFailed(b)
		s.forgetCoordinator(group)
	}
}

// forgetCoordinator makes the next request to the group's coordinator find
// it again.
func (s *session) forgetCoordinator(group string) {
	delete(s.coord, group)
	if s.pool != nil {
		s.pool.setCoordinator(group, "")
	}
}

// groupOffsets reads the group's commits for the partitions with one
// OffsetFetch request to the coordinator. It returns the commits read and,
// for the partitions whose commit could not be read, a [*PartitionErrors].
func (s *session) groupOffsets(group string, parts []TopicPartition) (offsets.GroupOffsets, error) {
	var out offsets.GroupOffsets
	var errs map[TopicPartition]error
	byTopic := make(map[string][]int32)
	for _, tp := range parts {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	err := s.r.retry(s.ctx, "offset fetch", func(int) error {
		c, err := s.coordinator(group)
		if err != nil {
			return err
		}
		resp, err := c.FetchOffset(sarama.NewOffsetFetchRequest(s.conf.Version, group, byTopic))
		if err == nil {
			err = kerr(resp.GroupError())
		}
		if err != nil {
			s.coordinatorFailed(group, c, err)
			return err
		}
		out = make(offsets.GroupOffsets, len(parts))
		errs = make(map[TopicPartition]error)
		for _, tp := range parts {
			b := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case b == nil:
				errs[tp] = sarama.ErrIncompleteResponse
			case kerr(b.Err) != nil:
				errs[tp] = b.Err
			case b.Offset >= 0: // -1 means no commit
				out[tp] = b.Offset
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, partitionErrors("GroupOffsets", len(parts), errs)
}

// GroupOffsets reads the group's committed offsets for every partition of
// the named topics, with one OffsetFetch request to the group
// coordinator. A partition without a commit is absent from the result; it
// is never reported as -1. The commit's metadata string is not returned.
//
// Errors: an [*ArgumentError] for an empty group or topic list, an
// [*UnknownTopicsError], a [*PartitionErrors] (with the commits read) when
// some partitions could not be read, the context's error, or a Kafka or
// connection error after retries (for example
// sarama.ErrGroupAuthorizationFailed).
func (r *Client) GroupOffsets(ctx context.Context, group string, topics []string) (offsets.GroupOffsets, error) {
	if group == "" {
		return nil, &ArgumentError{Op: "GroupOffsets", Reason: "empty group"}
	}
	if err := checkTopicNames("GroupOffsets", topics); err != nil {
		return nil, err
	}
	var out offsets.GroupOffsets
	err := r.do(ctx, "group offsets", func(s *session) error {
		t, err := s.topics(dedupe(topics))
		if err != nil {
			return err
		}
		out, err = s.groupOffsets(group, t.Partitions())
		return err
	})
	var pe *PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return nil, err
	}
	return out, err
}

func (s *session) describeGroup(group string) (Group, error) {
	var out Group
	err := s.r.retry(s.ctx, "describe group", func(int) error {
		c, err := s.coordinator(group)
		if err != nil {
			return err
		}
		resp, err := c.DescribeGroups(&sarama.DescribeGroupsRequest{Version: 5, Groups: []string{group}})
		if err == nil && len(resp.Groups) != 1 {
			err = sarama.ErrIncompleteResponse
		}
		if err != nil {
			s.coordinatorFailed(group, c, err)
			return err
		}
		if out, err = classicGroup(group, resp.Groups[0]); err != nil {
			s.coordinatorFailed(group, c, err)
			return err
		}
		if out.State != GroupDead {
			return nil
		}
		// No classic group of that ID: it may be a group of the consumer
		// protocol, which DescribeGroups does not show (a 4.x coordinator
		// answers Dead or GROUP_ID_NOT_FOUND for it).
		g, found, err := s.describeConsumerGroup(c, group)
		if err != nil {
			return err
		}
		if found {
			out = g
		}
		return nil
	})
	return out, err
}

// classicGroup reads one group of a DescribeGroups answer. A group that
// does not exist (state Dead, or GROUP_ID_NOT_FOUND from a coordinator that
// also runs the consumer protocol) is Dead, with no type and no error.
func classicGroup(group string, d *sarama.GroupDescription) (Group, error) {
	switch err := kerr(d.Err); {
	case err == nil:
	case errors.Is(err, sarama.ErrGroupIDNotFound):
		return Group{ID: group, State: GroupDead}, nil
	default:
		return Group{}, err
	}
	if GroupState(d.State) == GroupDead {
		return Group{ID: group, State: GroupDead}, nil
	}
	out := Group{ID: group, State: GroupState(d.State), Type: GroupTypeClassic, ProtocolType: d.ProtocolType, Protocol: d.Protocol}
	for _, m := range d.Members {
		mem := Member{ID: m.MemberId, ClientID: m.ClientId, ClientHost: m.ClientHost, Metadata: m.MemberMetadata}
		if m.GroupInstanceId != nil {
			mem.InstanceID = *m.GroupInstanceId
		}
		out.Members = append(out.Members, mem)
	}
	slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// consumerGroupVersion is the Kafka version a connection must be opened
// with for sarama to send ConsumerGroupDescribe; the version actually sent
// is the highest the broker advertises in its ApiVersions answer.
var consumerGroupVersion = sarama.V4_0_0_0

// describeConsumerGroup asks the coordinator c for the group with
// ConsumerGroupDescribe (KIP-848), over a connection of its own (the
// session's connections speak the older protocol version that every
// request here starts from). found is false when the coordinator does not
// support the request — it advertises no ConsumerGroupDescribe in its
// ApiVersions answer (Kafka 3.7 to 3.9 by default) or answers
// UNSUPPORTED_VERSION — or has no consumer-protocol group of that ID.
func (s *session) describeConsumerGroup(c *sarama.Broker, group string) (_ Group, found bool, _ error) {
	conf := *s.conf
	conf.Version = consumerGroupVersion
	b := sarama.NewBroker(c.Addr())
	if err := b.Open(&conf); err != nil {
		return Group{}, false, fmt.Errorf("connect to %s: %w", c.Addr(), err)
	}
	defer b.Close()
	resp, err := b.ConsumerGroupDescribe(&sarama.ConsumerGroupDescribeRequest{Version: 1, GroupIDs: []string{group}})
	if errors.Is(err, sarama.ErrUnsupportedVersion) {
		return Group{}, false, nil
	}
	if err == nil && len(resp.Groups) != 1 {
		err = sarama.ErrIncompleteResponse
	}
	if err != nil {
		var k sarama.KError
		if !errors.As(err, &k) {
			s.forgetCoordinator(group) // a transport error: find the coordinator again
		}
		return Group{}, false, err
	}
	g, found, err := consumerGroup(group, resp.Groups[0])
	if err != nil {
		s.coordinatorFailed(group, c, err)
	}
	return g, found, err
}

// consumerGroup reads one group of a ConsumerGroupDescribe answer: found
// is false for GROUP_ID_NOT_FOUND (no consumer-protocol group of that ID),
// for UNSUPPORTED_VERSION (a coordinator without the consumer protocol)
// and for a Dead group.
func consumerGroup(group string, d sarama.ConsumerGroupDescription) (_ Group, found bool, _ error) {
	switch err := kerr(d.ErrorCode); {
	case err == nil:
	case errors.Is(err, sarama.ErrGroupIDNotFound), errors.Is(err, sarama.ErrUnsupportedVersion):
		return Group{}, false, nil
	default:
		return Group{}, false, err
	}
	if GroupState(d.GroupState) == GroupDead {
		return Group{}, false, nil
	}
	out := Group{ID: group, State: GroupState(d.GroupState), Type: GroupTypeConsumer, ProtocolType: "consumer", Protocol: d.AssignorName}
	for _, m := range d.Members {
		mem := Member{ID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
		if m.InstanceID != nil {
			mem.InstanceID = *m.InstanceID
		}
		out.Members = append(out.Members, mem)
	}
	slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out, true, nil
}

// DescribeGroup returns the group's state, protocol and members, from its
// coordinator: a DescribeGroups request (the classic protocol), and, when
// that finds no classic group, a ConsumerGroupDescribe request where the
// coordinator supports it, so that members of the consumer protocol
// (KIP-848: clients with group.protocol=consumer, Kafka 4.0+) are found
// too. A coordinator that does not advertise ConsumerGroupDescribe (Kafka
// 3.7 to 3.9 by default) runs no such group, and the classic answer
// stands. A group that does not exist is reported with state Dead and no
// error.
//
// A Flink KafkaSource group is reported Empty, with protocol type "" and
// no members, even while the job runs: Flink assigns partitions itself and
// only commits offsets. An Empty group does not show that Flink stopped;
// use [Client.ReadCommitWindow] for that.
//
// Errors: an [*ArgumentError] for an empty group, the context's error, or
// a Kafka or connection error after retries.
func (r *Client) DescribeGroup(ctx context.Context, group string) (Group, error) {
	if group == "" {
		return Group{}, &ArgumentError{Op: "DescribeGroup", Reason: "empty group"}
	}
	var out Group
	err := r.do(ctx, "describe group", func(s *session) error {
		var err error
		out, err = s.describeGroup(group)
		return err
	})
	return out, err
}

// CommitOffsets writes committed offsets for the group, as a rollback
// does: each offset is the next offset the group will read. It commits
// outside any group generation (generation -1, no member ID), as Flink
// does, so it is refused while the group has members; the check is made
// first, and the broker enforces it again.
//
// Nothing is written when an argument is invalid, a topic or partition
// does not exist, or the group is active. Errors: an [*ArgumentError] (no
// offsets, an empty group, a negative offset or partition), an
// [*UnknownTopicsError] (also for a partition beyond the topic's count), a
// [*GroupActiveError], a [*PartitionErrors] when the coordinator refused
// some partitions, the context's error, or a Kafka or connection error
// after retries. Offsets are sent in requests of at most 1,000
// partitions, so the write is not atomic: after an error, some partitions
// may have been written. Writing the same offsets again is harmless, so
// the remedy is to call CommitOffsets again.
func (r *Client) CommitOffsets(ctx context.Context, group string, offsets map[TopicPartition]int64) error {
	if group == "" {
		return &ArgumentError{Op: "CommitOffsets", Reason: "empty group"}
	}
	if len(offsets) == 0 {
		return &ArgumentError{Op: "CommitOffsets", Reason: "no offsets"}
	}
	var topics []string
	for tp, off := range offsets {
		if tp.Topic == "" || tp.Partition < 0 || off < 0 {
			return &ArgumentError{Op: "CommitOffsets", Reason: fmt.Sprintf("bad entry %s=%d", tp, off)}
		}
		topics = append(topics, tp.Topic)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	return r.do(ctx, "commit offsets", func(s *session) error {
		g, err := s.describeGroup(group)
		if err != nil {
			return err
		}
		if g.Active() || (g.State != GroupEmpty && g.State != GroupDead) {
			return &GroupActiveError{Group: group, State: g.State, Members: len(g.Members)}
		}
		t, err := s.topics(topics)
		if err != nil {
			return err
		}
		var beyond []string
		for tp := range offsets {
			if tp.Partition >= t[tp.Topic] {
				beyond = append(beyond, tp.String())
			}
		}
		if len(beyond) > 0 {
			slices.Sort(beyond)
			return &UnknownTopicsError{Topics: beyond}
		}
		return s.commit(group, offsets)
	})
}

// commitChunk bounds the partitions per OffsetCommit request. The
// coordinator writes a request's commits as one record batch to
// __consumer_offsets, and a batch above the broker's max.message.bytes
// (1 MiB by default) fails as a whole: 10,000 partitions did in the
// sandbox. 1,000 commits stay well below it even with 249-byte topic names.
const commitChunk = 1000

func (s *session) commit(group string, offsets map[TopicPartition]int64) error {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	SortPartitions(tps)
	errs := make(map[TopicPartition]error)
	for chunk := range slices.Chunk(tps, commitChunk) {
		if err := s.commitChunk(group, chunk, offsets, errs); err != nil {
			return err
		}
	}
	return partitionErrors("CommitOffsets", len(offsets), errs)
}

func (s *session) commitChunk(group string, tps []TopicPartition, offsets map[TopicPartition]int64, errs map[TopicPartition]error) error {
	req := sarama.NewOffsetCommitRequest(s.conf, group) // generation -1, no member
	for _, tp := range tps {
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, offsets[tp], -1, 0, "")
	}
	return s.r.retry(s.ctx, "offset commit", func(int) error {
		c, err := s.coordinator(group)
		if err != nil {
			return err
		}
		resp, err := c.CommitOffset(req)
		if err != nil {
			s.coordinatorFailed(group, c, err)
			return err
		}
		for _, tp := range tps {
			delete(errs, tp)
		}
		for topic, parts := range resp.Errors {
			for p, k := range parts {
				err := kerr(k)
				switch {
				case err == nil:
					continue
				case errors.Is(err, sarama.ErrNotCoordinatorForConsumer), errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable), errors.Is(err, sarama.ErrOffsetsLoadInProgress):
					s.coordinatorFailed(group, c, err)
					return err
				case errors.Is(err, sarama.ErrUnknownMemberId), errors.Is(err, sarama.ErrIllegalGeneration), errors.Is(err, sarama.ErrRebalanceInProgress):
					return &GroupActiveError{Group: group, State: "unknown", Err: err}
				}
				errs[TopicPartition{Topic: topic, Partition: p}] = err
			}
		}
		return nil
	})
}
