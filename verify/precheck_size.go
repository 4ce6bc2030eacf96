package verify

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mm2cutover/mm2cutover/kafkaadmin"
)

// Kafka's defaults for the limits along the replication path. They are the
// same in every release from 3.7 to 4.3 (ProducerConfig, ConsumerConfig,
// ServerLogConfigs; read from the kafka-clients jars of 3.8.1, 3.9.1,
// 4.0.0 and 4.3.1 and the 3.7.0 sources; the brokers' are pinned by
// kafkaadmin's TestSandboxConfigs).
const (
	defaultMaxRequestSize         = 1048576  // producer max.request.size
	defaultBufferMemory           = 33554432 // producer buffer.memory
	defaultMaxPartitionFetchBytes = 1048576  // consumer max.partition.fetch.bytes
	defaultFetchMaxBytes          = 52428800 // consumer fetch.max.bytes
	// logOverhead is Records.LOG_OVERHEAD, the 12 bytes of offset and
	// length before each batch. Kafka pairs its defaults with it: brokers
	// accept batches of message.max.bytes 1048588 = 1 MiB + 12, producers
	// send requests of max.request.size 1 MiB, consumers and followers fetch
	// 1 MiB per partition. A client limit within 12 bytes of a topic's
	// max.message.bytes is taken as that pairing, not as a problem: only a
	// producer configured above Kafka's defaults can write a batch in
	// those 12 bytes.
	logOverhead = 12
)

// The configurations the record-size check reads.
const (
	topicMaxMessageBytes  = "max.message.bytes"       // topic: the largest record batch it accepts
	brokerMessageMaxBytes = "message.max.bytes"       // broker: the default of max.message.bytes
	replicaFetchMaxBytes  = "replica.fetch.max.bytes" // broker: what a follower asks for per partition
)

// limit is one effective size limit and where it comes from.
type limit struct {
	value int64
	from  string // the setting, e.g. "producer.override.max.request.size", or why the default applies
}

func (l limit) String() string { return fmt.Sprintf("%d (%s)", l.value, l.from) }

// sizeFacts is what the record-size check compares: the configurations
// read from both clusters, the connector's, and the workers' producer
// settings the operator stated.
type sizeFacts struct {
	// targets maps each source topic to its target topic.
	targets map[string]string
	// sourceTopics and targetTopics are keyed by topic name; the brokers'
	// by broker ID.
	sourceTopics, targetTopics   map[string]kafkaadmin.Configs
	sourceBrokers, targetBrokers map[int32]kafkaadmin.Configs
	config                       map[string]string // the connector's
	worker                       map[string]string // the workers' producer.* settings, without the prefix
}

// readSizeFacts reads the configurations the record-size check needs:
// max.message.bytes of every source and target topic, message.max.bytes
// and replica.fetch.max.bytes of every broker of both clusters. A read that
// fails is returned as an error for the check to report.
func readSizeFacts(ctx context.Context, source, target *kafkaadmin.Client, targets map[string]string) (sizeFacts, error) {
	f := sizeFacts{targets: targets}
	var srcNames, tgtNames []string
	for s, t := range targets {
		srcNames, tgtNames = append(srcNames, s), append(tgtNames, t)
	}
	slices.Sort(srcNames)
	slices.Sort(tgtNames)
	var err error
	if f.sourceTopics, err = source.TopicConfigs(ctx, srcNames, topicMaxMessageBytes); err != nil {
		return f, fmt.Errorf("source topics' %s: %w", topicMaxMessageBytes, err)
	}
	if f.sourceBrokers, err = source.BrokerConfigs(ctx, brokerMessageMaxBytes); err != nil {
		return f, fmt.Errorf("source brokers' %s: %w", brokerMessageMaxBytes, err)
	}
	if f.targetTopics, err = target.TopicConfigs(ctx, tgtNames, topicMaxMessageBytes); err != nil {
		return f, fmt.Errorf("target topics' %s: %w", topicMaxMessageBytes, err)
	}
	if f.targetBrokers, err = target.BrokerConfigs(ctx, brokerMessageMaxBytes, replicaFetchMaxBytes); err != nil {
		return f, fmt.Errorf("target brokers' configs: %w", err)
	}
	return f, nil
}

// topicLimit is a topic's max.message.bytes. A topic that does not set it
// takes its leader's message.max.bytes: pick the largest (source) or the
// smallest (target) of the brokers' values, which may differ per broker.
// ok is false when it could not be read.
func topicLimit(topic string, topics map[string]kafkaadmin.Configs, brokers map[int32]kafkaadmin.Configs, largest bool) (limit, bool, error) {
	c := topics[topic]
	if c.Err != nil {
		return limit{}, false, fmt.Errorf("topic %s: %w", topic, c.Err)
	}
	v, ok := c.Values[topicMaxMessageBytes]
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if !ok || err != nil {
		return limit{}, false, fmt.Errorf("topic %s: no %s", topic, topicMaxMessageBytes)
	}
	if v.Source == kafkaadmin.ConfigFromTopic {
		return limit{n, "topic " + topic + "'s " + topicMaxMessageBytes}, true, nil
	}
	out := limit{n, fmt.Sprintf("topic %s inherits the brokers' %s (%s)", topic, brokerMessageMaxBytes, v.Source)}
	if b, id, ok := brokerExtreme(brokers, brokerMessageMaxBytes, largest); ok && b.value != n {
		out = limit{b.value, fmt.Sprintf("topic %s inherits its leader's %s; broker %d's is %s", topic, brokerMessageMaxBytes, id, b.from)}
	}
	return out, true, nil
}

// brokerExtreme returns the largest (or smallest) value of a broker
// setting among the brokers that could be read.
func brokerExtreme(brokers map[int32]kafkaadmin.Configs, name string, largest bool) (limit, int32, bool) {
	var best limit
	var bestID int32
	found := false
	ids := make([]int32, 0, len(brokers))
	for id := range brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n, ok := brokers[id].Int(name)
		if !ok {
			continue
		}
		if !found || (largest && n > best.value) || (!largest && n < best.value) {
			best, bestID, found = limit{n, fmt.Sprintf("%d, %s", n, brokers[id].Values[name].Source)}, id, true
		}
	}
	return best, bestID, found
}

// producerLimit is the value of a setting of the producer that writes
// MM2's records: Connect's worker producer (the worker's producer.*
// settings), overridden by the connector's producer.override.*. Not
// MirrorMaker 2's own target.producer.* or producer.*: in Connect those
// reach only its offset-syncs producer (MirrorSourceConfig).
func producerLimit(config, worker map[string]string, name string, def int64) limit {
	if v, ok := config["producer.override."+name]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return limit{n, "producer.override." + name}
		}
	}
	if v, ok := worker[name]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return limit{n, "the workers' producer." + name}
		}
	}
	return limit{def, "Kafka's default; no producer.override." + name + ", and the workers' producer." + name + " taken as unset: REST does not show it"}
}

// consumerLimit is the value of a setting of MirrorSourceTask's source
// consumer: source.consumer.* overrides consumer.* (MirrorConnectorConfig).
// The worker's consumer.* settings do not reach it.
func consumerLimit(config map[string]string, name string, def int64) limit {
	for _, k := range []string{"source.consumer." + name, "consumer." + name} {
		if v, ok := config[k]; ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return limit{n, k}
			}
		}
	}
	return limit{def, "Kafka's default"}
}

// checkRecordSizes compares, for every source topic, the largest record
// batch the source may hold with each limit on the way to the target:
//
//   - fail: MM2's producer refuses a record larger than max.request.size
//     or buffer.memory (RecordTooLargeException), which fails the task;
//     a client limit within logOverhead of the batch size is Kafka's own
//     pairing of defaults and passes;
//   - fail: the target topic refuses a batch larger than its
//     max.message.bytes (inherited from the brokers' message.max.bytes
//     when the topic does not set it), which fails the task too;
//   - warn: MM2's consumer (max.partition.fetch.bytes, fetch.max.bytes)
//     and the target's followers (replica.fetch.max.bytes) ask for less
//     than one batch: since KIP-74 the broker returns the first batch
//     whole anyway, so they make progress, one batch per fetch;
//   - warn: target.producer.* or producer.* size settings in the
//     connector's configuration, which do not reach the producer that
//     writes the records.
func checkRecordSizes(cs *Checks, f sizeFacts) {
	const name = "record-size"
	sources := make([]string, 0, len(f.targets))
	for s := range f.targets {
		sources = append(sources, s)
	}
	slices.Sort(sources)

	// The largest batch any source topic may hold.
	largest := map[string]limit{}
	var worst limit
	var worstTopic string
	var unread []string
	for _, s := range sources {
		l, ok, err := topicLimit(s, f.sourceTopics, f.sourceBrokers, true)
		if !ok {
			unread = append(unread, "source "+err.Error())
			continue
		}
		largest[s] = l
		if l.value > worst.value {
			worst, worstTopic = l, s
		}
	}
	if len(unread) > 0 {
		cs.add(name, Warn, "cannot read %s: %s; those topics' record sizes are not checked", topicMaxMessageBytes, listSome(unread, 5))
	}
	if len(largest) == 0 {
		return
	}
	failed := false

	for _, p := range []struct {
		setting string
		def     int64
	}{{"max.request.size", defaultMaxRequestSize}, {"buffer.memory", defaultBufferMemory}} {
		pl := producerLimit(f.config, f.worker, p.setting, p.def)
		if pl.value < worst.value-logOverhead {
			failed = true
			cs.add(name, Fail, "MM2's producer %s is %s, below %d, the largest batch source topic %s may hold (%s): a record that size fails the task (RecordTooLargeException); set producer.override.%s=%d in the connector config (the workers' connector.client.config.override.policy must allow it) or producer.%s in the workers' properties",
				p.setting, pl, worst.value, worstTopic, worst.from, p.setting, worst.value, p.setting)
		}
	}
	for _, k := range []string{"target.producer.max.request.size", "producer.max.request.size", "target.producer.buffer.memory", "producer.buffer.memory"} {
		if v, ok := f.config[k]; ok {
			cs.add(name, Warn, "the connector sets %s=%s, which in Connect reaches only MM2's offset-syncs producer, not the worker producer that writes the records: use producer.override.%s",
				k, v, strings.TrimPrefix(strings.TrimPrefix(k, "target."), "producer."))
		}
	}

	var small []string
	for _, s := range sources {
		src, ok := largest[s]
		if !ok {
			continue
		}
		t := f.targets[s]
		tl, ok, err := topicLimit(t, f.targetTopics, f.targetBrokers, false)
		if !ok {
			cs.add(name, Warn, "cannot read target %v: not checked", err)
			continue
		}
		if tl.value < src.value {
			failed = true
			small = append(small, fmt.Sprintf("%s accepts %s < %d (%s)", t, tl, src.value, src.from))
		}
	}
	if len(small) > 0 {
		cs.add(name, Fail, "%d target topic%s accept%s smaller batches than the source may hold: %s; MM2's producer would be refused (RecordTooLargeException) and the task fail: raise each target topic's %s to at least its source's (kafka-configs --alter --entity-type topics --entity-name TOPIC --add-config %s=N)",
			len(small), plural(len(small)), singularVerb(len(small)), listSome(small, 5), topicMaxMessageBytes, topicMaxMessageBytes)
	}

	var soft []string
	for _, c := range []struct {
		setting string
		def     int64
	}{{"max.partition.fetch.bytes", defaultMaxPartitionFetchBytes}, {"fetch.max.bytes", defaultFetchMaxBytes}} {
		if cl := consumerLimit(f.config, c.setting, c.def); cl.value < worst.value-logOverhead {
			soft = append(soft, fmt.Sprintf("MM2's source consumer %s is %s (raise source.consumer.%s)", c.setting, cl, c.setting))
		}
	}
	if rf, id, ok := brokerExtreme(f.targetBrokers, replicaFetchMaxBytes, false); ok && rf.value < worst.value-logOverhead {
		soft = append(soft, fmt.Sprintf("target broker %d's %s is %s", id, replicaFetchMaxBytes, rf.from))
	}
	if len(soft) > 0 {
		cs.add(name, Warn, "below %d, the largest batch source topic %s may hold: %s; not a blocker — a broker returns the first batch of a fetch whole even when it is larger (KIP-74) — but such batches then come one per fetch",
			worst.value, worstTopic, strings.Join(soft, "; "))
	}
	if !failed {
		pl := producerLimit(f.config, f.worker, "max.request.size", defaultMaxRequestSize)
		cs.add(name, Pass, "the largest batch a source topic may hold is %d (%s); MM2's producer max.request.size %s (allowing Kafka's 12-byte log overhead) and every target topic's %s are at least that",
			worst.value, worst.from, pl, topicMaxMessageBytes)
	}
}

// singularVerb is the "s" of a verb whose subject counts n.
func singularVerb(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}
