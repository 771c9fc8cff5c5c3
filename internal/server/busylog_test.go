package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestBusyLogRateLimited(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	now := time.Unix(1000, 0)
	l := &busyLog{now: func() time.Time { return now }}
	for range 5000 {
		l.note(log, 11, "127.0.0.1:1")
	}
	if got := strings.Count(out.String(), "SYSTEM_BUSY"); got != 1 {
		t.Fatalf("%d lines after a burst within one interval, want 1:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "suppressed=0") {
		t.Fatalf("first line should report no suppressed refusals: %s", out.String())
	}
	now = now.Add(busyLogInterval)
	l.note(log, 11, "127.0.0.1:1")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "suppressed=4999") {
		t.Fatalf("after the interval want a second line counting 4999 suppressed refusals, got:\n%s", out.String())
	}
}
