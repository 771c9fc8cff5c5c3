// Package testlog collects log output for tests that assert on what was,
// or was not, logged. Only tests import it.
package testlog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Buffer is an io.Writer for log handlers, safe for concurrent use. It
// never calls t.Log: a server's logger may outlive the test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger logs everything, debug level included, as text into l.
func (l *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Count is how many times s occurs in the logs.
func (l *Buffer) Count(s string) int { return strings.Count(l.String(), s) }

// NoPanic fails t for every logged line that mentions a panic (servers
// turn a handler panic into SYSTEM_ERROR and log "handler panic"); who
// names the logger in the failure.
func (l *Buffer) NoPanic(t testing.TB, who string) {
	t.Helper()
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "panic") {
			t.Errorf("%s logged a panic: %s", who, line)
		}
	}
}
