package jsonstr

import (
	"encoding/json"
	"testing"
)

// FuzzAppend: Append writes what json.Marshal writes, after what buf held.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "orders", `a"b\c`, "<&>", "\x00\x1f", "\u2028", "日本", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		got := Append([]byte("x"), s)
		if string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, want x%s", s, got, want)
		}
	})
}
