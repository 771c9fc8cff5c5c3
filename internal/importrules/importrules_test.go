// Package importrules checks the module's dependency rules: client
// packages never import the servers, gnet appears only in internal/server,
// and the codec opens no sockets and starts no goroutines. Packages are classified by pattern, so packages added later
// are covered without being named here.
package importrules

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/go-rocketmq/rocketmq"

// servers are the packages only the in-repo servers and their harnesses
// may import.
var servers = []string{
	module + "/internal/server",
	module + "/internal/broker",
	module + "/internal/namesrv",
	module + "/internal/store",
	module + "/internal/ha",
}

const gnet = "github.com/panjf2000/gnet"

// netAllowed lists codec files that may import net, with why. A stale
// entry fails the test so the list only shrinks.
var netAllowed = map[string]string{
	"msgid_gen.go": "net.Interfaces picks the host address that message ids embed; it opens no socket",
}

type pkg struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	Imports        []string
	Deps           []string
	TestImports    []string
	XTestImports   []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles,Imports,Deps,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

func isServer(path string) bool {
	return slices.ContainsFunc(servers, func(s string) bool { return path == s || strings.HasPrefix(path, s+"/") })
}

// isHarness reports packages that exist to run the servers or to join
// them with clients: the public test harness, the binaries, end-to-end
// test packages, the loopback benchmarks and the quickstart program, which
// starts a cluster of its own through rmqtest.
func isHarness(path string) bool {
	r := rel(path)
	return r == "rmqtest" || strings.HasPrefix(r, "rmqtest/") || strings.HasPrefix(r, "cmd/") ||
		r == "e2e" || strings.HasSuffix(r, "/e2e") || r == "internal/wirebench" || r == "examples/quickstart"
}

// isCodec reports the codec: the module root and remoting with its
// sub-packages.
func isCodec(path string) bool {
	r := rel(path)
	return r == "." || r == "remoting" || strings.HasPrefix(r, "remoting/")
}

func isGnet(path string) bool { return path == gnet || strings.HasPrefix(path, gnet+"/") }

func TestClientsDoNotImportServers(t *testing.T) {
	clients := 0
	for _, p := range listPackages(t) {
		if isServer(p.ImportPath) || isHarness(p.ImportPath) {
			continue
		}
		clients++
		for _, d := range p.Deps {
			if isServer(d) || isGnet(d) {
				t.Errorf("%s depends on %s", rel(p.ImportPath), d)
			}
		}
		// Their tests too: a client's test against the servers belongs in
		// an e2e package. Example programs may test themselves against
		// rmqtest, as a user's program would, and so may the crash suite
		// and the web console, whose tests need a whole cluster.
		r := rel(p.ImportPath)
		example := strings.HasPrefix(r, "examples/") || r == "internal/crashtest" || r == "internal/console"
		for _, d := range slices.Concat(p.TestImports, p.XTestImports) {
			if isServer(d) || isGnet(d) || (rel(d) == "rmqtest" && !example) {
				t.Errorf("tests of %s import %s", rel(p.ImportPath), d)
			}
		}
	}
	if clients < 5 {
		t.Fatalf("only %d client packages checked", clients)
	}
}

func TestGnetOnlyInServer(t *testing.T) {
	seen := false
	for _, p := range listPackages(t) {
		for _, d := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if !isGnet(d) {
				continue
			}
			if rel(p.ImportPath) != "internal/server" {
				t.Errorf("%s imports %s; only internal/server may", rel(p.ImportPath), d)
			}
			seen = true
		}
	}
	if !seen {
		t.Fatal("internal/server does not import gnet: the check looks at the wrong packages")
	}
}

func TestCodecHasNoSocketsOrGoroutines(t *testing.T) {
	pkgs := listPackages(t)
	used := map[string]bool{}
	codecs := 0
	for _, p := range pkgs {
		if !isCodec(p.ImportPath) {
			continue
		}
		codecs++
		// Within the module the codec depends on the codec only.
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module+"/") && !isCodec(d) {
				t.Errorf("%s depends on %s", rel(p.ImportPath), rel(d))
			}
		}
		// Every file, whatever its build tags.
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(p.Dir, name)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			key := filepath.ToSlash(filepath.Join(rel(p.ImportPath), name))
			if rel(p.ImportPath) == "." {
				key = name
			}
			for _, is := range f.Imports {
				ip, _ := strconv.Unquote(is.Path.Value)
				if ip != "net" && (!strings.HasPrefix(ip, "net/") || ip == "net/netip") {
					continue
				}
				if _, ok := netAllowed[key]; ok && ip == "net" {
					used[key] = true
					continue
				}
				t.Errorf("%s imports %s: the codec opens no sockets", key, ip)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if g, ok := n.(*ast.GoStmt); ok {
					t.Errorf("%s: go statement: the codec starts no goroutines", fset.Position(g.Pos()))
				}
				return true
			})
		}
	}
	if codecs < 2 {
		t.Fatalf("only %d codec packages found", codecs)
	}
	for key, why := range netAllowed {
		if !used[key] {
			t.Errorf("%s no longer imports net (%s): drop it from netAllowed", key, why)
		}
	}
}

// The metrics hook package is imported by applications that implement it
// (and by the adapter modules): it depends on the standard library only.
func TestMetricsImportsStdlibOnly(t *testing.T) {
	found := false
	for _, p := range listPackages(t) {
		if rel(p.ImportPath) != "metrics" {
			continue
		}
		found = true
		for _, d := range p.Deps {
			if first, _, _ := strings.Cut(d, "/"); strings.Contains(first, ".") || d == module || strings.HasPrefix(d, module+"/") {
				t.Errorf("metrics depends on %s", d)
			}
		}
	}
	if !found {
		t.Fatal("package metrics not found")
	}
}
