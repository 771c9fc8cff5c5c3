package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Every step of an order goes to the queue of the order id.
func TestRun(t *testing.T) {
	c := rmqtest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, c.NameServerAddr(), "TopicOrderly", 4); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(ctx, c.NameServerAddr(), "TopicOrderly", 6, &out); err != nil {
		t.Fatal(err)
	}
	queueOf := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6*len(steps) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 6*len(steps), out.String())
	}
	queues := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l) // order-1000 created -> broker-a/2 offset 0
		if len(f) != 6 {
			t.Fatalf("line %q", l)
		}
		if q, ok := queueOf[f[0]]; ok && q != f[3] {
			t.Errorf("%s sent to %s and %s", f[0], q, f[3])
		}
		queueOf[f[0]] = f[3]
		queues[f[3]] = true
	}
	if len(queues) < 2 {
		t.Errorf("6 orders all on %v", queues)
	}
}
