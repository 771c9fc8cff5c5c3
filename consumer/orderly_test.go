package consumer

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// withLockTimes shortens the lock renewal period and the client-side
// lock expiry.
func withLockTimes(every, live time.Duration) Option {
	return func(c *config) { c.lockInterval, c.lockMaxLive = every, live }
}

// delivery is one message as an orderly handler saw it.
type delivery struct {
	topic     string
	qid       int
	offset    int64
	reconsume int32
	at        time.Time
}

// orderlyRec records deliveries per queue and fails the test when two
// handler calls of one queue overlap.
type orderlyRec struct {
	t      *testing.T
	mu     sync.Mutex
	seen   []delivery
	active map[int]*atomic.Int32
	// decide, when set, returns the result for a batch.
	decide func(msgs []*rocketmq.MessageExt) (OrderlyResult, error)
}

func newOrderlyRec(t *testing.T) *orderlyRec {
	return &orderlyRec{t: t, active: map[int]*atomic.Int32{}}
}

func (o *orderlyRec) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
	qid := int(msgs[0].QueueID)
	o.mu.Lock()
	a := o.active[qid]
	if a == nil {
		a = new(atomic.Int32)
		o.active[qid] = a
	}
	o.mu.Unlock()
	if a.Add(1) != 1 {
		o.t.Errorf("queue %d: two handler calls at once", qid)
	}
	defer a.Add(-1)
	res, err := OrderlySuccess, error(nil)
	if o.decide != nil {
		res, err = o.decide(msgs)
	}
	now := time.Now()
	o.mu.Lock()
	for _, m := range msgs {
		o.seen = append(o.seen, delivery{topic: m.Topic, qid: int(m.QueueID), offset: m.QueueOffset, reconsume: m.ReconsumeTimes, at: now})
	}
	o.mu.Unlock()
	return res, err
}

func (o *orderlyRec) deliveries(qid int) []delivery {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []delivery
	for _, d := range o.seen {
		if d.qid == qid && d.topic == "T" {
			out = append(out, d)
		}
	}
	return out
}

func (o *orderlyRec) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen)
}

// firstIndex returns the index of the first event with prefix, -1 if none.
func firstIndex(events []string, prefix string) int {
	return slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, prefix) })
}

func lastIndex(events []string, prefix string) int {
	for i := len(events) - 1; i >= 0; i-- {
		if strings.HasPrefix(events[i], prefix) {
			return i
		}
	}
	return -1
}

// Each queue's messages reach the handler once, in offset order, one
// call at a time, while different queues run in parallel; every queue is
// locked before its first pull and its offset committed at the end.
func TestOrderlyInOrderPerQueue(t *testing.T) {
	f := newFakeCluster(t)
	const queues, per = 4, 150
	f.createTopic("T", queues)
	for q := 0; q < queues; q++ {
		f.put("T", q, per, "q"+strconv.Itoa(q), "")
	}
	rec := newOrderlyRec(t)
	// The first batch of each queue waits until two queues are in their
	// handlers at once: queues do not wait for each other.
	var inFirst atomic.Int32
	rec.decide = func(msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if msgs[0].QueueOffset == 0 {
			inFirst.Add(1)
			if !testutil.Poll(5*time.Second, func() bool { return inFirst.Load() >= 2 }) {
				t.Errorf("queue %d: no other queue consumed in parallel", msgs[0].QueueID)
			}
		}
		return OrderlySuccess, nil
	}
	c := f.newConsumer(t, "g1", WithConsumeGoroutines(3), WithConsumeBatchSize(4), WithPullBatchSize(16))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 20*time.Second, "all messages", func() bool { return rec.total() >= queues*per })
	for q := 0; q < queues; q++ {
		ds := rec.deliveries(q)
		if len(ds) != per {
			t.Fatalf("queue %d: %d deliveries, want %d", q, len(ds), per)
		}
		for i, d := range ds {
			if d.offset != int64(i) {
				t.Fatalf("queue %d: delivery %d is offset %d", q, i, d.offset)
			}
		}
	}
	events := f.eventsSnapshot()
	for q := 0; q < queues; q++ {
		l, p := firstIndex(events, "lock T/"+strconv.Itoa(q)), firstIndex(events, "pull T/"+strconv.Itoa(q))
		if l < 0 || p < 0 || l > p {
			t.Fatalf("queue %d: lock at %d, first pull at %d", q, l, p)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "offsets committed", func() bool {
		for q := 0; q < queues; q++ {
			if off, ok := f.committed("g1", "T", q); !ok || off != per {
				return false
			}
		}
		return true
	})
	info := (&member{r: c.runState()}).RunningInfo()
	if info.Properties[remoting.PropConsumeOrderly] != "true" {
		t.Fatalf("consumeOrderly %q", info.Properties[remoting.PropConsumeOrderly])
	}
	for mq, pi := range info.MQTable {
		if mq.Topic == "T" && (!pi.Locked || pi.LastLockTimestamp == 0) {
			t.Fatalf("%v: %+v", mq, pi)
		}
	}
}

// A queue whose lock is refused is neither pulled nor consumed; the lock
// is asked for again well before the rebalance period, and once granted
// the queue is consumed.
func TestOrderlyLockRefused(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 5, "a", "")
	f.put("T", 1, 5, "b", "")
	q0 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	f.setRefuse(q0, true)
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1", WithRebalanceInterval(time.Minute))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "queue 1 consumed", func() bool { return len(rec.deliveries(1)) == 5 })
	testutil.WaitFor(t, 10*time.Second, "lock of queue 0 asked again", func() bool {
		n := 0
		for _, e := range f.eventsSnapshot() {
			if e == "lock T/0" {
				n++
			}
		}
		return n >= 2
	})
	if n := len(rec.deliveries(0)); n != 0 {
		t.Fatalf("queue 0 consumed %d messages without its lock", n)
	}
	if i := firstIndex(f.eventsSnapshot(), "pull T/0"); i >= 0 {
		t.Fatal("queue 0 pulled without its lock")
	}
	f.setRefuse(q0, false)
	testutil.WaitFor(t, 10*time.Second, "queue 0 consumed once locked", func() bool { return len(rec.deliveries(0)) == 5 })
}

// The renewal keeps a queue consumed; a renewal answer without the queue
// stops its consumption until it is locked again.
func TestOrderlyLockLostAndRenewed(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 3, "a", "")
	q0 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1", withLockTimes(50*time.Millisecond, 400*time.Millisecond))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "first messages", func() bool { return len(rec.deliveries(0)) == 3 })
	// Renewed well past the client-side expiry: still consumed.
	renewals := func() int {
		n := 0
		for _, e := range f.eventsSnapshot() {
			if e == "lock T/0" {
				n++
			}
		}
		return n
	}
	base := renewals()
	testutil.WaitFor(t, 10*time.Second, "renewals past the expiry", func() bool { return renewals() >= base+12 })
	f.put("T", 0, 2, "b", "")
	testutil.WaitFor(t, 10*time.Second, "consumed after renewals", func() bool { return len(rec.deliveries(0)) == 5 })

	// Another client takes the lock: the renewal answer leaves the queue out.
	f.mu.Lock()
	f.locks[lockKey("g1", q0)] = "someone-else"
	f.mu.Unlock()
	r := c.runState()
	testutil.WaitFor(t, 10*time.Second, "lock seen lost", func() bool {
		r.qmu.Lock()
		q := r.queues[q0]
		r.qmu.Unlock()
		return q != nil && !q.locked.Load()
	})
	f.put("T", 0, 2, "c", "")
	if testutil.Poll(time.Second, func() bool { return len(rec.deliveries(0)) > 5 }) {
		t.Fatal("consumed while the lock is held by another client")
	}
	f.mu.Lock()
	delete(f.locks, lockKey("g1", q0))
	f.mu.Unlock()
	testutil.WaitFor(t, 15*time.Second, "consumed once locked again", func() bool { return len(rec.deliveries(0)) == 7 })
}

// Without renewals the client counts its lock expired after the max
// live time: consumption stops and the lock is asked for again.
func TestOrderlyLockExpiresOnClient(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 2, "a", "")
	q0 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1", withLockTimes(time.Hour, 300*time.Millisecond), WithRebalanceInterval(time.Minute))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "first messages", func() bool { return len(rec.deliveries(0)) == 2 })
	f.setRefuse(q0, true)
	r := c.runState()
	r.qmu.Lock()
	q := r.queues[q0]
	r.qmu.Unlock()
	testutil.WaitFor(t, 5*time.Second, "client-side expiry", func() bool { return !r.lockValid(q, time.Now()) })
	locks := len(slices.DeleteFunc(f.eventsSnapshot(), func(e string) bool { return e != "lock T/0" }))
	f.put("T", 0, 2, "b", "")
	testutil.WaitFor(t, 10*time.Second, "lock asked for again", func() bool {
		return len(slices.DeleteFunc(f.eventsSnapshot(), func(e string) bool { return e != "lock T/0" })) > locks
	})
	if n := len(rec.deliveries(0)); n != 2 {
		t.Fatalf("%d deliveries with an expired lock", n)
	}
	f.setRefuse(q0, false)
	testutil.WaitFor(t, 10*time.Second, "consumed once locked again", func() bool { return len(rec.deliveries(0)) == 4 })
}

// A queue leaving (here by unsubscribing) waits for the batch in hand,
// whose ctx stays live, takes no further batch, persists the offset after
// it and only then unlocks the queue.
func TestOrderlyReleaseWaitsPersistsUnlocks(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 5, "a", "")
	rec := newOrderlyRec(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var ctxErr atomic.Value
	c := f.newConsumer(t, "g1", WithOffsetPersistInterval(time.Hour), withLockTimes(50*time.Millisecond, 30*time.Second))
	h := func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if msgs[0].QueueOffset == 2 {
			close(entered)
			<-release
			if err := ctx.Err(); err != nil {
				ctxErr.Store(err)
			}
		}
		return rec.handler(ctx, msgs)
	}
	if err := c.SubscribeOrderly("T", All, h); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	<-entered
	if err := c.Unsubscribe("T"); err != nil {
		t.Fatal(err)
	}
	r := c.runState()
	testutil.WaitFor(t, 10*time.Second, "queue releasing", func() bool { return len(r.releasingQueues()) == 1 })
	if testutil.Poll(300*time.Millisecond, func() bool { return lastIndex(f.eventsSnapshot(), "unlock T/0") >= 0 }) {
		t.Fatal("unlocked with a batch in hand")
	}
	// Its lock is still renewed meanwhile.
	locks := func() int {
		return len(slices.DeleteFunc(f.eventsSnapshot(), func(e string) bool { return e != "lock T/0" }))
	}
	n := locks()
	testutil.WaitFor(t, 10*time.Second, "lock renewed while releasing", func() bool { return locks() >= n+2 })
	close(release)
	testutil.WaitFor(t, 10*time.Second, "unlocked", func() bool { return lastIndex(f.eventsSnapshot(), "unlock T/0") >= 0 })
	if err, _ := ctxErr.Load().(error); err != nil {
		t.Fatalf("the batch in hand saw its ctx end: %v", err)
	}
	events := f.eventsSnapshot()
	off, unl := lastIndex(events, "offset T/0="), lastIndex(events, "unlock T/0")
	if off < 0 || off > unl || events[off] != "offset T/0=3" {
		t.Fatalf("events %v: want offset T/0=3 before the unlock", events[max(0, off-3):])
	}
	if n := len(rec.deliveries(0)); n != 3 {
		t.Fatalf("%d deliveries, want 3 (no batch after the one in hand)", n)
	}
	if f.lockHolder("g1", rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}) != "" {
		t.Fatal("lock still held")
	}
	testutil.WaitFor(t, 5*time.Second, "released", func() bool { return len(r.releasingQueues()) == 0 })
	// No renewal or re-lock after the unlock.
	if testutil.Poll(300*time.Millisecond, func() bool {
		ev := f.eventsSnapshot()
		return lastIndex(ev, "lock T/0") > lastIndex(ev, "unlock T/0")
	}) {
		t.Fatal("queue locked again after its unlock")
	}
}

// Shutdown persists the offsets, then unlocks the queues, then
// unregisters.
func TestOrderlyShutdownPersistsUnlocksUnregisters(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 4, "a", "")
	f.put("T", 1, 4, "b", "")
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1", WithOffsetPersistInterval(time.Hour))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "consumed", func() bool { return rec.total() == 8 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	events := f.eventsSnapshot()
	unreg := firstIndex(events, "unregister")
	for q := 0; q < 2; q++ {
		qs := "T/" + strconv.Itoa(q)
		off, unl := lastIndex(events, "offset "+qs+"="), lastIndex(events, "unlock "+qs)
		if off < 0 || unl < 0 || unreg < 0 || !(off < unl && unl < unreg) || events[off] != "offset "+qs+"=4" {
			t.Fatalf("queue %d: offset at %d (%v), unlock at %d, unregister at %d", q, off, events[max(off, 0)], unl, unreg)
		}
	}
}

// A handler that suspends twice sees the same message three times,
// ReconsumeTimes 0, 1, 2, the suspend time apart, and nothing after it
// meanwhile.
func TestOrderlySuspendTwice(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 4, "a", "")
	rec := newOrderlyRec(t)
	var suspends atomic.Int32
	rec.decide = func(msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if msgs[0].QueueOffset == 1 && suspends.Add(1) <= 2 {
			return SuspendQueue, nil
		}
		return OrderlySuccess, nil
	}
	const suspend = 300 * time.Millisecond
	c := f.newConsumer(t, "g1", WithSuspendTime(suspend))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "all consumed", func() bool { return len(rec.deliveries(0)) == 6 })
	ds := rec.deliveries(0)
	want := []struct {
		off int64
		rc  int32
	}{{0, 0}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {3, 0}}
	for i, w := range want {
		if ds[i].offset != w.off || ds[i].reconsume != w.rc {
			t.Fatalf("delivery %d: offset %d reconsume %d, want %d %d", i, ds[i].offset, ds[i].reconsume, w.off, w.rc)
		}
	}
	for i := 2; i <= 3; i++ {
		if gap := ds[i].at.Sub(ds[i-1].at); gap < suspend {
			t.Fatalf("redelivery %d after %v, want >= %v", i, gap, suspend)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "offset committed", func() bool {
		off, ok := f.committed("g1", "T", 0)
		return ok && off == 4
	})
}

// At the max reconsume times a message goes to the DLQ (send-back with
// delay level -1) and the queue moves on; an error and a panic suspend
// like SuspendQueue.
func TestOrderlyMaxReconsumeToDLQ(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 3, "a", "")
	rec := newOrderlyRec(t)
	var calls atomic.Int32
	rec.decide = func(msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if msgs[0].QueueOffset != 1 {
			return OrderlySuccess, nil
		}
		switch calls.Add(1) {
		case 1:
			return OrderlySuccess, errors.New("boom")
		case 2:
			panic("boom")
		}
		return SuspendQueue, nil
	}
	c := f.newConsumer(t, "g1", WithSuspendTime(20*time.Millisecond), WithMaxReconsumeTimes(2))
	if err := c.SubscribeOrderly("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		defer func() {
			if p := recover(); p != nil {
				rec.mu.Lock()
				rec.seen = append(rec.seen, delivery{topic: msgs[0].Topic, qid: 0, offset: msgs[0].QueueOffset, reconsume: msgs[0].ReconsumeTimes})
				rec.mu.Unlock()
				panic(p)
			}
		}()
		return rec.handler(ctx, msgs)
	}); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "queue moved on", func() bool {
		off, ok := f.committed("g1", "T", 0)
		return ok && off == 3
	})
	var got []string
	for _, d := range rec.deliveries(0) {
		got = append(got, strconv.FormatInt(d.offset, 10)+"/"+strconv.Itoa(int(d.reconsume)))
	}
	if want := []string{"0/0", "1/0", "1/1", "1/2", "2/0"}; !slices.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	f.mu.Lock()
	sb := slices.Clone(f.sendBacks)
	f.mu.Unlock()
	if len(sb) != 1 || sb[0].DelayLevel != -1 || sb[0].Group != "g1" {
		t.Fatalf("send-backs %+v", sb)
	}
}

// Broadcasting orderly consumes each queue in order without any lock.
func TestOrderlyBroadcastingNoLocks(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 20, "a", "")
	f.put("T", 1, 20, "b", "")
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1", WithModel(Broadcasting), WithOffsetStoreDir(t.TempDir()), withLockTimes(20*time.Millisecond, time.Second))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "consumed", func() bool { return rec.total() == 40 })
	for q := 0; q < 2; q++ {
		for i, d := range rec.deliveries(q) {
			if d.offset != int64(i) {
				t.Fatalf("queue %d: delivery %d is offset %d", q, i, d.offset)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.eventsSnapshot() {
		if strings.HasPrefix(e, "lock") || strings.HasPrefix(e, "unlock") {
			t.Fatalf("broadcasting sent %q", e)
		}
	}
}

// CONSUME_MESSAGE_DIRECTLY on an orderly consumer answers with order
// set; SuspendQueue is CR_LATER.
func TestOrderlyConsumeDirectly(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	c := f.newConsumer(t, "g1")
	res := OrderlySuccess
	if err := c.SubscribeOrderly("T", All, func(context.Context, []*rocketmq.MessageExt) (OrderlyResult, error) { return res, nil }); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	m := &member{r: c.runState()}
	for _, tc := range []struct {
		res  OrderlyResult
		want string
	}{{OrderlySuccess, remoting.ConsumeResultSuccess}, {SuspendQueue, remoting.ConsumeResultLater}} {
		res = tc.res
		msg := &rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T", Body: []byte("x")}}
		got := m.ConsumeDirectly(context.Background(), msg, "broker-a")
		if got.ConsumeResult != tc.want || !got.Order {
			t.Fatalf("%v: %+v", tc.res, got)
		}
	}
}

// A member joining takes half the queues over: each message is consumed
// once, in order, and no queue is ever in two members' handlers at once.
func TestOrderlyHandOver(t *testing.T) {
	f := newFakeCluster(t)
	const queues, per = 2, 300
	f.createTopic("T", queues)
	for q := 0; q < queues; q++ {
		f.put("T", q, per, "q"+strconv.Itoa(q), "")
	}
	var mu sync.Mutex
	consumers := map[int]map[string]bool{} // queue → members that consumed it
	offsets := map[int][]int64{}
	active := map[int]int{}
	var releasing func() []rocketmq.MessageQueue
	var seenRelease atomic.Bool
	handler := func(member string) OrderlyHandler {
		return func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
			qid := int(msgs[0].QueueID)
			if msgs[0].Topic != "T" {
				return OrderlySuccess, nil
			}
			mu.Lock()
			active[qid]++
			if active[qid] != 1 {
				t.Errorf("queue %d in two handlers at once", qid)
			}
			mu.Unlock()
			if member == "a" && msgs[0].QueueOffset == 50 {
				// Still in hand when a rebalance takes the queue away.
				// Latched: the queue a keeps may get here after the
				// other one's release is over.
				if !testutil.Poll(10*time.Second, func() bool {
					if len(releasing()) > 0 {
						seenRelease.Store(true)
					}
					return seenRelease.Load()
				}) {
					t.Errorf("queue %d never released", qid)
				}
			}
			mu.Lock()
			active[qid]--
			if consumers[qid] == nil {
				consumers[qid] = map[string]bool{}
			}
			consumers[qid][member] = true
			for _, m := range msgs {
				offsets[qid] = append(offsets[qid], m.QueueOffset)
			}
			mu.Unlock()
			return OrderlySuccess, nil
		}
	}
	a := f.newConsumer(t, "g1", WithInstanceName("a"))
	releasing = func() []rocketmq.MessageQueue { return a.runState().releasingQueues() }
	if err := a.SubscribeOrderly("T", All, handler("a")); err != nil {
		t.Fatal(err)
	}
	start(t, a)
	testutil.WaitFor(t, 10*time.Second, "a consuming", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(offsets[0]) > 20 && len(offsets[1]) > 20
	})
	b := f.newConsumer(t, "g1", WithInstanceName("b"))
	if err := b.SubscribeOrderly("T", All, handler("b")); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	testutil.WaitFor(t, 30*time.Second, "all consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(offsets[0]) >= per && len(offsets[1]) >= per
	})
	mu.Lock()
	defer mu.Unlock()
	handed := 0
	for q := 0; q < queues; q++ {
		for i, off := range offsets[q] {
			if off != int64(i) {
				t.Fatalf("queue %d: delivery %d is offset %d (%d deliveries)", q, i, off, len(offsets[q]))
			}
		}
		if len(consumers[q]) == 2 {
			handed++
		}
	}
	if handed == 0 {
		t.Fatal("no queue went from a to b")
	}
}

// Shutdown from an orderly handler returns, unlocks the other queues and
// leaves the caller's own, whose call still runs, locked.
func TestOrderlyShutdownFromHandler(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 5, "s", "")
	f.put("T", 1, 5, "t", "")
	c := f.newConsumer(t, "g1", WithOffsetPersistInterval(time.Hour))
	returned := make(chan error, 1)
	var first atomic.Bool
	caller := -1
	if err := c.SubscribeOrderly("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if first.CompareAndSwap(false, true) {
			caller = int(msgs[0].QueueID)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			returned <- c.Shutdown(ctx)
		}
		return OrderlySuccess, nil
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
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown from a handler did not return")
	}
	for q := 0; q < 2; q++ {
		mq := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: q}
		if h := f.lockHolder("g1", mq); (h == "") != (q != caller) {
			t.Fatalf("queue %d (the caller's: %v) locked by %q", q, q == caller, h)
		}
	}
	if f.br.Count(remoting.UnregisterClient) == 0 {
		t.Fatal("not unregistered at Shutdown")
	}
}

// A worker takes one orderly queue task at a time, however deep the work
// queue, and several concurrent batches when it is deep.
func TestWorkQueueOrderlyTasksOneAtATime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		orderly bool
		want    int
	}{{"orderly", true, 1}, {"concurrent", false, workerTake}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkQueue()
			for i := 0; i < 100; i++ {
				req := &consumeReq{}
				if !tc.orderly {
					req.msgs = []*rocketmq.MessageExt{{}}
				}
				w.push(req)
			}
			got, ok := w.pop(nil, 2)
			if !ok || len(got) != tc.want {
				t.Fatalf("took %d (ok %v), want %d", len(got), ok, tc.want)
			}
		})
	}
}

// A queue locked but not taken, for want of a start offset, is unlocked
// at once and taken at a later rebalance.
func TestOrderlyUnlockWhenNotTaken(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 3, "a", "")
	f.fail(remoting.QueryConsumerOffset, remoting.SystemError)
	rec := newOrderlyRec(t)
	c := f.newConsumer(t, "g1")
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "unlocked", func() bool { return lastIndex(f.eventsSnapshot(), "unlock T/0") >= 0 })
	if firstIndex(f.eventsSnapshot(), "pull T/0") >= 0 {
		t.Fatal("pulled a queue not taken")
	}
	f.mu.Lock()
	delete(f.failCode, remoting.QueryConsumerOffset)
	f.mu.Unlock()
	testutil.WaitFor(t, 10*time.Second, "consumed", func() bool { return len(rec.deliveries(0)) == 3 })
}

// When the head of a suspended batch goes to the DLQ, that head is
// committed and only the rest comes again.
func TestOrderlyDLQHeadCommitted(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 1, "a", "")
	rec := newOrderlyRec(t)
	var first atomic.Bool
	rec.decide = func(msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if first.CompareAndSwap(false, true) {
			// The next delivery holds both messages.
			f.put("T", 0, 1, "b", "")
		}
		if msgs[0].QueueOffset == 0 {
			return SuspendQueue, nil
		}
		return OrderlySuccess, nil
	}
	c := f.newConsumer(t, "g1", WithConsumeBatchSize(2), WithMaxReconsumeTimes(1), WithSuspendTime(300*time.Millisecond))
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	testutil.WaitFor(t, 10*time.Second, "queue moved on", func() bool {
		off, ok := f.committed("g1", "T", 0)
		return ok && off == 2
	})
	var got []string
	for _, d := range rec.deliveries(0) {
		got = append(got, strconv.FormatInt(d.offset, 10)+"/"+strconv.Itoa(int(d.reconsume)))
	}
	if want := []string{"0/0", "0/1", "1/0", "1/1"}; !slices.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	f.mu.Lock()
	sb := slices.Clone(f.sendBacks)
	f.mu.Unlock()
	if len(sb) != 1 || sb[0].DelayLevel != -1 || sb[0].Offset != 0 {
		t.Fatalf("send-backs %+v, want one of the first message", sb)
	}
}

// An orderly handler's ctx has the consume timeout as deadline and ends
// when Shutdown gives up waiting.
func TestOrderlyHandlerCtx(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 1, "a", "")
	c := f.newConsumer(t, "g1", WithConsumeTimeout(time.Minute))
	entered := make(chan time.Time, 1)
	ended := make(chan error, 1)
	if err := c.SubscribeOrderly("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		dl, _ := ctx.Deadline()
		entered <- dl
		<-ctx.Done()
		ended <- ctx.Err()
		return OrderlySuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var dl time.Time
	select {
	case dl = <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("handler not called")
	}
	if left := time.Until(dl); left < 30*time.Second || left > time.Minute {
		t.Fatalf("deadline in %v, want about a minute", left)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler ctx ended with %v, want cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler ctx not cancelled")
	}
}

// A handler that ignores its cancelled ctx keeps its queue locked past
// Shutdown; the other queues are unlocked.
func TestOrderlyShutdownKeepsLockOfRunningCall(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 2)
	f.put("T", 0, 2, "a", "")
	f.put("T", 1, 2, "b", "")
	rec := newOrderlyRec(t)
	entered := make(chan struct{})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	c := f.newConsumer(t, "g1")
	if err := c.SubscribeOrderly("T", All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if msgs[0].QueueID == 0 && msgs[0].QueueOffset == 1 {
			close(entered)
			<-hold // ignores ctx
		}
		return rec.handler(ctx, msgs)
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-entered
	testutil.WaitFor(t, 10*time.Second, "queue 1 consumed", func() bool { return len(rec.deliveries(1)) == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want the deadline", err)
	}
	events := f.eventsSnapshot()
	if lastIndex(events, "unlock T/1") < 0 {
		t.Fatal("idle queue 1 not unlocked")
	}
	if lastIndex(events, "unlock T/0") >= 0 || f.lockHolder("g1", rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}) == "" {
		t.Fatal("queue 0 unlocked while its call still runs")
	}
}

// A queue dropped for a moved offset and taken again at once does not
// run a second handler call while the dropped one's call still runs.
func TestOrderlyNoOverlapAfterOffsetMoved(t *testing.T) {
	f := newFakeCluster(t)
	f.createTopic("T", 1)
	f.put("T", 0, 5, "a", "")
	q0 := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	rec := newOrderlyRec(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var first atomic.Bool
	rec.decide = func(msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		if string(msgs[0].Body) == "a-0" && first.CompareAndSwap(false, true) {
			close(entered)
			<-release // ignores ctx
		}
		return OrderlySuccess, nil
	}
	c := f.newConsumer(t, "g1")
	if err := c.SubscribeOrderly("T", All, rec.handler); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	<-entered
	r := c.runState()
	r.qmu.Lock()
	old := r.queues[q0]
	r.qmu.Unlock()
	// The pull waiting at offset 5 gets PULL_OFFSET_MOVED (next 2).
	f.mu.Lock()
	f.msgs[q0] = f.msgs[q0][:2]
	f.mu.Unlock()
	testutil.WaitFor(t, 10*time.Second, "queue taken again", func() bool {
		r.qmu.Lock()
		defer r.qmu.Unlock()
		q := r.queues[q0]
		return q != nil && q != old
	})
	f.put("T", 0, 3, "b", "")
	if testutil.Poll(500*time.Millisecond, func() bool { return len(rec.deliveries(0)) > 0 }) {
		close(release)
		t.Fatal("a second call ran while the dropped queue's call was in hand")
	}
	close(release)
	testutil.WaitFor(t, 10*time.Second, "consumed after the call in hand", func() bool {
		for _, d := range rec.deliveries(0) {
			if d.offset == 4 {
				return true
			}
		}
		return false
	})
}
