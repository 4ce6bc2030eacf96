package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.plan.json"))
	if len(files) == 0 {
		f.Fatal("no seed plans in testdata")
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(bytes.ReplaceAll(b, []byte("\n"), nil))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
}

// checkRoundTrip encodes p, decodes the result strictly and checks that it
// is the same plan and that encoding it again gives the same bytes.
func checkRoundTrip(t *testing.T, p *Plan) {
	t.Helper()
	var enc bytes.Buffer
	if err := p.Encode(&enc); err != nil {
		t.Fatalf("a decoded plan does not encode: %v", err)
	}
	back, err := Decode(bytes.NewReader(enc.Bytes()))
	if err != nil {
		t.Fatalf("an encoded plan does not decode: %v\n%s", err, enc.Bytes())
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Fatalf("decode(encode(p)) differs (-p +back):\n%s", diff)
	}
	var again bytes.Buffer
	if err := back.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc.Bytes(), again.Bytes()) {
		t.Fatalf("re-encoding differs:\n%s\n%s", enc.Bytes(), again.Bytes())
	}
}

// FuzzDecode checks that decoding never panics and that whatever decodes
// re-encodes to a fixed point. Most mutations break the fingerprint, so the
// content rules are also fuzzed with the fingerprint check off and the
// fingerprint recomputed.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := Decode(bytes.NewReader(data)); err == nil {
			checkRoundTrip(t, p)
		} else if p != nil {
			t.Fatalf("plan and error %v", err)
		}
		p, err := decode(bytes.NewReader(data), false)
		if err != nil {
			return
		}
		p.Fingerprint = p.computeFingerprint()
		checkRoundTrip(t, p)
	})
}

// FuzzParseResetOffsetsCSV checks that the CSV reader never panics and only
// returns offsets a plan can use.
func FuzzParseResetOffsetsCSV(f *testing.F) {
	f.Add("orders,0,42\norders,1,0\n", "")
	f.Add("g1,orders,0,42\ng2,orders,0,1\n", "g1")
	f.Add("topic,partition,offset\n\"orders\",0,1\n", "")
	f.Fuzz(func(t *testing.T, in, group string) {
		g, err := ParseResetOffsetsCSV(strings.NewReader(in), group)
		if err != nil {
			return
		}
		if len(g) == 0 {
			t.Fatal("no offsets and no error")
		}
		for p, c := range g {
			if p.Validate() != nil || c < 0 {
				t.Fatalf("parsed invalid %v: %d", p, c)
			}
		}
	})
}
