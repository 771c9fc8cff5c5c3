package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// The end-to-end tests run the real binary, built once here, against an
// in-process cluster (rmqtest) or, with ROCKETMQ_NAMESRV=host:port, an
// external one.

const envExternal = "ROCKETMQ_NAMESRV"

// wait bounds every wait for something the cluster does within a fraction
// of a second when all is well.
const wait = 30 * time.Second

var binary string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rmqadmin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "rmqadmin")
	cmd := exec.Command(goTool(), "build", "-o", binary, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", exe); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
	args           []string
}

func (r result) String() string {
	return fmt.Sprintf("rmqadmin %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// decode decodes the JSON document of the run into v, failing t unless
// the keys of every object in it are sorted.
func (r result) decode(t *testing.T, v any) {
	t.Helper()
	if err := sortedKeys(r.stdout); err != nil {
		t.Fatalf("%v\n%v", err, r)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("bad JSON: %v\n%v", err, r)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document\n%v", r)
	}
}

// sortedKeys checks that the keys of every object of the JSON document
// doc are in sorted order.
func sortedKeys(doc string) error {
	dec := json.NewDecoder(strings.NewReader(doc))
	// One frame per open object or array: the last key seen, and whether
	// the next string token is a key.
	type frame struct {
		object bool
		last   string
		key    bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if k, isKey := tok.(string); isKey && top != nil && top.object && top.key {
			if top.last != "" && k <= top.last {
				return fmt.Errorf("JSON key %q after %q: keys not sorted", k, top.last)
			}
			top.last, top.key = k, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the parent object expects a key next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

// exe runs the binary with args and the environment env (the test's own,
// without the variables rmqadmin reads, plus env).
func exe(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return exeIn(t, nil, env, args...)
}

// exeIn is exe with stdin as the standard input.
func exeIn(t *testing.T, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = stdin
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case envNameServer, envAccessKey, envSecretKey, envSecurityToken:
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), args: args}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("rmqadmin %s: %v", strings.Join(args, " "), err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// env is the cluster of a test.
type env struct {
	ns         string
	local      *rmqtest.Cluster // nil for an external cluster
	cluster    string
	broker     string // the first master broker's name
	brokerAddr string // its address
	adm        *admin.Admin
}

func start(t *testing.T) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.local = rmqtest.StartCluster(t)
		e.ns = e.local.NameServerAddr()
	}
	ctx := ctxT(t)
	masters, err := rmqtest.MasterBrokers(ctx, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	e.broker = slices.Sorted(maps.Keys(masters))[0]
	e.brokerAddr = masters[e.broker]
	e.adm, err = admin.New(admin.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.adm.Close(ctx)
	})
	ci, err := e.adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for c, names := range ci.ClusterAddrTable {
		if slices.Contains(names, e.broker) {
			e.cluster = c
		}
	}
	if e.cluster == "" {
		t.Fatalf("broker %s in no cluster", e.broker)
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// run runs the binary against the cluster.
func (e *env) run(t *testing.T, args ...string) result {
	t.Helper()
	return exe(t, nil, append([]string{"-n", e.ns}, args...)...)
}

// ok is run failing t unless the command succeeds.
func (e *env) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := e.run(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("want success:\n%v", r)
	}
	return r
}

// fails is run failing t unless the command exits with code and one line
// "rmqadmin: ..." containing every want on stderr, and nothing on stdout.
// Under JSON output that line is {"error": "rmqadmin: ...", "exitStatus": code}.
func fails(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	msg := r.stderr
	if strings.HasPrefix(msg, "{") {
		var je struct {
			Error      string `json:"error"`
			ExitStatus int    `json:"exitStatus"`
		}
		dec := json.NewDecoder(strings.NewReader(msg))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&je); err != nil || je.ExitStatus != code {
			t.Fatalf("want a JSON error with exit status %d (%v):\n%v", code, err, r)
		}
		msg = je.Error + "\n"
	}
	if r.code != code || r.stdout != "" || !strings.HasPrefix(msg, "rmqadmin: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("want exit %d and one line on stderr:\n%v", code, r)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("stderr lacks %q:\n%v", w, r)
		}
	}
}

// has fails t unless the table output has a line whose fields start with
// cells, in order.
func has(t *testing.T, r result, cells ...string) {
	t.Helper()
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return
		}
	}
	t.Errorf("no line %q in the output:\n%v", strings.Join(cells, " "), r)
}

// name returns a topic or group name of its own for t.
func name(t *testing.T, prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}
