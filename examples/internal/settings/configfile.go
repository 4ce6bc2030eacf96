package settings

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/didyoumean"
	"github.com/mm2cutover/mm2cutover/examples/internal/shellfile"
	"github.com/mm2cutover/mm2cutover/redact"
)

// configFile is a parsed -config file: the value of each MM2CUTOVER_*
// key and the line that set it.
type configFile struct {
	path   string
	values map[string]string
	lines  map[string]int
}

// lookup returns the value the file gives key, if any.
func (f *configFile) lookup(key string) (string, bool) {
	if f == nil {
		return "", false
	}
	v, ok := f.values[key]
	return v, ok
}

// readConfigFile reads a settings file of MM2CUTOVER_<FLAG>=value lines
// the way a POSIX shell that sources it reads it (package shellfile). A
// line a shell would read otherwise is refused, and so are a key that
// names no flag, a key given twice and a password (those come from the
// environment only). Every bad line is named with its line number, in one
// error.
func readConfigFile(path string, names map[string]bool) (*configFile, error) {
	if path == "" {
		return nil, nil
	}
	assigns, bad, err := shellfile.Read(path, "MM2CUTOVER_<FLAG>=value")
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for n := range names {
		known[envKey(n)] = true
	}
	f := &configFile{path: path, values: map[string]string{}, lines: map[string]int{}}
	refuse := func(a shellfile.Assignment, format string, args ...any) {
		bad = append(bad, &shellfile.LineError{Path: path, Line: a.Line, Err: fmt.Errorf(format, args...)})
	}
	for _, a := range assigns {
		switch {
		case strings.HasSuffix(a.Name, "_PASSWORD"):
			refuse(a, "%s: passwords come from the environment only", a.Name)
		case !known[a.Name]:
			refuse(a, "%s names no setting%s", a.Name, didyoumean.Hint(a.Name, slices.Sorted(maps.Keys(known)), ""))
		case f.lines[a.Name] != 0:
			refuse(a, "%s given twice (first on line %d)", a.Name, f.lines[a.Name])
		default:
			f.values[a.Name], f.lines[a.Name] = a.Value, a.Line
		}
	}
	if len(bad) > 0 {
		slices.SortStableFunc(bad, func(a, b *shellfile.LineError) int { return a.Line - b.Line })
		errs := make([]error, len(bad))
		for i, e := range bad {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// fromEnv sets each named flag not given on the command line from
// MM2CUTOVER_<NAME> in the environment, else from the settings file. A
// value a flag refuses is named with where it came from (the file's line,
// or the environment) and what the flag takes; every such value is
// reported, in one error.
func fromEnv(fs *flag.FlagSet, names map[string]bool, file *configFile, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	type failure struct {
		line int
		err  error
	}
	var failures []failure
	fs.VisitAll(func(f *flag.Flag) {
		if !names[f.Name] || given[f.Name] {
			return
		}
		key := envKey(f.Name)
		where, line := key+" (environment)", 0
		v, ok := lookupEnv(key)
		if !ok {
			if v, ok = file.lookup(key); ok {
				line = file.lines[key]
				where = fmt.Sprintf("%s:%d: %s", file.path, line, key)
			}
		}
		if !ok {
			return
		}
		if err := f.Value.Set(v); err != nil {
			msg := err.Error()
			if shellfile.Quote(v) != strconv.Quote(v) {
				msg = redact.Text(msg, v)
			}
			failures = append(failures, failure{line, fmt.Errorf("%s: invalid value %s: %s%s", where, shellfile.Quote(v), msg, wants(f.Value))})
		}
	})
	slices.SortStableFunc(failures, func(a, b failure) int { return a.line - b.line })
	errs := make([]error, len(failures))
	for i, f := range failures {
		errs[i] = f.err
	}
	return errors.Join(errs...)
}

// wants says what a flag of the standard kinds takes, for an error about a
// value it refused ("parse error" alone says little).
func wants(v flag.Value) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case time.Duration:
		return " (want a duration such as 30s, 2m or 1h30m)"
	case int, int64, uint, uint64:
		return " (want a whole number)"
	case bool:
		return " (want true or false)"
	case float64:
		return " (want a number)"
	}
	return ""
}
