package consumer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func TestNewPullOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		err  string // "" for none
	}{
		{"defaults", nil, ""},
		{"no group", []Option{WithGroup("")}, "none given"},
		{"auto-commit interval", []Option{WithAutoCommitInterval(0)}, "auto-commit interval"},
		{"threshold for all", []Option{WithPullThresholdForAll(0)}, "threshold for all"},
		{"pull batch", []Option{WithPullBatchSize(0)}, "pull batch size"},
		{"auto-commit off", []Option{WithAutoCommit(false)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewPull(append([]Option{WithGroup("g1"), WithNameServers("127.0.0.1:9")}, tt.opts...)...)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) || c != nil {
				t.Fatalf("err %v, want one about %q", err, tt.err)
			}
		})
	}
	c, err := NewPull(WithGroup("g1"), WithNameServers("127.0.0.1:9"))
	if err != nil {
		t.Fatal(err)
	}
	l := c.cfg.lite
	if !l.autoCommit || l.autoCommitInterval != 5*time.Second || l.thresholdForAll != 10000 || c.cfg.pullBatchSize != 32 {
		t.Fatalf("defaults %+v, batch %d", l, c.cfg.pullBatchSize)
	}
}

func TestPullNotStarted(t *testing.T) {
	c, err := NewPull(WithGroup("g1"), WithNameServers("127.0.0.1:9"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mq := rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}
	checks := map[string]error{}
	_, checks["Poll"] = c.Poll(ctx)
	checks["Seek"] = c.Seek(ctx, mq, 0)
	checks["CommitSync"] = c.CommitSync(ctx)
	_, checks["Committed"] = c.Committed(ctx, mq)
	_, checks["Pull"] = c.Pull(ctx, mq, All, 0, 1)
	checks["Shutdown"] = c.Shutdown(ctx)
	for name, err := range checks {
		if !errors.Is(err, ErrNotStarted) {
			t.Errorf("%s: %v, want ErrNotStarted", name, err)
		}
	}
}

func TestPullSubscribeAssignExclusive(t *testing.T) {
	tests := []struct {
		name  string
		first func(c *PullConsumer) error
		then  func(c *PullConsumer) error
	}{
		{"subscribe then assign",
			func(c *PullConsumer) error { return c.Subscribe("T", All) },
			func(c *PullConsumer) error {
				return c.Assign(context.Background(), []rocketmq.MessageQueue{{Topic: "T", BrokerName: "b"}})
			}},
		{"assign then subscribe",
			func(c *PullConsumer) error {
				return c.Assign(context.Background(), []rocketmq.MessageQueue{{Topic: "T", BrokerName: "b"}})
			},
			func(c *PullConsumer) error { return c.Subscribe("T", All) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewPull(WithGroup("g1"), WithNameServers("127.0.0.1:9"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.first(c); err != nil {
				t.Fatal(err)
			}
			if err := tt.then(c); err == nil || !strings.Contains(err.Error(), "cannot be mixed") {
				t.Fatalf("err %v, want the modes refused together", err)
			}
		})
	}
	c, err := NewPull(WithGroup("g1"), WithNameServers("127.0.0.1:9"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range []Selector{{Type: "XPATH", Expression: "a"}, SQL92("")} {
		if err := c.Subscribe("T", sel); err == nil {
			t.Errorf("Subscribe with %+v: no error", sel)
		}
	}
	if err := c.Subscribe("bad topic!", All); err == nil {
		t.Error("Subscribe of a bad topic name: no error")
	}
}

// TestPullTake checks the hand-out order: batches in arrival order,
// paused queues skipped but kept, stale ones (a queue given up or sought)
// dropped, and the consumed offset moved past the batch taken.
func TestPullTake(t *testing.T) {
	c, err := NewPull(WithGroup("g1"), WithNameServers("127.0.0.1:9"))
	if err != nil {
		t.Fatal(err)
	}
	mk := func(id int) *liteQueue {
		q := &liteQueue{mq: rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: id}, room: make(chan struct{}, 1)}
		q.consumed.Store(-1)
		c.queues[q.mq] = q
		return q
	}
	stale := mk(2)
	stale.cancel, stale.done = func() {}, make(chan struct{})
	close(stale.done)
	add := func(q *liteQueue, next int64, n int) {
		b := &liteBatch{q: q, next: next, bytes: int64(10 * n)}
		for i := range n {
			b.msgs = append(b.msgs, &rocketmq.MessageExt{QueueOffset: next - int64(n-i)})
		}
		c.putLocked(b)
	}
	add(stale, 99, 1)
	// A seek stops the queue and holds it anew.
	c.stopQueue(stale)
	q0, q1, _ := mk(0), mk(1), mk(2)
	add(q0, 5, 2)
	add(q1, 7, 3)
	add(q0, 9, 4)
	c.paused[q0.mq] = true

	// 9 held; the consumer's cap is 8 until the take.
	c.cfg.lite.thresholdForAll = 8
	all := c.allRoomLocked()
	b := c.takeLocked()
	for name, ch := range map[string]<-chan struct{}{"the consumer's cap": all, "the queue's own": q1.room} {
		select {
		case <-ch:
		default:
			t.Fatalf("a take left the queues held back by %s waiting", name)
		}
	}
	if b == nil || b.q != q1 || q1.consumed.Load() != 7 || q1.count != 0 || q1.bytes != 0 {
		t.Fatalf("first take: %+v, q1 consumed %d count %d", b, q1.consumed.Load(), q1.count)
	}
	if c.held != 6 || c.ready.len() != 2 {
		t.Fatalf("held %d, %d batches ready; want 6 and 2 (q0's)", c.held, c.ready.len())
	}
	if b := c.takeLocked(); b != nil {
		t.Fatalf("take with only paused batches: %+v", b)
	}
	c.cfg.lite.thresholdForAll = 6 // reached again
	all = c.allRoomLocked()
	c.Resume(q0.mq)
	select {
	case <-q0.room:
	default:
		t.Fatal("Resume left the queue waiting")
	}
	select {
	case <-all:
		t.Fatal("Resume woke the queues held back by the consumer's cap, still reached")
	case <-q1.room:
		t.Fatal("Resume of q0 woke q1")
	default:
	}
	if q0.lo != 3 {
		t.Fatalf("q0 holds from offset %d, want 3", q0.lo)
	}
	for _, want := range []int64{5, 9} {
		c.mu.Lock()
		b := c.takeLocked()
		c.mu.Unlock()
		if b == nil || b.q != q0 || q0.consumed.Load() != want {
			t.Fatalf("take after resume: %+v, consumed %d, want %d", b, q0.consumed.Load(), want)
		}
	}
	if c.held != 0 || c.ready.len() != 0 || q0.count != 0 {
		t.Fatalf("held %d, ready %d, q0 count %d after all taken", c.held, c.ready.len(), q0.count)
	}
}

// TestPullFlowControl checks that pulling stops at the per-queue cap and
// at the consumer's cap (each checked before a pull, so exceeded by at
// most one batch per queue), and that polling then drains every message
// once.
func TestPullFlowControl(t *testing.T) {
	tests := []struct {
		name            string
		perQueue, total int
		maxQueue, max   int64 // the most that may be held
	}{
		{"per queue", 5, 10000, 5 + 4 - 1, 2 * (5 + 4 - 1)},
		{"total", 1000, 6, 6 + 2*4 - 1, 6 + 2*4 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 2)
			f.put("T", 0, 50, "q0", "")
			f.put("T", 1, 50, "q1", "")
			c, err := NewPull(WithNameServers(f.addr()), WithGroup("g1"), WithConsumeFrom(FromFirst),
				WithPullBatchSize(4), WithPullThresholdForQueue(tt.perQueue), WithPullThresholdForAll(tt.total))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Subscribe("T", All); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = c.Shutdown(ctx)
			})
			stats := func() (all int64, worst int64) {
				c.mu.Lock()
				defer c.mu.Unlock()
				for _, q := range c.queues {
					worst = max(worst, q.count)
				}
				return int64(c.held), worst
			}
			// Held back only once a cap is reached: two queues reach at
			// least the smaller of the caps.
			if !testutil.Poll(10*time.Second, func() bool { all, _ := stats(); return all >= min(int64(tt.total), 2*int64(tt.perQueue)) }) {
				all, worst := stats()
				t.Fatalf("pulling never reached the cap: held %d, worst queue %d", all, worst)
			}
			// Over a while, never more than the caps allow.
			testutil.Poll(300*time.Millisecond, func() bool {
				all, worst := stats()
				if all > tt.max || worst > tt.maxQueue {
					t.Fatalf("held %d (most %d), worst queue %d (most %d)", all, tt.max, worst, tt.maxQueue)
				}
				return false
			})
			seen := map[string]int{}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for len(seen) < 100 {
				msgs, err := c.Poll(ctx)
				if err != nil {
					t.Fatalf("after %d of 100: %v", len(seen), err)
				}
				for _, m := range msgs {
					seen[string(m.Body)]++
					if seen[string(m.Body)] > 1 {
						t.Fatalf("%s polled twice", m.Body)
					}
				}
			}
		})
	}
}

// TestPullMaxSpan checks that a queue stops pulling while the offsets of
// the messages it holds span more than the consume max span (Java
// DefaultLitePullConsumer consumeMaxSpan), checked before each pull so
// exceeded by at most one batch, and that polling then drains every
// message once.
func TestPullMaxSpan(t *testing.T) {
	const span, batch, total = 10, 4, 60
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, total, "m", "")
	c, err := NewPull(WithNameServers(f.addr()), WithGroup("g1"), WithConsumeFrom(FromFirst),
		WithPullBatchSize(batch), WithConsumeMaxSpan(span))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe("T", All); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	spanHeld := func() (held int, lo, hi int64) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, q := range c.queues {
			if q.count > 0 {
				return int(q.count), q.lo, q.hi
			}
		}
		return 0, 0, 0
	}
	// The most held: a pull while the span is exactly span.
	const most = span + batch + 1
	if !testutil.Poll(10*time.Second, func() bool { n, _, _ := spanHeld(); return n >= most-batch }) {
		n, lo, hi := spanHeld()
		t.Fatalf("pulling never reached the span: held %d, offsets %d..%d", n, lo, hi)
	}
	testutil.Poll(300*time.Millisecond, func() bool {
		if n, lo, hi := spanHeld(); n > most || hi-lo >= most {
			t.Fatalf("held %d messages, offsets %d..%d: span %d exceeded by more than a batch of %d", n, lo, hi, span, batch)
		}
		return false
	})
	seen := map[int64]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(seen) < total {
		msgs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d: %v", len(seen), total, err)
		}
		for _, m := range msgs {
			if seen[m.QueueOffset] {
				t.Fatalf("offset %d polled twice", m.QueueOffset)
			}
			seen[m.QueueOffset] = true
		}
	}
}
