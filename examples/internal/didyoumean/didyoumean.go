// Package didyoumean names what a mistyped name may have meant: the
// flags, steps, settings and values of the examples' command lines.
package didyoumean

import (
	"cmp"
	"slices"
	"strings"
)

// Suggest returns the candidates a mistyped name may have meant, the
// closest first, at most three: those within an edit distance of 1 (names
// of up to 4 characters) or 2 (longer ones), a swap of two neighbours
// counting as one edit, and those the name is the start of (3 characters
// or more). Letter case is ignored. It returns nil when none is close.
func Suggest(name string, candidates []string) []string {
	type match struct {
		name string
		d    int
	}
	lname := strings.ToLower(name)
	most := 1
	if len(name) > 4 {
		most = 2
	}
	var ms []match
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == lname {
			continue
		}
		d := editDistance(lname, lc)
		if d > most && (len(lname) < 3 || !strings.HasPrefix(lc, lname)) {
			continue
		}
		ms = append(ms, match{c, d})
	}
	slices.SortStableFunc(ms, func(a, b match) int { return cmp.Or(cmp.Compare(a.d, b.d), strings.Compare(a.name, b.name)) })
	var out []string
	for _, m := range ms {
		if !slices.Contains(out, m.name) {
			out = append(out, m.name)
		}
	}
	return out[:min(len(out), 3)]
}

// Hint is "; did you mean X?" (or "X or Y", "X, Y or Z") with the
// Suggest of name among candidates, each written after prefix ("-" for a
// flag); "" when none is close.
func Hint(name string, candidates []string, prefix string) string {
	s := Suggest(name, candidates)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = prefix + s[i]
	}
	list := s[0]
	if len(s) > 1 {
		list = strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
	}
	return "; did you mean " + list + "?"
}

// editDistance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and swaps of two neighbours.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
