package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRun: "hello" is accepted at its third attempt and "poison" ends in
// the dead-letter topic after its retries, on a broker whose retry delays
// (levels 3 and up) are short.
func TestRun(t *testing.T) {
	c := rmqtest.StartCluster(t, rmqtest.WithDelayLevels("1s 1s 100ms 200ms 300ms 400ms"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, c.NameServerAddr(), 3, true, &out) }()

	adm, err := admin.New(admin.WithNameServers(c.NameServerAddr()))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer adm.Close(context.Background())
	deadline := time.Now().Add(60 * time.Second)
	for {
		var dlq int64
		if stats, err := adm.TopicStats(ctx, "%DLQ%example_retry"); err == nil {
			for _, o := range stats {
				dlq += o.MaxOffset - o.MinOffset
			}
		}
		text := out.String()
		if dlq == 1 && strings.Contains(text, " accepted\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d dead letters, output:\n%s", dlq, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{`sent "hello"`, `sent "poison"`, `attempt 3`, `attempt 4`, `body="poison"`,
		"no retry left, it moves to %DLQ%example_retry", "retries come after 10 s, 30 s, 1 min"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, `body="hello"`); n != 3 {
		t.Errorf("hello delivered %d times, want 3:\n%s", n, text)
	}
	if n := strings.Count(text, `body="poison"`); n != 4 {
		t.Errorf("poison delivered %d times, want 4 (1 + 3 retries):\n%s", n, text)
	}
}
