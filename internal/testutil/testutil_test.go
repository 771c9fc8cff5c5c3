package testutil

import (
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Second, func() bool { n++; return n == 3 }) {
		t.Fatal("Poll gave up on a condition that became true")
	}
	start := time.Now()
	if Poll(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatal("Poll returned before its timeout")
	}
}
