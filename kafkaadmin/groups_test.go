package kafkaadmin

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
	"github.com/google/go-cmp/cmp"
)

// TestClassicAndConsumerGroup pins how both describe answers are read: a
// group either protocol does not know is Dead with no error, so that
// DescribeGroup falls from the classic answer to the consumer protocol's
// and from there to Dead; members are found under both.
func TestClassicAndConsumerGroup(t *testing.T) {
	inst := "static-1"
	for _, tc := range []struct {
		name string
		d    *sarama.GroupDescription
		want Group
		err  error
	}{
		{"a classic member", &sarama.GroupDescription{State: "Stable", ProtocolType: "consumer", Protocol: "range",
			Members: map[string]*sarama.GroupMemberDescription{"m2": {MemberId: "m2", ClientId: "b"}, "m1": {MemberId: "m1", ClientId: "a", GroupInstanceId: &inst}}},
			Group{ID: "g", State: GroupStable, Type: GroupTypeClassic, ProtocolType: "consumer", Protocol: "range",
				Members: []Member{{ID: "m1", ClientID: "a", InstanceID: inst}, {ID: "m2", ClientID: "b"}}}, nil},
		{"a Flink group", &sarama.GroupDescription{State: "Empty"}, Group{ID: "g", State: GroupEmpty, Type: GroupTypeClassic}, nil},
		{"none before 4.0", &sarama.GroupDescription{State: "Dead"}, Group{ID: "g", State: GroupDead}, nil},
		{"none, or of the consumer protocol, on 4.x", &sarama.GroupDescription{Err: sarama.ErrGroupIDNotFound}, Group{ID: "g", State: GroupDead}, nil},
		{"refused", &sarama.GroupDescription{Err: sarama.ErrGroupAuthorizationFailed}, Group{}, sarama.ErrGroupAuthorizationFailed},
	} {
		t.Run("classic/"+tc.name, func(t *testing.T) {
			got, err := classicGroup("g", tc.d)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		d     sarama.ConsumerGroupDescription
		want  Group
		found bool
		err   error
	}{
		{"a member holding partitions", sarama.ConsumerGroupDescription{GroupState: "Stable", AssignorName: "uniform",
			Members: []sarama.ConsumerGroupMemberDescription{{MemberID: "z", ClientID: "b"}, {MemberID: "a", ClientID: "a", InstanceID: &inst}}},
			Group{ID: "g", State: GroupStable, Type: GroupTypeConsumer, ProtocolType: "consumer", Protocol: "uniform",
				Members: []Member{{ID: "a", ClientID: "a", InstanceID: inst}, {ID: "z", ClientID: "b"}}}, true, nil},
		{"reconciling", sarama.ConsumerGroupDescription{GroupState: "Reconciling", Members: []sarama.ConsumerGroupMemberDescription{{MemberID: "a"}}},
			Group{ID: "g", State: GroupReconciling, Type: GroupTypeConsumer, ProtocolType: "consumer", Members: []Member{{ID: "a"}}}, true, nil},
		{"empty after the members left", sarama.ConsumerGroupDescription{GroupState: "Empty"},
			Group{ID: "g", State: GroupEmpty, Type: GroupTypeConsumer, ProtocolType: "consumer"}, true, nil},
		{"a classic group or none", sarama.ConsumerGroupDescription{ErrorCode: sarama.ErrGroupIDNotFound}, Group{}, false, nil},
		{"a coordinator without the consumer protocol", sarama.ConsumerGroupDescription{ErrorCode: sarama.ErrUnsupportedVersion}, Group{}, false, nil},
		{"dead", sarama.ConsumerGroupDescription{GroupState: "Dead"}, Group{}, false, nil},
		{"coordinator moved", sarama.ConsumerGroupDescription{ErrorCode: sarama.ErrNotCoordinatorForConsumer}, Group{}, false, sarama.ErrNotCoordinatorForConsumer},
	} {
		t.Run("consumer/"+tc.name, func(t *testing.T) {
			got, found, err := consumerGroup("g", tc.d)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if found != tc.found {
				t.Errorf("found %v, want %v", found, tc.found)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
