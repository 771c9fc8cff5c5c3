package mqclient

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSharedOptionSet checks that producer, consumer and admin offer every
// shared option under the same name with the same parameters, each
// applying the Setting of the same name, and that every shared Setting
// has its With… name in OptionNames.
func TestSharedOptionSet(t *testing.T) {
	settings := settingFuncs(t, ".")
	var fromSettings []string
	for name := range settings {
		fromSettings = append(fromSettings, "With"+name)
	}
	slices.Sort(fromSettings)
	want := slices.Sorted(slices.Values(OptionNames))
	if !slices.Equal(fromSettings, want) {
		t.Fatalf("Setting funcs %v, OptionNames %v", fromSettings, want)
	}
	for _, pkg := range []string{"producer", "consumer", "admin"} {
		t.Run(pkg, func(t *testing.T) {
			got := optionFuncs(t, filepath.Join("..", "..", pkg))
			for _, name := range OptionNames {
				f, ok := got[name]
				if !ok {
					t.Errorf("%s.%s is missing", pkg, name)
					continue
				}
				if f.params != settings[strings.TrimPrefix(name, "With")].params {
					t.Errorf("%s.%s(%s), want (%s)", pkg, name, f.params, settings[strings.TrimPrefix(name, "With")].params)
				}
				if want := "mqclient." + strings.TrimPrefix(name, "With"); f.calls != want {
					t.Errorf("%s.%s applies %q, want %q", pkg, name, f.calls, want)
				}
			}
		})
	}
}

type funcInfo struct {
	params string // parameter list as written
	calls  string // for options: the mqclient.X passed to shared(...)
}

func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

func params(fset *token.FileSet, fl *ast.FieldList) string {
	var b strings.Builder
	for i, f := range fl.List {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.ExprString(f.Type))
	}
	return b.String()
}

// funcDecls returns the functions (not methods) of dir's non-test files.
func funcDecls(t *testing.T, dir string) (*token.FileSet, []*ast.FuncDecl) {
	t.Helper()
	fset, files := parseDir(t, dir)
	var out []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out = append(out, fd)
			}
		}
	}
	return fset, out
}

// settingFuncs lists the exported funcs returning Setting.
func settingFuncs(t *testing.T, dir string) map[string]funcInfo {
	fset, funcs := funcDecls(t, dir)
	out := map[string]funcInfo{}
	for _, fd := range funcs {
		if !fd.Name.IsExported() || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
			continue
		}
		if id, ok := fd.Type.Results.List[0].Type.(*ast.Ident); ok && id.Name == "Setting" {
			out[fd.Name.Name] = funcInfo{params: params(fset, fd.Type.Params)}
		}
	}
	return out
}

// optionFuncs lists the exported With… funcs returning Option.
func optionFuncs(t *testing.T, dir string) map[string]funcInfo {
	fset, funcs := funcDecls(t, dir)
	out := map[string]funcInfo{}
	for _, fd := range funcs {
		if !strings.HasPrefix(fd.Name.Name, "With") || fd.Type.Results == nil {
			continue
		}
		fi := funcInfo{params: params(fset, fd.Type.Params)}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "shared" && len(call.Args) == 1 {
				if inner, ok := call.Args[0].(*ast.CallExpr); ok {
					fi.calls = types.ExprString(inner.Fun)
				}
			}
			return true
		})
		out[fd.Name.Name] = fi
	}
	return out
}

// TestSettings checks that each Setting writes its field.
func TestSettings(t *testing.T) {
	var c Config
	for _, s := range []Setting{
		NameServers("a:1"), Namespace("ns"), InstanceName("i"), UnitName("u"),
		ClientIP("1.2.3.4"), CallTimeout(7), HeartbeatInterval(8), RouteRefreshInterval(9),
	} {
		s(&c)
	}
	want := Config{NameServers: []string{"a:1"}, Namespace: "ns", InstanceName: "i", UnitName: "u",
		ClientIP: "1.2.3.4", RequestTimeout: 7, HeartbeatInterval: 8, PollNameServerInterval: 9}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}
