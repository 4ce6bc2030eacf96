package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// commitAll commits offset p%7 for every partition of the topics.
func commitAll(t testing.TB, ctx context.Context, r *Client, group string, topics Topics) {
	t.Helper()
	offs := make(map[TopicPartition]int64)
	for _, tp := range topics.Partitions() {
		offs[tp] = int64(tp.Partition % 7)
	}
	if err := r.CommitOffsets(ctx, group, offs); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// The number of requests a reading sends depends on the number of brokers,
// not on the number of partitions.
func TestSandboxRequestsIndependentOfPartitions(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	ctx := testCtx(t)
	r := newTestClient(t, bs)
	group := uniq(t, "g")

	requests := make(map[int]int64)
	endRequests := make(map[int]int64)
	for _, n := range []int32{20, 2000} {
		topic := uniq(t, fmt.Sprint(n))
		createTopic(t, a, bs, topic, n)
		produce(t, bs, topic, n-1, 3)
		commitAll(t, ctx, r, group, Topics{topic: n})

		before := r.Requests()
		rd, err := r.ReadGroup(ctx, group, []string{topic})
		if err != nil {
			t.Fatalf("ReadGroup(%d partitions): %v", n, err)
		}
		requests[int(n)] = r.Requests() - before
		if len(rd.Committed) != int(n) || len(rd.Bounds) != int(n) {
			t.Fatalf("read %d commits and %d bounds, want %d", len(rd.Committed), len(rd.Bounds), n)
		}
		last := tp(topic, n-1)
		if rd.Bounds[last].End != 3 || rd.Committed[last] != int64((n-1)%7) {
			t.Errorf("%s: bounds %+v, commit %+v", last, rd.Bounds[last], rd.Committed[last])
		}
		for p, b := range rd.Bounds {
			if p != last && (b.Start != 0 || b.End != 0) || b.StableEnd != 0 { // a reading has no last stable offset
				t.Errorf("%s: bounds %+v", p, b)
			}
		}

		before = r.Requests()
		ends, err := r.EndOffsets(ctx, Topics{topic: n}.Partitions())
		if err != nil {
			t.Fatalf("EndOffsets(%d partitions): %v", n, err)
		}
		endRequests[int(n)] = r.Requests() - before
		if len(ends) != int(n) {
			t.Fatalf("EndOffsets read %d ends, want %d", len(ends), n)
		}
		for p, b := range rd.Bounds {
			if ends[p] != b.End {
				t.Errorf("%s: EndOffsets %d, LogBounds' End %d", p, ends[p], b.End)
			}
		}
	}
	t.Logf("requests per EndOffsets (1 broker): %v", endRequests)
	// One connection (ApiVersions), Metadata and one ListOffsets per
	// broker, with no extra connection at any size.
	if endRequests[2000] != endRequests[20] || endRequests[20] > 3 {
		t.Errorf("requests per EndOffsets = %v; want at most 3 for 20 and for 2000 partitions", endRequests)
	}
	t.Logf("requests per reading (1 broker): %v", requests)
	// One connection (ApiVersions), Metadata, FindCoordinator, OffsetFetch,
	// and two ListOffsets per broker (earliest, latest); from
	// parallelListMin partitions a leader the two go out at once on two
	// connections: one more ApiVersions, whatever the number of partitions
	// above it.
	if requests[2000] != requests[20]+1 || requests[2000] > 7 {
		t.Errorf("requests per reading = %v; want the same small number for 20 and 2000 partitions, plus 1 connection", requests)
	}
}

// A step client reads a cluster's metadata and its cluster ID once, finds
// a group's coordinator once, and keeps one connection per broker across
// its calls; what can change between two calls (the commits, the bounds,
// the ends) it reads at every call.
func TestSandboxStepReadsOnce(t *testing.T) {
	sb := sandboxtest.Shared(t)
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	ctx := testCtx(t)
	base := newTestClient(t, bs)
	group := uniq(t, "g")
	topic := uniq(t, "t")
	createTopic(t, a, bs, topic, 2000)
	produce(t, bs, topic, 1999, 3)
	commitAll(t, ctx, base, group, Topics{topic: 2000})

	r := base.Step()
	defer r.Close()
	before := r.Cost()
	// What an apply's recheck reads of the source, and a second time.
	for i := range 2 {
		if _, err := r.ClusterID(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.DescribeGroup(ctx, group); err != nil {
			t.Fatal(err)
		}
		rd, err := r.ReadGroup(ctx, group, []string{topic})
		if err != nil {
			t.Fatal(err)
		}
		if got := rd.Bounds[tp(topic, 1999)].End; got != 3 {
			t.Fatalf("reading %d: end %d, want 3", i, got)
		}
		if i == 0 {
			// A commit between the calls is seen: commits are never kept.
			other := newTestClient(t, bs) // not counted with the step's
			if err := other.CommitOffsets(ctx, group, map[TopicPartition]int64{tp(topic, 1999): 3}); err != nil {
				t.Fatal(err)
			}
		} else if got := rd.Committed[tp(topic, 1999)]; got != 3 {
			t.Errorf("second reading: commit %d, want 3 (committed between the readings)", got)
		}
	}
	got := r.Cost().Sub(before)
	t.Logf("two rechecks of the source on a step client: %v", got)
	want := map[string]int64{"ApiVersions": 1, "DescribeCluster": 1, "Metadata": 1, "FindCoordinator": 1,
		"DescribeGroups": 2, "OffsetFetch": 2, "ListOffsets": 4}
	if got.Connections != 1 {
		t.Errorf("%d connections, want 1 (one broker)", got.Connections)
	}
	for k, n := range want {
		if got.ByKind[k] != n {
			t.Errorf("%d %s requests, want %d", got.ByKind[k], k, n)
		}
	}
	if got.Requests != 12 {
		t.Errorf("%d requests, want 12", got.Requests)
	}
}

// A broker that accepts connections and never answers: only the context
// can end the call, and it must end it at once, leaving no goroutine.
func TestCancelUnresponsiveBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()

	r, err := NewClient(Config{BootstrapServers: []string{ln.Addr().String()}, RequestTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// go-metrics, which sarama uses, starts one global ticker goroutine on
	// first use and keeps it: take the baseline after a first call.
	warm, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, _ = r.ClusterID(warm)
	cancel()
	baseline := runtime.NumGoroutine()
	calls := map[string]func(context.Context) error{
		"ClusterID": func(ctx context.Context) error { _, err := r.ClusterID(ctx); return err },
		"ReadGroup": func(ctx context.Context) error { _, err := r.ReadGroup(ctx, "g", []string{"t"}); return err },
		"Describe":  func(ctx context.Context) error { _, err := r.DescribeGroup(ctx, "g"); return err },
	}
	for name, call := range calls {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := call(ctx)
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("%s returned %v after cancellation", name, elapsed-200*time.Millisecond)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s = %v, want context.Canceled", name, err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines left behind:\n%s", n-baseline, buf[:runtime.Stack(buf, true)])
	}
}

// Reads in a loop while the broker stops and starts again: every read
// retries through the outage and returns the right values.
func TestSandboxBrokerRestartDuringReads(t *testing.T) {
	sb := sandboxtest.Dedicated(t, sandbox.Config{Workers: 0})
	bs := sb.Source().Bootstrap()
	a := testAdmin(t, bs)
	topic, group := uniq(t, "t"), uniq(t, "g")
	createTopic(t, a, bs, topic, 6)
	produce(t, bs, topic, 2, 4)
	flinkCommit(t, bs, group, map[TopicPartition]int64{tp(topic, 2): 4, tp(topic, 3): 0})
	a.Close()

	r, err := NewClient(Config{BootstrapServers: []string{bs}, RetryTimeout: 3 * time.Minute, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	stop := make(chan struct{})
	type outcome struct {
		took time.Duration
		err  error
	}
	results := make(chan outcome, 1000)
	go func() {
		defer close(results)
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			rd, err := r.ReadGroup(ctx, group, []string{topic})
			if err == nil {
				if c, ok := rd.Committed[tp(topic, 2)]; !ok || c != 4 || rd.Bounds[tp(topic, 2)].End != 4 || len(rd.Committed) != 2 {
					err = fmt.Errorf("wrong reading: %+v %+v", rd.Committed, rd.Bounds[tp(topic, 2)])
				}
			}
			results <- outcome{time.Since(start), err}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if err := sb.Source().Stop(ctx); err != nil {
		t.Fatalf("stop broker: %v", err)
	}
	time.Sleep(3 * time.Second)
	if err := sb.Source().Start(ctx); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	time.Sleep(time.Second)
	close(stop)
	var n int
	var longest time.Duration
	for o := range results {
		n++
		longest = max(longest, o.took)
		if o.err != nil {
			t.Errorf("read %d: %v", n, o.err)
		}
	}
	t.Logf("%d reads, longest %v", n, longest)
	if longest < 2*time.Second {
		t.Errorf("no read spanned the outage (longest %v)", longest)
	}
}

// BenchmarkSandboxReadGroup10k reads a group's commits and the log bounds
// of 10,000 partitions (5 topics of 2,000) on a dedicated single-broker
// sandbox, so that 10,000 partitions do not weigh on the shared one.
func BenchmarkSandboxReadGroup10k(b *testing.B) {
	sb := sandboxtest.Dedicated(b, sandbox.Config{Workers: 0})
	bs := sb.Source().Bootstrap()
	a := testAdmin(b, bs)
	ctx := context.Background()
	r := newTestClient(b, bs)
	group := uniq(b, "g")
	topics := make(Topics)
	for i := range 5 {
		name := uniq(b, fmt.Sprint(i))
		createTopic(b, a, bs, name, 2000)
		topics[name] = 2000
	}
	commitAll(b, ctx, r, group, topics)
	names := topics.Names()
	// Partitions are ready once a full reading succeeds.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := r.ReadGroup(ctx, group, names)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal(err)
		}
		time.Sleep(time.Second)
	}

	before := r.Requests()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd, err := r.ReadGroup(ctx, group, names)
		if err != nil || len(rd.Bounds) != 10000 || len(rd.Committed) != 10000 {
			b.Fatalf("ReadGroup: %d bounds, %d commits, %v", len(rd.Bounds), len(rd.Committed), err)
		}
	}
	b.ReportMetric(float64(r.Requests()-before)/float64(b.N), "requests/op")
	b.ReportMetric(10000, "partitions")
}
