package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// These run in-process: what needs no cluster.

func TestParseTimestamp(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	local := func(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ms*int(time.Millisecond), time.Local)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "now", want: now},
		{in: "0", want: time.UnixMilli(0)},
		{in: "1700000000123", want: time.UnixMilli(1700000000123)},
		{in: "2024-02-29#23:59:58:007", want: local(2024, 2, 29, 23, 59, 58, 7)},
		{in: " 2024-01-02#03:04:05:999 ", want: local(2024, 1, 2, 3, 4, 5, 999)},
		{in: "-5", bad: true},
		{in: "", bad: true},
		{in: "yesterday", bad: true},
		{in: "2024-01-02 03:04:05", bad: true},
		{in: "2024-01-02#03:04:05", bad: true},
		{in: "2024-01-02#03:04:05:12", bad: true},
		{in: "2024-13-02#03:04:05:000", bad: true},
		{in: "2024-01-02#03:04:05:-01", bad: true},
		{in: "99999999999999999999", bad: true},
	} {
		got, err := parseTimestamp(tc.in, now)
		switch {
		case tc.bad && err == nil:
			t.Errorf("parseTimestamp(%q) = %v, want an error", tc.in, got)
		case tc.bad:
			if _, ok := err.(*usageError); !ok {
				t.Errorf("parseTimestamp(%q): %v is not a usage error", tc.in, err)
			}
		case err != nil:
			t.Errorf("parseTimestamp(%q): %v", tc.in, err)
		case !got.Equal(tc.want):
			t.Errorf("parseTimestamp(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "acl")
	if err := os.WriteFile(file, []byte("# comment\n\naccessKey = fileAK\nsecretKey=fileSK\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envOf := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	noEnv := envOf()
	for _, tc := range []struct {
		name  string
		g     globals
		env   func(string) string
		want  *remoting.ACLCredentials
		usage bool
	}{
		{name: "none", env: noEnv},
		{name: "flags", g: globals{accessKey: "a", secretKey: "s", token: "t"}, env: noEnv,
			want: &remoting.ACLCredentials{AccessKey: "a", SecretKey: "s", SecurityToken: "t"}},
		{name: "env", env: envOf(envAccessKey, "ea", envSecretKey, "es", envSecurityToken, "et"),
			want: &remoting.ACLCredentials{AccessKey: "ea", SecretKey: "es", SecurityToken: "et"}},
		{name: "file over env", g: globals{aclFile: file}, env: envOf(envAccessKey, "ea", envSecretKey, "es", envSecurityToken, "et"),
			want: &remoting.ACLCredentials{AccessKey: "fileAK", SecretKey: "fileSK", SecurityToken: "et"}},
		{name: "flags over file", g: globals{aclFile: file, secretKey: "s"}, env: noEnv,
			want: &remoting.ACLCredentials{AccessKey: "fileAK", SecretKey: "s"}},
		{name: "all flags over file", g: globals{aclFile: file, accessKey: "a", secretKey: "s"}, env: envOf(envAccessKey, "ea"),
			want: &remoting.ACLCredentials{AccessKey: "a", SecretKey: "s"}},
		{name: "access key only", g: globals{accessKey: "a"}, env: noEnv, usage: true},
		{name: "secret only", env: envOf(envSecretKey, "es"), usage: true},
		{name: "token only", g: globals{token: "t"}, env: noEnv, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := credentials(&tc.g, tc.env)
			if tc.usage {
				if _, ok := err.(*usageError); !ok {
					t.Fatalf("got %v, %v; want a usage error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadACLFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ content, want string }{
		{"accessKey=a\nTOPSECRET\n", "line 2: want key=value"},
		{"TOPSECRET=x\n", "line 1: unknown key"},
	} {
		file := filepath.Join(dir, "acl")
		if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := readACLFile(file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("readACLFile(%q): %v, want %q without the content", tc.content, err, tc.want)
		}
	}
	if _, err := readACLFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("readACLFile of a missing file: no error")
	}
}

func TestCell(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a\tb": `a\tb`, "two\nlines": `two\nlines`, "": ""} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunUsage checks, in-process, the statuses of command lines that fail
// before any connection.
func TestRunUsage(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitUsage, "Commands:"},
		{[]string{"help"}, exitOK, ""},
		{[]string{"help", "nope"}, exitUsage, `unknown command "nope"`},
		{[]string{"nope"}, exitUsage, `unknown command "nope"`},
		{[]string{"-bad"}, exitUsage, "-bad"},
		{[]string{"topicList"}, exitUsage, "no NameServer address"},
		{[]string{"-n", "x:1", "-timeout", "0s", "topicList"}, exitUsage, "-timeout"},
		{[]string{"-n", "x:1", "topicList", "--output", "xml"}, exitUsage, `output format "xml"`},
		{[]string{"-n", "x:1", "-o", "xml", "topicList"}, exitUsage, `output format "xml"`},
		{[]string{"-n", "x:1", "topicList", "-o", "table"}, exitUsage, "topicList: -o table after the command: the output format is --output table there"},
		{[]string{"-n", "x:1", "updateTopic", "-t", "T", "-c", "C", "-o", "table"}, exitUsage, "updateTopic: -o table: -o is the order flag here"},
		{[]string{"-n", "x:1", "topicRoute"}, exitUsage, "topicRoute: -t is required"},
		{[]string{"-n", "x:1", "updateTopic", "-t", "T", "-b", "h:1", "-c", "C"}, exitUsage, "not both"},
		{[]string{"-n", "x:1", "updateTopic", "-t", "T", "-c", "C", "-r", "0"}, exitUsage, "-r 0"},
		{[]string{"-n", "x:1", "updateTopic", "-t", "T", "-c", "C", "-o", "yes"}, exitUsage, "-o"},
		{[]string{"-n", "x:1", "updateSubGroup", "-g", "G", "-c", "C", "-q", "-1"}, exitUsage, "-q -1"},
		{[]string{"-n", "x:1", "send", "-t", "T"}, exitUsage, "give the body with -p text or -f FILE"},
		{[]string{"-n", "x:1", "send", "-t", "T", "-p", "x", "-f", "-"}, exitUsage, "-p or -f, not both"},
		{[]string{"-n", "x:1", "send", "-t", "T", "-f", "/nonexistent/body"}, exitError, "-f: open /nonexistent/body"},
		{[]string{"-n", "x:1", "console", "-listen", "0.0.0.0:0"}, exitUsage, "-listen 0.0.0.0:0: not a loopback address; add -allow-remote to serve it"},
		{[]string{"-n", "x:1", "send", "-t", "T", "-p", "x", "-count", "0"}, exitUsage, "-count 0"},
		{[]string{"-n", "x:1", "send", "-t", "T", "-p", "x", "-b", "broker-a"}, exitUsage, "-b and -i"},
		{[]string{"-n", "x:1", "consume", "-t", "T", "-c", "-1"}, exitUsage, "-c -1"},
		{[]string{"-n", "x:1", "queryMsgByKey", "-t", "T", "-k", "k", "-c", "0"}, exitUsage, "-c 0"},
		{[]string{"-n", "x:1", "queryMsgByKey", "-t", "T", "-k", "k", "-b", "soon"}, exitUsage, "soon"},
		{[]string{"-n", "x:1", "-tls-ca", "/nonexistent/ca.pem", "topicList"}, exitError, "-tls-ca"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr, noEnv)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("run %q = %d, want %d and %q\nstdout: %s\nstderr: %s", tc.args, code, tc.code, tc.want, stdout.String(), stderr.String())
		}
		if code != exitOK && tc.args != nil && (!strings.HasPrefix(stderr.String(), "rmqadmin: ") || strings.Count(stderr.String(), "\n") != 1) {
			t.Errorf("run %q: want one line on stderr, got %q", tc.args, stderr.String())
		}
	}
}

func TestTLSConfig(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rmqadmin test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	env := func(string) string { return "" }
	for _, tc := range []struct {
		name     string
		g        globals
		tls      bool
		insecure bool
		withCA   bool
		bad      bool
	}{
		{name: "plain"},
		{name: "tls", g: globals{tls: true}, tls: true},
		{name: "insecure", g: globals{tlsInsecure: true}, tls: true, insecure: true},
		{name: "ca", g: globals{tlsCA: ca}, tls: true, withCA: true},
		{name: "not pem", g: globals{tlsCA: notPEM}, bad: true},
		{name: "missing", g: globals{tlsCA: filepath.Join(dir, "missing.pem")}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.nameServers, g.output, g.timeout = "127.0.0.1:9876", "table", time.Second
			a, err := newApp(&g, io.Discard, env)
			if tc.bad {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (a.tlsConfig != nil) != tc.tls {
				t.Fatalf("TLS config %v, want TLS %v", a.tlsConfig, tc.tls)
			}
			if !tc.tls {
				return
			}
			if a.tlsConfig.InsecureSkipVerify != tc.insecure {
				t.Errorf("InsecureSkipVerify %v, want %v", a.tlsConfig.InsecureSkipVerify, tc.insecure)
			}
			if tc.withCA {
				if _, err := cert.Verify(x509.VerifyOptions{Roots: a.tlsConfig.RootCAs}); err != nil {
					t.Errorf("the CA is not in RootCAs: %v", err)
				}
			} else if a.tlsConfig.RootCAs != nil {
				t.Error("RootCAs set without -tls-ca")
			}
		})
	}
}

// TestHelpEveryCommand builds every command's flags (a flag defined twice
// panics) and checks its usage.
func TestHelpEveryCommand(t *testing.T) {
	noEnv := func(string) string { return "" }
	var all bytes.Buffer
	if code := run(context.Background(), []string{"help"}, &all, io.Discard, noEnv); code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	for _, c := range commands() {
		if !strings.Contains(all.String(), "  "+c.name+" ") {
			t.Errorf("help lacks %s:\n%s", c.name, all.String())
		}
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {"-n", "x:1", c.name, "--help"}} {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, &stdout, &stderr, noEnv)
			if code != exitOK || stderr.Len() != 0 || !strings.HasPrefix(stdout.String(), "rmqadmin "+c.name+": "+c.synopsis) {
				t.Errorf("run %q = %d\nstdout: %s\nstderr: %s", args, code, stdout.String(), stderr.String())
			}
		}
	}
}

// TestRunJSONErrors: with JSON output asked for anywhere it may be, every
// failure, a usage error included, is one JSON object on stderr and
// nothing is written on stdout.
func TestRunJSONErrors(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--output", "json", "-n", "x:1", "topicRoute"}, exitUsage, "rmqadmin: topicRoute: -t is required (see rmqadmin topicRoute -h)"},
		{[]string{"-n", "x:1", "topicRoute", "--output=json"}, exitUsage, "rmqadmin: topicRoute: -t is required (see rmqadmin topicRoute -h)"},
		{[]string{"-n", "x:1", "-o", "json", "topicRoute", "-bad"}, exitUsage, "rmqadmin: topicRoute: flag provided but not defined: -bad (see rmqadmin topicRoute -h)"},
		{[]string{"-n", "x:1", "topicRoute", "-bad", "-output", "json"}, exitUsage, "rmqadmin: topicRoute: flag provided but not defined: -bad (see rmqadmin topicRoute -h)"},
		{[]string{"-tls", "-o", "json", "topicList"}, exitUsage, "rmqadmin: no NameServer address: give -n host:port or set NAMESRV_ADDR"},
		{[]string{"-n", "x:1", "topicList", "-o", "json"}, exitUsage, "rmqadmin: topicList: -o json after the command: the output format is --output json there (-o only before the command)"},
		{[]string{"-n", "x:1", "updateTopic", "-t", "T", "-c", "C", "-o", "json"}, exitUsage, "rmqadmin: updateTopic: -o json: -o is the order flag here (true or false, as in mqadmin); the output format is --output json"},
		{[]string{"-n", "x:1", "--output", "json", "send", "-t", "T", "-f", "/nonexistent/body"}, exitError, "rmqadmin: -f: open /nonexistent/body: no such file or directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr, noEnv)
		var got struct {
			Error      string `json:"error"`
			ExitStatus int    `json:"exitStatus"`
		}
		dec := json.NewDecoder(strings.NewReader(stderr.String()))
		dec.DisallowUnknownFields()
		err := dec.Decode(&got)
		if code != tc.code || err != nil || got.Error != tc.want || got.ExitStatus != tc.code || stdout.Len() != 0 ||
			strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("run %q = %d (decode: %v), want %d and {%q, %d}\nstdout: %s\nstderr: %s", tc.args, code, err, tc.code, tc.want, tc.code, stdout.String(), stderr.String())
		}
	}
	// Without JSON output the same failure stays a line of text; -o json
	// after a command does not count as asking for JSON, except in the
	// error that says where it goes.
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-n", "x:1", "topicRoute", "-p", "json"}, io.Discard, &stderr, noEnv); code != exitUsage ||
		!strings.HasPrefix(stderr.String(), "rmqadmin: topicRoute: flag provided but not defined: -p") {
		t.Errorf("text error: %d %q", code, stderr.String())
	}
}

func TestWantsJSON(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-o", "json", "topicList"}, true},
		{[]string{"-n", "a:1", "-o", "json", "topicList"}, true},
		{[]string{"-tls", "-o=json", "topicList"}, true},
		{[]string{"--output", "json", "topicList"}, true},
		{[]string{"topicList", "--output", "json"}, true},
		{[]string{"topicList", "-output=json"}, true},
		{[]string{"updateTopic", "-o", "json"}, false},
		{[]string{"-n", "a:1", "topicList", "-o", "json"}, false},
		{[]string{"send", "-p", "--output", "-t", "json"}, false},
		{[]string{"-o", "table", "topicList"}, false},
		{nil, false},
	} {
		if got := wantsJSON(tc.args); got != tc.want {
			t.Errorf("wantsJSON(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestWriteJSONKeyOrder: every object of a document, from a struct or a
// map, has its keys sorted, and numbers stay exact numbers.
func TestWriteJSONKeyOrder(t *testing.T) {
	type row struct {
		Zeta  int64   `json:"zeta"`
		Alpha float64 `json:"alpha"`
		Mid   string  `json:"mid"`
	}
	var b bytes.Buffer
	if err := writeJSON(&b, map[string]any{"rows": []row{{1<<62 + 1, 0.53, "<&>"}}, "b": 2, "a": map[string]int{"y": 1, "x": 2}}); err != nil {
		t.Fatal(err)
	}
	const want = `{
  "a": {
    "x": 2,
    "y": 1
  },
  "b": 2,
  "rows": [
    {
      "alpha": 0.53,
      "mid": "<&>",
      "zeta": 4611686018427387905
    }
  ]
}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestReadBody: -f reads a file or standard input, bounded by the
// largest body a producer sends.
func TestReadBody(t *testing.T) {
	dir := t.TempDir()
	full := bytes.Repeat([]byte{0, '\n', 0xff}, rocketmq.DefaultMaxMessageSize/3)
	path := filepath.Join(dir, "body")
	if err := os.WriteFile(path, full, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := readBody(path, nil); err != nil || !bytes.Equal(b, full) {
		t.Fatalf("file: %d bytes, %v", len(b), err)
	}
	if b, err := readBody("-", strings.NewReader("from stdin\n")); err != nil || string(b) != "from stdin\n" {
		t.Fatalf("stdin: %q, %v", b, err)
	}
	over := io.MultiReader(bytes.NewReader(make([]byte, rocketmq.DefaultMaxMessageSize)), strings.NewReader("x"), neverEnds{})
	if _, err := readBody("-", over); err == nil || err.Error() != "-f: standard input is over 4194304 bytes, the largest body a producer sends" {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := readBody("-", strings.NewReader("")); err == nil || err.Error() != "-f: standard input is empty; a message needs a body" {
		t.Fatalf("empty: %v", err)
	}
}

// neverEnds is an endless input: reading it whole would never return.
type neverEnds struct{}

func (neverEnds) Read(p []byte) (int, error) { return len(p), nil }

func TestSortedKeys(t *testing.T) {
	for doc, ok := range map[string]bool{
		`{"a": 1, "b": {"c": [{"d": 1, "e": 2}], "f": "z"}, "g": []}`: true,
		`[{"a": {}}, {"b": [1, "x", {"c": null}]}]`:                   true,
		`{"b": 1, "a": 2}`:                           false,
		`{"a": {"y": 1, "x": 2}}`:                    false,
		`{"a": [{"k": 1}], "b": [{"z": 1, "y": 2}]}`: false,
		`{"a": "b", "a": "c"}`:                       false,
	} {
		if err := sortedKeys(doc); (err == nil) != ok {
			t.Errorf("sortedKeys(%s) = %v, want ok %v", doc, err, ok)
		}
	}
}

func TestVersionDesc(t *testing.T) {
	for v, want := range map[int32]string{409: "V4_9_8", 408: "V4_9_8_SNAPSHOT", 212: "V4_0_0_SNAPSHOT", 413: "V5_0_0", 611: "V5_9_9", 211: "211", 62: "62"} {
		if got := versionDesc(v); got != want {
			t.Errorf("versionDesc(%d) = %s, want %s", v, got, want)
		}
	}
}
