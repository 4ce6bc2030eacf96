package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"
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

// parallelListMin is the number of partitions of one leader from which
// bounds sends its three ListOffsets requests at once, each on a
// connection of its own: a broker handles one request of a connection at
// a time, and a request for thousands of partitions takes tens of
// milliseconds. For 10,000 partitions on one sandbox broker the three one
// after the other took a median of 117-128 ms, at once 85-101 ms (three
// series of 15 on a shared, loaded 2-core machine). Below it, two more
// connections would cost more than they save.
const parallelListMin = 1000

// bounds reads log bounds for the partitions: per leader, one ListOffsets
// request of each kind, leaders in parallel (and, for a leader of at least
// parallelListMin partitions, the three kinds in parallel on three
// connections). Partitions whose leader moved or is unknown are retried
// after a metadata refresh.
func (s *session) bounds(parts []TopicPartition) (map[TopicPartition]LogBounds, error) {
	out := make(map[TopicPartition]LogBounds, len(parts))
	pending := make(map[TopicPartition]error, len(parts))
	for _, tp := range parts {
		pending[tp] = nil
	}
	err := s.r.retry(s.ctx, "list offsets", func(attempt int) error {
		if attempt > 1 || !s.knowsLeaders(pending) {
			if _, err := s.metadata(topicsOf(pending)); err != nil {
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
					out[tp] = LogBounds{Err: errUnknownPartition}
					delete(pending, tp)
				}
				continue
			}
			byLeader[leader] = append(byLeader[leader], tp)
		}
		type result struct {
			got    map[TopicPartition]LogBounds
			failed error // for every partition of the leader
			broker *sarama.Broker
			lanes  []*sarama.Broker // the connections the three kinds use
			failOn *sarama.Broker   // the connection that failed
		}
		results := make(map[int32]*result, len(byLeader))
		brokers := make(map[int32]*sarama.Broker, len(byLeader))
		for leader, tps := range byLeader {
			b, err := s.node(leader)
			if err != nil {
				for _, tp := range tps {
					pending[tp] = err
				}
				continue
			}
			brokers[leader] = b
			res := &result{broker: b, lanes: []*sarama.Broker{b}}
			if len(tps) >= parallelListMin {
				res.lanes = append(res.lanes, s.extraConn(b.Addr()), s.extraConn(b.Addr()))
			}
			results[leader] = res
		}
		var wg sync.WaitGroup
		for leader, res := range results {
			wg.Go(func() {
				res.got, res.failOn, res.failed = listBounds(res.lanes, s.conf.Version, byLeader[leader])
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
				switch {
				case lb.Err == nil:
					out[tp] = lb
					delete(pending, tp)
				case retriable(lb.Err):
					pending[tp] = lb.Err
				default:
					out[tp] = lb
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
	errs := make(map[TopicPartition]error)
	for tp, perr := range pending {
		if perr == nil {
			perr = err
		}
		out[tp] = LogBounds{Err: perr}
	}
	for tp, lb := range out {
		if lb.Err != nil {
			errs[tp] = lb.Err
		}
	}
	return out, partitionErrors("LogBounds", len(parts), errs)
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

// listBounds sends the three ListOffsets requests for partitions led by
// one broker: on lanes[0] one after the other, or, given three
// connections, one on each at once. A non-nil error is a transport error
// for all of them; failOn is the connection it came from.
func listBounds(lanes []*sarama.Broker, v sarama.KafkaVersion, tps []TopicPartition) (out map[TopicPartition]LogBounds, failOn *sarama.Broker, err error) {
	kinds := []listKind{listStart, listEnd, listStableEnd}
	var resps [3]*sarama.OffsetResponse
	var errs [3]error
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
		resps[i], errs[i] = b.GetAvailableOffsets(req)
	}
	if len(lanes) >= len(kinds) {
		var wg sync.WaitGroup
		for i := range kinds {
			wg.Go(func() { send(i, lanes[i]) })
		}
		wg.Wait()
	} else {
		for i := range kinds {
			if send(i, lanes[0]); errs[i] != nil {
				break
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			return nil, lanes[min(i, len(lanes)-1)], err
		}
	}
	out = make(map[TopicPartition]LogBounds, len(tps))
	for i, kind := range kinds {
		resp := resps[i]
		for _, tp := range tps {
			lb := out[tp]
			if lb.Err != nil {
				continue
			}
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				lb = LogBounds{Err: sarama.ErrIncompleteResponse}
			case kerr(blk.Err) != nil:
				lb = LogBounds{Err: blk.Err}
			default:
				off := blk.Offset
				if resp.Version == 0 && len(blk.Offsets) > 0 {
					off = blk.Offsets[0]
				}
				switch kind {
				case listStart:
					lb.Start = off
				case listEnd:
					lb.End = off
				case listStableEnd:
					lb.StableEnd = off
				}
			}
			out[tp] = lb
		}
	}
	return out, nil, nil
}

// LogBounds reads the log start offset, high watermark and last stable
// offset of each partition, with three ListOffsets requests per partition
// leader whatever the number of partitions. Partitions whose leader moved
// are retried after a metadata refresh. Every partition asked for is in
// the result; one that could not be read carries its Err (a partition
// that does not exist carries an error matching [ErrUnknownTopic]).
//
// Errors: an [*ArgumentError] for an empty list, a [*PartitionErrors]
// (with the result) when some partitions failed, the context's error, or
// a Kafka or connection error after retries.
func (r *Reader) LogBounds(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]LogBounds, error) {
	if len(partitions) == 0 {
		return nil, &ArgumentError{Op: "LogBounds", Reason: "no partitions"}
	}
	var out map[TopicPartition]LogBounds
	err := r.do(ctx, "log bounds", func(s *session) error {
		var err error
		out, err = s.bounds(partitions)
		return err
	})
	var pe *PartitionErrors
	if err != nil && !errors.As(err, &pe) {
		return nil, err
	}
	return out, err
}
