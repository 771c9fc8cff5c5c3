package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestConsole: rmqadmin console serves the console on the -listen address
// it prints until interrupted, then exits 0; a non-loopback address is a
// usage error.
func TestConsole(t *testing.T) {
	c := rmqtest.StartCluster(t)
	noEnv := func(string) string { return "" }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-n", c.NameServerAddr(), "-timeout", "1s", "console", "-listen", "127.0.0.1:0"}, pw, io.Discard, noEnv)
		pw.Close()
		done <- code
	}()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case line <- sc.Text():
			default:
			}
		}
	}()
	var addr string
	select {
	case l := <-line:
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "console" {
			t.Fatalf("first line %q", l)
		}
		addr = f[3]
	case code := <-done:
		t.Fatalf("console exited %d", code)
	case <-time.After(30 * time.Second):
		t.Fatal("console address not printed")
	}
	// The console serves past -timeout: that bounds each call only.
	started := time.Now()
	testutil.WaitFor(t, 30*time.Second, "the console serving past -timeout", func() bool {
		resp, err := http.Get("http://" + addr + "/groups")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `id="groups"`) {
			t.Fatalf("/groups: %d %s", resp.StatusCode, b)
		}
		return time.Since(started) > 1500*time.Millisecond
	})
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after the interrupt", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("console did not stop")
	}
	if code := run(context.Background(), []string{"-n", c.NameServerAddr(), "console", "-listen", "0.0.0.0:0"}, io.Discard, io.Discard, noEnv); code != exitUsage {
		t.Fatalf("-listen 0.0.0.0:0: exit %d, want %d", code, exitUsage)
	}
}

// TestConsoleListenErrors: a -listen address that is taken or not
// loopback fails in one line that names the flag and the cause once.
func TestConsoleListenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		listen string
		code   int
		want   string
	}{
		{busy, exitError, "rmqadmin: -listen " + busy + ": address already in use\n"},
		{"0.0.0.0:0", exitUsage, "rmqadmin: console: -listen 0.0.0.0:0: not a loopback address; add -allow-remote to serve it (anyone who reaches it can then change the cluster) (see rmqadmin console -h)\n"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), []string{"-n", "127.0.0.1:1", "console", "-listen", tc.listen}, &stdout, &stderr, noEnv)
		if code != tc.code || stderr.String() != tc.want || stdout.Len() != 0 {
			t.Errorf("-listen %s: exit %d, stderr %q; want %d, %q", tc.listen, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestConsoleHashPassword: -hash-password hashes the first line of its
// input without the line end, and refuses an empty one.
func TestConsoleHashPassword(t *testing.T) {
	var out strings.Builder
	fake := func(pw string) (string, error) { return "hash(" + pw + ")", nil }
	if err := printHash(&app{out: &out}, strings.NewReader("pa ss\r\nnext\n"), fake); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hash(pa ss)\n" {
		t.Fatalf("printed %q", out.String())
	}
	if err := printHash(&app{out: io.Discard}, strings.NewReader(""), fake); err == nil {
		t.Error("an empty password hashed")
	}
}
