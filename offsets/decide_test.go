package offsets_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mm2cutover/mm2cutover/offsets"
)

var sentinels = []error{
	offsets.ErrInvalidPartition,
	offsets.ErrInvalidBounds,
	offsets.ErrMissing,
	offsets.ErrNegative,
	offsets.ErrBeyondEnd,
	offsets.ErrExpired,
}

// outcome is the comparable projection of a Decision that the table checks.
type outcome struct {
	Action string
	Offset string // M or "null"
	Lost   int64
	Err    error // the sentinel, or nil
}

func project(d offsets.Decision) outcome {
	o := outcome{Action: d.Action.String(), Offset: d.Offset.String(), Lost: d.Lost}
	for _, s := range sentinels {
		if errors.Is(d.Err, s) {
			o.Err = s
		}
	}
	return o
}

func set(m int64) outcome { return outcome{Action: "set", Offset: itoa(m)} }

func block(err error) outcome { return outcome{Action: "block", Offset: "null", Err: err} }

func itoa(v int64) string { return offsets.NewMirrorOffset(v).String() }

// TestDecide walks the conversion table of DESIGN.md row by row, with the
// boundaries of each row.
func TestDecide(t *testing.T) {
	const maxOff = math.MaxInt64
	orders := offsets.SourcePartition{Topic: "orders", Partition: 3}
	c := offsets.NewGroupOffset
	none := offsets.GroupOffset{}
	b := func(start, end int64) offsets.LogBounds { return offsets.LogBounds{Start: start, End: end} }
	cleared := outcome{Action: "clear", Offset: "null"}

	for _, tt := range []struct {
		name   string
		p      offsets.SourcePartition
		c      offsets.GroupOffset
		b      offsets.LogBounds
		accept bool
		want   outcome
	}{
		// C > 0: set C-1.
		{"inside", orders, c(42), b(0, 100), false, set(41)},
		{"C is 1", orders, c(1), b(0, 1), false, set(0)},
		{"C at log start", orders, c(10), b(10, 100), false, set(9)},
		{"C at log end", orders, c(100), b(0, 100), false, set(99)},
		{"C at start and end of emptied partition", orders, c(50), b(50, 50), false, set(49)},
		{"C max int64", orders, c(maxOff), b(0, maxOff), false, set(maxOff - 1)},
		{"C max int64 at start", orders, c(maxOff), b(maxOff, maxOff), false, set(maxOff - 1)},
		{"acceptance changes nothing inside bounds", orders, c(42), b(0, 100), true, set(41)},

		// C = 0: clear.
		{"C 0 empty partition", orders, c(0), b(0, 0), false, cleared},
		{"C 0 log start 0", orders, c(0), b(0, 100), false, cleared},
		{"C 0 accepted is still clear", orders, c(0), b(0, 100), true, cleared},

		// Missing: block.
		{"missing", orders, none, b(0, 100), false, block(offsets.ErrMissing)},
		{"missing on empty partition", orders, none, b(0, 0), false, block(offsets.ErrMissing)},
		{"missing not relaxed by acceptance", orders, none, b(5, 100), true, block(offsets.ErrMissing)},

		// C < log start: block as expired, or start at log start when accepted.
		{"C 0 log start above 0", orders, c(0), b(5, 100), false, block(offsets.ErrExpired)},
		{"C one below log start", orders, c(9), b(10, 100), false, block(offsets.ErrExpired)},
		{"C below emptied partition", orders, c(49), b(50, 50), false, block(offsets.ErrExpired)},
		{"accepted C 0 log start 5", orders, c(0), b(5, 100), true, outcome{Action: "set", Offset: "4", Lost: 5}},
		{"accepted one record", orders, c(9), b(10, 100), true, outcome{Action: "set", Offset: "9", Lost: 1}},
		{"accepted max loss", orders, c(0), b(maxOff, maxOff), true, outcome{Action: "set", Offset: itoa(maxOff - 1), Lost: maxOff}},

		// C > log end: block as invalid.
		{"C one above log end", orders, c(101), b(0, 100), false, block(offsets.ErrBeyondEnd)},
		{"C above empty partition", orders, c(1), b(0, 0), false, block(offsets.ErrBeyondEnd)},
		{"C max above log end", orders, c(maxOff), b(0, maxOff-1), false, block(offsets.ErrBeyondEnd)},
		{"beyond end not relaxed by acceptance", orders, c(101), b(0, 100), true, block(offsets.ErrBeyondEnd)},

		// Negative C.
		{"C -1", orders, c(-1), b(0, 100), false, block(offsets.ErrNegative)},
		{"C min int64 accepted", orders, c(math.MinInt64), b(0, 100), true, block(offsets.ErrNegative)},

		// Bad bounds.
		{"negative log start", orders, c(0), b(-1, 100), false, block(offsets.ErrInvalidBounds)},
		{"end below start", orders, c(5), b(10, 5), false, block(offsets.ErrInvalidBounds)},
		{"min int64 bounds", orders, c(0), b(math.MinInt64, math.MinInt64), false, block(offsets.ErrInvalidBounds)},

		// Bad partitions.
		{"empty topic", offsets.SourcePartition{Partition: 0}, c(1), b(0, 100), false, block(offsets.ErrInvalidPartition)},
		{"negative partition", offsets.SourcePartition{Topic: "orders", Partition: -1}, c(1), b(0, 100), false, block(offsets.ErrInvalidPartition)},
		{"topic with slash", offsets.SourcePartition{Topic: "a/b"}, c(1), b(0, 100), false, block(offsets.ErrInvalidPartition)},
		{"topic dot", offsets.SourcePartition{Topic: "."}, c(1), b(0, 100), false, block(offsets.ErrInvalidPartition)},
		{"topic 250 characters", offsets.SourcePartition{Topic: strings.Repeat("a", 250)}, c(1), b(0, 100), false, block(offsets.ErrInvalidPartition)},
		{"topic 249 characters", offsets.SourcePartition{Topic: strings.Repeat("a", 249)}, c(1), b(0, 100), false, set(0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			decide := offsets.Decide
			if tt.accept {
				decide = offsets.DecideAcceptingLoss
			}
			d := decide(tt.p, tt.c, tt.b)
			if diff := cmp.Diff(tt.want, project(d), cmp.Comparer(func(x, y error) bool { return x == y })); diff != "" {
				t.Errorf("decide(%v, %v, %v) mismatch (-want +got):\n%s", tt.p, tt.c, tt.b, diff)
			}
			if d.Partition != tt.p || d.GroupOffset != tt.c || d.Bounds != tt.b {
				t.Errorf("decision does not carry its inputs: got %v %v %v, want %v %v %v", d.Partition, d.GroupOffset, d.Bounds, tt.p, tt.c, tt.b)
			}
			if d.Reason() == "" {
				t.Errorf("empty reason")
			}
			var de *offsets.DecisionError
			if got, want := errors.As(d.Err, &de), d.Action == offsets.ActionBlock; got != want {
				t.Errorf("errors.As(Err, *DecisionError) = %v, want %v (err %v)", got, want, d.Err)
			}
			_, ok := d.ConnectOffset("source")
			if got, want := ok, d.Action != offsets.ActionBlock; got != want {
				t.Errorf("ConnectOffset ok = %v, want %v", got, want)
			}
		})
	}
}

func TestDecisionReasonAndError(t *testing.T) {
	p := offsets.SourcePartition{Topic: "orders", Partition: 3}
	for _, tt := range []struct {
		d          offsets.Decision
		wantErr    string
		wantReason string
	}{
		{
			d:          offsets.Decide(p, offsets.NewGroupOffset(42), offsets.LogBounds{End: 100}),
			wantReason: "MM2 resumes at committed offset 42",
		},
		{
			d:          offsets.Decide(p, offsets.NewGroupOffset(3), offsets.LogBounds{Start: 10, End: 100}),
			wantErr:    "offsets: orders-3: committed offset below log start offset 3 < 10",
			wantReason: "committed offset 3 is below log start offset 10: 7 records were deleted by retention; backfill them or record an acceptance of the loss",
		},
		{
			d:          offsets.DecideAcceptingLoss(p, offsets.NewGroupOffset(3), offsets.LogBounds{Start: 10, End: 100}),
			wantReason: "committed offset 3 is below log start offset 10; loss of 7 records accepted on record; MM2 starts at 10",
		},
		{
			d:          offsets.Decide(p, offsets.NewGroupOffset(101), offsets.LogBounds{End: 100}),
			wantErr:    "offsets: orders-3: committed offset beyond log end offset 101 > 100",
			wantReason: "committed offset 101 is beyond log end offset 100: wrong cluster or recreated topic? recheck the group and source",
		},
		{
			d:          offsets.Decide(p, offsets.GroupOffset{}, offsets.LogBounds{End: 100}),
			wantErr:    "offsets: orders-3: no committed offset",
			wantReason: "group has no committed offset: let the old job commit one, or supply it from its final checkpoint; never start from latest",
		},
		{
			d:          offsets.Decide(offsets.SourcePartition{Topic: "a b"}, offsets.NewGroupOffset(1), offsets.LogBounds{End: 100}),
			wantErr:    `offsets: invalid source partition topic "a b" partition 0`,
			wantReason: `invalid partition "a b" 0: check the topic list`,
		},
	} {
		gotErr := ""
		if tt.d.Err != nil {
			gotErr = tt.d.Err.Error()
		}
		if gotErr != tt.wantErr {
			t.Errorf("Err = %q, want %q", gotErr, tt.wantErr)
		}
		if got := tt.d.Reason(); got != tt.wantReason {
			t.Errorf("Reason() = %q, want %q", got, tt.wantReason)
		}
	}
}

func TestMirrorOffsetGroupOffset(t *testing.T) {
	for _, tt := range []struct {
		m       offsets.MirrorOffset
		want    offsets.GroupOffset
		wantErr error
	}{
		{offsets.MirrorOffset{}, offsets.GroupOffset{}, nil},
		{offsets.NewMirrorOffset(0), offsets.NewGroupOffset(1), nil},
		{offsets.NewMirrorOffset(41), offsets.NewGroupOffset(42), nil},
		{offsets.NewMirrorOffset(math.MaxInt64 - 1), offsets.NewGroupOffset(math.MaxInt64), nil},
		{offsets.NewMirrorOffset(math.MaxInt64), offsets.GroupOffset{}, offsets.ErrOverflow},
		{offsets.NewMirrorOffset(-1), offsets.GroupOffset{}, offsets.ErrNegative},
		{offsets.NewMirrorOffset(math.MinInt64), offsets.GroupOffset{}, offsets.ErrNegative},
	} {
		got, err := tt.m.GroupOffset()
		if got != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
			t.Errorf("%v.GroupOffset() = %v, %v; want %v, %v", tt.m, got, err, tt.want, tt.wantErr)
		}
		var oe *offsets.OffsetError
		if err != nil && !errors.As(err, &oe) {
			t.Errorf("%v.GroupOffset() error %T is not an *OffsetError", tt.m, err)
		}
	}
}

// FuzzDecide checks that Decide never panics and that its outcome obeys the
// table, and that every valid C survives the round trip C -> M -> C.
func FuzzDecide(f *testing.F) {
	f.Add("orders", int32(0), int64(42), true, int64(0), int64(100), false)
	f.Add("orders", int32(0), int64(0), true, int64(0), int64(0), false)
	f.Add("orders", int32(1), int64(0), true, int64(5), int64(10), true)
	f.Add("orders", int32(1), int64(math.MaxInt64), true, int64(math.MaxInt64), int64(math.MaxInt64), false)
	f.Add("", int32(-1), int64(-1), false, int64(-1), int64(-2), true)
	f.Fuzz(func(t *testing.T, topic string, partition int32, c int64, present bool, start, end int64, accept bool) {
		p := offsets.SourcePartition{Topic: topic, Partition: partition}
		g := offsets.GroupOffset{}
		if present {
			g = offsets.NewGroupOffset(c)
		}
		bounds := offsets.LogBounds{Start: start, End: end}
		var d offsets.Decision
		if accept {
			d = offsets.DecideAcceptingLoss(p, g, bounds)
		} else {
			d = offsets.Decide(p, g, bounds)
		}
		if d.Reason() == "" {
			t.Fatal("empty reason")
		}
		valid := p.Validate() == nil && bounds.Validate() == nil && present
		inside := valid && start <= c && c <= end
		m, mok := d.Offset.Get()
		switch d.Action {
		case offsets.ActionBlock:
			if d.Err == nil || mok || d.Lost != 0 {
				t.Fatalf("blocked decision with err %v, offset %v, lost %d", d.Err, d.Offset, d.Lost)
			}
			if inside {
				t.Fatalf("blocked a valid position: %v", d.Err)
			}
			n := 0
			for _, s := range sentinels {
				if errors.Is(d.Err, s) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("error %v matches %d sentinels, want 1", d.Err, n)
			}
		case offsets.ActionClear:
			if d.Err != nil || mok || !inside || c != 0 {
				t.Fatalf("clear with err %v, offset %v, inside %v, C %d", d.Err, d.Offset, inside, c)
			}
			if back, err := d.Offset.GroupOffset(); err != nil || back.Present() {
				t.Fatalf("null reversed to %v, %v; want no position", back, err)
			}
		case offsets.ActionSet:
			if d.Err != nil || !mok || m < 0 {
				t.Fatalf("set with err %v, offset %v", d.Err, d.Offset)
			}
			back, err := d.Offset.GroupOffset()
			if err != nil {
				t.Fatalf("reverse of %d: %v", m, err)
			}
			got, _ := back.Get()
			if d.Lost == 0 {
				if !inside || got != c {
					t.Fatalf("round trip C %d -> M %d -> C %d (inside %v)", c, m, got, inside)
				}
			} else {
				if !accept || got != start || d.Lost != start-c || c >= start {
					t.Fatalf("accepted loss: C %d, start %d, resume %d, lost %d", c, start, got, d.Lost)
				}
			}
		default:
			t.Fatalf("unknown action %v", d.Action)
		}
	})
}

// FuzzReverse checks the rollback conversion M -> M+1 and its inverse.
func FuzzReverse(f *testing.F) {
	f.Add(int64(0), true)
	f.Add(int64(-1), true)
	f.Add(int64(math.MaxInt64), true)
	f.Add(int64(7), false)
	f.Fuzz(func(t *testing.T, m int64, present bool) {
		o := offsets.MirrorOffset{}
		if present {
			o = offsets.NewMirrorOffset(m)
		}
		g, err := o.GroupOffset()
		if !present {
			if err != nil || g.Present() {
				t.Fatalf("null reversed to %v, %v", g, err)
			}
			return
		}
		if m < 0 || m == math.MaxInt64 {
			if err == nil {
				t.Fatalf("M %d reversed without error to %v", m, g)
			}
			return
		}
		c, ok := g.Get()
		if err != nil || !ok || c != m+1 {
			t.Fatalf("M %d reversed to %v, %v", m, g, err)
		}
		d := offsets.Decide(offsets.SourcePartition{Topic: "t"}, g, offsets.LogBounds{Start: 0, End: c})
		if d.Offset != o {
			t.Fatalf("M %d -> C %d -> M %v", m, c, d.Offset)
		}
	})
}

func TestActionTextErrors(t *testing.T) {
	var a offsets.Action
	if err := a.UnmarshalText([]byte("resume")); !errors.Is(err, offsets.ErrUnknownAction) {
		t.Errorf("UnmarshalText(resume) = %v, want ErrUnknownAction", err)
	}
	if _, err := offsets.Action(9).MarshalText(); !errors.Is(err, offsets.ErrUnknownAction) {
		t.Errorf("MarshalText(9) = %v, want ErrUnknownAction", err)
	}
}
