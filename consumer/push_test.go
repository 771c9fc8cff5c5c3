package consumer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
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

// fastDelays makes every delay level 200 ms, so retries come back at once.
var fastDelays = rmqtest.WithDelayLevels(strings.TrimSpace(strings.Repeat("200ms ", 18)))

func TestRetryLaterRedelivers(t *testing.T) {
	e := newEnv(t, fastDelays)
	e.ours(t, "short delay levels")
	topic := e.topic(t, 2)
	p := e.producer(t)
	send(t, p, topic, "r", "", 1)
	type seen struct {
		topic     string
		reconsume int32
		origin    string
		body      string
	}
	var mu sync.Mutex
	var got []seen
	// A long rebalance period: the retry topic's queue must be taken as
	// soon as its route appears, not at the next period.
	c := e.newConsumer(t, groupName(t), WithRebalanceInterval(time.Minute))
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			got = append(got, seen{m.Topic, m.ReconsumeTimes, m.Property(rocketmq.PropertyOriginMessageID), string(m.Body)})
		}
		if len(got) == 1 {
			return RetryLater, nil
		}
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "redelivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	if got[0].reconsume != 0 || got[1].reconsume != 1 {
		t.Fatalf("reconsume times %d then %d, want 0 then 1", got[0].reconsume, got[1].reconsume)
	}
	if got[1].topic != topic || got[1].body != "r-0" {
		t.Fatalf("redelivered as %+v, want topic %s body r-0", got[1], topic)
	}
	if got[1].origin == "" {
		t.Fatal("redelivered message lacks ORIGIN_MESSAGE_ID")
	}
	st := statsOf(c, topic)
	if st.OKTotal != 1 || st.FailedTotal != 1 {
		t.Fatalf("stats %+v, want 1 ok and 1 failed", st)
	}
}

func statsOf(c *PushConsumer, topic string) Stats {
	for _, s := range c.Stats() {
		if s.Topic == topic {
			return s
		}
	}
	return Stats{}
}

func TestHandlerPanicRetries(t *testing.T) {
	e := newEnv(t, fastDelays)
	e.ours(t, "short delay levels")
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "p", "", 1)
	var calls atomic.Int32
	var second atomic.Int32
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
		second.Store(msgs[0].ReconsumeTimes)
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "the message again after the panic", func() bool { return calls.Load() >= 2 })
	if second.Load() != 1 {
		t.Fatalf("reconsume times after the panic %d, want 1", second.Load())
	}
}

func TestShutdownFromHandler(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	p := e.producer(t)
	send(t, p, topic, "s", "", 5)
	c := e.newConsumer(t, groupName(t))
	returned := make(chan error, 1)
	var first atomic.Bool
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if first.CompareAndSwap(false, true) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			returned <- c.Shutdown(ctx)
		}
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("Shutdown from a handler: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Shutdown from a handler did not return")
	}
	// A second Shutdown returns at once; Start after Shutdown fails.
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Shutdown: %v, want ErrClosed", err)
	}
}

func TestShutdownNotStarted(t *testing.T) {
	c, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Shutdown before Start: %v", err)
	}
}

// Shutdown commits what was consumed: a new member of the group resumes
// after it with no redelivery.
func TestShutdownCommitsOffsets(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 4)
	p := e.producer(t)
	first := send(t, p, topic, "first", "", 40)
	group := groupName(t)
	rec := newRecorder()
	c := e.newConsumer(t, group, WithOffsetPersistInterval(time.Hour))
	if err := c.Subscribe(topic, All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "first messages consumed", func() bool { return rec.distinct() == len(first) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	second := send(t, p, topic, "second", "", 20)
	rec2 := newRecorder()
	c2 := e.newConsumer(t, group)
	if err := c2.Subscribe(topic, All, rec2.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c2)
	testutil.WaitFor(t, 20*time.Second, "second messages consumed", func() bool {
		n := 0
		for _, b := range second {
			n += min(1, rec2.count(b))
		}
		return n == len(second)
	})
	for _, b := range first {
		if rec2.count(b) != 0 {
			t.Fatalf("%s delivered again to the new member", b)
		}
	}
}

func TestTagFilter(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	p := e.producer(t)
	a := send(t, p, topic, "a", "TagA", 10)
	send(t, p, topic, "b", "TagB", 10)
	cc := send(t, p, topic, "c", "TagC", 10)
	rec := newRecorder()
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, Tags("TagA || TagC"), rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "TagA and TagC consumed", func() bool { return rec.distinct() == len(a)+len(cc) })
	// Let the queues drain: nothing else arrives.
	tail := send(t, p, topic, "a-tail", "TagA", 1)
	testutil.WaitFor(t, 20*time.Second, "tail consumed", func() bool { return rec.count(tail[0]) == 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range rec.msgs {
		if tg := m.Tag(); tg != "TagA" && tg != "TagC" {
			t.Fatalf("got tag %q", tg)
		}
	}
}

func TestNamespace(t *testing.T) {
	e := newEnv(t)
	const ns = "nsx"
	wire := e.topic(t, 2)
	topic := wire
	// The topic on the wire is ns%topic: create it so.
	topic = "NT_" + wire
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, e.ns, ns+"%"+topic, 2); err != nil {
		t.Fatal(err)
	}
	p, err := producer.New(producer.WithNameServers(e.ns), producer.WithNamespace(ns), producer.WithGroup(groupName(t)+"_p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	bodies := send(t, p, topic, "n", "", 5)
	rec := newRecorder()
	c := e.newConsumer(t, groupName(t), WithNamespace(ns))
	if err := c.Subscribe(topic, All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "namespaced messages", func() bool { return rec.distinct() == len(bodies) })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range rec.msgs {
		if m.Topic != topic {
			t.Fatalf("handler saw topic %q, want %q", m.Topic, topic)
		}
	}
	for _, mq := range c.Assigned() {
		if strings.Contains(mq.Topic, ns+"%") {
			t.Fatalf("Assigned shows the namespace: %v", mq)
		}
	}
}
