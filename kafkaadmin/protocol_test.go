package kafkaadmin

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// classicOnlyVersion is the Kafka version of TestSandboxGroupsOnKafka37:
// the oldest the cutover admits, whose brokers speak only the classic group
// protocol by default.
const classicOnlyVersion = "3.7.2"

// waitGroup describes the group until done says it is as wanted, or fails
// the test after a minute with the last description.
func waitGroup(ctx context.Context, t *testing.T, r *Client, group string, done func(Group) bool) Group {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last Group
	var err error
	for {
		if last, err = r.DescribeGroup(ctx, group); err == nil && done(last) {
			return last
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s: last described %+v, %v", group, last, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestSandboxConsumerProtocolMember: a real Java KafkaConsumer with
// group.protocol=consumer (KIP-848) holds the partitions of the old job's
// group, which already holds Flink-style commits. DescribeGroup finds it
// (before, the classic DescribeGroups answered GROUP_ID_NOT_FOUND, read as
// Dead with no members), CommitOffsets refuses to write over it, and once
// it left the group is Empty and a rollback's commit goes through.
func TestSandboxConsumerProtocolMember(t *testing.T) {
	sb := sandboxtest.Shared(t)
	if major, _ := strconv.Atoi(strings.Split(sb.KafkaVersion(), ".")[0]); major < 4 {
		t.Skipf("Kafka %s: the consumer protocol is GA from 4.0 (TestSandboxGroupsOnKafka37 covers 3.7)", sb.KafkaVersion())
	}
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	topic, group := uniq(t, "t"), uniq(t, "g")
	createTopic(t, a, bs, topic, 3)
	produce(t, bs, topic, 0, 5)
	flinkCommit(t, bs, group, map[TopicPartition]int64{tp(topic, 0): 5, tp(topic, 1): 0, tp(topic, 2): 0})
	ctx := testCtx(t)
	r := newTestClient(t, bs)
	if g, err := r.DescribeGroup(ctx, group); err != nil || g.State != GroupEmpty || g.Active() {
		t.Fatalf("the old job's group before the member: %+v, %v; want Empty", g, err)
	}

	c, err := sb.StartJavaConsumer(ctx, sandbox.JavaConsumerConfig{Group: group, Topic: topic, Protocol: "consumer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	g := waitGroup(ctx, t, r, group, func(g Group) bool { return g.Active() })
	if g.Type != GroupTypeConsumer || len(g.Members) != 1 || g.Members[0].ClientID != "mm2cutover-java-consumer" {
		t.Errorf("group with a consumer-protocol member = %+v; want type consumer, the one member", g)
	}
	err = r.CommitOffsets(ctx, group, map[TopicPartition]int64{tp(topic, 0): 2})
	var ge *GroupActiveError
	if !errors.As(err, &ge) || ge.Members != 1 {
		t.Errorf("CommitOffsets with a consumer-protocol member = %v, want a *GroupActiveError naming one member", err)
	}
	if got, err := r.GroupOffsets(ctx, group, []string{topic}); err != nil || got[tp(topic, 0)] != 5 {
		t.Errorf("the refused commit wrote: %v, %v", got, err)
	}

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	g = waitGroup(ctx, t, r, group, func(g Group) bool { return !g.Active() })
	if g.State != GroupEmpty {
		t.Errorf("after the member left: %+v, want Empty", g)
	}
	if err := r.CommitOffsets(ctx, group, map[TopicPartition]int64{tp(topic, 0): 2}); err != nil {
		t.Errorf("CommitOffsets once the member left: %v", err)
	}
}

// TestSandboxGroupsOnKafka37 runs on Kafka 3.7, whose brokers do not
// advertise ConsumerGroupDescribe by default: a classic member is still
// found (DescribeGroups), a group that does not exist is still Dead, and
// a Flink-style group is still Empty, each without an error.
func TestSandboxGroupsOnKafka37(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{KafkaVersion: classicOnlyVersion})
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	topic, group, flink := uniq(t, "t"), uniq(t, "g"), uniq(t, "flink")
	createTopic(t, a, bs, topic, 2)
	produce(t, bs, topic, 0, 5)
	ctx := testCtx(t)
	r := newTestClient(t, bs)

	if g, err := r.DescribeGroup(ctx, uniq(t, "none")); err != nil || g.State != GroupDead || g.Active() {
		t.Errorf("a group that does not exist: %+v, %v; want Dead", g, err)
	}
	flinkCommit(t, bs, flink, map[TopicPartition]int64{tp(topic, 0): 5, tp(topic, 1): 0})
	if g, err := r.DescribeGroup(ctx, flink); err != nil || g.State != GroupEmpty || g.Type != GroupTypeClassic {
		t.Errorf("a Flink-style group: %+v, %v; want Empty, classic", g, err)
	}

	// The consumer protocol's request, asked directly: no such group, and
	// no error, whether the broker advertises the request or not.
	err := r.do(ctx, "describe consumer group", func(s *session) error {
		c, err := s.coordinator(flink)
		if err != nil {
			return err
		}
		g, found, err := s.describeConsumerGroup(c, flink)
		if found {
			t.Errorf("ConsumerGroupDescribe on Kafka %s found %+v", sb.KafkaVersion(), g)
		}
		return err
	})
	if err != nil {
		t.Errorf("ConsumerGroupDescribe on Kafka %s: %v, want no error", sb.KafkaVersion(), err)
	}

	conf := clusterSarama(bs)
	cg, err := sarama.NewConsumerGroup([]string{bs}, group, conf)
	if err != nil {
		t.Fatal(err)
	}
	h := nopHandler{joined: make(chan struct{}, 1)}
	cctx, stop := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for cctx.Err() == nil {
			_ = cg.Consume(cctx, []string{topic}, h)
		}
	}()
	defer func() { stop(); <-consumed; cg.Close() }()
	select {
	case <-h.joined:
	case <-time.After(time.Minute):
		t.Fatal("the classic consumer never joined")
	}
	g := waitGroup(ctx, t, r, group, func(g Group) bool { return g.Active() })
	if g.State != GroupStable || g.Type != GroupTypeClassic || g.ProtocolType != "consumer" || len(g.Members) != 1 {
		t.Errorf("a classic member on Kafka %s: %+v; want Stable, classic, one member", sb.KafkaVersion(), g)
	}
	var ge *GroupActiveError
	if err := r.CommitOffsets(ctx, group, map[TopicPartition]int64{tp(topic, 0): 2}); !errors.As(err, &ge) {
		t.Errorf("CommitOffsets with a classic member on Kafka %s = %v, want a *GroupActiveError", sb.KafkaVersion(), err)
	}
}
