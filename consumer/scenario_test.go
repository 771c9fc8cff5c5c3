package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func shutdown(t *testing.T, c *PushConsumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// Broadcasting: every member gets every message; a restarted member
// resumes from its local file.
func TestBroadcastingResumesAfterRestart(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	p := e.producer(t)
	group := groupName(t)
	dir := t.TempDir()
	first := send(t, p, topic, "first", "", 20)
	mk := func(inst string, rec *recorder) *PushConsumer {
		c := e.newConsumer(t, group, WithModel(Broadcasting), WithOffsetStoreDir(dir), WithInstanceName(inst))
		if err := c.Subscribe(topic, All, rec.handler); err != nil {
			t.Fatal(err)
		}
		start(t, c)
		return c
	}
	r1, r2 := newRecorder(), newRecorder()
	c1 := mk("m1", r1)
	mk("m2", r2)
	testutil.WaitFor(t, 20*time.Second, "both members get every message", func() bool {
		return r1.distinct() == len(first) && r2.distinct() == len(first)
	})
	if got := len(c1.Assigned()); got != 2 {
		t.Fatalf("broadcasting member holds %d queues, want all 2 (no retry topic)", got)
	}
	shutdown(t, c1)
	second := send(t, p, topic, "second", "", 10)
	r1b := newRecorder()
	mk("m1", r1b)
	testutil.WaitFor(t, 20*time.Second, "restarted member gets the new messages", func() bool { return r1b.distinct() == len(second) })
	for _, b := range first {
		if r1b.count(b) != 0 {
			t.Fatalf("restarted member got %s again", b)
		}
	}
}

// Two members of a group split the queues without overlap and consume
// every message once.
func TestClusteringTwoMembers(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 8)
	p := e.producer(t)
	group := groupName(t)
	rec := newRecorder()
	c1 := e.newConsumer(t, group, WithInstanceName("a"))
	c2 := e.newConsumer(t, group, WithInstanceName("b"))
	for _, c := range []*PushConsumer{c1, c2} {
		if err := c.Subscribe(topic, All, rec.handler); err != nil {
			t.Fatal(err)
		}
		start(t, c)
	}
	topicQueues := func(c *PushConsumer) []rocketmq.MessageQueue {
		var out []rocketmq.MessageQueue
		for _, mq := range c.Assigned() {
			if mq.Topic == topic {
				out = append(out, mq)
			}
		}
		return out
	}
	testutil.WaitFor(t, 20*time.Second, "4 queues each", func() bool {
		return len(topicQueues(c1)) == 4 && len(topicQueues(c2)) == 4
	})
	for _, mq := range topicQueues(c1) {
		if slices.Contains(topicQueues(c2), mq) {
			t.Fatalf("%v held by both members", mq)
		}
	}
	bodies := send(t, p, topic, "m", "", 80)
	testutil.WaitFor(t, 20*time.Second, "every message", func() bool { return rec.distinct() == len(bodies) })
	for _, b := range bodies {
		if n := rec.count(b); n != 1 {
			t.Fatalf("%s consumed %d times", b, n)
		}
	}
}

// Pulls pause at the per-queue count cap: a queue never holds more than
// the cap plus one pull batch.
func TestFlowControlCount(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "f", "", 200)
	const capCount, batch = 20, 8
	release := make(chan struct{})
	var consumed atomic.Int32
	c := e.newConsumer(t, groupName(t), WithPullThresholdForQueue(capCount), WithPullBatchSize(batch), WithConsumeGoroutines(2))
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
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
	held := func() (n int, paused int64) {
		r.qmu.Lock()
		defer r.qmu.Unlock()
		for mq, q := range r.queues {
			if mq.Topic == topic {
				cnt, _, _ := q.pq.stats()
				n += cnt
				paused += q.flowCtl.Load()
			}
		}
		return n, paused
	}
	testutil.WaitFor(t, 20*time.Second, "pulls paused by flow control", func() bool {
		_, paused := held()
		return paused >= 3
	})
	if n, _ := held(); n > capCount+batch {
		t.Fatalf("queue holds %d messages, cap %d + batch %d", n, capCount, batch)
	}
	close(release)
	testutil.WaitFor(t, 20*time.Second, "every message after release", func() bool { return consumed.Load() == 200 })
}

// The topic cap is split over the queues held.
func TestFlowControlTopicCaps(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 4)
	c := e.newConsumer(t, groupName(t), WithPullThresholdForTopic(100), WithPullThresholdSizeForTopic(8))
	if err := c.Subscribe(topic, All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	r := c.runState()
	testutil.WaitFor(t, 20*time.Second, "caps split over 4 queues", func() bool {
		r.qmu.Lock()
		defer r.qmu.Unlock()
		n := 0
		for mq, q := range r.queues {
			if mq.Topic == topic && q.capCount.Load() == 25 && q.capBytes.Load() == 2<<20 {
				n++
			}
		}
		return n == 4
	})
	// The per-queue options stay as the user set them.
	if r.cfg.pullThresholdForQueue != 1000 || r.cfg.pullThresholdSizeForQueue != 100 {
		t.Fatalf("per-queue options changed: %d %d", r.cfg.pullThresholdForQueue, r.cfg.pullThresholdSizeForQueue)
	}
}

// runState returns the running state (tests).
func (c *PushConsumer) runState() *runState {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	return c.run
}

// When CONSUMER_SEND_MSG_BACK fails, the copy goes straight to the retry
// topic with the retry properties; when that fails too, the message is
// consumed again locally.
func TestSendBackFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failDirect bool
	}{{"retry topic", false}, {"local", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fastDelays)
			e.ours(t, "fault controls")
			topic := e.topic(t, 1)
			p := e.producer(t)
			send(t, p, topic, "x", "", 1)
			broker := e.cluster.BrokerNames()[0]
			if err := e.cluster.Intercept(broker, remoting.ConsumerSendMsgBack, rmqtest.Fault{Respond: true, Code: remoting.SystemError, Remark: "injected"}); err != nil {
				t.Fatal(err)
			}
			if tc.failDirect {
				err := e.cluster.Intercept(broker, remoting.SendMessageV2, rmqtest.Fault{Respond: true, Code: remoting.SystemError, Remark: "injected", Times: 1,
					Match: func(req *remoting.Command) bool {
						var h remoting.SendMessageRequestHeaderV2
						return h.FromExt(req.Ext) == nil && strings.HasPrefix(h.Topic, rocketmq.RetryGroupTopicPrefix)
					}})
				if err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			var seen []*rocketmq.MessageExt
			c := e.newConsumer(t, groupName(t))
			if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
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
			testutil.WaitFor(t, 30*time.Second, "message again", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(seen) >= 2
			})
			mu.Lock()
			defer mu.Unlock()
			m := seen[1]
			if m.ReconsumeTimes != 1 || m.Topic != topic || string(m.Body) != "x-0" {
				t.Fatalf("again as topic %s reconsume %d body %q", m.Topic, m.ReconsumeTimes, m.Body)
			}
			if !tc.failDirect {
				if m.Property(rocketmq.PropertyOriginMessageID) == "" || m.Property(rocketmq.PropertyRetryTopic) != topic {
					t.Fatalf("retry copy properties %v", m.Properties)
				}
			}
		})
	}
}

// A message whose handler runs past the consume timeout is given back and
// its offset released.
func TestExpiredMessageGivenBack(t *testing.T) {
	e := newEnv(t, fastDelays)
	e.ours(t, "short delay levels")
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "slow", "", 1)
	var calls atomic.Int32
	stuck := make(chan struct{})
	defer close(stuck)
	c := e.newConsumer(t, groupName(t), WithConsumeTimeout(500*time.Millisecond))
	var redelivered atomic.Int32
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		if calls.Add(1) == 1 {
			// Ignores its ctx: only the sweep can release the offset.
			<-stuck
			return Success, nil
		}
		redelivered.Store(msgs[0].ReconsumeTimes + 1)
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "expired message delivered again", func() bool { return redelivered.Load() > 0 })
	if got := redelivered.Load() - 1; got != 1 {
		t.Fatalf("reconsume times %d, want 1", got)
	}
}

// Requests brokers and admin tools send to a consumer.
func TestMemberRequests(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	p := e.producer(t)
	bodies := send(t, p, topic, "m", "TagA", 10)
	rec := newRecorder()
	group := groupName(t)
	c := e.newConsumer(t, group)
	if err := c.Subscribe(topic, Tags("TagA"), rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "consumed", func() bool { return rec.distinct() == len(bodies) })
	r := c.runState()
	m := &member{r: r}

	cd := m.ConsumerData()
	if cd.ConsumeType != remoting.ConsumeTypePassively || cd.MessageModel != "CLUSTERING" || cd.ConsumeFromWhere != remoting.ConsumeFromFirstOffset {
		t.Fatalf("consumer data %+v", cd)
	}
	var subTopics []string
	for _, s := range cd.SubscriptionDataSet {
		subTopics = append(subTopics, s.Topic)
		if s.Topic == topic && (s.SubString != "TagA" || len(s.CodeSet) != 1) {
			t.Fatalf("subscription %+v", s)
		}
	}
	if !slices.Contains(subTopics, "%RETRY%"+group) || !slices.Contains(subTopics, topic) {
		t.Fatalf("subscriptions %v", subTopics)
	}

	testutil.WaitFor(t, 10*time.Second, "offsets at the end", func() bool {
		sum := int64(0)
		for _, off := range m.Offsets(topic) {
			sum += off
		}
		return sum == int64(len(bodies))
	})

	info := m.RunningInfo()
	if info.Properties[remoting.PropConsumeType] != remoting.ConsumeTypePassively || info.Properties["consumerGroup"] != group {
		t.Fatalf("properties %v", info.Properties)
	}
	n := 0
	for mq, pi := range info.MQTable {
		if mq.Topic == topic {
			n++
			if pi.LastPullTimestamp == 0 {
				t.Fatalf("queue info %+v", pi)
			}
		}
	}
	if n != 2 {
		t.Fatalf("running info has %d queues of the topic", n)
	}
	if st, ok := info.StatusTable[topic]; !ok || st.ConsumeOKTPS <= 0 {
		t.Fatalf("status %+v", info.StatusTable)
	}
	// The body encodes as Java's admin expects.
	if b := info.AppendJSON(nil, remoting.JSONFastjson); !strings.Contains(string(b), `"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"`) {
		t.Fatalf("running info JSON %s", b)
	}

	// CONSUME_MESSAGE_DIRECTLY.
	msg := &rocketmq.MessageExt{Message: rocketmq.Message{Topic: topic, Body: []byte("direct"), Properties: map[string]string{}}}
	res := m.ConsumeDirectly(context.Background(), msg, "broker-a")
	if res.ConsumeResult != remoting.ConsumeResultSuccess || rec.count("direct") != 1 {
		t.Fatalf("consume directly: %+v", res)
	}
	res = m.ConsumeDirectly(context.Background(), &rocketmq.MessageExt{Message: rocketmq.Message{Topic: "nope"}}, "")
	if res.ConsumeResult != remoting.ConsumeResultThrowException {
		t.Fatalf("consume directly on an unknown topic: %+v", res)
	}

	// RESET_CONSUMER_CLIENT_OFFSET back to 0: everything again.
	reset := map[rocketmq.MessageQueue]int64{}
	for _, mq := range c.Assigned() {
		if mq.Topic == topic {
			reset[mq] = 0
		}
	}
	m.ResetOffset(topic, reset)
	testutil.WaitFor(t, 20*time.Second, "messages again after the reset", func() bool {
		for _, b := range bodies {
			if rec.count(b) < 2 {
				return false
			}
		}
		return true
	})
}

// Where a queue without a committed offset starts. Brokers answer 0
// rather than QUERY_NOT_FOUND while a young queue's first message is in
// memory, so the test makes the broker say "none" for its groups.
func TestConsumeFrom(t *testing.T) {
	e := newEnv(t)
	e.ours(t, "fault controls")
	topic := e.topic(t, 2)
	p := e.producer(t)
	old := send(t, p, topic, "old", "", 10)
	// Timestamps have second precision: step past the old messages' second.
	boundary := time.Now().Truncate(time.Second).Add(time.Second)
	testutil.WaitFor(t, 3*time.Second, "next second", func() bool { return time.Now().After(boundary.Add(10 * time.Millisecond)) })
	err := e.cluster.Intercept(e.cluster.BrokerNames()[0], remoting.QueryConsumerOffset, rmqtest.Fault{Respond: true, Code: remoting.QueryNotFound,
		Match: func(req *remoting.Command) bool {
			var h remoting.QueryConsumerOffsetRequestHeader
			return h.FromExt(req.Ext) == nil && strings.Contains(h.ConsumerGroup, "TestConsumeFrom")
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		opts    []Option
		wantOld int
	}{
		{"last", []Option{WithConsumeFrom(FromLast)}, 0},
		{"timestamp", []Option{WithConsumeFrom(FromTimestamp), WithConsumeTimestamp(boundary)}, 0},
		{"old timestamp", []Option{WithConsumeFrom(FromTimestamp), WithConsumeTimestamp(boundary.Add(-time.Hour))}, 10},
		{"first", []Option{WithConsumeFrom(FromFirst)}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			c := e.newConsumer(t, groupName(t), tc.opts...)
			if err := c.Subscribe(topic, All, rec.handler); err != nil {
				t.Fatal(err)
			}
			start(t, c)
			testutil.WaitFor(t, 20*time.Second, "queues assigned", func() bool {
				n := 0
				for _, mq := range c.Assigned() {
					if mq.Topic == topic {
						n++
					}
				}
				return n == 2
			})
			fresh := send(t, p, topic, "new-"+tc.name, "", 5)
			testutil.WaitFor(t, 20*time.Second, "new messages", func() bool {
				for _, b := range fresh {
					if rec.count(b) == 0 {
						return false
					}
				}
				return true
			})
			gotOld := 0
			for _, b := range old {
				gotOld += rec.count(b)
			}
			if gotOld != tc.wantOld {
				t.Fatalf("old messages consumed %d, want %d", gotOld, tc.wantOld)
			}
		})
	}
}

// Unsubscribe stops a topic's pulls and drops its queues.
func TestUnsubscribe(t *testing.T) {
	e := newEnv(t)
	t1, t2 := e.topic(t, 2), e.topic(t, 2)
	c := e.newConsumer(t, groupName(t))
	for _, tp := range []string{t1, t2} {
		if err := c.Subscribe(tp, All, newRecorder().handler); err != nil {
			t.Fatal(err)
		}
	}
	start(t, c)
	count := func(topic string) int {
		n := 0
		for _, mq := range c.Assigned() {
			if mq.Topic == topic {
				n++
			}
		}
		return n
	}
	testutil.WaitFor(t, 20*time.Second, "both topics held", func() bool { return count(t1) == 2 && count(t2) == 2 })
	if err := c.Unsubscribe(t1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "t1 dropped", func() bool { return count(t1) == 0 && count(t2) == 2 })
	if err := c.Unsubscribe(t1); err == nil {
		t.Fatal("second Unsubscribe succeeded")
	}
	if len(c.Stats()) != 1 {
		t.Fatalf("stats %v", c.Stats())
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

// Interceptors run around the handler, the first outermost.
func TestInterceptors(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "i", "", 1)
	var mu sync.Mutex
	var order []string
	mk := func(name string) Interceptor {
		return func(ctx context.Context, msgs []*rocketmq.MessageExt, next Handler) (Result, error) {
			mu.Lock()
			order = append(order, name+">")
			mu.Unlock()
			res, err := next(ctx, msgs)
			mu.Lock()
			order = append(order, "<"+name)
			mu.Unlock()
			return res, err
		}
	}
	done := make(chan struct{})
	var once sync.Once
	c := e.newConsumer(t, groupName(t), WithInterceptors(mk("a"), mk("b")))
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		mu.Lock()
		order = append(order, "h")
		mu.Unlock()
		once.Do(func() { close(done) })
		return Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no message")
	}
	testutil.WaitFor(t, 5*time.Second, "interceptors returned", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 5
	})
	if got := strings.Join(order, " "); got != "a> b> h <b <a" {
		t.Fatalf("order %s", got)
	}
}

// A handler's ctx ends when Shutdown's ctx does, and Shutdown reports it.
func TestShutdownDeadlineCancelsHandlers(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "d", "", 1)
	started := make(chan struct{})
	var once sync.Once
	c := e.newConsumer(t, groupName(t))
	var sawCancel atomic.Bool
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		sawCancel.Store(true)
		return RetryLater, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	if !sawCancel.Load() {
		t.Fatal("handler returned without its ctx cancelled")
	}
}

var _ = fmt.Sprint

func TestStartTwiceAndConcurrentShutdown(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second Start: %v", err)
	}
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs <- c.Shutdown(ctx)
		}()
	}
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Shutdown: %v", err)
		}
	}
	if c.Assigned() != nil {
		t.Fatal("queues held after Shutdown")
	}
}

// Broadcasting drops what a handler gives back, as Java, and moves on.
func TestBroadcastingRetryLaterDrops(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "b", "", 3)
	var calls atomic.Int32
	c := e.newConsumer(t, groupName(t), WithModel(Broadcasting), WithOffsetStoreDir(t.TempDir()))
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		calls.Add(int32(len(msgs)))
		return RetryLater, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	m := &member{r: c.runState()}
	testutil.WaitFor(t, 20*time.Second, "offset past the given-back messages", func() bool {
		for _, off := range m.Offsets(topic) {
			return off == 3
		}
		return false
	})
	if n := calls.Load(); n != 3 {
		t.Fatalf("handler called for %d messages, want 3 (no redelivery)", n)
	}
	if st := statsOf(c, topic); st.FailedTotal != 3 {
		t.Fatalf("stats %+v", st)
	}
}
