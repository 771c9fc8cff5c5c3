package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func TestConsumeAll(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 4)
	p := e.producer(t)
	bodies := send(t, p, topic, "a", "TagA", 100)
	rec := newRecorder()
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "every message consumed", func() bool { return rec.distinct() == len(bodies) })
	for _, b := range bodies {
		if n := rec.count(b); n != 1 {
			t.Errorf("%s consumed %d times", b, n)
		}
	}
	n := 0
	for _, mq := range c.Assigned() {
		if mq.Topic == topic {
			n++
		}
	}
	if n != 4 {
		t.Errorf("assigned %d queues of %s, want 4: %v", n, topic, c.Assigned())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
