package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestBroadcasting: every member of a broadcasting group gets every
// message; a member shut down and started again with the same instance
// name and offset directory resumes where it stopped: it gets what was
// sent while it was away and nothing it had consumed before. A member
// holds no queue of a retry topic.
func TestBroadcasting(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	dir := t.TempDir()
	member := func(name string, rec *recorder) *consumer.PushConsumer {
		return e.startConsumer(t, g, topic, consumer.All, rec.handler(name, nil),
			consumer.WithModel(consumer.Broadcasting), consumer.WithOffsetStoreDir(dir),
			consumer.WithInstanceName(name), consumer.WithConsumeFrom(consumer.FromFirst))
	}
	rec1, rec2 := newRecorder(), newRecorder()
	b1 := member("b1", rec1)
	b2 := member("b2", rec2)
	for _, c := range []*consumer.PushConsumer{b1, b2} {
		testutil.WaitFor(t, wait, "every queue assigned to every member", func() bool { return len(assigned(c, topic)) == 4 })
	}
	// A broadcasting group has no retry topic: a failed message is dropped.
	for _, c := range []*consumer.PushConsumer{b1, b2} {
		if q := c.Assigned(); len(q) != 4 {
			t.Errorf("broadcasting member holds %v, want the topic's 4 queues alone", q)
		}
	}
	p := e.newProducer(t)
	first := send(t, p, topic, 50)
	rec1.waitAll(t, first, 1)
	rec2.waitAll(t, first, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	second := send(t, p, topic, 50)
	rec2.waitAll(t, second, 1)

	again := newRecorder()
	member("b1", again)
	again.waitAll(t, second, 1)
	// Each queue is pulled in offset order: had the member started over,
	// the first messages would have come before the second ones.
	for _, id := range first {
		if n := len(again.deliveries(id)); n != 0 {
			t.Errorf("message %s consumed before the restart came again %d times", id, n)
		}
	}
	for _, r := range []struct {
		name string
		rec  *recorder
		ids  []string
	}{{"b1", rec1, first}, {"b2", rec2, append(first, second...)}, {"b1 restarted", again, second}} {
		for _, id := range r.ids {
			if n := len(r.rec.deliveries(id)); n != 1 {
				t.Errorf("%s: message %s delivered %d times", r.name, id, n)
			}
		}
		if got := r.rec.total(); got != len(r.ids) {
			t.Errorf("%s: %d deliveries, want %d", r.name, got, len(r.ids))
		}
	}
}
