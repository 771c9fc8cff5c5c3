package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
)

// sent is one message sent by sendRecorded.
type sent struct {
	body string
	mq   rocketmq.MessageQueue
	off  int64
}

// sendRecorded sends n messages with bodies "<prefix>-<i>" and returns
// where each was stored.
func sendRecorded(t *testing.T, p *producer.Producer, topic, prefix string, n int) []sent {
	t.Helper()
	out := make([]sent, 0, n)
	for i := range n {
		body := fmt.Sprintf("%s-%d", prefix, i)
		m, err := producer.NewMessage(topic, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sent{body: body, mq: res.Queue, off: res.QueueOffset})
	}
	return out
}

// newPull returns a pull consumer of group, not started, shut down at the
// end of the test.
func (e *env) newPull(t *testing.T, group string, opts ...consumer.Option) *consumer.PullConsumer {
	t.Helper()
	c, err := consumer.NewPull(append([]consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(e.ns),
		consumer.WithRebalanceInterval(500 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return c
}

func startPull(t *testing.T, c *consumer.PullConsumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// pollN polls until n messages came or the wait ends.
func pollN(t *testing.T, c *consumer.PullConsumer, n int) []*rocketmq.MessageExt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var got []*rocketmq.MessageExt
	for len(got) < n {
		msgs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(got), n, err)
		}
		got = append(got, msgs...)
	}
	return got
}

// pollNone checks that Poll returns nothing for d.
func pollNone(t *testing.T, c *consumer.PullConsumer, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	msgs, err := c.Poll(ctx)
	if len(msgs) > 0 {
		t.Fatalf("Poll returned %d messages, want none; first %s offset %d", len(msgs), msgs[0].Body, msgs[0].QueueOffset)
	}
	if err != context.DeadlineExceeded {
		t.Fatalf("Poll: %v, want the deadline", err)
	}
}

func queuesOf(topic, broker string, n int) []rocketmq.MessageQueue {
	out := make([]rocketmq.MessageQueue, n)
	for i := range out {
		out[i] = rocketmq.MessageQueue{Topic: topic, BrokerName: broker, QueueID: i}
	}
	return out
}

func TestPullAssignSeek(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 40)
	q0 := queuesOf(topic, e.broker, 2)[0]
	var want []sent
	for _, s := range msgs {
		if s.mq == q0 {
			want = append(want, s)
		}
	}
	if len(want) < 5 {
		t.Fatalf("only %d messages on %v", len(want), q0)
	}

	for _, from := range []int{0, 3, len(want) - 1} {
		t.Run(fmt.Sprint("from", from), func(t *testing.T) {
			c := e.newPull(t, group(t, ""), consumer.WithAutoCommit(false))
			startPull(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Assign(ctx, []rocketmq.MessageQueue{q0}); err != nil {
				t.Fatal(err)
			}
			if got := c.Assigned(); !slices.Equal(got, []rocketmq.MessageQueue{q0}) {
				t.Fatalf("Assigned() = %v, want %v", got, q0)
			}
			if err := c.Seek(ctx, q0, want[from].off); err != nil {
				t.Fatal(err)
			}
			got := pollN(t, c, len(want)-from)
			for i, m := range got {
				w := want[from+i]
				if m.Topic != topic || int(m.QueueID) != q0.QueueID || m.QueueOffset != w.off || string(m.Body) != w.body {
					t.Fatalf("message %d: %s/%d@%d %q, want %d@%d %q", i, m.Topic, m.QueueID, m.QueueOffset, m.Body, q0.QueueID, w.off, w.body)
				}
			}
			pollNone(t, c, 300*time.Millisecond)
			// Seeking back again returns the same messages again.
			if err := c.Seek(ctx, q0, want[from].off); err != nil {
				t.Fatal(err)
			}
			if again := pollN(t, c, 1); again[0].QueueOffset != want[from].off {
				t.Fatalf("after a second seek: offset %d, want %d", again[0].QueueOffset, want[from].off)
			}
			// A queue not held cannot be sought.
			if err := c.Seek(ctx, queuesOf(topic, e.broker, 2)[1], 0); err == nil {
				t.Fatal("seek of a queue not held: no error")
			}
		})
	}
}

func TestPullLowLevel(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 10)
	c := e.newPull(t, group(t, ""))
	startPull(t, c)
	mq := queuesOf(topic, e.broker, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	res, err := c.Pull(ctx, mq, consumer.All, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != consumer.PullFound || len(res.Messages) != 3 || res.NextOffset != 5 || res.MinOffset != 0 || res.MaxOffset != 10 {
		t.Fatalf("pull at 2: %v, %d messages, next %d, min %d, max %d; want FOUND, 3, 5, 0, 10",
			res.Status, len(res.Messages), res.NextOffset, res.MinOffset, res.MaxOffset)
	}
	for i, m := range res.Messages {
		if string(m.Body) != msgs[2+i].body || m.QueueOffset != int64(2+i) {
			t.Fatalf("message %d: %q@%d, want %q@%d", i, m.Body, m.QueueOffset, msgs[2+i].body, 2+i)
		}
	}
	res, err = c.Pull(ctx, mq, consumer.All, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != consumer.PullNoNewMsg || len(res.Messages) != 0 || res.NextOffset != 10 {
		t.Fatalf("pull at the end: %v, %d messages, next %d; want NO_NEW_MSG, 0, 10", res.Status, len(res.Messages), res.NextOffset)
	}
	if _, err := c.Pull(ctx, mq, consumer.All, -1, 32); err == nil {
		t.Fatal("pull at -1: no error")
	}
}

func TestPullSubscribeTwoMembersSplit(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	var mu sync.Mutex
	var heard [][]rocketmq.MessageQueue
	a := e.newPull(t, g, consumer.WithInstanceName("a"), consumer.WithQueueListener(func(tp string, held []rocketmq.MessageQueue) {
		if tp != topic {
			t.Errorf("listener told of topic %s, want %s", tp, topic)
		}
		mu.Lock()
		heard = append(heard, held)
		mu.Unlock()
	}))
	b := e.newPull(t, g, consumer.WithInstanceName("b"))
	for _, c := range []*consumer.PullConsumer{a, b} {
		if err := c.Subscribe(topic, consumer.All); err != nil {
			t.Fatal(err)
		}
		startPull(t, c)
	}
	var last string
	if !testutil.Poll(wait, func() bool {
		qa, qb := a.Assigned(), b.Assigned()
		last = fmt.Sprintf("a %v, b %v", qa, qb)
		all := append(slices.Clone(qa), qb...)
		slices.SortFunc(all, func(x, y rocketmq.MessageQueue) int { return x.QueueID - y.QueueID })
		return len(qa) == 2 && len(qb) == 2 && slices.Equal(all, queuesOf(topic, e.broker, 4))
	}) {
		t.Fatalf("queues not split 2 and 2: %s", last)
	}
	// The listener hears each change after it is made: it ends on what a
	// holds now.
	if !testutil.Poll(wait, func() bool {
		mu.Lock()
		defer mu.Unlock()
		last = fmt.Sprintf("listener heard %v, a holds %v", heard, a.Assigned())
		return len(heard) > 0 && slices.Equal(heard[len(heard)-1], a.Assigned())
	}) {
		t.Fatal(last)
	}
	// Each member gets the messages of its own queues only.
	held := map[*consumer.PullConsumer][]rocketmq.MessageQueue{a: a.Assigned(), b: b.Assigned()}
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 40)
	for c, qs := range held {
		n := 0
		for _, s := range msgs {
			if slices.Contains(qs, s.mq) {
				n++
			}
		}
		for _, m := range pollN(t, c, n) {
			if !slices.Contains(qs, queueOf(m)) {
				t.Fatalf("message of %v polled by the member holding %v", queueOf(m), qs)
			}
		}
	}
}

func TestPullAutoCommitRestartResumes(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	g := group(t, "")
	p := e.newProducer(t)
	first := sendRecorded(t, p, topic, "first", 10)
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithAutoCommitInterval(100 * time.Millisecond)}

	a := e.newPull(t, g, opts...)
	if err := a.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, a)
	got := pollN(t, a, len(first))
	// Committed by the periodic auto-commit, before any shutdown.
	e.waitConsumed(t, g, topic, int64(len(first)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, mq := range queuesOf(topic, e.broker, 2) {
		off, err := a.Committed(ctx, mq)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		for _, s := range first {
			if s.mq == mq {
				want++
			}
		}
		if off != want {
			t.Fatalf("Committed(%v) = %d, want %d", mq, off, want)
		}
	}
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_ = got

	second := sendRecorded(t, p, topic, "second", 6)
	b := e.newPull(t, g, opts...)
	if err := b.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, b)
	var bodies []string
	for _, m := range pollN(t, b, len(second)) {
		bodies = append(bodies, string(m.Body))
	}
	var want []string
	for _, s := range second {
		want = append(want, s.body)
	}
	slices.Sort(bodies)
	slices.Sort(want)
	if !slices.Equal(bodies, want) {
		t.Fatalf("after the restart: %v, want %v", bodies, want)
	}
	pollNone(t, b, 300*time.Millisecond)
}

func TestPullPauseOneQueue(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 20)
	qs := queuesOf(topic, e.broker, 2)
	count := map[rocketmq.MessageQueue]int{}
	for _, s := range msgs {
		count[s.mq]++
	}
	c := e.newPull(t, group(t, ""), consumer.WithConsumeFrom(consumer.FromFirst))
	c.Pause(qs[0])
	if err := c.Assign(context.Background(), qs); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	for _, m := range pollN(t, c, count[qs[1]]) {
		if queueOf(m) != qs[1] {
			t.Fatalf("message of paused %v polled", queueOf(m))
		}
	}
	pollNone(t, c, 500*time.Millisecond)

	c.Resume(qs[0])
	got := pollN(t, c, count[qs[0]])
	for i, m := range got {
		if queueOf(m) != qs[0] || m.QueueOffset != int64(i) {
			t.Fatalf("after resume, message %d: %v@%d, want %v@%d", i, queueOf(m), m.QueueOffset, qs[0], i)
		}
	}
}

func queueOf(m *rocketmq.MessageExt) rocketmq.MessageQueue {
	return rocketmq.MessageQueue{Topic: m.Topic, BrokerName: m.BrokerName, QueueID: int(m.QueueID)}
}

func TestPullCommitAndSeekEnds(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	before := time.Now().Add(-time.Minute)
	sendRecorded(t, e.newProducer(t), topic, "m", 10)
	mq := queuesOf(topic, e.broker, 1)[0]
	c := e.newPull(t, group(t, ""), consumer.WithAutoCommit(false), consumer.WithPullBatchSize(4),
		consumer.WithConsumeFrom(consumer.FromFirst))
	if err := c.Assign(context.Background(), []rocketmq.MessageQueue{mq}); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	committed := func(want int64) {
		t.Helper()
		if got, err := c.Committed(ctx, mq); err != nil || got != want {
			t.Fatalf("Committed = %d, %v; want %d", got, err, want)
		}
	}

	first, err := c.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 4 || first[0].QueueOffset != 0 {
		t.Fatalf("first poll: %d messages from %d, want 4 from 0", len(first), first[0].QueueOffset)
	}
	// Nothing committed without auto-commit: a broker answers 0 for a group
	// without an offset while the queue's first message is in memory.
	committed(0)
	if err := c.CommitSync(ctx); err != nil {
		t.Fatal(err)
	}
	committed(4)
	if err := c.Commit(ctx, map[rocketmq.MessageQueue]int64{mq: 2}); err != nil {
		t.Fatal(err)
	}
	committed(2)

	if err := c.SeekToEnd(ctx, mq); err != nil {
		t.Fatal(err)
	}
	pollNone(t, c, 300*time.Millisecond)
	if err := c.SeekToBegin(ctx, mq); err != nil {
		t.Fatal(err)
	}
	if again := pollN(t, c, 1); again[0].QueueOffset != 0 {
		t.Fatalf("after SeekToBegin: offset %d, want 0", again[0].QueueOffset)
	}
	if off, err := c.OffsetForTimestamp(ctx, mq, before); err != nil || off != 0 {
		t.Fatalf("OffsetForTimestamp(a minute before the first message) = %d, %v; want 0", off, err)
	}
}

func TestPullTags(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	p := e.newProducer(t)
	for i := range 10 {
		tag := "A"
		if i%2 == 1 {
			tag = "B"
		}
		sendOne(t, p, topic, fmt.Sprintf("%s-%d", tag, i), producer.Tag(tag))
	}
	g := group(t, "")
	c := e.newPull(t, g, consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithAutoCommitInterval(100*time.Millisecond))
	if err := c.Subscribe(topic, consumer.Tags("A")); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	for _, m := range pollN(t, c, 5) {
		if m.Tag() != "A" {
			t.Fatalf("message %q with tag %q polled, want tag A only", m.Body, m.Tag())
		}
	}
	pollNone(t, c, 300*time.Millisecond)
	// The committed offset moves past the last message, of tag B.
	e.waitConsumed(t, g, topic, 10)
}

func TestPullConcurrentPollers(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 200)
	c := e.newPull(t, group(t, ""), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithPullBatchSize(8))
	if err := c.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				done := len(seen) == len(msgs)
				mu.Unlock()
				if done {
					return
				}
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				got, err := c.Poll(pctx)
				pcancel()
				if err != nil && ctx.Err() != nil {
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[string(m.Body)]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != len(msgs) {
		t.Fatalf("%d of %d messages polled", len(seen), len(msgs))
	}
	for body, n := range seen {
		if n != 1 {
			t.Fatalf("%s polled %d times", body, n)
		}
	}
}

func TestPullBroadcasting(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	g := group(t, "")
	var members []*consumer.PullConsumer
	for _, name := range []string{"a", "b"} {
		c := e.newPull(t, g, consumer.WithModel(consumer.Broadcasting), consumer.WithInstanceName(name),
			consumer.WithOffsetStoreDir(t.TempDir()), consumer.WithConsumeFrom(consumer.FromFirst))
		if err := c.Subscribe(topic, consumer.All); err != nil {
			t.Fatal(err)
		}
		startPull(t, c)
		members = append(members, c)
	}
	msgs := sendRecorded(t, e.newProducer(t), topic, "m", 20)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i, c := range members {
		if !testutil.Poll(wait, func() bool { return len(c.Assigned()) == 2 }) {
			t.Fatalf("member %d holds %v, want both queues", i, c.Assigned())
		}
		seen := map[string]bool{}
		for _, m := range pollN(t, c, len(msgs)) {
			seen[string(m.Body)] = true
		}
		if len(seen) != len(msgs) {
			t.Fatalf("member %d polled %d distinct messages, want %d", i, len(seen), len(msgs))
		}
		if err := c.CommitSync(ctx); err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, mq := range c.Assigned() {
			off, err := c.Committed(ctx, mq)
			if err != nil {
				t.Fatal(err)
			}
			sum += off
		}
		if sum != int64(len(msgs)) {
			t.Fatalf("member %d: committed offsets add up to %d, want %d", i, sum, len(msgs))
		}
	}
}
