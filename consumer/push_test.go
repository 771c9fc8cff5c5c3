package consumer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Every message once; the offsets reach the broker on pulls, periodically
// and at Shutdown.
func TestConsumeAndCommit(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 4)
	for q := 0; q < 4; q++ {
		f.put("T", q, 10, "q"+string(rune('0'+q)), "")
	}
	rec := newRecorder()
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "40 messages", func() bool { return rec.distinct() == 40 })
	for b, n := range rec.bodies {
		if n != 1 {
			t.Fatalf("%s consumed %d times", b, n)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "offsets persisted", func() bool {
		for q := 0; q < 4; q++ {
			if off, ok := f.committed("g1", "T", q); !ok || off != 10 {
				return false
			}
		}
		return true
	})
	var topicQueues []rocketmq.MessageQueue
	for _, mq := range c.Assigned() {
		if mq.Topic == "T" {
			topicQueues = append(topicQueues, mq)
		}
	}
	if len(topicQueues) != 4 || !slices.IsSortedFunc(c.Assigned(), compareQueues) {
		t.Fatalf("assigned %v", c.Assigned())
	}
	st := c.Stats()
	if len(st) != 1 || st[0].Topic != "T" || st[0].OKTotal != 40 || st[0].PullTPS <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

// The commit offset rides on pulls: with the periodic persist off, the
// broker still learns what was consumed.
func TestCommitOffsetOnPull(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 5, "m", "")
	rec := newRecorder()
	c := f.newConsumer(t, "g1", WithOffsetPersistInterval(time.Hour))
	if err := c.Subscribe("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "consumed", func() bool { return rec.distinct() == 5 })
	testutil.WaitFor(t, 10*time.Second, "offset carried by a pull", func() bool {
		off, ok := f.committed("g1", "T", 0)
		return ok && off == 5
	})
}

// Pulls pause at the per-queue count cap: a queue never holds more than
// the cap plus one pull batch.
func TestFlowControlCount(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 200, "f", "")
	const capCount, batch = 20, 8
	release := make(chan struct{})
	var consumed atomic.Int32
	c := f.newConsumer(t, "g1", WithPullThresholdForQueue(capCount), WithPullBatchSize(batch), WithConsumeGoroutines(2))
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		consumed.Add(int32(len(msgs)))
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	r := c.runState()
	testutil.WaitFor(t, 10*time.Second, "pulls paused by flow control", func() bool {
		_, paused := held(r, "T")
		return paused >= 3
	})
	if n, _ := held(r, "T"); n > capCount+batch || n <= capCount {
		t.Fatalf("queue holds %d messages, want above the cap %d and at most cap + batch %d", n, capCount, capCount+batch)
	}
	close(release)
	testutil.WaitFor(t, 10*time.Second, "every message after release", func() bool { return consumed.Load() == 200 })
}

// The body-size cap and the span cap pause pulls too.
func TestFlowControlSizeAndSpan(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{"span", WithConsumeMaxSpan(10)},
		{"size", WithPullThresholdSizeForQueue(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 1)
			if tc.name == "size" {
				f.mu.Lock()
				for i := 0; i < 40; i++ {
					f.putLocked("T", 0, make([]byte, 100<<10), "", nil, 0)
				}
				f.mu.Unlock()
			} else {
				f.put("T", 0, 100, "s", "")
			}
			block := make(chan struct{})
			defer close(block)
			var first atomic.Bool
			c := f.newConsumer(t, "g1", tc.opt, WithPullBatchSize(4))
			if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
				if first.CompareAndSwap(false, true) || tc.name == "size" {
					// The oldest message stays held: the span grows
					// (every message, for the size).
					select {
					case <-block:
					case <-ctx.Done():
					}
				}
				return Success, nil
			}); err != nil {
				t.Fatal(err)
			}
			start(t, c)
			r := c.runState()
			testutil.WaitFor(t, 10*time.Second, "pulls paused", func() bool {
				_, paused := held(r, "T")
				return paused >= 3
			})
			r.qmu.Lock()
			defer r.qmu.Unlock()
			for _, q := range r.queues {
				if q.mq.Topic != "T" {
					continue
				}
				_, bytes, span := q.pq.stats()
				if tc.name == "span" && span > 10+4 {
					t.Fatalf("span %d beyond the cap 10 + one batch", span)
				}
				if tc.name == "size" && bytes > (1<<20)+4*(100<<10) {
					t.Fatalf("%d bytes held, beyond 1 MiB + one batch", bytes)
				}
			}
		})
	}
}

// The topic caps are split over the queues held; the per-queue options
// stay as they were.
func TestFlowControlTopicCaps(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 4)
	c := f.newConsumer(t, "g1", WithPullThresholdForTopic(100), WithPullThresholdSizeForTopic(8))
	if err := c.Subscribe("T", All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	r := c.runState()
	testutil.WaitFor(t, 10*time.Second, "caps split over 4 queues", func() bool {
		r.qmu.Lock()
		defer r.qmu.Unlock()
		n := 0
		for mq, q := range r.queues {
			if mq.Topic == "T" && q.capCount.Load() == 25 && q.capBytes.Load() == 2<<20 {
				n++
			}
		}
		return n == 4
	})
	if r.cfg.pullThresholdForQueue != 1000 || r.cfg.pullThresholdSizeForQueue != 100 {
		t.Fatalf("per-queue options changed: %d %d", r.cfg.pullThresholdForQueue, r.cfg.pullThresholdSizeForQueue)
	}
}

// RetryLater: CONSUMER_SEND_MSG_BACK as Java fills it, and the message
// comes back from the retry topic under its own topic with reconsume
// times 1.
func TestRetrySendBack(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 1, "r", "TagA")
	var mu sync.Mutex
	var got []*rocketmq.MessageExt
	c := f.newConsumer(t, "g1", WithMaxReconsumeTimes(3))
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, msgs...)
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
		return len(got) == 2
	})
	f.mu.Lock()
	sb := f.sendBacks[0]
	f.mu.Unlock()
	if sb.Group != "g1" || sb.DelayLevel != 0 || *sb.OriginTopic != "T" || *sb.MaxReconsumeTimes != 3 || *sb.OriginMsgID != got[0].MsgID || sb.Offset != got[0].CommitLogOffset {
		t.Fatalf("send-back header %+v (msg id %s)", sb, got[0].MsgID)
	}
	mu.Lock()
	defer mu.Unlock()
	m := got[1]
	if m.Topic != "T" || m.ReconsumeTimes != 1 || string(m.Body) != "r-0" || m.Property(rocketmq.PropertyOriginMessageID) != got[0].MsgID {
		t.Fatalf("redelivered as topic %s reconsume %d body %q props %v", m.Topic, m.ReconsumeTimes, m.Body, m.Properties)
	}
	st := c.Stats()[0]
	if st.OKTotal != 1 || st.FailedTotal != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// When the send-back fails the copy goes to the retry topic itself; when
// that fails too the batch runs again locally, with reconsume times 1.
func TestSendBackFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failDirect bool
		mute       bool
	}{{"retry topic", false, false}, {"local", true, false}, {"send-back unanswered", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 1)
			f.put("T", 0, 1, "x", "")
			if tc.mute {
				// The send-back times out: the copy still goes out.
				f.mu.Lock()
				f.mute[remoting.ConsumerSendMsgBack] = true
				f.mu.Unlock()
			} else {
				f.fail(remoting.ConsumerSendMsgBack, remoting.SystemError)
			}
			if tc.failDirect {
				f.fail(remoting.SendMessageV2, remoting.SystemError)
			}
			var mu sync.Mutex
			var seen []*rocketmq.MessageExt
			c := f.newConsumer(t, "g1")
			if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, msgs...)
				if len(seen) == 1 {
					return RetryLater, nil
				}
				return Success, nil
			}); err != nil {
				t.Fatal(err)
			}
			start(t, c)
			if !tc.failDirect {
				testutil.WaitFor(t, 10*time.Second, "a copy sent to the retry topic", func() bool {
					f.mu.Lock()
					defer f.mu.Unlock()
					return f.sends == 1
				})
				testutil.WaitFor(t, 10*time.Second, "offset past the message", func() bool {
					off, ok := f.committed("g1", "T", 0)
					return ok && off == 1
				})
				return
			}
			testutil.WaitFor(t, 15*time.Second, "local retry", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) >= 2
			})
			mu.Lock()
			defer mu.Unlock()
			if seen[1].ReconsumeTimes != 1 || string(seen[1].Body) != "x-0" {
				t.Fatalf("local retry with reconsume %d body %q", seen[1].ReconsumeTimes, seen[1].Body)
			}
		})
	}
}

// The broker says the offset is out of range: the queue restarts at the
// broker's offset, which is persisted.
func TestOffsetMoved(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 5, "old", "")
	f.setOffset("g1", "T", 0, 100)
	rec := newRecorder()
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "offset moved back to the queue's end", func() bool {
		off, ok := f.committed("g1", "T", 0)
		return ok && off == 5
	})
	f.put("T", 0, 1, "new", "")
	testutil.WaitFor(t, 10*time.Second, "new message after the move", func() bool { return rec.count("new-0") == 1 })
	if rec.count("old-0") != 0 {
		t.Fatal("old messages consumed")
	}
}

// Where a queue without a committed offset starts.
func TestConsumeFrom(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []Option
		wantOld bool
	}{
		{"last", []Option{WithConsumeFrom(FromLast)}, false},
		{"first", []Option{WithConsumeFrom(FromFirst)}, true},
		{"timestamp future", []Option{WithConsumeFrom(FromTimestamp), WithConsumeTimestamp(time.Now().Add(time.Hour))}, false},
		{"timestamp past", []Option{WithConsumeFrom(FromTimestamp), WithConsumeTimestamp(time.Now().Add(-time.Hour))}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 1)
			f.put("T", 0, 3, "old", "")
			rec := newRecorder()
			c := f.newConsumer(t, "g1", tc.opts...)
			if err := c.Subscribe("T", All, rec.handler); err != nil {
				t.Fatal(err)
			}
			start(t, c)
			testutil.WaitFor(t, 10*time.Second, "queue assigned", func() bool { return len(held2(c, "T")) == 1 })
			f.put("T", 0, 1, "new", "")
			testutil.WaitFor(t, 10*time.Second, "new message", func() bool { return rec.count("new-0") == 1 })
			if got := rec.count("old-0") == 1; got != tc.wantOld {
				t.Fatalf("old message consumed: %v, want %v", got, tc.wantOld)
			}
		})
	}
}

func held2(c *PushConsumer, topic string) []rocketmq.MessageQueue {
	var out []rocketmq.MessageQueue
	for _, mq := range c.Assigned() {
		if mq.Topic == topic {
			out = append(out, mq)
		}
	}
	return out
}

// Requests brokers and admin tools send to a consumer.
func TestMemberRequests(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 5, "a", "TagA")
	f.put("T", 1, 5, "b", "TagA")
	rec := newRecorder()
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", Tags("TagA"), rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "consumed", func() bool { return rec.distinct() == 10 })
	m := &member{r: c.runState()}

	cd := m.ConsumerData()
	if cd.GroupName != "g1" || cd.ConsumeType != remoting.ConsumeTypePassively || cd.MessageModel != "CLUSTERING" || cd.ConsumeFromWhere != remoting.ConsumeFromFirstOffset {
		t.Fatalf("consumer data %+v", cd)
	}
	var subTopics []string
	for _, s := range cd.SubscriptionDataSet {
		subTopics = append(subTopics, s.Topic)
		if s.Topic == "T" && (s.SubString != "TagA" || len(s.CodeSet) != 1 || s.ExpressionType != "TAG") {
			t.Fatalf("subscription %+v", s)
		}
	}
	if !slices.Equal(subTopics, []string{"%RETRY%g1", "T"}) {
		t.Fatalf("subscriptions %v", subTopics)
	}
	testutil.WaitFor(t, 10*time.Second, "offsets at the end", func() bool {
		o := m.Offsets("T")
		return len(o) == 2 && o[rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}] == 5
	})

	info := m.RunningInfo()
	if info.Properties[remoting.PropConsumeType] != remoting.ConsumeTypePassively || info.Properties["consumerGroup"] != "g1" ||
		info.Properties[remoting.PropConsumeOrderly] != "false" || info.Properties["messageModel"] != "CLUSTERING" {
		t.Fatalf("properties %v", info.Properties)
	}
	n := 0
	for mq, pi := range info.MQTable {
		if mq.Topic == "T" {
			n++
			if pi.LastPullTimestamp == 0 || pi.CommitOffset != 5 {
				t.Fatalf("queue info %+v", pi)
			}
		}
	}
	if n != 2 {
		t.Fatalf("running info has %d queues of the topic", n)
	}
	if st, ok := info.StatusTable["T"]; !ok || st.ConsumeOKTPS <= 0 {
		t.Fatalf("status %+v", info.StatusTable)
	}
	if b := info.AppendJSON(nil, remoting.JSONFastjson); !strings.Contains(string(b), `"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"`) {
		t.Fatalf("running info JSON %s", b)
	}

	for _, tc := range []struct {
		topic string
		h     Handler
		want  string
	}{
		{"T", nil, remoting.ConsumeResultSuccess},
		{"nope", nil, remoting.ConsumeResultThrowException},
	} {
		msg := &rocketmq.MessageExt{Message: rocketmq.Message{Topic: tc.topic, Body: []byte("direct")}}
		res := m.ConsumeDirectly(context.Background(), msg, "broker-a")
		if res.ConsumeResult != tc.want || !res.AutoCommit {
			t.Fatalf("consume directly on %s: %+v", tc.topic, res)
		}
	}
	if rec.count("direct") != 1 {
		t.Fatal("consume directly did not reach the handler")
	}

	// RESET_CONSUMER_CLIENT_OFFSET back to 0: everything again.
	reset := map[rocketmq.MessageQueue]int64{}
	for _, mq := range held2(c, "T") {
		reset[mq] = 0
	}
	m.ResetOffset("T", reset)
	testutil.WaitFor(t, 10*time.Second, "messages again after the reset", func() bool {
		for _, b := range []string{"a-0", "a-4", "b-0", "b-4"} {
			if rec.count(b) < 2 {
				return false
			}
		}
		return true
	})
}

// ConsumeDirectly reports each outcome as Java's CMResult.
func TestConsumeDirectlyResults(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	var outcome atomic.Value
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		switch outcome.Load().(string) {
		case "later":
			return RetryLater, nil
		case "error":
			return Success, errors.New("failed")
		case "panic":
			panic("boom")
		case "bogus":
			return Result(9), nil
		}
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	m := &member{r: c.runState()}
	for in, want := range map[string]string{
		"ok": remoting.ConsumeResultSuccess, "later": remoting.ConsumeResultLater, "error": remoting.ConsumeResultThrowException,
		"panic": remoting.ConsumeResultThrowException, "bogus": remoting.ConsumeResultReturnNull,
	} {
		outcome.Store(in)
		res := m.ConsumeDirectly(context.Background(), &rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}}, "broker-a")
		if res.ConsumeResult != want {
			t.Errorf("%s: %+v, want %s", in, res, want)
		}
	}
}

// Broadcasting drops what a handler gives back, as Java, and moves on.
func TestBroadcastingRetryLaterDrops(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 3, "b", "")
	var calls atomic.Int32
	c := f.newConsumer(t, "g1", WithModel(Broadcasting), WithOffsetStoreDir(t.TempDir()))
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		calls.Add(int32(len(msgs)))
		return RetryLater, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	m := &member{r: c.runState()}
	testutil.WaitFor(t, 10*time.Second, "offset past the given-back messages", func() bool {
		return m.Offsets("T")[rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a"}] == 3
	})
	if n := calls.Load(); n != 3 {
		t.Fatalf("handler called for %d messages, want 3 (no redelivery)", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sendBacks) != 0 || f.sends != 0 {
		t.Fatal("broadcasting sent messages back")
	}
}

// A handler running past the consume timeout is given back (delay level
// 3) and its offset released.
func TestExpiredMessageGivenBack(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 2, "slow", "")
	stuck := make(chan struct{})
	defer close(stuck)
	c := f.newConsumer(t, "g1", WithConsumeTimeout(300*time.Millisecond), WithConsumeGoroutines(1))
	var calls atomic.Int32
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if calls.Add(1) == 1 {
			<-stuck // ignores its ctx
		}
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "expired message sent back", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.sendBacks) == 1 && f.sendBacks[0].DelayLevel == 3
	})
	// The held message no longer holds the offset back.
	testutil.WaitFor(t, 10*time.Second, "offset released", func() bool {
		return c.runState().store.readMemory(rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a"}) >= 1
	})
}

// Shutdown from a handler returns; a second Shutdown returns; Start
// after Shutdown fails.
func TestShutdownFromHandler(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 5, "s", "")
	f.put("T", 1, 5, "t", "")
	c := f.newConsumer(t, "g1")
	returned := make(chan error, 1)
	var first atomic.Bool
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if first.CompareAndSwap(false, true) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			returned <- c.Shutdown(ctx)
			// Again, from the same handler: returns at once.
			returned <- c.Shutdown(ctx)
		}
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		select {
		case err := <-returned:
			if err != nil {
				t.Fatalf("Shutdown from a handler: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Shutdown from a handler did not return")
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after Shutdown: %v", err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Shutdown: %v, want ErrClosed", err)
	}
	if f.br.Count(remoting.UnregisterClient) == 0 {
		t.Fatal("not unregistered at Shutdown")
	}
}

// Shutdown waits for running handlers; when its ctx ends first, their
// contexts are cancelled and it reports the deadline.
func TestShutdownWaitsForHandlers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		deadline bool
	}{{"drained", 10 * time.Second, false}, {"cut short", 100 * time.Millisecond, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 1)
			f.put("T", 0, 1, "d", "")
			started := make(chan struct{})
			finish := make(chan struct{})
			var finished, sawCancel atomic.Bool
			c := f.newConsumer(t, "g1")
			if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
				close(started)
				select {
				case <-finish:
				case <-ctx.Done():
					sawCancel.Store(true)
				}
				finished.Store(true)
				return Success, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			<-started
			if !tc.deadline {
				time.AfterFunc(200*time.Millisecond, func() { close(finish) })
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			err := c.Shutdown(ctx)
			if !finished.Load() {
				t.Fatal("Shutdown returned before the handler")
			}
			if tc.deadline != errors.Is(err, context.DeadlineExceeded) || tc.deadline != sawCancel.Load() {
				t.Fatalf("Shutdown: %v, handler cancelled: %v", err, sawCancel.Load())
			}
			if !tc.deadline {
				if off, ok := f.committed("g1", "T", 0); !ok || off != 1 {
					t.Fatalf("offset at Shutdown %d %v, want 1", off, ok)
				}
			}
		})
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

func TestSubscribeChecks(t *testing.T) {
	c, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		t.Fatal(err)
	}
	h := newRecorder().handler
	for _, tc := range []struct {
		topic string
		sel   Selector
		h     Handler
	}{
		{"", All, h},
		{"T", All, nil},
		{"T", Selector{Type: "XML", Expression: "a"}, h},
		{"T", SQL92(" "), h},
		{"%RETRY%g", All, h},
	} {
		if err := c.Subscribe(tc.topic, tc.sel, tc.h); err == nil {
			t.Errorf("Subscribe(%q, %+v) succeeded", tc.topic, tc.sel)
		}
	}
	if err := c.Subscribe("T", Selector{Expression: "a"}, h); err != nil {
		t.Fatalf("selector without type: %v", err)
	}
}

// Shutdown lets the workers run what was already pulled while its ctx
// allows: nothing pulled is delivered again.
func TestShutdownDrains(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 60, "d", "")
	var handled atomic.Int32
	started := make(chan struct{})
	var once sync.Once
	c := f.newConsumer(t, "g1", WithConsumeGoroutines(1))
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		once.Do(func() { close(started) })
		time.Sleep(2 * time.Millisecond) // a slow handler: the pulled messages queue up
		handled.Add(int32(len(msgs)))
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	<-started
	r := c.runState()
	testutil.WaitFor(t, 10*time.Second, "everything pulled", func() bool { n, _ := held(r, "T"); return n+int(handled.Load()) == 60 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 60 {
		t.Fatalf("handled %d of the 60 pulled messages", n)
	}
	if off, ok := f.committed("g1", "T", 0); !ok || off != 60 {
		t.Fatalf("offset at Shutdown %d %v, want 60", off, ok)
	}
}

// A handler that ignores its ctx does not hold Shutdown beyond its ctx
// and a grace: the offsets of the rest are persisted and the group
// unregistered.
func TestShutdownStuckHandler(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 1, "stuck", "")
	f.put("T", 1, 3, "ok", "")
	stuck := make(chan struct{})
	defer close(stuck)
	var okDone atomic.Int32
	var inStuck atomic.Bool
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if string(msgs[0].Body) == "stuck-0" {
			inStuck.Store(true)
			<-stuck
		}
		okDone.Add(1)
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the other queue consumed, the stuck handler running", func() bool { return okDone.Load() == 3 && inStuck.Load() })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := c.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	if off, ok := f.committed("g1", "T", 1); !ok || off != 3 {
		t.Fatalf("offset of the healthy queue %d %v, want 3", off, ok)
	}
	if off, _ := f.committed("g1", "T", 0); off != 0 {
		t.Fatalf("offset of the stuck queue %d, want 0", off)
	}
	// A heartbeat already under way may land after the unregistration
	// (the broker then forgets the client when its connection closes):
	// count the unregistration itself.
	if f.br.Count(remoting.UnregisterClient) == 0 {
		t.Fatal("not unregistered at Shutdown")
	}
}

// A reset drops only the queues its table names, waits for their running
// handlers without holding up rebalances, and keeps the rebalance from
// taking those queues until the new offsets are stored.
func TestResetOffsetWaitsOutsideRebalance(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 3, "a", "")
	f.put("T", 1, 3, "b", "")
	rec := newRecorder()
	release := make(chan struct{})
	var blocked atomic.Bool
	c := f.newConsumer(t, "g1")
	if err := c.Subscribe("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if string(msgs[0].Body) == "a-2" && blocked.CompareAndSwap(false, true) {
			<-release // ignores its ctx
		}
		return rec.handler(ctx, msgs)
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "handler of queue 0 blocked, queue 1 consumed", func() bool {
		return blocked.Load() && rec.count("b-2") == 1
	})
	r := c.runState()
	m := &member{r: r}
	q0 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	q1 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 1}
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.ResetOffset("T", map[rocketmq.MessageQueue]int64{q0: 0})
	}()
	testutil.WaitFor(t, 10*time.Second, "queue 0 dropped", func() bool {
		r.qmu.Lock()
		defer r.qmu.Unlock()
		_, resetting := r.resetting[q0]
		return r.queues[q0] == nil && resetting
	})
	// A rebalance runs meanwhile, and does not take queue 0 back.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	r.rebalance(ctx)
	cancel()
	r.qmu.Lock()
	q0Held, q1Held := r.queues[q0] != nil, r.queues[q1] != nil
	r.qmu.Unlock()
	if q0Held || !q1Held {
		t.Fatalf("during the reset: queue 0 held %v, queue 1 held %v", q0Held, q1Held)
	}
	// A second reset meanwhile hands its offset to the waiting one and
	// returns at once: the latest wins.
	second := make(chan struct{})
	go func() {
		defer close(second)
		m.ResetOffset("T", map[rocketmq.MessageQueue]int64{q0: 1})
	}()
	select {
	case <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("a second reset waited for the first")
	}
	close(release)
	<-done
	testutil.WaitFor(t, 10*time.Second, "queue 0 again from 1", func() bool { return rec.count("a-1") == 2 && rec.count("a-2") >= 1 })
	if rec.count("a-0") != 1 {
		t.Fatalf("a-0 consumed %d times: the first reset's offset won", rec.count("a-0"))
	}
	if off, ok := f.committed("g1", "T", 0); !ok || off > 3 {
		t.Fatalf("queue 0 offset %d %v", off, ok)
	}
	if rec.count("b-0") != 1 {
		t.Fatal("queue 1, not in the reset table, was consumed again")
	}
}

// Two broadcasting members of a group on one host need their own instance
// names: the second one on the same offset file is refused at Start.
func TestBroadcastingOffsetFileInUse(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	dir := t.TempDir()
	c1 := f.newConsumer(t, "g1", WithModel(Broadcasting), WithOffsetStoreDir(dir))
	if err := c1.Subscribe("T", All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	start(t, c1)
	c2 := f.newConsumer(t, "g1", WithModel(Broadcasting), WithOffsetStoreDir(dir))
	if err := c2.Subscribe("T", All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	if err := c2.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "WithInstanceName") {
		t.Fatalf("second member on the same file: %v", err)
	}
	if err := c1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c3 := f.newConsumer(t, "g1", WithModel(Broadcasting), WithOffsetStoreDir(dir))
	if err := c3.Subscribe("T", All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	start(t, c3)
}

// SQL92 subscriptions are checked with the broker at Start (Java
// checkClientInBroker): a refused expression fails Start; a broker that
// does not serve the check lets it through.
func TestSQL92CheckedAtStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		checks  bool
		expr    string
		wantErr bool
	}{
		{"accepted", true, "a > 1", false},
		{"refused", true, "bad >", true},
		{"not served", false, "bad >", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCluster(t)
			f.createTopic("T", 1)
			f.mu.Lock()
			f.checks = tc.checks
			f.mu.Unlock()
			c := f.newConsumer(t, "g1")
			if err := c.Subscribe("T", SQL92(tc.expr), newRecorder().handler); err != nil {
				t.Fatal(err)
			}
			err := c.Start(context.Background())
			if err == nil {
				t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("Start: %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "CheckClientConfig error") {
				t.Fatalf("Start error %v lacks the broker's reason", err)
			}
			if tc.checks && f.br.Count(remoting.CheckClientConfig) != 1 {
				t.Fatalf("%d checks sent", f.br.Count(remoting.CheckClientConfig))
			}
		})
	}
}
