// Package e2e tests the push consumer's own corners (fault paths, retries,
// shutdown, rebalancing) against an in-process cluster (rmqtest), through
// its public API; the user-level scenarios are in consumer/e2e. With
// ROCKETMQ_NAMESRV=host:port the tests that need no fault controls run
// against that cluster.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envExternal points the tests that can run against an external cluster
// at it; those that need our broker's controls skip.
const envExternal = "ROCKETMQ_NAMESRV"

type env struct {
	ns      string
	cluster *rmqtest.Cluster // nil for an external cluster
}

func newEnv(t *testing.T, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.cluster = rmqtest.StartCluster(t, opts...)
		e.ns = e.cluster.NameServerAddr()
	}
	return e
}

// ours skips t against an external cluster.
func (e *env) ours(t *testing.T, why string) {
	t.Helper()
	if e.cluster == nil {
		t.Skip("needs the in-process broker (" + why + "); " + envExternal + " is set")
	}
}

var topicSeq atomic.Int64

func (e *env) topic(t *testing.T, queues int) string {
	t.Helper()
	topic := fmt.Sprintf("CT_%d_%d", time.Now().UnixNano()%1e9, topicSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, e.ns, topic, queues); err != nil {
		t.Fatal(err)
	}
	return topic
}

func groupName(t *testing.T) string {
	r := strings.NewReplacer("/", "_", " ", "_", "#", "_")
	return fmt.Sprintf("cg_%s_%d", r.Replace(t.Name()), topicSeq.Add(1))
}

func (e *env) producer(t *testing.T) *producer.Producer {
	t.Helper()
	p, err := producer.New(producer.WithNameServers(e.ns), producer.WithGroup(groupName(t)+"_p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// send sends n messages to topic with bodies "<prefix>-<i>" and the tag,
// returning their bodies.
func send(t *testing.T, p *producer.Producer, topic, prefix, tag string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("%s-%d", prefix, i)
		opts := []producer.MessageOption{}
		if tag != "" {
			opts = append(opts, producer.Tag(tag))
		}
		m, err := producer.NewMessage(topic, []byte(body), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

// newConsumer makes a consumer with test-friendly periods.
func (e *env) newConsumer(t *testing.T, group string, opts ...consumer.Option) *consumer.PushConsumer {
	t.Helper()
	logs := &testlog.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("consumer %s logs:\n%s", group, logs.String())
		}
	})
	base := []consumer.Option{
		consumer.WithNameServers(e.ns), consumer.WithGroup(group), consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithRebalanceInterval(time.Second), consumer.WithOffsetPersistInterval(200 * time.Millisecond),
		consumer.WithLogger(logs.Logger()),
	}
	c, err := consumer.NewPush(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, c *consumer.PushConsumer) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
}

// recorder collects consumed bodies.
type recorder struct {
	mu     sync.Mutex
	bodies map[string]int
	msgs   []*rocketmq.MessageExt
}

func newRecorder() *recorder { return &recorder{bodies: map[string]int{}} }

func (r *recorder) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.bodies[string(m.Body)]++
		r.msgs = append(r.msgs, m)
	}
	return consumer.Success, nil
}

func (r *recorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *recorder) count(body string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[body]
}

func TestConsumeAll(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 4)
	p := e.producer(t)
	bodies := send(t, p, topic, "a", "TagA", 100)
	rec := newRecorder()
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
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
	c := e.newConsumer(t, groupName(t), consumer.WithRebalanceInterval(time.Minute))
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			got = append(got, seen{m.Topic, m.ReconsumeTimes, m.Property(rocketmq.PropertyOriginMessageID), string(m.Body)})
		}
		if len(got) == 1 {
			return consumer.RetryLater, nil
		}
		return consumer.Success, nil
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

func statsOf(c *consumer.PushConsumer, topic string) consumer.Stats {
	for _, s := range c.Stats() {
		if s.Topic == topic {
			return s
		}
	}
	return consumer.Stats{}
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
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
		second.Store(msgs[0].ReconsumeTimes)
		return consumer.Success, nil
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
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		if first.CompareAndSwap(false, true) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			returned <- c.Shutdown(ctx)
		}
		return consumer.Success, nil
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
	if err := c.Start(context.Background()); !errors.Is(err, consumer.ErrClosed) {
		t.Fatalf("Start after Shutdown: %v, want ErrClosed", err)
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
	c := e.newConsumer(t, group, consumer.WithOffsetPersistInterval(time.Hour))
	if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
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
	if err := c2.Subscribe(topic, consumer.All, rec2.handler); err != nil {
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
	if err := c.Subscribe(topic, consumer.Tags("TagA || TagC"), rec.handler); err != nil {
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
	c := e.newConsumer(t, groupName(t), consumer.WithNamespace(ns))
	if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
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

func shutdown(t *testing.T, c *consumer.PushConsumer) {
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
	mk := func(inst string, rec *recorder) *consumer.PushConsumer {
		c := e.newConsumer(t, group, consumer.WithModel(consumer.Broadcasting), consumer.WithOffsetStoreDir(dir), consumer.WithInstanceName(inst))
		if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
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
	c1 := e.newConsumer(t, group, consumer.WithInstanceName("a"))
	c2 := e.newConsumer(t, group, consumer.WithInstanceName("b"))
	for _, c := range []*consumer.PushConsumer{c1, c2} {
		if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
			t.Fatal(err)
		}
		start(t, c)
	}
	topicQueues := func(c *consumer.PushConsumer) []rocketmq.MessageQueue {
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
			if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, msgs...)
				if len(seen) == 1 {
					return consumer.RetryLater, nil
				}
				return consumer.Success, nil
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
	c := e.newConsumer(t, groupName(t), consumer.WithConsumeTimeout(500*time.Millisecond))
	var redelivered atomic.Int32
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		if calls.Add(1) == 1 {
			// Ignores its ctx: only the sweep can release the offset.
			<-stuck
			return consumer.Success, nil
		}
		redelivered.Store(msgs[0].ReconsumeTimes + 1)
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "expired message delivered again", func() bool { return redelivered.Load() > 0 })
	if got := redelivered.Load() - 1; got != 1 {
		t.Fatalf("reconsume times %d, want 1", got)
	}
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
		opts    []consumer.Option
		wantOld int
	}{
		{"last", []consumer.Option{consumer.WithConsumeFrom(consumer.FromLast)}, 0},
		{"timestamp", []consumer.Option{consumer.WithConsumeFrom(consumer.FromTimestamp), consumer.WithConsumeTimestamp(boundary)}, 0},
		{"old timestamp", []consumer.Option{consumer.WithConsumeFrom(consumer.FromTimestamp), consumer.WithConsumeTimestamp(boundary.Add(-time.Hour))}, 10},
		{"first", []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst)}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			c := e.newConsumer(t, groupName(t), tc.opts...)
			if err := c.Subscribe(topic, consumer.All, rec.handler); err != nil {
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
		if err := c.Subscribe(tp, consumer.All, newRecorder().handler); err != nil {
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

// Interceptors run around the handler, the first outermost.
func TestInterceptors(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 1)
	p := e.producer(t)
	send(t, p, topic, "i", "", 1)
	var mu sync.Mutex
	var order []string
	mk := func(name string) consumer.Interceptor {
		return func(ctx context.Context, msgs []*rocketmq.MessageExt, next consumer.Handler) (consumer.Result, error) {
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
	c := e.newConsumer(t, groupName(t), consumer.WithInterceptors(mk("a"), mk("b")))
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		order = append(order, "h")
		mu.Unlock()
		once.Do(func() { close(done) })
		return consumer.Success, nil
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
	if err := c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		sawCancel.Store(true)
		return consumer.RetryLater, nil
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

func TestStartTwiceAndConcurrentShutdown(t *testing.T) {
	e := newEnv(t)
	topic := e.topic(t, 2)
	c := e.newConsumer(t, groupName(t))
	if err := c.Subscribe(topic, consumer.All, newRecorder().handler); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, consumer.ErrAlreadyStarted) {
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
