package e2e

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestUnsubscribe: Unsubscribe stops a topic's pulls and drops its queues,
// keeps the other topic's, and a second Unsubscribe of the topic fails.
func TestUnsubscribe(t *testing.T) {
	e := start(t)
	t1, t2 := e.newTopic(t, 2), e.newTopic(t, 2)
	rec := newRecorder()
	c := e.newConsumer(t, group(t, ""), consumer.WithConsumeFrom(consumer.FromFirst))
	for _, tp := range []string{t1, t2} {
		if err := c.Subscribe(tp, consumer.All, rec.handler("c", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "both topics held", func() bool { return len(assigned(c, t1)) == 2 && len(assigned(c, t2)) == 2 })
	if err := c.Unsubscribe(t1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "t1 dropped", func() bool { return len(assigned(c, t1)) == 0 && len(assigned(c, t2)) == 2 })
	if err := c.Unsubscribe(t1); err == nil {
		t.Fatal("second Unsubscribe succeeded")
	}
	if st := c.Stats(); len(st) != 1 || st[0].Topic != t2 {
		t.Fatalf("stats after Unsubscribe: %+v, want %s only", st, t2)
	}
}

// TestInterceptors: interceptors run around the handler, the first given
// outermost.
func TestInterceptors(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	mk := func(name string) consumer.Interceptor {
		return func(ctx context.Context, msgs []*rocketmq.MessageExt, next consumer.Handler) (consumer.Result, error) {
			note(name + ">")
			res, err := next(ctx, msgs)
			note("<" + name)
			return res, err
		}
	}
	rec := newRecorder()
	e.startConsumer(t, group(t, ""), topic, consumer.All, rec.handler("c", func(context.Context, *rocketmq.MessageExt, int) (consumer.Result, error) {
		note("h")
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithInterceptors(mk("a"), mk("b")))
	ids := send(t, e.newProducer(t), topic, 1)
	rec.waitAll(t, ids, 1)
	testutil.WaitFor(t, wait, "interceptors returned", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 5
	})
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, " "); got != "a> b> h <b <a" {
		t.Fatalf("order %s, want a> b> h <b <a", got)
	}
}

// TestShutdownDeadlineCancelsHandlers: when Shutdown's ctx ends while a
// handler runs, the handler's ctx is cancelled and Shutdown reports the
// deadline.
func TestShutdownDeadlineCancelsHandlers(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	started := make(chan struct{})
	var once sync.Once
	var sawCancel atomic.Bool
	c := e.startConsumer(t, group(t, ""), topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		sawCancel.Store(true)
		return consumer.RetryLater, nil
	}, consumer.WithConsumeFrom(consumer.FromFirst))
	send(t, e.newProducer(t), topic, 1)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the handler was never called")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	if !sawCancel.Load() {
		t.Fatal("Shutdown returned before the handler saw its ctx cancelled")
	}
}

// TestStartTwiceAndConcurrentShutdown: a second Start fails with
// ErrAlreadyStarted; three concurrent Shutdowns all return nil, and the
// consumer then holds no queue.
func TestStartTwiceAndConcurrentShutdown(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	c := e.startConsumer(t, group(t, ""), topic, consumer.All, newRecorder().handler("c", nil))
	if err := c.Start(context.Background()); !errors.Is(err, consumer.ErrAlreadyStarted) {
		t.Fatalf("second Start: %v, want ErrAlreadyStarted", err)
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs <- c.Shutdown(ctx)
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Shutdown: %v", err)
		}
	}
	if q := c.Assigned(); q != nil {
		t.Fatalf("queues held after Shutdown: %v", q)
	}
}
