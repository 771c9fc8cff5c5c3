// Package testutil holds the helpers the module's tests share. Only test
// files import it.
package testutil

import (
	"os"
	"testing"
	"time"
)

// ReadOnlyDir returns a new directory the test cannot write into (mode
// 0500, made writable again at cleanup so that it can be removed). It
// skips the test when run as root, which writes there anyway.
func ReadOnlyDir(t testing.TB) string {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("root writes to a 0500 directory")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	return dir
}

// DefaultWait is how long WaitFor waits when the caller passes zero.
const DefaultWait = 10 * time.Second

// WaitFor polls cond until it returns true and fails t with what when
// timeout (DefaultWait if zero) passes first. It never sleeps longer than a
// few milliseconds between polls.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", orDefault(timeout), what)
	}
}

// Poll polls cond until it returns true (true) or timeout (DefaultWait if
// zero) passes (false). It is WaitFor for callers that are not on the test's
// goroutine or that report the failure themselves.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(orDefault(timeout))
	for pause := time.Millisecond; ; {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		if pause < 10*time.Millisecond {
			pause *= 2
		}
	}
}

func orDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultWait
	}
	return d
}
