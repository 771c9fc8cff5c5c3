package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rebalance"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Ordered messages carry their ordering key and their place in the key's
// sequence as properties, so that a handler call can be checked without
// knowing what was sent.
const (
	propKey = "e2e_key"
	propSeq = "e2e_seq"
)

// orderedKeys returns n keys spread evenly over queues queues by the hash
// selector (n/queues keys on each), so that every queue carries traffic.
func orderedKeys(n, queues int) []string {
	per := make([]int, queues)
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := fmt.Sprintf("order-%d", i)
		if q := producer.StringKey(k).Index(queues); per[q] < n/queues {
			per[q]++
			keys = append(keys, k)
		}
	}
	return keys
}

// sendOrdered sends seqs [from, to) of key with the hash selector, batch
// messages per send (a batch goes to one queue, in order).
func sendOrdered(ctx context.Context, p *producer.Producer, topic, key string, from, to, batch int) error {
	s := p.With(producer.ShardBy(producer.StringKey(key)))
	for lo := from; lo < to; lo += batch {
		var msgs []*rocketmq.Message
		for seq := lo; seq < min(lo+batch, to); seq++ {
			m, err := producer.NewMessage(topic, fmt.Appendf(nil, "%s #%d", key, seq),
				producer.Keys(key), producer.Property(propKey, key), producer.Property(propSeq, strconv.Itoa(seq)))
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		if _, err := s.Send(ctx, msgs...); err != nil {
			return fmt.Errorf("send %s %d..%d: %w", key, lo, lo+len(msgs)-1, err)
		}
	}
	return nil
}

// seqMsg is one message of a handler call.
type seqMsg struct {
	id        string
	offsetID  string // the broker's id of the stored message
	key       string
	seq       int
	offset    int64
	reconsume int32
}

// hcall is one orderly handler call: the member, the queue, when it ran
// and what it got.
type hcall struct {
	member     string
	broker     string
	queue      int32
	start, end time.Time
	msgs       []seqMsg
	acked      bool // the call returned OrderlySuccess and no error
}

// orderlyLog records every handler call of the members of a test.
type orderlyLog struct {
	mu      sync.Mutex
	calls   []hcall
	acked   map[string]int // messages acknowledged per member
	stopped map[string]time.Time
}

func newOrderlyLog() *orderlyLog {
	return &orderlyLog{acked: map[string]int{}, stopped: map[string]time.Time{}}
}

// handler records each call of member; then (nil: OrderlySuccess) decides
// its result from the call's messages.
func (l *orderlyLog) handler(member string, then func(ctx context.Context, msgs []seqMsg) (consumer.OrderlyResult, error)) consumer.OrderlyHandler {
	return func(ctx context.Context, msgs []*rocketmq.MessageExt) (res consumer.OrderlyResult, err error) {
		c := hcall{member: member, queue: -1, start: time.Now()}
		for _, m := range msgs {
			seq, err := strconv.Atoi(m.Property(propSeq))
			if err != nil {
				seq = -1
			}
			if c.queue == -1 {
				c.broker, c.queue = m.BrokerName, m.QueueID
			} else if c.queue != m.QueueID || c.broker != m.BrokerName {
				c.queue = -2 // one call mixed queues: reported by checkOrder
			}
			c.msgs = append(c.msgs, seqMsg{id: m.MsgID, offsetID: m.OffsetMsgID, key: m.Property(propKey), seq: seq, offset: m.QueueOffset, reconsume: m.ReconsumeTimes})
		}
		res = consumer.OrderlyResult(-1) // not acknowledged if then panics
		// Recorded on the way out, also when then panics.
		defer func() {
			c.end = time.Now()
			l.mu.Lock()
			defer l.mu.Unlock()
			c.acked = res == consumer.OrderlySuccess && err == nil
			l.calls = append(l.calls, c)
			if c.acked {
				l.acked[member] += len(msgs)
			}
		}()
		if then == nil {
			return consumer.OrderlySuccess, nil
		}
		return then(ctx, c.msgs)
	}
}

// stop records that member's Shutdown returned.
func (l *orderlyLog) stop(member string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped[member] = time.Now()
}

func (l *orderlyLog) ackedBy(member string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked[member]
}

func (l *orderlyLog) ackedTotal() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, v := range l.acked {
		n += v
	}
	return n
}

func (l *orderlyLog) snapshot() []hcall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// stoppedAt returns when member's Shutdown returned, if it did.
func (l *orderlyLog) stoppedAt(member string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.stopped[member]
	return at, ok
}

// route returns the queues of a topic created by newTopic with queues
// queues, in the order the producer's selectors see them.
func (e *env) route(topic string, queues int) []rocketmq.MessageQueue {
	out := make([]rocketmq.MessageQueue, queues)
	for i := range out {
		out[i] = rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: i}
	}
	return out
}

// startOrderly starts a consumer of group with an orderly subscription to
// topic.
func (e *env) startOrderly(t *testing.T, group, topic string, h consumer.OrderlyHandler, opts ...consumer.Option) *consumer.PushConsumer {
	t.Helper()
	c := e.newConsumer(t, group, opts...)
	if err := c.SubscribeOrderly(topic, consumer.All, h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// orderReport is what checkOrder found besides the errors it reports.
type orderReport struct {
	duplicates int             // messages consumed again after a hand-over
	periods    int             // ownership periods over all queues
	suspended  int             // calls not acknowledged
	handovers  []time.Duration // per change of member on a queue, from the last call's end to the next one's start
	perMember  map[string]int  // messages per member
}

// checkOrder checks the handler calls of an orderly group of a topic
// whose keys were each sent as the sequence 0..perKey-1 to the queue the
// hash selector picks among route (the topic's queues in Java's order):
//
//   - every call holds consecutive messages of one queue, the key's queue;
//   - per queue, no two calls overlap in time, whoever the members: a
//     queue is consumed by one call at a time;
//   - per member and key, the sequence numbers strictly increase;
//   - per queue, within an ownership period (consecutive calls of one
//     member) each key's sequence and the queue offsets are contiguous, and
//     a period starts no later than right after what was consumed before
//     it (no gap), so that merged in time every key's sequence is complete;
//   - no member consumed after its Shutdown returned;
//   - a call not acknowledged (suspended) is followed on its queue by a
//     call from the same offset, by its member or the queue's next owner.
//
// The sequence checks count acknowledged calls only.
//
// A period that starts before the end of what was consumed before it
// consumes those messages again: exactly once says no such duplicate.
func checkOrder(t *testing.T, log *orderlyLog, keys []string, perKey int, route []rocketmq.MessageQueue, exactlyOnce bool) orderReport {
	t.Helper()
	rep := orderReport{perMember: map[string]int{}}
	calls := log.snapshot()
	slices.SortStableFunc(calls, func(a, b hcall) int { return a.start.Compare(b.start) })
	type queueID struct {
		broker string
		id     int32
	}
	keyQueue := map[string]queueID{}
	for _, k := range keys {
		q := route[producer.StringKey(k).Index(len(route))]
		keyQueue[k] = queueID{q.BrokerName, int32(q.QueueID)}
	}
	errs := 0
	fail := func(format string, args ...any) {
		if errs++; errs <= 20 {
			t.Errorf(format, args...)
		}
	}

	byQueue := map[queueID][]hcall{} // every call, acknowledged or not
	memberLast := map[string]int{}   // member/key -> last seq acknowledged
	for _, c := range calls {
		if end, ok := log.stoppedAt(c.member); ok && c.end.After(end) {
			fail("member %s consumed %s/%d after its Shutdown returned", c.member, c.msgs[0].key, c.msgs[0].seq)
		}
		if c.queue < 0 {
			fail("member %s: one call held messages of several queues", c.member)
			continue
		}
		cq := queueID{c.broker, c.queue}
		byQueue[cq] = append(byQueue[cq], c)
		for i, m := range c.msgs {
			want, ok := keyQueue[m.key]
			if !ok || m.seq < 0 {
				fail("member %s: message %s of queue %v carries key %q seq %d", c.member, m.id, cq, m.key, m.seq)
				continue
			}
			if want != cq {
				fail("key %s found on queue %v, the hash selector picks %v", m.key, cq, want)
			}
			if i > 0 && m.offset != c.msgs[i-1].offset+1 {
				fail("queue %v: one call held offsets %d then %d", cq, c.msgs[i-1].offset, m.offset)
			}
			if !c.acked {
				continue
			}
			mk := c.member + "/" + m.key
			if last, ok := memberLast[mk]; ok && m.seq <= last {
				fail("member %s saw %s #%d after #%d", c.member, m.key, m.seq, last)
			}
			memberLast[mk] = m.seq
			rep.perMember[c.member]++
		}
	}

	next := map[string]int{} // per key: the first seq not consumed yet
	for q, all := range byQueue {
		var cs []hcall // the acknowledged calls
		for i, c := range all {
			if i > 0 && c.start.Before(all[i-1].end) {
				fail("queue %v consumed by %s (from %s #%d) while %s's call (from %s #%d) still ran",
					q, c.member, c.msgs[0].key, c.msgs[0].seq, all[i-1].member, all[i-1].msgs[0].key, all[i-1].msgs[0].seq)
			}
			// A batch not acknowledged comes again before anything after it,
			// to its member or to the next owner of the queue.
			if i > 0 && !all[i-1].acked && c.msgs[0].offset != all[i-1].msgs[0].offset {
				fail("queue %v: %s's call from offset %d was suspended, then %s got offset %d",
					q, all[i-1].member, all[i-1].msgs[0].offset, c.member, c.msgs[0].offset)
			}
			if c.acked {
				cs = append(cs, c)
			} else {
				rep.suspended++
			}
		}
		nextOffset, prevOffset := int64(-1), int64(-1)
		for i, c := range cs {
			newPeriod := i == 0 || cs[i-1].member != c.member
			if newPeriod {
				rep.periods++
				if i > 0 {
					rep.handovers = append(rep.handovers, c.start.Sub(cs[i-1].end))
				}
			}
			for j, m := range c.msgs {
				switch {
				case newPeriod && j == 0:
					if nextOffset >= 0 && m.offset > nextOffset {
						fail("queue %v: %s's period starts at offset %d, %d not consumed", q, c.member, m.offset, nextOffset)
					}
				case m.offset != prevOffset+1:
					fail("queue %v: %s consumed offset %d after %d within one period", q, c.member, m.offset, prevOffset)
				}
				switch n := next[m.key]; {
				case m.seq > n:
					fail("key %s: #%d consumed by %s before #%d", m.key, m.seq, c.member, n)
				case m.seq < n:
					rep.duplicates++
					if exactlyOnce {
						fail("key %s: #%d consumed again by %s (queue %v, offset %d)", m.key, m.seq, c.member, q, m.offset)
					}
				}
				next[m.key] = max(next[m.key], m.seq+1)
				nextOffset = max(nextOffset, m.offset+1)
				prevOffset = m.offset
			}
		}
	}

	for _, k := range keys {
		if next[k] != perKey {
			fail("key %s: consumed up to #%d of %d", k, next[k]-1, perKey)
		}
	}
	return rep
}

// TestOrderlyMembersComeAndGo: 16 keys × 2,000 messages sent with the
// hash selector over 8 queues while the members of an orderly group come
// and go (A alone; B joins; C joins; B leaves; A leaves; C finishes), with
// one LOCK_BATCH_MQ request dropped on the in-process broker and every
// hundredth message suspended once. See checkOrder for what is checked of
// every handler call. On the in-process
// broker each message is consumed exactly once: a leaving queue's offset
// is committed before its lock is released, and a new owner reads it after
// taking the lock. An external broker gets the same requests, but the
// test only reports its duplicates: its offset table is not ours to vouch
// for.
func TestOrderlyMembersComeAndGo(t *testing.T) {
	const (
		queues  = 8
		nKeys   = 16
		perKey  = 2000
		batch   = 25 // messages per send
		nChunks = 5  // the stream is sent in chunks between membership changes
	)
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	keys := orderedKeys(nKeys, queues)
	log := newOrderlyLog()
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithRebalanceInterval(time.Second), consumer.WithConsumeBatchSize(4), consumer.WithSuspendTime(50 * time.Millisecond)}
	members := map[string]*consumer.PushConsumer{}
	join := func(name string) {
		// Each call works for a millisecond, so that a rebalance usually
		// finds calls in hand on the queues it moves, and every hundredth
		// message is suspended at its first delivery.
		work := func(_ context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
			time.Sleep(time.Millisecond)
			for _, m := range msgs {
				if m.seq%100 == 50 && m.reconsume == 0 {
					return consumer.SuspendQueue, nil
				}
			}
			return consumer.OrderlySuccess, nil
		}
		members[name] = e.startOrderly(t, g, topic, log.handler(name, work), append(opts, consumer.WithInstanceName(name))...)
	}
	leave := func(name string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := members[name].Shutdown(ctx); err != nil {
			t.Fatalf("member %s shutdown: %v", name, err)
		}
		log.stop(name)
		delete(members, name)
	}
	current := func() []*consumer.PushConsumer {
		var cs []*consumer.PushConsumer
		for _, c := range members {
			cs = append(cs, c)
		}
		return cs
	}
	p := e.newProducer(t)
	// sendChunk sends the chunk-th part of every key's sequence, keys in
	// parallel, and returns a wait for it.
	sendChunk := func(chunk int) func() {
		var wg sync.WaitGroup
		errs := make(chan error, len(keys))
		for _, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				if err := sendOrdered(ctx, p, topic, k, chunk*perKey/nChunks, (chunk+1)*perKey/nChunks, batch); err != nil {
					errs <- err
				}
			}()
		}
		return func() {
			t.Helper()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
	}
	began := time.Now()

	join("A")
	sendChunk(0)()
	// B joins while A works through the first chunk and the second is sent.
	join("B")
	sendChunk(1)()
	waitBalanced(t, topic, queues, current()...)

	var dropped atomic.Bool
	var droppedReq atomic.Value // what the dropped request asked for
	if e.cluster != nil {
		// The next lock request of the group gets no answer: the consumer
		// that sent it must neither consume the queues it asked for nor
		// stall on them.
		err := e.cluster.Intercept(e.broker, remoting.LockBatchMQ, rmqtest.Fault{Drop: true, Times: 1,
			Match: func(req *remoting.Command) bool {
				var b remoting.LockBatchRequestBody
				if b.DecodeJSON(req.Body) != nil || b.ConsumerGroup != g || !dropped.CompareAndSwap(false, true) {
					return false
				}
				droppedReq.Store(fmt.Sprintf("%s asking for %d queues", b.ClientID, len(b.MQSet)))
				return true
			}})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("no lock request dropped: needs the in-process cluster's fault controls (%s is set)", envExternal)
	}
	join("C")
	sendChunk(2)()
	waitBalanced(t, topic, queues, current()...)

	// B leaves while the fourth chunk is sent, once B and C have both
	// consumed something.
	done3 := sendChunk(3)
	testutil.WaitFor(t, wait, "B and C consuming", func() bool { return log.ackedBy("B") > 0 && log.ackedBy("C") > 0 })
	leave("B")
	done3()
	waitBalanced(t, topic, queues, current()...)

	done4 := sendChunk(4)
	leave("A")
	done4()
	total := nKeys * perKey
	if !testutil.Poll(2*wait, func() bool { return log.ackedTotal() >= total }) {
		t.Fatalf("%d of %d messages acknowledged", log.ackedTotal(), total)
	}
	e.waitConsumed(t, g, topic, int64(total))
	elapsed := time.Since(began)

	if e.cluster != nil {
		if !dropped.Load() {
			t.Error("no lock request of the group was dropped")
		} else {
			t.Logf("dropped the lock request of %s", droppedReq.Load())
		}
	}
	rep := checkOrder(t, log, keys, perKey, e.route(topic, queues), e.cluster != nil)
	for _, m := range []string{"A", "B", "C"} {
		if rep.perMember[m] == 0 {
			t.Errorf("member %s consumed nothing: %v", m, rep.perMember)
		}
	}
	if want := nKeys * perKey / 100; rep.suspended < want {
		t.Errorf("%d calls suspended, want at least %d", rep.suspended, want)
	}
	slices.Sort(rep.handovers)
	t.Logf("%d messages in %v: %d ownership periods over %d queues, hand-over gaps %v, %d calls suspended, %d messages consumed again, per member %v",
		total, elapsed.Round(time.Millisecond), rep.periods, queues, rep.handovers, rep.suspended, rep.duplicates, rep.perMember)
}

// TestOrderlySuspend: a handler that suspends a message twice (by its
// result, an error or a panic) sees it three times in place, ReconsumeTimes
// 0, 1 and 2, each at least the suspend time after the previous call
// returned, and nothing after it in the queue meanwhile. With batches of
// two, the whole batch comes again, every message of it counted.
func TestOrderlySuspend(t *testing.T) {
	suspendResult := func() (consumer.OrderlyResult, error) { return consumer.SuspendQueue, nil }
	for _, tc := range []struct {
		name    string
		batch   int
		suspend func() (consumer.OrderlyResult, error)
		want    []string // per call, its messages as seq/reconsume times
	}{
		{"suspend", 1, suspendResult, []string{"#0/0", "#1/0", "#1/1", "#1/2", "#2/0", "#3/0"}},
		{"error", 1, func() (consumer.OrderlyResult, error) { return consumer.OrderlySuccess, errors.New("not yet") }, []string{"#0/0", "#1/0", "#1/1", "#1/2", "#2/0", "#3/0"}},
		{"panic", 1, func() (consumer.OrderlyResult, error) { panic("not yet") }, []string{"#0/0", "#1/0", "#1/1", "#1/2", "#2/0", "#3/0"}},
		{"batch", 2, suspendResult, []string{"#0/0 #1/0", "#0/1 #1/1", "#0/2 #1/2", "#2/0 #3/0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const suspend = 300 * time.Millisecond
			e := start(t)
			topic := e.newTopic(t, 1)
			g := group(t, "")
			// Everything is stored before the consumer starts, so that the
			// later messages are at hand while the second one is suspended.
			p := e.newProducer(t)
			if err := sendOrdered(context.Background(), p, topic, "k", 0, 4, 1); err != nil {
				t.Fatal(err)
			}
			log := newOrderlyLog()
			e.startOrderly(t, g, topic, log.handler("c", func(_ context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
				for _, m := range msgs {
					if m.seq == 1 && m.reconsume < 2 {
						return tc.suspend()
					}
				}
				return consumer.OrderlySuccess, nil
			}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithSuspendTime(suspend), consumer.WithConsumeBatchSize(tc.batch))
			e.waitConsumed(t, g, topic, 4)

			calls := log.snapshot()
			var got []string
			suspended := -1 // the first call that was suspended
			for i, c := range calls {
				var ms []string
				for _, m := range c.msgs {
					ms = append(ms, fmt.Sprintf("#%d/%d", m.seq, m.reconsume))
					if m.seq == 1 && suspended < 0 {
						suspended = i
					}
				}
				got = append(got, strings.Join(ms, " "))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("calls (seq/reconsume times) %q, want %q", got, tc.want)
			}
			for i := suspended + 1; i <= suspended+2; i++ {
				if gap := calls[i].start.Sub(calls[i-1].end); gap < suspend {
					t.Errorf("call %d came %v after the previous one returned, before the %v suspend time", i, gap, suspend)
				}
			}
		})
	}
}

// TestOrderlyMaxReconsume: with WithMaxReconsumeTimes(2) a message its
// handler always suspends is delivered 3 times (ReconsumeTimes 0, 1, 2),
// then moves to %DLQ%group, where a reader finds it with its body and
// properties, and the queue goes on with the next message.
func TestOrderlyMaxReconsume(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	g := group(t, "")
	p := e.newProducer(t)
	if err := sendOrdered(context.Background(), p, topic, "k", 0, 2, 1); err != nil {
		t.Fatal(err)
	}
	log := newOrderlyLog()
	e.startOrderly(t, g, topic, log.handler("c", func(_ context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
		if msgs[0].seq == 0 {
			return consumer.SuspendQueue, nil
		}
		return consumer.OrderlySuccess, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithSuspendTime(100*time.Millisecond), consumer.WithMaxReconsumeTimes(2))
	e.waitConsumed(t, g, topic, 2)

	var got []string
	var first string
	for _, c := range log.snapshot() {
		for _, m := range c.msgs {
			got = append(got, fmt.Sprintf("#%d/%d", m.seq, m.reconsume))
			if m.seq == 0 {
				first = m.id
			}
		}
	}
	if want := []string{"#0/0", "#0/1", "#0/2", "#1/0"}; !slices.Equal(got, want) {
		t.Fatalf("deliveries (seq/reconsume times) %v, want %v", got, want)
	}

	dead := newRecorder()
	e.startConsumer(t, group(t, "_dlq"), dlqTopic(g), consumer.All, dead.handler("dlq", nil),
		consumer.WithConsumeFrom(consumer.FromFirst))
	dead.waitAll(t, []string{first}, 1)
	d := dead.deliveries(first)[0].msg
	if d.Topic != dlqTopic(g) || string(d.Body) != "k #0" || d.Property(propSeq) != "0" || !slices.Equal(d.Keys(), []string{"k"}) {
		t.Errorf("dead letter: topic %s body %q properties %v", d.Topic, d.Body, d.Properties)
	}
	if dead.total() != 1 {
		t.Errorf("%d dead letters, want 1", dead.total())
	}
}

// TestOrderlyShutdownUnlocks: when one of two members shuts down, the
// other takes its queues and consumes new messages on them well before
// the broker's 60 s lock expiry: the leaving member unlocks its queues.
func TestOrderlyShutdownUnlocks(t *testing.T) {
	const queues = 8
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	var unlocked sync.Map // queues named by UNLOCK_BATCH_MQ requests of the group
	if e.cluster != nil {
		err := e.cluster.Intercept(e.broker, remoting.UnlockBatchMQ, rmqtest.Fault{Match: func(req *remoting.Command) bool {
			var b remoting.UnlockBatchRequestBody
			if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g {
				for _, q := range b.MQSet {
					unlocked.Store(q, true)
				}
			}
			return false // observed, then served as usual
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	keys := orderedKeys(queues, queues)
	log := newOrderlyLog()
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst)}
	a := e.startOrderly(t, g, topic, log.handler("A", nil), append(opts, consumer.WithInstanceName("A"))...)
	b := e.startOrderly(t, g, topic, log.handler("B", nil), append(opts, consumer.WithInstanceName("B"))...)
	waitBalanced(t, topic, queues, a, b)
	p := e.newProducer(t)
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 0, 10, 5); err != nil {
			t.Fatal(err)
		}
	}
	e.waitConsumed(t, g, topic, queues*10)
	if log.ackedBy("A") == 0 || log.ackedBy("B") == 0 {
		t.Fatalf("before the shutdown: A consumed %d, B %d", log.ackedBy("A"), log.ackedBy("B"))
	}
	ofA := assigned(a, topic)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	log.stop("A")
	stopped := time.Now()
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 10, 20, 5); err != nil {
			t.Fatal(err)
		}
	}
	const limit = 20 * time.Second
	// checkOrder below makes sure A consumed nothing after its Shutdown.
	if !testutil.Poll(limit, func() bool { return log.ackedTotal() >= queues*20 }) {
		t.Fatalf("%d of %d messages consumed within %v of A's shutdown", log.ackedTotal(), queues*20, limit)
	}
	t.Logf("B consumed A's queues %v after A's shutdown", time.Since(stopped).Round(time.Millisecond))
	e.waitConsumed(t, g, topic, queues*20)
	checkOrder(t, log, keys, 20, e.route(topic, queues), e.cluster != nil)
	if e.cluster != nil {
		for _, q := range ofA {
			if _, ok := unlocked.Load(q); !ok {
				t.Errorf("queue %v held by A was not unlocked", q)
			}
		}
	}
}

// TestOrderlyBroadcasting: two broadcasting orderly members each get
// every message once, in order per key and queue, and no lock request is
// sent.
func TestOrderlyBroadcasting(t *testing.T) {
	const (
		queues = 4
		perKey = 50
	)
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	var locks atomic.Int32
	if e.cluster != nil {
		for _, code := range []int32{remoting.LockBatchMQ, remoting.UnlockBatchMQ} {
			err := e.cluster.Intercept(e.broker, code, rmqtest.Fault{Match: func(req *remoting.Command) bool {
				var b remoting.LockBatchRequestBody
				if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g {
					locks.Add(1)
				}
				return false
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	keys := orderedKeys(2*queues, queues)
	dir := t.TempDir()
	logs := map[string]*orderlyLog{}
	var cs []*consumer.PushConsumer
	for _, name := range []string{"b1", "b2"} {
		logs[name] = newOrderlyLog()
		cs = append(cs, e.startOrderly(t, g, topic, logs[name].handler(name, nil), consumer.WithModel(consumer.Broadcasting),
			consumer.WithOffsetStoreDir(dir), consumer.WithInstanceName(name), consumer.WithConsumeFrom(consumer.FromFirst)))
	}
	for _, c := range cs {
		testutil.WaitFor(t, wait, "every queue assigned to every member", func() bool { return len(assigned(c, topic)) == queues })
	}
	p := e.newProducer(t)
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 0, perKey, 10); err != nil {
			t.Fatal(err)
		}
	}
	for name, l := range logs {
		if !testutil.Poll(wait, func() bool { return l.ackedTotal() >= len(keys)*perKey }) {
			t.Fatalf("member %s consumed %d of %d", name, l.ackedTotal(), len(keys)*perKey)
		}
	}
	for name, l := range logs {
		t.Run(name, func(t *testing.T) { checkOrder(t, l, keys, perKey, e.route(topic, queues), true) })
	}
	if n := locks.Load(); n != 0 {
		t.Errorf("%d lock or unlock requests from a broadcasting group", n)
	}
}

// TestOrderlyHandOverWaitsForCallInHand: when a joining member takes a
// queue whose handler call is still running on its owner, the call keeps
// its ctx and finishes, its result is committed, and only then does the
// new member consume the queue, from the next message on.
func TestOrderlyHandOverWaitsForCallInHand(t *testing.T) {
	const hold = 2 * time.Second // the call in hand runs at least this long after B started
	e := start(t)
	topic := e.newTopic(t, 2)
	g := group(t, "")
	// With two members, A and B (client ids in that order), the
	// averaging strategy gives queue 1 to B.
	var key string
	for _, k := range orderedKeys(2, 2) {
		if producer.StringKey(k).Index(2) == 1 {
			key = k
		}
	}
	p := e.newProducer(t)
	if err := sendOrdered(context.Background(), p, topic, key, 0, 5, 5); err != nil {
		t.Fatal(err)
	}
	// On the in-process broker: whether B asked for queue 1 while A's
	// call was in hand, so that the hand-over was really attempted then.
	var asked, held atomic.Bool
	if e.cluster != nil {
		err := e.cluster.Intercept(e.broker, remoting.LockBatchMQ, rmqtest.Fault{Match: func(req *remoting.Command) bool {
			var b remoting.LockBatchRequestBody
			if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g && strings.HasSuffix(b.ClientID, "@B") && held.Load() &&
				slices.Contains(b.MQSet, rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: 1}) {
				asked.Store(true)
			}
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	log := newOrderlyLog()
	inHand, release := make(chan struct{}), make(chan struct{})
	var ctxErr atomic.Value
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithRebalanceInterval(time.Second)}
	e.startOrderly(t, g, topic, log.handler("A", func(ctx context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
		if msgs[0].seq == 0 && msgs[0].reconsume == 0 {
			held.Store(true)
			close(inHand)
			select {
			case <-release:
			case <-time.After(wait):
			}
			ctxErr.Store(fmt.Sprint(ctx.Err()))
		}
		return consumer.OrderlySuccess, nil
	}), append(opts, consumer.WithInstanceName("A"))...)
	select {
	case <-inHand:
	case <-time.After(wait):
		t.Fatal("A never consumed the first message")
	}
	b := e.startOrderly(t, g, topic, log.handler("B", nil), append(opts, consumer.WithInstanceName("B"))...)
	select {
	case <-time.After(hold):
	case <-t.Context().Done():
	}
	if e.cluster != nil && !testutil.Poll(wait, asked.Load) {
		t.Errorf("B did not ask for queue 1 while A's call was in hand")
	}
	if n := log.ackedBy("B"); n != 0 {
		t.Errorf("B consumed %d messages while A's call was in hand", n)
	}
	held.Store(false)
	close(release)
	if !testutil.Poll(wait, func() bool { return log.ackedBy("B") == 4 }) {
		t.Fatalf("B consumed %d of the 4 messages after the one A had in hand", log.ackedBy("B"))
	}
	e.waitConsumed(t, g, topic, 5)
	if got := ctxErr.Load(); got != "<nil>" {
		t.Errorf("the call in hand ended with ctx error %v", got)
	}
	if qs := assigned(b, topic); len(qs) != 1 || qs[0].QueueID != 1 {
		t.Errorf("B holds %v, want queue 1", qs)
	}
	checkOrder(t, log, []string{key}, 5, e.route(topic, 2), e.cluster != nil)
}

// TestOrderlyAdmin: the admin tool's requests through the broker see an
// orderly consumer as Java's: its running info says consumeOrderly and
// shows the queues it holds locked, with a recent lock time; consuming a
// stored message directly answers with order set, CR_SUCCESS for
// OrderlySuccess and CR_LATER for SuspendQueue.
func TestOrderlyAdmin(t *testing.T) {
	const queues = 4
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	var suspend atomic.Bool
	log := newOrderlyLog()
	c := e.startOrderly(t, g, topic, log.handler("c", func(context.Context, []seqMsg) (consumer.OrderlyResult, error) {
		if suspend.Load() {
			return consumer.SuspendQueue, nil
		}
		return consumer.OrderlySuccess, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst))
	testutil.WaitFor(t, wait, "the topic's queues held", func() bool { return len(assigned(c, topic)) == queues })
	keys := orderedKeys(queues, queues)
	p := e.newProducer(t)
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 0, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	e.waitConsumed(t, g, topic, queues)

	info := e.runningInfo(t, g)
	if got := info.Properties[remoting.PropConsumeOrderly]; got != "true" {
		t.Errorf("property %s = %q, want true", remoting.PropConsumeOrderly, got)
	}
	held := 0
	for mq, pq := range info.MQTable {
		if mq.Topic != topic {
			continue
		}
		held++
		if age := time.Since(time.UnixMilli(pq.LastLockTimestamp)); !pq.Locked || age < 0 || age > time.Minute {
			t.Errorf("queue %d: locked %v, last locked %v ago", mq.QueueID, pq.Locked, age)
		}
	}
	if held != queues {
		t.Errorf("running info shows %d queues of %s, want %d", held, topic, queues)
	}

	stored := log.snapshot()[0].msgs[0].offsetID
	ids := e.consumerIDs(t, g)
	for _, tc := range []struct {
		suspend bool
		want    string
	}{{false, remoting.ConsumeResultSuccess}, {true, remoting.ConsumeResultLater}} {
		suspend.Store(tc.suspend)
		resp := e.adminCall(t, remoting.ConsumeMessageDirectly, &remoting.ConsumeMessageDirectlyResultRequestHeader{
			ConsumerGroup: g, ClientID: &ids[0], MsgID: &stored})
		var res remoting.ConsumeMessageDirectlyResult
		if err := res.DecodeJSON(resp.Body); err != nil {
			t.Fatal(err)
		}
		if !res.Order || res.ConsumeResult != tc.want {
			t.Errorf("consume directly (handler suspends: %v): order %v, result %s; want order true, %s", tc.suspend, res.Order, res.ConsumeResult, tc.want)
		}
	}
}

// lockAs sends LOCK_BATCH_MQ (or UNLOCK_BATCH_MQ) for group's queues mqs
// to the topic's broker in the name of clientID, as another client of the
// group would, and returns the queues the broker says are locked (none for
// an unlock).
func (e *env) lockAs(t *testing.T, code int32, group, clientID string, mqs ...rocketmq.MessageQueue) []rocketmq.MessageQueue {
	t.Helper()
	locked, err := e.tryLockAs(code, group, clientID, mqs...)
	if err != nil {
		t.Fatal(err)
	}
	return locked
}

// tryLockAs is lockAs for any goroutine.
func (e *env) tryLockAs(code int32, group, clientID string, mqs ...rocketmq.MessageQueue) ([]rocketmq.MessageQueue, error) {
	cli, err := transport.New()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := remoting.LockBatchRequestBody{ConsumerGroup: group, ClientID: clientID, MQSet: mqs}
	resp, err := cli.Invoke(ctx, e.brokerAddr, remoting.NewRequest(code, nil, body.AppendJSON(nil, remoting.JSONFastjson)))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return nil, fmt.Errorf("request %d to %s: %w", code, e.broker, err)
	}
	if code != remoting.LockBatchMQ {
		return nil, nil
	}
	var locked remoting.LockBatchResponseBody
	if err := locked.DecodeJSON(resp.Body); err != nil {
		return nil, err
	}
	return locked.LockOKMQSet, nil
}

// TestOrderlyQueueLockedByAnother: a queue whose broker lock another
// client of the group holds is not consumed, while the other queues are;
// once that client unlocks it, the consumer locks it and consumes it, in
// order.
func TestOrderlyQueueLockedByAnother(t *testing.T) {
	const (
		queues   = 2
		perKey   = 5
		intruder = "192.0.2.99@intruder"
		held     = 3 * time.Second // how long the queue stays locked by the intruder at least
	)
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	q0 := rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: 0}
	if got := e.lockAs(t, remoting.LockBatchMQ, g, intruder, q0); !slices.Equal(got, []rocketmq.MessageQueue{q0}) {
		t.Fatalf("the intruder's lock of %v got %v", q0, got)
	}
	var refused atomic.Int32 // on rmqtest: the consumer's lock requests naming queue 0
	if e.cluster != nil {
		err := e.cluster.Intercept(e.broker, remoting.LockBatchMQ, rmqtest.Fault{Match: func(req *remoting.Command) bool {
			var b remoting.LockBatchRequestBody
			if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g && b.ClientID != intruder && slices.Contains(b.MQSet, q0) {
				refused.Add(1)
			}
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	keys := orderedKeys(queues, queues)
	log := newOrderlyLog()
	c := e.startOrderly(t, g, topic, log.handler("c", nil), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithRebalanceInterval(time.Second))
	p := e.newProducer(t)
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 0, perKey, 1); err != nil {
			t.Fatal(err)
		}
	}
	// Queue 1 is consumed; queue 0 is not, for at least held and, on
	// rmqtest, until the consumer asked for it twice.
	testutil.WaitFor(t, wait, "queue 1 consumed", func() bool { return log.ackedTotal() >= perKey })
	select {
	case <-time.After(held):
	case <-t.Context().Done():
	}
	if e.cluster != nil {
		testutil.WaitFor(t, wait, "the consumer asking for queue 0 twice", func() bool { return refused.Load() >= 2 })
	}
	for _, call := range log.snapshot() {
		if call.queue == 0 {
			t.Fatalf("queue 0 consumed while another client held its lock")
		}
	}
	if slices.Contains(assigned(c, topic), q0) {
		t.Errorf("Assigned shows queue 0 while another client holds its lock")
	}
	e.lockAs(t, remoting.UnlockBatchMQ, g, intruder, q0)
	testutil.WaitFor(t, wait, "queue 0 consumed after its unlock", func() bool { return log.ackedTotal() >= queues*perKey })
	e.waitConsumed(t, g, topic, queues*perKey)
	checkOrder(t, log, keys, perKey, e.route(topic, queues), true)
}

// TestOrderlyLockRenewedAndLost: a consumer renews the locks of the
// queues it holds every 20 s (Java REBALANCE_LOCK_INTERVAL), and stops
// consuming a queue whose renewal the broker refuses. The broker's lock
// expiry is cut to 2 s, so that another client of the group takes one of
// the consumer's two queues long before the renewal: the renewal keeps the
// other queue, the taken one is no longer consumed, and once the other
// client lets it go the consumer locks it again and consumes it.
func TestOrderlyLockRenewedAndLost(t *testing.T) {
	const (
		queues   = 2
		live     = 2 * time.Second
		intruder = "192.0.2.99@intruder"
	)
	e := start(t, rmqtest.WithLockMaxLiveTime(live))
	if e.cluster == nil {
		t.Skipf("needs the in-process broker's lock expiry cut to %v (%s is set)", live, envExternal)
	}
	topic := e.newTopic(t, queues)
	g := group(t, "")
	keys := orderedKeys(queues, queues)
	taken := rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: producer.StringKey(keys[0]).Index(queues)}
	kept := rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: producer.StringKey(keys[1]).Index(queues)}
	var mu sync.Mutex
	var renewals []time.Time // the consumer's lock requests naming both queues
	err := e.cluster.Intercept(e.broker, remoting.LockBatchMQ, rmqtest.Fault{Match: func(req *remoting.Command) bool {
		var b remoting.LockBatchRequestBody
		if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g && b.ClientID != intruder &&
			slices.Contains(b.MQSet, taken) && slices.Contains(b.MQSet, kept) {
			mu.Lock()
			renewals = append(renewals, time.Now())
			mu.Unlock()
		}
		return false
	}})
	if err != nil {
		t.Fatal(err)
	}
	renewedAfter := func(at time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(renewals, func(r time.Time) bool { return r.After(at) })
	}
	log := newOrderlyLog()
	e.startOrderly(t, g, topic, log.handler("c", nil), consumer.WithConsumeFrom(consumer.FromFirst))
	p := e.newProducer(t)
	sendAll := func(seq int) {
		t.Helper()
		for _, k := range keys {
			if err := sendOrdered(context.Background(), p, topic, k, seq, seq+1, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	sendAll(0)
	testutil.WaitFor(t, wait, "both queues consumed", func() bool { return log.ackedTotal() == 2 })

	// The other client takes the queue once the consumer's lock expired on
	// the broker, and keeps it locked until told to stop.
	stop, stopped := make(chan struct{}), make(chan error, 1)
	took := make(chan time.Time, 1)
	go func() {
		defer close(stopped)
		for held := false; ; {
			got, err := e.tryLockAs(remoting.LockBatchMQ, g, intruder, taken)
			if err != nil {
				stopped <- err
				return
			}
			if !held && len(got) == 1 {
				held = true
				took <- time.Now()
			}
			select {
			case <-stop:
				_, err := e.tryLockAs(remoting.UnlockBatchMQ, g, intruder, taken)
				stopped <- err
				return
			case <-time.After(live / 4):
			}
		}
	}()
	var tookAt time.Time
	select {
	case tookAt = <-took:
	case err := <-stopped:
		t.Fatalf("the other client: %v", err)
	case <-time.After(wait):
		t.Fatal("the other client never took the queue")
	}

	// The renewal (20 s after the first lock) loses the taken queue.
	testutil.WaitFor(t, wait, "the consumer's lock renewal", func() bool { return renewedAfter(tookAt) })
	var info *remoting.ConsumerRunningInfo
	testutil.WaitFor(t, wait, "the taken queue unlocked in the running info", func() bool {
		info = e.runningInfo(t, g)
		return !info.MQTable[taken].Locked
	})
	if pq := info.MQTable[kept]; !pq.Locked || time.UnixMilli(pq.LastLockTimestamp).Before(tookAt) {
		t.Errorf("the kept queue after the renewal: locked %v, last locked %v, the other queue was taken at %v",
			pq.Locked, time.UnixMilli(pq.LastLockTimestamp).Format(time.StampMilli), tookAt.Format(time.StampMilli))
	}
	sendAll(1)
	testutil.WaitFor(t, wait, "the kept queue consumed", func() bool { return log.ackedTotal() == 3 })
	select {
	case <-time.After(3 * time.Second):
	case <-t.Context().Done():
	}
	for _, c := range log.snapshot() {
		if c.queue == int32(taken.QueueID) && c.msgs[0].seq == 1 {
			t.Fatal("the taken queue consumed while the other client holds its lock")
		}
	}
	close(stop)
	if err := <-stopped; err != nil {
		t.Fatalf("the other client: %v", err)
	}
	testutil.WaitFor(t, wait, "the taken queue consumed again once let go", func() bool { return log.ackedTotal() == 4 })
	e.waitConsumed(t, g, topic, 4)
	checkOrder(t, log, keys, 2, e.route(topic, queues), true)
}

// TestOrderlyShutdownWhileSuspended: Shutdown does not wait out a
// suspended queue: it returns before the suspend time is over, having
// committed what came before the suspended message, and the next member
// of the group gets that message first.
func TestOrderlyShutdownWhileSuspended(t *testing.T) {
	// Long, so that a Shutdown that waited it out shows whatever the
	// machine's load.
	const suspend = 30 * time.Second
	e := start(t)
	topic := e.newTopic(t, 1)
	g := group(t, "")
	p := e.newProducer(t)
	if err := sendOrdered(context.Background(), p, topic, "k", 0, 4, 1); err != nil {
		t.Fatal(err)
	}
	log := newOrderlyLog()
	a := e.startOrderly(t, g, topic, log.handler("A", func(_ context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
		if msgs[0].seq == 1 {
			return consumer.SuspendQueue, nil
		}
		return consumer.OrderlySuccess, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithSuspendTime(suspend), consumer.WithInstanceName("A"))
	testutil.WaitFor(t, wait, "#1 suspended", func() bool { return len(log.snapshot()) == 2 })
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*suspend)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	log.stop("A")
	if d := time.Since(began); d >= suspend/2 {
		t.Errorf("Shutdown took %v, the suspend time is %v", d, suspend)
	}
	if got, err := consumed(e, g, topic); err != nil || got != 1 {
		t.Errorf("committed after Shutdown: %d %v, want 1", got, err)
	}
	e.startOrderly(t, g, topic, log.handler("B", nil), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithInstanceName("B"))
	e.waitConsumed(t, g, topic, 4)
	var got []string
	for _, c := range log.snapshot() {
		for _, m := range c.msgs {
			got = append(got, fmt.Sprintf("%s#%d", c.member, m.seq))
		}
	}
	if want := []string{"A#0", "A#1", "B#1", "B#2", "B#3"}; !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

// TestOrderlyShutdownGivesUp: when Shutdown's ctx ends while a handler
// call is in hand, the call's ctx is cancelled; a handler that then
// returns has finished before the queue is unlocked, its message is not
// committed, and the next member gets it first.
func TestOrderlyShutdownGivesUp(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 1)
	g := group(t, "")
	p := e.newProducer(t)
	if err := sendOrdered(context.Background(), p, topic, "k", 0, 4, 1); err != nil {
		t.Fatal(err)
	}
	log := newOrderlyLog()
	a := e.startOrderly(t, g, topic, log.handler("A", func(ctx context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
		if msgs[0].seq != 1 {
			return consumer.OrderlySuccess, nil
		}
		select {
		case <-ctx.Done():
			return consumer.SuspendQueue, ctx.Err()
		case <-time.After(wait):
			return consumer.OrderlySuccess, nil
		}
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithInstanceName("A"))
	testutil.WaitFor(t, wait, "#1 in hand", func() bool { return log.ackedTotal() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := a.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown: %v, want the deadline", err)
	}
	log.stop("A")
	calls := log.snapshot()
	if len(calls) != 2 || calls[1].acked {
		t.Fatalf("A's calls when Shutdown returned: %+v", calls)
	}
	if got, err := consumed(e, g, topic); err != nil || got != 1 {
		t.Errorf("committed after Shutdown: %d %v, want 1", got, err)
	}
	e.startOrderly(t, g, topic, log.handler("B", nil), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithInstanceName("B"))
	e.waitConsumed(t, g, topic, 4)
	checkOrder(t, log, []string{"k"}, 4, e.route(topic, 1), e.cluster != nil)
	var got []string
	for _, c := range log.snapshot() {
		got = append(got, fmt.Sprintf("%s#%d", c.member, c.msgs[0].seq))
	}
	if want := []string{"A#0", "A#1", "B#1", "B#2", "B#3"}; !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

// TestOrderlyShutdownKeepsLockOfRunningCall: when Shutdown gives up on a
// handler that ignores its cancelled ctx, the queue of that call is left
// out of the UNLOCK_BATCH_MQ (so that, on a broker that keeps the lock
// until it expires, nobody consumes the queue alongside the call), while
// the member's other queues are unlocked.
func TestOrderlyShutdownKeepsLockOfRunningCall(t *testing.T) {
	e := start(t)
	// Our broker also drops a client's locks when it unregisters, unlike
	// Java's, so only the requests can be checked, which needs the
	// in-process broker.
	e.needFaults(t, "the UNLOCK_BATCH_MQ requests are observed on the broker")
	const queues = 2
	topic := e.newTopic(t, queues)
	g := group(t, "")
	var mu sync.Mutex
	unlocked := map[rocketmq.MessageQueue]bool{}
	err := e.cluster.Intercept(e.broker, remoting.UnlockBatchMQ, rmqtest.Fault{Match: func(req *remoting.Command) bool {
		var b remoting.UnlockBatchRequestBody
		if b.DecodeJSON(req.Body) == nil && b.ConsumerGroup == g {
			mu.Lock()
			for _, q := range b.MQSet {
				unlocked[q] = true
			}
			mu.Unlock()
		}
		return false
	}})
	if err != nil {
		t.Fatal(err)
	}
	keys := orderedKeys(queues, queues)
	p := e.newProducer(t)
	for _, k := range keys {
		if err := sendOrdered(context.Background(), p, topic, k, 0, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	stuck := int32(producer.StringKey(keys[0]).Index(queues))
	inHand, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	log := newOrderlyLog()
	a := e.startOrderly(t, g, topic, log.handler("A", func(_ context.Context, msgs []seqMsg) (consumer.OrderlyResult, error) {
		if msgs[0].key == keys[0] {
			close(inHand)
			<-release // ignores its ctx
		}
		return consumer.OrderlySuccess, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst))
	select {
	case <-inHand:
	case <-time.After(wait):
		t.Fatal("the call never started")
	}
	testutil.WaitFor(t, wait, "the other queue consumed", func() bool { return log.ackedTotal() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := a.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown: %v, want the deadline", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for q := range queues {
		mq := rocketmq.MessageQueue{Topic: topic, BrokerName: e.broker, QueueID: q}
		if want := q != int(stuck); unlocked[mq] != want {
			t.Errorf("queue %d (call running: %v) unlocked: %v", q, !want, unlocked[mq])
		}
	}
}

// TestOrderlyTwoBrokers: a topic with two queues on each of two brokers,
// split by circle so that each member holds queues of both brokers and
// locks, renews and unlocks them per broker. A alone, then B joins, then
// A leaves, with messages sent in between: every key in order, once, no
// queue consumed by two members at once.
func TestOrderlyTwoBrokers(t *testing.T) {
	e := start(t, rmqtest.WithBrokers(2))
	if e.cluster == nil {
		t.Skipf("needs two brokers of the in-process cluster (%s is set)", envExternal)
	}
	const (
		perBroker = 2
		perKey    = 200
	)
	topic := fmt.Sprintf("CE2E_%s_%d", t.Name(), time.Now().UnixNano()%1e9)
	if err := rmqtest.CreateTopic(context.Background(), e.ns, topic, perBroker, rmqtest.TopicOnBrokers(e.cluster.BrokerNames()...)); err != nil {
		t.Fatal(err)
	}
	var route []rocketmq.MessageQueue // broker-a's queues, then broker-b's, as the producer sees them
	for _, b := range e.cluster.BrokerNames() {
		for id := range perBroker {
			route = append(route, rocketmq.MessageQueue{Topic: topic, BrokerName: b, QueueID: id})
		}
	}
	queues := len(route)
	keys := orderedKeys(2*queues, queues)
	g := group(t, "")
	log := newOrderlyLog()
	// By circle, each of two members holds a queue of each broker.
	opts := []consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithRebalanceInterval(time.Second),
		consumer.WithStrategy(rebalance.AveragelyByCircle{})}
	p := e.newProducer(t)
	sendPart := func(part int) {
		t.Helper()
		for _, k := range keys {
			if err := sendOrdered(context.Background(), p, topic, k, part*perKey/3, (part+1)*perKey/3, 10); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := e.startOrderly(t, g, topic, log.handler("A", nil), append(opts, consumer.WithInstanceName("A"))...)
	sendPart(0)
	b := e.startOrderly(t, g, topic, log.handler("B", nil), append(opts, consumer.WithInstanceName("B"))...)
	sendPart(1)
	waitBalanced(t, topic, queues, a, b)
	for _, c := range []*consumer.PushConsumer{a, b} {
		brokers := map[string]bool{}
		for _, q := range assigned(c, topic) {
			brokers[q.BrokerName] = true
		}
		if len(brokers) != 2 {
			t.Errorf("a member holds %v, want queues of both brokers", assigned(c, topic))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	log.stop("A")
	sendPart(2)
	e.waitConsumed(t, g, topic, int64(len(keys)*perKey))
	rep := checkOrder(t, log, keys, perKey, route, true)
	if rep.perMember["A"] == 0 || rep.perMember["B"] == 0 {
		t.Errorf("per member %v", rep.perMember)
	}
}
