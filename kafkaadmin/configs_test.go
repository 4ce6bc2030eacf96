package kafkaadmin

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestSandboxConfigs reads effective configurations from real brokers: a
// topic that overrides max.message.bytes, one that inherits it from the
// broker's message.max.bytes, a topic that does not exist, and the
// brokers' own settings. It pins Kafka's defaults as the sandbox's
// version reports them: message.max.bytes 1048588 (1 MiB + the 12-byte
// log overhead), replica.fetch.max.bytes 1048576.
func TestSandboxConfigs(t *testing.T) {
	sb := sandboxtest.Shared(t)
	boot := sb.Source().Bootstrap()
	ctx := testCtx(t)
	a := testAdmin(t, boot)
	big, plain := uniq(t, "big"), uniq(t, "plain")
	createTopic(t, a, boot, big, 1)
	createTopic(t, a, boot, plain, 1)
	five := "5242880"
	if err := a.AlterConfig(sarama.TopicResource, big, map[string]*string{"max.message.bytes": &five}, false); err != nil {
		t.Fatal(err)
	}
	r := newTestClient(t, boot)

	// The override reaches the brokers through the metadata log shortly
	// after AlterConfigs answers.
	var got map[string]Configs
	for {
		var err error
		if got, err = r.TopicConfigs(ctx, []string{big, plain, uniq(t, "missing")}, "max.message.bytes", "cleanup.policy"); err != nil {
			t.Fatal(err)
		}
		if got[big].Values["max.message.bytes"].Value == five || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if v := got[big].Values["max.message.bytes"]; v.Value != five || v.Source != ConfigFromTopic {
		t.Errorf("overridden topic: %+v, want 5242880 from the topic", v)
	}
	if v := got[plain].Values["max.message.bytes"]; v.Value != "1048588" || v.Source != ConfigFromDefault {
		t.Errorf("inheriting topic: %+v, want Kafka's default 1048588", v)
	}
	if n, ok := got[plain].Int("max.message.bytes"); !ok || n != 1048588 {
		t.Errorf("Int: %d, %v", n, ok)
	}
	if v := got[plain].Values["cleanup.policy"]; v.Value != "delete" {
		t.Errorf("cleanup.policy %+v, want delete", v)
	}
	for name, c := range got {
		if name != big && name != plain && !errors.Is(c.Err, sarama.ErrUnknownTopicOrPartition) {
			t.Errorf("missing topic %s: %+v, want ErrUnknownTopicOrPartition", name, c)
		}
	}

	brokers, err := r.BrokerConfigs(ctx, "message.max.bytes", "replica.fetch.max.bytes", "no.such.config")
	if err != nil {
		t.Fatal(err)
	}
	if len(brokers) != len(sb.Source().Nodes()) {
		t.Fatalf("%d brokers' configs, want %d", len(brokers), len(sb.Source().Nodes()))
	}
	for id, c := range brokers {
		if c.Err != nil {
			t.Fatalf("broker %d: %v", id, c.Err)
		}
		for name, want := range map[string]int{"message.max.bytes": 1048588, "replica.fetch.max.bytes": 1048576} {
			if v := c.Values[name]; v.Value != strconv.Itoa(want) || v.Source != ConfigFromDefault {
				t.Errorf("broker %d %s: %+v, want Kafka %s's default %d", id, name, v, sb.KafkaVersion(), want)
			}
		}
		if _, ok := c.Values["no.such.config"]; ok {
			t.Errorf("broker %d: an unknown name came back", id)
		}
	}
	if _, err := r.BrokerConfigs(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("no names: %v, want ErrInvalidArgument", err)
	}
}
