package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

const (
	mainPath = "github.com/mm2cutover/mm2cutover/examples/cutover"
	appPath  = "github.com/mm2cutover/mm2cutover/examples/internal/app"
	// settingsPath holds Settings and Flags.
	settingsPath = "github.com/mm2cutover/mm2cutover/examples/internal/settings"
)

// loaded is the command line's source, app's and settings', type-checked.
type loaded struct {
	fset  *token.FileSet
	info  *types.Info
	decls map[*types.Func]*ast.FuncDecl
	files map[string][]*ast.File // by import path
	pkgs  map[string]*types.Package
	// dirs and goFiles are the go command's, by import path.
	dirs    map[string]string
	goFiles map[string][]string
}

// load type-checks examples/cutover, examples/internal/app and
// examples/internal/settings from their source (the files a default build
// compiles), their dependencies from the export data the go command lists.
func load(t *testing.T) *loaded {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	export, dirs, goFiles := map[string]string{}, map[string]string{}, map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		export[f[0]], dirs[f[0]], goFiles[f[0]] = f[1], f[2], strings.Fields(f[3])
	}
	l := &loaded{dirs: dirs, goFiles: goFiles, fset: token.NewFileSet(), decls: map[*types.Func]*ast.FuncDecl{}, files: map[string][]*ast.File{}, pkgs: map[string]*types.Package{},
		info: &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}}
	gc := importer.ForCompiler(l.fset, "gc", func(path string) (io.ReadCloser, error) {
		if export[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(export[path])
	})
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p, ok := l.pkgs[path]; ok {
			return p, nil
		}
		return gc.Import(path)
	})
	for _, path := range []string{settingsPath, appPath, mainPath} {
		for _, name := range goFiles[path] {
			f, err := parser.ParseFile(l.fset, filepath.Join(dirs[path], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			l.files[path] = append(l.files[path], f)
		}
		conf := types.Config{Importer: imp}
		pkg, err := conf.Check(path, l.fset, l.files[path], l.info)
		if err != nil {
			t.Fatalf("type-check %s: %v", path, err)
		}
		l.pkgs[path] = pkg
		for _, f := range l.files[path] {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					l.decls[l.info.Defs[fd.Name].(*types.Func)] = fd
				}
			}
		}
	}
	return l
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// reader finds the settings functions read.
type reader struct {
	*loaded
	settings, opts types.Type
	// skip are functions not walked: they fill defaults, validate or parse
	// the settings, touching every one without using it.
	skip map[*types.Func]bool
	// deferred are the fields of cutover.Options the code fills from
	// settings.Settings (ReadBackTimeout: "ReadBackTimeout"): a step reads them
	// only where it calls a method of the library that uses them.
	deferred map[string]string
	// libUses are the fields of cutover.Options each method of
	// *cutover.Cutover uses, itself or through the methods it calls.
	libUses map[string][]string
}

// selectorField returns the field of settings.Settings or options that sel
// selects ("Group", "o.planPath"), or of a struct field of settings.Settings
// ("WorkerStorage.ConfigTopic"); "" for any other.
func (r *reader) selectorField(sel *ast.SelectorExpr) string {
	s := r.info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return ""
	}
	recv := s.Recv()
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	switch {
	case types.Identical(recv, r.settings):
		return s.Obj().Name()
	case types.Identical(recv, r.opts):
		return "o." + s.Obj().Name()
	}
	if inner, ok := sel.X.(*ast.SelectorExpr); ok {
		if outer := r.selectorField(inner); outer != "" && !strings.HasPrefix(outer, "o.") && !strings.Contains(outer, ".") {
			return outer + "." + s.Obj().Name()
		}
	}
	return ""
}

// fieldsRead walks the functions of roots and every function of the three
// packages they reach, and returns the fields of settings.Settings ("Group",
// "WorkerStorage.ConfigTopic", "Source" for the whole struct) and of
// options ("o.planPath") they read, those the library reads for them
// included.
func (r *reader) fieldsRead(roots ...*types.Func) map[string]bool {
	seen := map[*types.Func]bool{}
	read := map[string]bool{}
	var walk func(fn *types.Func)
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			f, ok := r.info.Uses[n].(*types.Func)
			if !ok {
				return true
			}
			if f.Pkg() != nil && f.Pkg().Path() == cutoverPath {
				for _, k := range r.libUses[f.FullName()] {
					if field := r.deferred[k]; field != "" {
						read[field] = true
					}
				}
			}
			walk(f.Origin())
		case *ast.CompositeLit:
			if tv, ok := r.info.Types[n]; ok && isNamed(tv.Type, cutoverPath, "Options") {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if sel, ok := kv.Value.(*ast.SelectorExpr); ok && r.deferred[kv.Key.(*ast.Ident).Name] == r.selectorField(sel) {
							continue // read where the library uses it
						}
					}
					ast.Inspect(e, visit)
				}
				return false
			}
		case *ast.SelectorExpr:
			if field := r.selectorField(n); field != "" {
				read[field] = true
				// s.WorkerStorage.ConfigTopic reads one field, not the
				// whole struct: its inner selector is not visited.
				if strings.Contains(field, ".") && !strings.HasPrefix(field, "o.") {
					return false
				}
			}
		}
		return true
	}
	walk = func(fn *types.Func) {
		fd := r.decls[fn]
		if seen[fn] || fd == nil || fd.Body == nil || r.skip[fn] {
			return
		}
		seen[fn] = true
		ast.Inspect(fd.Body, visit)
	}
	for _, root := range roots {
		walk(root)
	}
	return read
}

func isNamed(t types.Type, pkg, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

// method returns the method name of the named type of pkg.
func (l *loaded) method(t *testing.T, pkg, typ, name string) *types.Func {
	t.Helper()
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(l.pkgs[pkg].Scope().Lookup(typ).Type()), true, l.pkgs[pkg], name)
	f, ok := obj.(*types.Func)
	if !ok {
		t.Fatalf("no method %s.%s", typ, name)
	}
	return f
}

func (l *loaded) fn(t *testing.T, pkg, name string) *types.Func {
	t.Helper()
	f, ok := l.pkgs[pkg].Scope().Lookup(name).(*types.Func)
	if !ok {
		t.Fatalf("no func %s", name)
	}
	return f
}

// boundFields maps each flag to the field its fs.*Var call binds:
// "Group", "WorkerStorage.ConfigTopic" for settings.Settings, "f.srcBoot" for
// settings.Flags' own, "o.planPath" for options.
func (l *loaded) boundFields(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range []string{settingsPath, appPath, mainPath} {
		for _, f := range l.files[path] {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !strings.HasSuffix(sel.Sel.Name, "Var") {
					return true
				}
				addr, ok := call.Args[0].(*ast.UnaryExpr)
				lit, ok2 := call.Args[1].(*ast.BasicLit)
				if !ok || !ok2 || addr.Op != token.AND || lit.Kind != token.STRING {
					return true
				}
				name, _ := strconv.Unquote(lit.Value)
				out[name] = strings.TrimPrefix(types.ExprString(addr.X), "s.")
				return true
			})
		}
	}
	return out
}

const cutoverPath = "github.com/mm2cutover/mm2cutover/cutover"

// newReader prepares the walk: what it skips, the library options the code
// fills from the settings, and which of them each library method uses.
func newReader(t *testing.T, l *loaded) *reader {
	t.Helper()
	r := &reader{loaded: l, skip: map[*types.Func]bool{}, deferred: map[string]string{}, libUses: map[string][]string{},
		settings: l.pkgs[settingsPath].Scope().Lookup("Settings").Type(), opts: l.pkgs[mainPath].Scope().Lookup("options").Type()}
	for _, m := range [][2]string{{"Settings", "WithDefaults"}, {"Settings", "Validate"}, {"Settings", "WithPlan"}, {"Flags", "Settings"}, {"Flags", "ReadEnv"}} {
		r.skip[l.method(t, settingsPath, m[0], m[1])] = true
	}
	for _, path := range []string{settingsPath, appPath, mainPath} {
		for _, f := range l.files[path] {
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if tv, ok2 := l.info.Types[lit]; !ok || !ok2 || !isNamed(tv.Type, cutoverPath, "Options") {
					return true
				}
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
							if field := r.selectorField(sel); field != "" && !strings.HasPrefix(field, "o.") {
								r.deferred[kv.Key.(*ast.Ident).Name] = field
							}
						}
					}
				}
				return true
			})
		}
	}
	if len(r.deferred) == 0 {
		t.Fatal("no cutover.Options filled from the settings: the walk's model of the code is out of date")
	}
	// The library's methods of *Cutover: the c.opts fields each uses, and
	// the methods it calls.
	uses, calls := map[string][]string{}, map[string][]string{}
	for _, name := range l.goFiles[cutoverPath] {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(l.dirs[cutoverPath], name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || types.ExprString(fd.Recv.List[0].Type) != "*Cutover" {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "opts" {
						uses[fd.Name.Name] = append(uses[fd.Name.Name], sel.Sel.Name)
					} else if id, ok := sel.X.(*ast.Ident); ok && len(fd.Recv.List[0].Names) > 0 && id.Name == fd.Recv.List[0].Names[0].Name {
						calls[fd.Name.Name] = append(calls[fd.Name.Name], sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	for m := range calls {
		seen := map[string]bool{}
		var closure func(string)
		var fields []string
		closure = func(name string) {
			if seen[name] {
				return
			}
			seen[name] = true
			fields = append(fields, uses[name]...)
			for _, c := range calls[name] {
				closure(c)
			}
		}
		closure(m)
		r.libUses["(*"+cutoverPath+".Cutover)."+m] = fields
	}
	if !slices.Contains(r.libUses["(*"+cutoverPath+".Cutover).Apply"], "ReadBackTimeout") {
		t.Fatalf("the library's Apply uses no ReadBackTimeout: the walk's model of the library is out of date (%v)", r.libUses)
	}
	return r
}

// settingsOfPrivate are the settings.Settings fields that settings.Flags' own fields
// become (Flags.Settings): reading the field reads the flag.
var settingsOfPrivate = map[string][]string{
	"f.srcBoot": {"Source"}, "f.srcSec": {"Source"}, "f.srcMech": {"Source"}, "f.srcUser": {"Source"}, "f.srcCA": {"Source"}, "f.srcClient": {"Source"},
	"f.tgtBoot": {"Target"}, "f.tgtSec": {"Target"}, "f.tgtMech": {"Target"}, "f.tgtUser": {"Target"}, "f.tgtCA": {"Target"}, "f.tgtClient": {"Target"},
	"f.topics": {"Topics"}, "f.mm2Src": {"SourceClient"}, "f.mm2Tgt": {"TargetClient"},
	"f.acceptExpired": {"AcceptExpired"}, "f.acceptedBy": {"AcceptExpired"},
	"f.offsetsFrom": {"OffsetsFile", "OffsetsTopic", "OffsetsSavepoint"}, "f.connectorProps": {"Extra"},
	"f.syncsLocation": {"OffsetSyncs"}, "f.syncsRF": {"OffsetSyncs"}, "f.connectClient": {"ConnectOptions"},
	"f.configFile": nil, // read for every step (Flags.ReadEnv)
}

// flagsOf are the flags whose fields read holds.
func flagsOf(t *testing.T, bound map[string]string, read map[string]bool) []string {
	t.Helper()
	has := func(field string) bool {
		for r := range read {
			if r == field || strings.HasPrefix(r, field+".") || strings.HasPrefix(field, r+".") {
				return true
			}
		}
		return false
	}
	var out []string
	for name, field := range bound {
		fields := []string{field}
		if strings.HasPrefix(field, "f.") {
			fs, ok := settingsOfPrivate[field]
			if !ok {
				t.Fatalf("-%s is bound to %s: settingsOfPrivate does not say which settings it becomes", name, field)
			}
			fields = fs
		}
		if slices.ContainsFunc(fields, has) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestStepFlagsAreWhatItReads derives from the code which flags each step
// reads — the fields of the settings its functions reach, through the
// command line's, app's and settings' functions and the library's methods they call
// — and holds each step's flags (its help, its completion) to them: a flag
// a step reads that its help does not show fails, and so does one its help
// shows that it does not read. Besides what the walk finds, every step is
// given the flags the command line reads for all of them (-config, -o,
// -json, -log-level) and a step that reaches the clusters the settings
// settings.Settings.Validate requires.
func TestStepFlagsAreWhatItReads(t *testing.T) {
	l := load(t)
	r := newReader(t, l)
	bound := l.boundFields(t)
	for f := range bound {
		if _, ok := findFlag(f); !ok {
			t.Errorf("-%s is bound but the command line has no such flag", f)
		}
	}
	main := func(name string) *types.Func { return l.fn(t, mainPath, name) }
	cli := func(name string) *types.Func { return l.method(t, mainPath, "cli", name) }
	reach := []*types.Func{l.fn(t, appPath, "Open"), l.fn(t, appPath, "FirstContact"), main("auditPath")}
	for _, tc := range []struct {
		step  string
		roots []*types.Func
	}{
		{"precheck", append([]*types.Func{cli("precheck")}, reach...)},
		{"plan", append([]*types.Func{cli("plan")}, reach...)},
		{"apply", append([]*types.Func{cli("apply"), main("strimziRefusesREST")}, reach...)},
		{"resume", append([]*types.Func{cli("resume"), main("strimziRefusesREST")}, reach...)},
		{"verify", append([]*types.Func{cli("verify")}, reach...)},
		{"status", append([]*types.Func{cli("status")}, reach...)},
		{"run", append([]*types.Func{cli("runAll"), main("strimziRefusesREST")}, reach...)},
		{"strimzi", append([]*types.Func{cli("strimzi")}, reach...)},
		{"rollback", append([]*types.Func{cli("rollback"), main("strimziRefusesREST")}, reach...)},
		{"report", []*types.Func{cli("writeReport"), main("auditPath")}},
		{"version", []*types.Func{main("printVersion")}},
	} {
		t.Run(tc.step, func(t *testing.T) {
			st, ok := findStep(tc.step)
			if !ok {
				t.Fatalf("no step %s", tc.step)
			}
			want := flagsOf(t, bound, r.fieldsRead(tc.roots...))
			want = append(want, "config", "output", "json")
			if tc.step != "version" {
				want = append(want, "log-level")
			}
			if st.cluster {
				want = append(want, settings.RequiredFlags()...)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			got := st.flagNames()
			slices.Sort(got)
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Errorf("%s reads -%s, which its help and completion do not show", tc.step, f)
				}
			}
			for _, f := range got {
				if !slices.Contains(want, f) {
					t.Errorf("%s's help shows -%s, which it does not read", tc.step, f)
				}
			}
		})
	}
}

// findFlag looks name up in the command line's flag set.
func findFlag(name string) (*flag.Flag, bool) {
	f := commandFlags().Lookup(name)
	return f, f != nil
}

// commandFlags is the command line's flag set.
func commandFlags() *flag.FlagSet {
	fs, _, _ := commandLine()
	return fs
}
