package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestExactlyOnceSteadyState: once the members of a group have split the
// queues, every message is consumed by exactly one member, once.
func TestExactlyOnceSteadyState(t *testing.T) {
	for _, members := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d members", members), func(t *testing.T) {
			e := start(t)
			topic := e.newTopic(t, 8)
			g := group(t, "")
			rec := newRecorder()
			var cs []*consumer.PushConsumer
			for i := range members {
				cs = append(cs, e.startConsumer(t, g, topic, consumer.All, rec.handler(fmt.Sprint("m", i), nil),
					consumer.WithConsumeFrom(consumer.FromFirst)))
			}
			waitBalanced(t, topic, 8, cs...)

			p := e.newProducer(t)
			const n = 400
			ids := send(t, p, topic, n)
			rec.waitAll(t, ids, 1)
			// Everything is committed: nothing can come back.
			e.waitConsumed(t, g, topic, n)
			for _, id := range ids {
				if ds := rec.deliveries(id); len(ds) != 1 {
					t.Errorf("message %s delivered %d times (members %v)", id, len(ds), membersOf(ds))
				}
			}
			if got := rec.total(); got != n {
				t.Errorf("%d deliveries of %d messages", got, n)
			}
			per := rec.byMember()
			for i := range members {
				if per[fmt.Sprint("m", i)] == 0 {
					t.Errorf("member m%d consumed nothing: %v", i, per)
				}
			}
			// Each member's statistics count what its handler acknowledged.
			for i, c := range cs {
				var ok, failed int64
				for _, st := range c.Stats() {
					if st.Topic == topic {
						ok, failed = st.OKTotal, st.FailedTotal
					}
				}
				if want := int64(per[fmt.Sprint("m", i)]); ok != want || failed != 0 {
					t.Errorf("member m%d stats: %d ok, %d failed; want %d ok", i, ok, failed, want)
				}
			}
		})
	}
}

func membersOf(ds []delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.member)
	}
	return out
}

// TestMemberJoinsAndLeaves: while messages keep arriving a third member
// joins a group of two and then one of the first two shuts down. Every
// message is consumed at least once. A message is consumed twice only when
// its queue changed hands while the message was in flight: the old owner
// had pulled it (its process queue holds at most pullThresholdForQueue +
// one pull batch) or consumed it after its last commit reached the broker
// (one more pull batch, since the commit rides on the next pull). So the
// duplicates of a queue are at most
//
//	hand-overs × (pullThresholdForQueue + 2 × pullBatchSize)
//
// where hand-overs counts the changes of member in the order the queue's
// messages were delivered.
func TestMemberJoinsAndLeaves(t *testing.T) {
	const (
		threshold = 16
		batch     = 8
		n         = 3000
	)
	e := start(t)
	topic := e.newTopic(t, 8)
	g := group(t, "")
	rec := newRecorder()
	var m1Stopped atomic.Bool
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithPullThresholdForQueue(threshold), consumer.WithPullBatchSize(batch)}
	m1 := e.startConsumer(t, g, topic, consumer.All, rec.handler("m1", func(context.Context, *rocketmq.MessageExt, int) (consumer.Result, error) {
		if m1Stopped.Load() {
			t.Errorf("m1 consumed a message after its Shutdown returned")
		}
		return consumer.Success, nil
	}), opts...)
	m2 := e.startConsumer(t, g, topic, consumer.All, rec.handler("m2", nil), opts...)
	waitBalanced(t, topic, 8, m1, m2)

	p := e.newProducer(t)
	var ids []string
	var m3 *consumer.PushConsumer
	for i := range n {
		switch i {
		case n / 3:
			m3 = e.startConsumer(t, g, topic, consumer.All, rec.handler("m3", nil), opts...)
		case 2 * n / 3:
			waitBalanced(t, topic, 8, m1, m2, m3)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := m1.Shutdown(ctx)
			cancel()
			if err != nil {
				t.Fatalf("m1 shutdown: %v", err)
			}
			m1Stopped.Store(true)
		}
		ids = append(ids, send(t, p, topic, 1)...)
	}
	rec.waitAll(t, ids, 1)
	e.waitConsumed(t, g, topic, n)
	waitBalanced(t, topic, 8, m2, m3)

	// Per queue: duplicates and hand-overs, in delivery order.
	type queueStat struct {
		dups      int
		handovers int
		seq       []delivery
	}
	stats := map[int32]*queueStat{}
	for _, id := range ids {
		ds := rec.deliveries(id)
		q := ds[0].msg.QueueID
		if stats[q] == nil {
			stats[q] = &queueStat{}
		}
		stats[q].dups += len(ds) - 1
		stats[q].seq = append(stats[q].seq, ds...)
	}
	total, bound := 0, 0
	for q, s := range stats {
		sort.Slice(s.seq, func(i, j int) bool { return s.seq[i].seq < s.seq[j].seq })
		for i := 1; i < len(s.seq); i++ {
			if s.seq[i].member != s.seq[i-1].member {
				s.handovers++
			}
		}
		if limit := s.handovers * (threshold + 2*batch); s.dups > limit {
			t.Errorf("queue %d: %d duplicates over %d hand-overs, bound %d", q, s.dups, s.handovers, limit)
		}
		total += s.dups
		bound += s.handovers * (threshold + 2*batch)
	}
	t.Logf("%d messages, %d consumed twice or more (bound %d); per member %v", n, total, bound, rec.byMember())
	if per := rec.byMember(); per["m3"] == 0 {
		t.Errorf("the member that joined consumed nothing: %v", per)
	}
}

// TestShutdownCommitsOffsets: what a member acknowledged before Shutdown
// is committed when Shutdown returns (not at the next periodic persist),
// and a new member of the group resumes after it with no redelivery.
func TestShutdownCommitsOffsets(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	// The periodic persist never runs during the test.
	noPersist := consumer.WithOffsetPersistInterval(time.Hour)
	c1 := e.startConsumer(t, g, topic, consumer.All, rec.handler("first", nil), consumer.WithConsumeFrom(consumer.FromFirst), noPersist)
	p := e.newProducer(t)
	first := send(t, p, topic, 40)
	rec.waitAll(t, first, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// No waiting: Shutdown returned after the broker took the offsets.
	if got, err := consumed(e, g, topic); err != nil || got != int64(len(first)) {
		t.Fatalf("committed right after Shutdown: %d %v, want %d", got, err, len(first))
	}

	second := send(t, p, topic, 40)
	e.startConsumer(t, g, topic, consumer.All, rec.handler("second", nil), consumer.WithConsumeFrom(consumer.FromFirst), noPersist)
	rec.waitAll(t, second, 1)
	for _, id := range first {
		if ds := rec.deliveries(id); len(ds) != 1 {
			t.Errorf("acknowledged message %s delivered again: members %v", id, membersOf(ds))
		}
	}
	if per := rec.byMember(); per["second"] != len(second) {
		t.Errorf("the new member consumed %d messages, want the %d sent after the first left", per["second"], len(second))
	}
}

// TestShutdownFromHandler: a handler that shuts its own consumer down gets
// an answer; Shutdown does not wait for the handler calling it. A second
// Shutdown returns nil, and the consumer cannot be started again.
func TestShutdownFromHandler(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	g := group(t, "")
	type result struct {
		err error
		d   time.Duration
	}
	done := make(chan result, 1)
	var c atomic.Pointer[consumer.PushConsumer]
	var calls atomic.Int32
	h := func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		if calls.Add(1) == 1 {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			err := c.Load().Shutdown(sctx)
			done <- result{err, time.Since(start)}
		}
		return consumer.Success, nil
	}
	cons := e.newConsumer(t, g, consumer.WithConsumeFrom(consumer.FromFirst))
	c.Store(cons)
	if err := cons.Subscribe(topic, consumer.All, h); err != nil {
		t.Fatal(err)
	}
	if err := cons.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(t, e.newProducer(t), topic, 1)
	select {
	case r := <-done:
		if r.err != nil || r.d > 4*time.Second {
			t.Fatalf("Shutdown from the handler: %v after %v", r.err, r.d)
		}
	case <-time.After(wait):
		t.Fatal("Shutdown called from the handler did not return")
	}
	// A second Shutdown returns nil too, and Start after Shutdown fails.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	finished := make(chan error, 1)
	go func() { finished <- cons.Shutdown(ctx) }()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("second Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second Shutdown did not return")
	}
	if err := cons.Start(context.Background()); !errors.Is(err, consumer.ErrClosed) {
		t.Fatalf("Start after Shutdown: %v, want ErrClosed", err)
	}
}

// TestTagsAndTopics: one consumer with two topics, one filtered by the tag
// expression "A || B", receives exactly the matching messages, and its
// committed offsets still move past the ones filtered out.
func TestTagsAndTopics(t *testing.T) {
	// A pull held at the end of a queue is not woken by a message its
	// filter rejects; the broker's periodic re-check (5 s by default, as
	// Java) answers it, and only then does the offset pass that message.
	e := start(t, rmqtest.WithLongPollCheck(100*time.Millisecond))
	t1, t2 := e.newTopic(t, 4), e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	c := e.newConsumer(t, g, consumer.WithConsumeFrom(consumer.FromFirst))
	if err := c.Subscribe(t1, consumer.Tags("A || B"), rec.handler("c", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(t2, consumer.All, rec.handler("c", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := e.newProducer(t)
	want := map[string]string{} // id → topic/tag
	var ids []string
	var sent1 int64
	for i := range 12 {
		tag := []string{"A", "B", "C", ""}[i%4]
		var id string
		if tag == "" {
			id = sendOne(t, p, t1, "untagged")
		} else {
			id = sendOne(t, p, t1, "tagged", producerTag(tag)...)
		}
		sent1++
		if tag == "A" || tag == "B" {
			want[id] = t1 + "/" + tag
			ids = append(ids, id)
		}
		id = sendOne(t, p, t2, "any", producerTag(tag)...)
		want[id] = t2 + "/" + tag
		ids = append(ids, id)
	}
	rec.waitAll(t, ids, 1)
	e.waitConsumed(t, g, t1, sent1)
	e.waitConsumed(t, g, t2, 12)
	if got := rec.total(); got != len(ids) {
		t.Errorf("%d deliveries, want the %d matching messages", got, len(ids))
	}
	for _, id := range ids {
		ds := rec.deliveries(id)
		if len(ds) != 1 {
			t.Errorf("message %s delivered %d times", id, len(ds))
			continue
		}
		if got := ds[0].msg.Topic + "/" + ds[0].msg.Tag(); got != want[id] {
			t.Errorf("message %s arrived as %s, sent as %s", id, got, want[id])
		}
	}
}

// TestPanickingHandler: a handler that panics on a message's first
// delivery does not take the process down; the message comes back with
// ReconsumeTimes 1 and everything ends committed.
func TestPanickingHandler(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(_ context.Context, m *rocketmq.MessageExt, n int) (consumer.Result, error) {
		if n == 1 {
			panic("handler bug")
		}
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst))
	p := e.newProducer(t)
	ids := send(t, p, topic, 5)
	rec.waitAll(t, ids, 2)
	e.waitConsumed(t, g, topic, 5)
	e.waitConsumed(t, g, retryTopic(g), 5)
	for _, id := range ids {
		ds := rec.deliveries(id)
		if len(ds) != 2 || ds[0].msg.ReconsumeTimes != 0 || ds[1].msg.ReconsumeTimes != 1 {
			t.Errorf("message %s: %d deliveries %v", id, len(ds), reconsumeTimes(ds))
		}
	}
}

func retryTopic(group string) string { return "%RETRY%" + group }
func dlqTopic(group string) string   { return "%DLQ%" + group }

func reconsumeTimes(ds []delivery) []int32 {
	var out []int32
	for _, d := range ds {
		out = append(out, d.msg.ReconsumeTimes)
	}
	return out
}

// consumed reads the group's committed offsets of topic once.
func consumed(e *env, group, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return rmqtest.Consumed(ctx, e.ns, group, topic)
}

func producerTag(tag string) []producer.MessageOption {
	if tag == "" {
		return nil
	}
	return []producer.MessageOption{producer.Tag(tag)}
}

// TestShutdownDrains: Shutdown waits for a handler that is running, then
// commits its message, so a new member does not get it again.
func TestShutdownDrains(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	g := group(t, "")
	rec := newRecorder()
	release := make(chan struct{})
	var returned atomic.Bool
	c1 := e.startConsumer(t, g, topic, consumer.All, rec.handler("first", func(context.Context, *rocketmq.MessageExt, int) (consumer.Result, error) {
		<-release
		returned.Store(true)
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithOffsetPersistInterval(time.Hour))
	p := e.newProducer(t)
	ids := send(t, p, topic, 1)
	rec.waitAll(t, ids, 1)

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- c1.Shutdown(ctx)
	}()
	// Nothing happens while the handler runs: Shutdown waits for it.
	if testutil.Poll(300*time.Millisecond, func() bool { return len(done) > 0 }) {
		t.Fatalf("Shutdown returned (%v) while a handler was running", <-done)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("Shutdown did not return after the handler did")
	}
	if !returned.Load() {
		t.Fatal("Shutdown returned before the handler")
	}
	if got, err := consumed(e, g, topic); err != nil || got != 1 {
		t.Fatalf("committed after Shutdown: %d %v, want 1", got, err)
	}
	later := send(t, p, topic, 1)
	e.startConsumer(t, g, topic, consumer.All, rec.handler("second", nil), consumer.WithConsumeFrom(consumer.FromFirst))
	rec.waitAll(t, later, 1)
	if n := len(rec.deliveries(ids[0])); n != 1 {
		t.Fatalf("the message handled during Shutdown was delivered %d times", n)
	}
}
