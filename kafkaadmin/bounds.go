package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/offsets"
)

// errUnknownPartition is the per-partition error for a partition that the
// latest metadata does not list.
var errUnknownPartition = fmt.Errorf("%w: partition not in metadata", ErrUnknownTopic)

// listKind is one of the three ListOffsets queries that make up bounds.
type listKind int

const (
	listStart     listKind = iota // earliest, read_uncommitted
	listEnd                       // latest, read_uncommitted: high watermark
	listStableEnd                 // latest, read_committed: last stable offset
)

// allBounds are the kinds LogBounds reads; startEnd what ReadGroup reads (a
// plan records no last stable offset); endOnly what EndOffsets reads.
var (
	allBounds = []listKind{listStart, listEnd, listStableEnd}
	startEnd  = []listKind{listStart, listEnd}
	endOnly   = []listKind{listEnd}
)

// parallelListMin is the number of partitions of one leader from which
// bounds sends its three ListOffsets requests at once, each on a
// connection of its own: a broker handles one request of a connection at
// a time, and a request for thousands of partitions takes tens of
// milliseconds. For 10,000 partitions on one sandbox broker the three one
// after the other took a median of 117-128 ms, at once 85-101 ms (three
// series of 15 on a shared, loaded 2-core machine). Below it, two more
// connections would cost more than they save.
const parallelListMin = 1000

// bounds reads log bounds for the partitions, the given kinds only (the
// others stay 0): per leader, one ListOffsets request of each kind, leaders
// in parallel (and, for a leader of at least parallelListMin partitions,
// the kinds in parallel, each on a connection of its own). Partitions whose
// leader moved or is unknown are retried after a metadata refresh. It
// returns the bounds of the partitions read and, for the others, a
// [*PartitionErrors] of op.
func (s *session) bounds(op string, parts []TopicPartition, kinds []listKind) (map[TopicPartition]offsets.LogBounds, error) {
	out := make(map[TopicPartition]offsets.LogBounds, len(parts))
	errs := make(map[TopicPartition]error)
	pending := make(map[TopicPartition]error, len(parts))
	for _, tp := range parts {
		pending[tp] = nil
	}
	err := s.r.retry(s.ctx, "list offsets", func(attempt int) error {
		if attempt > 1 || !s.knowsLeaders(pending) {
			if _, err := s.metadataFresh(topicsOf(pending), attempt > 1); err != nil {
				return err
			}
		}
		byLeader := make(map[int32][]TopicPartition)
		for tp := range pending {
			leader, ok := s.leaders[tp]
			if !ok {
				if tp.Partition < s.counts[tp.Topic] {
					pending[tp] = sarama.ErrLeaderNotAvailable
				} else {
					errs[tp] = errUnknownPartition
					delete(pending, tp)
				}
				continue
			}
			byLeader[leader] = append(byLeader[leader], tp)
		}
		type result struct {
			got    map[TopicPartition]offsets.LogBounds
			errs   map[TopicPartition]error
			failed error // for every partition of the leader
			broker *sarama.Broker
			lanes  []*sarama.Broker // the connections the three kinds use
			failOn *sarama.Broker   // the connection that failed
		}
		results := make(map[int32]*result, len(byLeader))
		for leader, tps := range byLeader {
			b, err := s.node(leader)
			if err != nil {
				for _, tp := range tps {
					pending[tp] = err
				}
				continue
			}
			res := &result{broker: b, lanes: []*sarama.Broker{b}}
			for range kinds[1:] {
				if len(tps) >= parallelListMin && s.pool == nil { // a step client keeps one connection per broker
					res.lanes = append(res.lanes, s.extraConn(b.Addr()))
				}
			}
			results[leader] = res
		}
		var wg sync.WaitGroup
		for leader, res := range results {
			wg.Go(func() {
				res.got, res.errs, res.failOn, res.failed = listBounds(res.lanes, s.conf.Version, byLeader[leader], kinds)
			})
		}
		wg.Wait()
		for _, res := range results {
			for _, lane := range res.lanes[1:] {
				if ok, _ := lane.Connected(); ok {
					_ = lane.Close()
				}
			}
		}
		for leader, res := range results {
			if res.failed != nil {
				if res.failOn == res.broker {
					s.transportFailed(res.broker)
				}
				for _, tp := range byLeader[leader] {
					pending[tp] = res.failed
				}
				continue
			}
			for tp, lb := range res.got {
				out[tp] = lb
				delete(pending, tp)
			}
			for tp, err := range res.errs {
				if retriable(err) {
					pending[tp] = err
				} else {
					errs[tp] = err
					delete(pending, tp)
				}
			}
		}
		for _, err := range pending {
			return err
		}
		return nil
	})
	if cerr := s.ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil && len(pending) == 0 {
		return nil, err
	}
	for tp, perr := range pending {
		if perr == nil {
			perr = err
		}
		errs[tp] = perr
	}
	return out, partitionErrors(op, len(parts), errs)
}

func (s *session) knowsLeaders(pending map[TopicPartition]error) bool {
	for tp := range pending {
		if _, ok := s.leaders[tp]; !ok {
			return false
		}
	}
	return true
}

func topicsOf(pending map[TopicPartition]error) []string {
	seen := make(map[string]bool)
	var out []string
	for tp := range pending {
		if !seen[tp.Topic] {
			seen[tp.Topic] = true
			out = append(out, tp.Topic)
		}
	}
	return out
}

// extraConn opens one more connection to addr for this call; the dialer
// closes it with the others when the call ends.
func (s *session) extraConn(addr string) *sarama.Broker {
	b := sarama.NewBroker(addr)
	_ = b.Open(s.conf) // a failure to connect shows in its first request
	return b
}

// listBounds sends a ListOffsets request of each kind for partitions led
// by one broker: on lanes[0] one after the other, or, given a connection
// per kind, one on each at once. It returns the bounds of the
// partitions read and the error of each other partition. A non-nil err is
// a transport error for all of them; failOn is the connection it came
// from.
func listBounds(lanes []*sarama.Broker, v sarama.KafkaVersion, tps []TopicPartition, kinds []listKind) (out map[TopicPartition]offsets.LogBounds, errs map[TopicPartition]error, failOn *sarama.Broker, err error) {
	resps := make([]*sarama.OffsetResponse, len(kinds))
	sendErrs := make([]error, len(kinds))
	send := func(i int, b *sarama.Broker) {
		req := sarama.NewOffsetRequest(v)
		query := sarama.OffsetNewest
		switch kinds[i] {
		case listStart:
			query = sarama.OffsetOldest
		case listStableEnd:
			req.IsolationLevel = sarama.ReadCommitted
		}
		for _, tp := range tps {
			req.AddBlock(tp.Topic, tp.Partition, query, 1)
		}
		resps[i], sendErrs[i] = b.GetAvailableOffsets(req)
	}
	if len(kinds) > 1 && len(lanes) >= len(kinds) {
		var wg sync.WaitGroup
		for i := range kinds {
			wg.Go(func() { send(i, lanes[i]) })
		}
		wg.Wait()
	} else {
		for i := range kinds {
			if send(i, lanes[0]); sendErrs[i] != nil {
				break
			}
		}
	}
	for i, err := range sendErrs {
		if err != nil {
			return nil, nil, lanes[min(i, len(lanes)-1)], err
		}
	}
	out = make(map[TopicPartition]offsets.LogBounds, len(tps))
	errs = make(map[TopicPartition]error)
	for i, kind := range kinds {
		resp := resps[i]
		for _, tp := range tps {
			if errs[tp] != nil {
				continue
			}
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				errs[tp] = sarama.ErrIncompleteResponse
				delete(out, tp)
				continue
			case kerr(blk.Err) != nil:
				errs[tp] = blk.Err
				delete(out, tp)
				continue
			}
			off := blk.Offset
			if resp.Version == 0 && len(blk.Offsets) > 0 {
				off = blk.Offsets[0]
			}
			lb := out[tp]
			switch kind {
			case listStart:
				lb.Start = off
			case listEnd:
				lb.End = off
			case listStableEnd:
				lb.StableEnd = off
			}
			out[tp] = lb
		}
	}
	return out, errs, nil, nil
}

// LogBounds reads the log start offset, high watermark and last stable
// offset of each partition, with three ListOffsets requests per partition
// leader whatever the number of partitions. Partitions whose leader moved
// are retried after a metadata refresh. The result holds the partitions
// read; each partition that could not be read is left out of it and named
// in a [*PartitionErrors] (a partition that does not exist with an error
// matching [ErrUnknownTopic]).
//
// Errors: an [*ArgumentError] for an empty list, a [*PartitionErrors]
// (with the partitions read) when some partitions failed, the context's
// error, or a Kafka or connection error after retries.
func (r *Client) LogBounds(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]offsets.LogBounds, error) {
	if len(partitions) == 0 {
		return nil, &ArgumentError{Op: "LogBounds", Reason: "no partitions"}
	}
	var out map[TopicPartition]offsets.LogBounds
	err := r.do(ctx, "log bounds", func(s *session) error {
		var err error
		out, err = s.bounds("LogBounds", partitions, allBounds)
		return err
	})
	var pe *PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return nil, err
	}
	return out, err
}

// EndOffsets reads the high watermark of each partition (the End of
// [Client.LogBounds], the end a read_uncommitted consumer sees) with one
// ListOffsets request per partition leader: a third of LogBounds' requests,
// for callers that need only the ends, such as a check that nothing wrote
// to the target topics. Results and errors are as for LogBounds.
func (r *Client) EndOffsets(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]int64, error) {
	if len(partitions) == 0 {
		return nil, &ArgumentError{Op: "EndOffsets", Reason: "no partitions"}
	}
	var bounds map[TopicPartition]offsets.LogBounds
	err := r.do(ctx, "end offsets", func(s *session) error {
		var err error
		bounds, err = s.bounds("EndOffsets", partitions, endOnly)
		return err
	})
	var pe *PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return nil, err
	}
	out := make(map[TopicPartition]int64, len(bounds))
	for tp, b := range bounds {
		out[tp] = b.End
	}
	return out, err
}
