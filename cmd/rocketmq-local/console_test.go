package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleFlag: -console serves the web console on the address it
// names and announces it; "off" serves none.
func TestConsoleFlag(t *testing.T) {
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", t.TempDir(),
		"-segment-size", "1048576", "-console", "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop := startServe(t, o)
	defer stop()
	addr := addrs["console"]
	if addr == "" {
		t.Fatalf("console not announced: %v", addrs)
	}
	resp, err := http.Get("http://" + addr + "/topics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `id="topics"`) || !strings.Contains(string(b), `data-topic="TBW102"`) {
		t.Fatalf("console /topics: %d %s", resp.StatusCode, b)
	}

	o.console, o.data = "off", t.TempDir()
	addrs, stop2 := startServe(t, o)
	defer stop2()
	if _, ok := addrs["console"]; ok {
		t.Fatalf("-console off announced a console: %v", addrs)
	}
	for _, bad := range []string{"8080", "0.0.0.0:"} {
		if _, err := parseFlags([]string{"-console", bad}, io.Discard); bad == "8080" && err == nil {
			t.Errorf("-console %s accepted", bad)
		}
	}
}

// TestConsoleFallback: a busy default port is replaced by a free one; a
// busy port asked for explicitly, or a non-loopback address, fails.
func TestConsoleFallback(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	log := slog.New(slog.DiscardHandler)
	stop, bound, err := startConsole(busy.Addr().String(), "127.0.0.1:1", true, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if bound == busy.Addr().String() || !strings.HasPrefix(bound, "127.0.0.1:") {
		t.Fatalf("fallback bound %s", bound)
	}
	if _, _, err := startConsole(busy.Addr().String(), "127.0.0.1:1", false, log, nil); err == nil {
		t.Fatal("explicit busy port: no error")
	}
	if _, _, err := startConsole("0.0.0.0:0", "127.0.0.1:1", true, log, nil); err == nil {
		t.Fatal("non-loopback address: no error")
	}
}

// TestConsoleACL: with -acl-file the console signs as the file's admin
// account, so the brokers answer it, and no page shows the secret.
func TestConsoleACL(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain_acl.yml")
	const acct = "accounts:\n  - accessKey: plain-user\n    secretKey: plain-user-secret\n" +
		"  - accessKey: console-admin\n    secretKey: console-admin-secret\n    admin: true\n"
	if err := os.WriteFile(file, []byte(acct), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-namesrv", "127.0.0.1:0", "-broker", "127.0.0.1:0", "-data", filepath.Join(dir, "data"),
		"-acl-file", file, "-console", "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	addrs, stop := startServe(t, o)
	defer stop()
	for _, path := range []string{"/", "/groups"} {
		resp, err := http.Get("http://" + addrs["console"] + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)
		if resp.StatusCode != http.StatusOK || strings.Contains(page, `id="error"`) || strings.Contains(page, `class="err"`) {
			t.Errorf("%s: %d, refused: %s", path, resp.StatusCode, page)
		}
		if strings.Contains(page, "secret") {
			t.Errorf("%s shows a secret", path)
		}
	}
}
