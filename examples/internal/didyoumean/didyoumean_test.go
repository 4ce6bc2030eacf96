package didyoumean

import (
	"slices"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"apply", "apply", 0},
		{"", "plan", 4},
		{"aply", "apply", 1},    // a deletion
		{"applyy", "apply", 1},  // an insertion
		{"verfiy", "verify", 1}, // a swap of neighbours is one edit
		{"prechek", "precheck", 1},
		{"stauts", "status", 1},
		{"roolback", "rollback", 1},
		{"plan", "apply", 4},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestSuggest: what a mistyped step, flag, value or variable is said to
// mean — and nothing where no candidate is close, so that a wrong word is
// never suggested for a word that is merely unknown.
func TestSuggest(t *testing.T) {
	stepNames := []string{"precheck", "plan", "apply", "resume", "verify", "status", "run", "strimzi", "rollback", "report", "help", "options", "version", "completion"}
	flagNames := []string{"stability-window", "stopped-window", "readback-timeout", "catchup-timeout", "request-timeout", "retry-timeout",
		"offsets-from", "offsets-alias", "offsets-connector", "source-bootstrap", "target-bootstrap", "yes", "o", "output", "json", "plan"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       []string
	}{
		{"aply", stepNames, []string{"apply"}},
		{"prechek", stepNames, []string{"precheck"}},
		{"verfiy", stepNames, []string{"verify"}},
		{"stauts", stepNames, []string{"status"}},
		{"Apply", stepNames, nil}, // the name itself, in another case: no suggestion of itself
		{"rollbak", stepNames, []string{"rollback"}},
		{"repot", stepNames, []string{"report"}},
		{"resum", stepNames, []string{"resume"}},
		{"versoin", stepNames, []string{"version"}},
		{"pre", stepNames, []string{"precheck"}}, // the start of a step
		{"launch", stepNames, nil},
		{"delete", stepNames, nil},
		{"x", stepNames, nil},
		{"stabilty-window", flagNames, []string{"stability-window"}},
		{"stability-windows", flagNames, []string{"stability-window"}},
		{"offsets-form", flagNames, []string{"offsets-from"}},
		{"offset-from", flagNames, []string{"offsets-from"}},
		{"readback-timout", flagNames, []string{"readback-timeout"}},
		{"retry-timeout-", flagNames, []string{"retry-timeout"}},
		{"timeout", flagNames, nil},
		{"ye", flagNames, []string{"yes"}},
		{"jsno", flagNames, []string{"json"}},
		{"offsets", flagNames, []string{"offsets-from", "offsets-alias", "offsets-connector"}}, // a start: the closest first, at most three
		{"MM2CUTOVER_GRUOP", []string{"MM2CUTOVER_GROUP", "MM2CUTOVER_TOPICS"}, []string{"MM2CUTOVER_GROUP"}},
		{"yaml", []string{"text", "json"}, nil},
		{"jsn", []string{"text", "json"}, []string{"json"}},
	} {
		if got := Suggest(tc.name, tc.candidates); !slices.Equal(got, tc.want) {
			t.Errorf("Suggest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestHint(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		candidates   []string
		want         string
	}{
		{"aply", "", []string{"apply", "plan"}, "; did you mean apply?"},
		{"stabilty-window", "-", []string{"stability-window", "stopped-window"}, "; did you mean -stability-window?"},
		{"off", "-", []string{"offsets-from", "offsets-alias"}, "; did you mean -offsets-from or -offsets-alias?"},
		{"off", "-", []string{"offsets-from", "offsets-alias", "offsets-connector"}, "; did you mean -offsets-from, -offsets-alias or -offsets-connector?"},
		{"launch", "", []string{"apply", "plan"}, ""},
	} {
		if got := Hint(tc.name, tc.candidates, tc.prefix); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
