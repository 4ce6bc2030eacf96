package mm2cutover_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unprefixed returns, for the package-level sentinel errors of one package
// whose text does not start with "<package name>: ", "name: text". A
// sentinel is a package-level var whose value is errors.New or fmt.Errorf of
// one string literal, or a call or conversion with one string literal
// argument of a type of the package that has an Error method (plan's
// invalid("...")), or of anything else when the var is declared an error.
// An errors.New inside a function is not a sentinel and is not checked.
func unprefixed(files []*ast.File) []string {
	if len(files) == 0 {
		return nil
	}
	pkg := files[0].Name.Name
	errorTypes := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "Error" || len(fd.Recv.List) != 1 {
				continue
			}
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				errorTypes[id.Name] = true
			}
		}
	}
	var bad []string
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				declaredError := false
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "error" {
					declaredError = true
				}
				for i, v := range vs.Values {
					text, ok := sentinelText(v, errorTypes, declaredError)
					if !ok || strings.HasPrefix(text, pkg+": ") {
						continue
					}
					name := "_"
					if i < len(vs.Names) {
						name = vs.Names[i].Name
					}
					bad = append(bad, name+": "+strconv.Quote(text))
				}
			}
		}
	}
	return bad
}

// sentinelText returns the string literal a sentinel's value is made of.
func sentinelText(v ast.Expr, errorTypes map[string]bool, declaredError bool) (string, bool) {
	call, ok := v.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	switch fun := call.Fun.(type) {
	case *ast.SelectorExpr:
		x, ok := fun.X.(*ast.Ident)
		if !ok || !(x.Name == "errors" && fun.Sel.Name == "New" || x.Name == "fmt" && fun.Sel.Name == "Errorf") && !declaredError {
			return "", false
		}
	case *ast.Ident:
		if !errorTypes[fun.Name] && !declaredError {
			return "", false
		}
	default:
		return "", false
	}
	text, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", false
	}
	return text, true
}

func parseSource(t *testing.T, src string) []*ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	return []*ast.File{f}
}

func TestUnprefixedFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{
			name: "errors.New without prefix",
			src:  `package offsets; import "errors"; var ErrMissing = errors.New("no committed offset")`,
			want: []string{`ErrMissing: "no committed offset"`},
		},
		{
			name: "another package's prefix",
			src:  `package plan; import "errors"; var ErrX = errors.New("offsets: x")`,
			want: []string{`ErrX: "offsets: x"`},
		},
		{
			name: "prefix without the space",
			src:  "package plan; import \"errors\"; var ErrX = errors.New(`plan:x`)",
			want: []string{`ErrX: "plan:x"`},
		},
		{
			name: "unexported, in a block, of a local error type",
			src: `package plan
type invalid string
func (e invalid) Error() string { return string(e) }
var (
	errDup = invalid("given twice")
	ErrOK error = invalid("plan: fine")
	ErrBad error = invalid("malformed input")
)`,
			want: []string{`errDup: "given twice"`, `ErrBad: "malformed input"`},
		},
		{
			name: "declared error, any constructor",
			src:  `package verify; var ErrX error = newErr("precheck failed")`,
			want: []string{`ErrX: "precheck failed"`},
		},
		{
			name: "fmt.Errorf of one literal",
			src:  `package verify; import "fmt"; var ErrX = fmt.Errorf("precheck failed")`,
			want: []string{`ErrX: "precheck failed"`},
		},
		{
			name: "prefixed sentinels",
			src: `package offsets; import "errors"
type invalid string
func (e invalid) Error() string { return string(e) }
var ErrBeyondEnd = errors.New("offsets: committed offset beyond log end offset")
var ErrX error = invalid("offsets: x")`,
		},
		{
			name: "function-local errors.New wrapped by a typed error",
			src: `package clientconf; import "errors"
type StoreError struct{ Err error }
func (e *StoreError) Error() string { return "clientconf: " + e.Err.Error() }
func load() error { return &StoreError{Err: errors.New("no certificate found")} }`,
		},
		{
			name: "not sentinels: other calls and values",
			src: `package redact; import "strings"
var Keys = []string{"password"}
var lower = strings.ToLower("X")
var name = "no prefix"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unprefixed(parseSource(t, tc.src))
			if !slices.Equal(got, tc.want) {
				t.Errorf("unprefixed = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSentinelPrefix enforces the module's rule on error texts (see the
// package doc): the text of every package-level sentinel error of a library
// package starts with the package's name and ": ". Library packages are the
// directories of this module but internal, examples, docker and testdata;
// the ten of the list below must be among them.
func TestSentinelPrefix(t *testing.T) {
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case "internal", "examples", "docker", "testdata":
			return filepath.SkipDir
		}
		if path != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
			return filepath.SkipDir
		}
		dirs = append(dirs, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		pkgs := map[string][]*ast.File{}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
		}
		for name, files := range pkgs {
			checked[filepath.ToSlash(dir)] = true
			for _, b := range unprefixed(files) {
				t.Errorf("%s: sentinel %s does not start with %q", dir, b, name+": ")
			}
		}
	}
	for _, dir := range []string{"offsets", "plan", "verify", "connect", "connect/connectfake", "kafkaadmin", "clientconf", "redact", "flinksavepoint", "flinkrest"} {
		if !checked[dir] {
			t.Errorf("package %s was not checked", dir)
		}
	}
}
