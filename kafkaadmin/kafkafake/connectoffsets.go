package kafkafake

import (
	"strconv"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/jsonstr"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
)

// StoreConnectOffsets writes offsets of the MirrorSourceConnector named
// connector into the Connect offsets topic (a worker's
// offset.storage.topic), one record each, as a worker stores a task's
// offset commit or a PATCH of its offsets: the key
//
//	["<connector>",{"cluster":"<alias>","partition":<n>,"topic":"<topic>"}]
//
// and the value {"offset":<M>}, or no value (a tombstone) for a null
// offset, which removes the partition's offset. It appends them to
// partition 0 of the topic, creating the topic with one partition when it
// does not exist (a worker creates 25; the partition a key lands in does
// not change what ReadConnectOffsets returns). Offsets outlive connectors,
// as on a worker: ReadConnectOffsets finds them whether or not any
// connector of that name runs. For a malformed record, Produce one.
func (c *Cluster) StoreConnectOffsets(topic, connector string, list ...offsets.ConnectOffset) {
	c.Lock()
	defer c.Unlock()
	if c.topics()[topic] == 0 {
		c.seedTopic(topic, 1)
	}
	tp := kafkaadmin.TopicPartition{Topic: topic}
	b := c.Bounds[tp]
	for _, o := range list {
		rec := kafkaadmin.Record{Offset: b.End, Key: connectKey(connector, o.Partition), Timestamp: time.Unix(1_700_000_000+b.End, 0)}
		if m, ok := o.Offset.Get(); ok {
			rec.Value = strconv.AppendInt([]byte(`{"offset":`), m, 10)
			rec.Value = append(rec.Value, '}')
		}
		c.Records[tp] = append(c.Records[tp], rec)
		b.End++
	}
	b.StableEnd = b.End
	c.Bounds[tp] = b
}

// connectKey is the key a worker writes for a MirrorSourceConnector's
// source partition: Connect's JsonConverter, schemas disabled, over the
// connector name and the partition map, its keys in the order of
// kafkaadmin.DecodeConnectOffsetKey's example (cluster, partition, topic).
func connectKey(connector string, p offsets.ConnectPartition) []byte {
	b := []byte{'['}
	b = jsonstr.Append(b, connector)
	b = append(b, `,{"cluster":`...)
	b = jsonstr.Append(b, p.Cluster)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(p.Partition), 10)
	b = append(b, `,"topic":`...)
	b = jsonstr.Append(b, p.Topic)
	return append(b, "}]"...)
}
