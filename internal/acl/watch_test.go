package acl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

const secretV1, secretV2 = "first-secret-v1", "second-secret-v2"

func accountsFile(secret string) string {
	return "accounts:\n  - accessKey: watcher1\n    secretKey: " + secret + "\n    defaultTopicPerm: PUB\n"
}

// replace writes path atomically, as a deployment tool would.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherReload(t *testing.T) {
	var logs testlog.Buffer
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	replace(t, path, accountsFile(secretV1))
	w, err := NewWatcher(path, time.Millisecond, logs.Logger())
	if err != nil {
		t.Fatal(err)
	}
	ok := func(secret string) bool {
		return w.Config().Check(signed(remoting.SendMessage, ext("topic", "t"), nil, "watcher1", secret)) == nil
	}
	if !ok(secretV1) || ok(secretV2) {
		t.Fatal("initial accounts not in force")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// A change is picked up.
	replace(t, path, accountsFile(secretV2))
	testutil.WaitFor(t, 5*time.Second, "the changed file is in force", func() bool { return ok(secretV2) })
	if ok(secretV1) {
		t.Fatal("the old secret still passes")
	}
	// A broken file keeps the accounts and is logged once.
	replace(t, path, accountsFile(secretV1)+"    admin: perhaps\n")
	testutil.WaitFor(t, 5*time.Second, "the broken file is logged", func() bool { return logs.Count("invalid accounts file") == 1 })
	if !ok(secretV2) || ok(secretV1) {
		t.Fatal("a broken file replaced the accounts")
	}
	// A removed file keeps them too.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the missing file is logged", func() bool { return logs.Count("cannot read the accounts file") == 1 })
	if !ok(secretV2) {
		t.Fatal("a missing file replaced the accounts")
	}
	replace(t, path, accountsFile(secretV1))
	testutil.WaitFor(t, 5*time.Second, "the restored file is in force", func() bool { return ok(secretV1) })
	if n := w.Reloads(); n != 2 {
		t.Errorf("%d reloads, want 2", n)
	}
	if s := logs.String(); strings.Contains(s, secretV1) || strings.Contains(s, secretV2) {
		t.Errorf("a secret key is logged:\n%s", s)
	}
}

func TestNewWatcherErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewWatcher(filepath.Join(dir, "missing.yml"), 0, nil); err == nil {
		t.Error("a missing file is accepted")
	}
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("accounts:\n  - accessKey: abc\n"), 0o600)
	_, err := NewWatcher(bad, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v", err)
	}
}

func TestWatcherIgnoresHalfWrittenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain_acl.yml")
	replace(t, path, accountsFile(secretV1))
	w, err := NewWatcher(path, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Caught while truncated: an empty file parses to no accounts.
	replace(t, path, "")
	w.Poll()
	replace(t, path, accountsFile(secretV2))
	w.Poll()
	if len(w.Config().Accounts) != 1 || w.Config().Accounts[0].SecretKey != secretV1 {
		t.Fatal("a content seen once was applied")
	}
	w.Poll()
	if w.Config().Accounts[0].SecretKey != secretV2 || w.Reloads() != 1 {
		t.Fatalf("a content seen twice was not applied (%d reloads)", w.Reloads())
	}
}
