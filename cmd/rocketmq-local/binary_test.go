package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// buildBinary builds rocketmq-local into a directory of t's.
func buildBinary(t *testing.T) string {
	t.Helper()
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", exe)
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	bin := filepath.Join(t.TempDir(), "rocketmq-local")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBinary runs bin with args until it exits (a failed start exits at
// once) and returns its exit status, stdout and stderr.
func runBinary(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("rocketmq-local %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// busyPort holds a loopback port for the test and returns its address.
func busyPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// TestBinaryFailures: a bad command line and a failed start each print
// one line with one prefix and one statement of the cause, and a failed
// start leaves no data directory where there was none.
func TestBinaryFailures(t *testing.T) {
	bin := buildBinary(t)
	busy := busyPort(t)
	freeBelow, busyAbove := portPair(t)
	root := t.TempDir()

	t.Run("unknown flag", func(t *testing.T) {
		code, stdout, stderr := runBinary(t, bin, "-bogus")
		if code != 2 || stdout != "" || stderr != "rocketmq-local: flag provided but not defined: -bogus (see rocketmq-local -h)\n" {
			t.Errorf("exit %d\nstdout: %q\nstderr: %q", code, stdout, stderr)
		}
		code, stdout, stderr = runBinary(t, bin, "-brokers", "0")
		if code != 2 || stdout != "" || stderr != "rocketmq-local: -brokers 0 out of range 1..26 (see rocketmq-local -h)\n" {
			t.Errorf("exit %d\nstdout: %q\nstderr: %q", code, stdout, stderr)
		}
		code, stdout, stderr = runBinary(t, bin, "-h")
		if code != 0 || !strings.HasPrefix(stdout, "Usage: rocketmq-local") || stderr != "" {
			t.Errorf("-h: exit %d\nstdout: %q\nstderr: %q", code, stdout, stderr)
		}
	})

	for _, tc := range []struct {
		name string
		args func(data string) []string
		want string
	}{
		{"broker port in use", func(data string) []string {
			return []string{"-namesrv", "127.0.0.1:0", "-broker", busy, "-data", data, "-console", "off"}
		}, "rocketmq-local: broker broker-a: listen on " + busy + ": address already in use\n"},
		{"second broker port in use", func(data string) []string {
			return []string{"-namesrv", "127.0.0.1:0", "-broker", freeBelow, "-brokers", "2", "-data", data, "-console", "off"}
		}, "rocketmq-local: broker broker-b: listen on " + busyAbove + ": address already in use\n"},
		{"NameServer port in use", func(data string) []string {
			return []string{"-namesrv", busy, "-broker", "127.0.0.1:0", "-data", data, "-console", "off"}
		}, "rocketmq-local: NameServer: listen on " + busy + ": address already in use\n"},
		{"console port in use", func(data string) []string {
			return []string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", data, "-console", busy}
		}, "rocketmq-local: -console " + busy + ": address already in use\n"},
		{"console not on loopback", func(data string) []string {
			return []string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", data, "-console", "0.0.0.0:0"}
		}, "rocketmq-local: -console 0.0.0.0:0: not a loopback address; rocketmq-local serves the console on loopback only (rmqadmin console -allow-remote serves it on others)\n"},
		{"Java broker.conf, port in use", func(data string) []string {
			conf := filepath.Join(root, "broker.conf")
			if err := os.WriteFile(conf, []byte("brokerName=broker-j\nlistenPort=1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"-c", conf, "-namesrv", "127.0.0.1:0", "-broker", busy, "-data", data}
		}, "rocketmq-local: broker broker-j: listen on " + busy + ": address already in use\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A directory that did not exist, two levels deep, is removed
			// with what the start wrote into it.
			parent := filepath.Join(t.TempDir(), "new")
			data := filepath.Join(parent, "data")
			code, stdout, stderr := runBinary(t, bin, tc.args(data)...)
			if code != 1 || stderr != tc.want {
				t.Errorf("exit %d\nstdout: %q\nstderr: %q\nwant:   %q", code, stdout, stderr, tc.want)
			}
			if _, err := os.Lstat(parent); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s left behind (%v): %s", parent, err, tree(t, parent))
			}

			// A directory that existed keeps what was in it.
			kept := filepath.Join(t.TempDir(), "kept")
			if err := os.MkdirAll(kept, 0o755); err != nil {
				t.Fatal(err)
			}
			mine := filepath.Join(kept, "mine.txt")
			if err := os.WriteFile(mine, []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := runBinary(t, bin, tc.args(kept)...); code != 1 || stderr != tc.want {
				t.Errorf("existing directory: exit %d, stderr %q", code, stderr)
			}
			if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
				t.Errorf("existing directory lost its file: %q, %v", b, err)
			}
		})
	}
}

// portPair returns a free loopback port and, held for the test, the
// port 10 above it, where a second broker listens.
func portPair(t *testing.T) (free, busy string) {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		above, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10))
		ln.Close()
		if err == nil {
			t.Cleanup(func() { above.Close() })
			return ln.Addr().String(), above.Addr().String()
		}
	}
	t.Fatal("no free port with a free port 10 above it")
	return "", ""
}

// tree lists the files under dir, for a failure message.
func tree(t *testing.T, dir string) string {
	var names []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		names = append(names, p)
		return nil
	})
	return strings.Join(names, " ")
}

// TestWillCreate: only the outermost missing directory is recorded, and
// nothing for one that exists.
func TestWillCreate(t *testing.T) {
	dir := t.TempDir()
	c := willCreate(filepath.Join(dir, "a", "b", "c"), dir, "")
	if len(c.tops) != 1 || c.tops[0] != filepath.Join(dir, "a") {
		t.Fatalf("recorded %q, want only %s", c.tops, filepath.Join(dir, "a"))
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s not removed: %v", filepath.Join(dir, "a"), err)
	}
	if _, err := os.Lstat(dir); err != nil {
		t.Errorf("the existing %s was removed: %v", dir, err)
	}
}

// TestSizeRefusalTexts: a body over the limit is refused once by the
// producer, with the sizes, and by the broker (a producer allowed more)
// with the broker's real limit, each with one prefix.
func TestSizeRefusalTexts(t *testing.T) {
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", t.TempDir(),
		"-segment-size", "16777216", "-console", "off"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop := startServe(t, o)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, addrs["namesrv"], "Big", 1); err != nil {
		t.Fatal(err)
	}
	// Random bytes, so that no body shrinks under compression.
	body := make([]byte, 5<<20)
	if _, err := rand.Read(body); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		opts  []producer.Option
		check func(err error) bool
		want  string
	}{
		{"producer limit", nil, func(err error) bool { return errors.Is(err, producer.ErrTooLarge) },
			"rocketmq: message body too large: 5242880 bytes, over the limit of 4194304 bytes (WithMaxMessageSize)"},
		{"broker limit", []producer.Option{producer.WithMaxMessageSize(8 << 20), producer.WithRetries(0), producer.WithCompression(16<<20, 1)},
			func(err error) bool { return errors.Is(err, remoting.ErrMessageIllegal) },
			"rocketmq: send to Big failed (broker broker-a): MESSAGE_ILLEGAL: the message is illegal, maybe msg body or properties length not matched. msg body length limit 4194304B, msg properties length limit 32767B."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := producer.New(append([]producer.Option{producer.WithNameServers(addrs["namesrv"]), producer.WithGroup("BigProducer")}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			_, err = p.Send(ctx, &rocketmq.Message{Topic: "Big", Body: body})
			if err == nil || !tc.check(err) || err.Error() != tc.want {
				t.Fatalf("send 5 MiB:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}
