//go:build !race

// The official client's orderly consumer races with itself (see
// orderly_test.go); mixed_orderly_race_test.go skips under -race.

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq"
	ourconsumer "github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// propKey carries a message's ordering key (its sharding key too).
const propKey = "e2e_key"

// orderlyWait bounds each phase of the mixed orderly test: a queue the
// official client gives up on a rebalance stays locked by it until the
// broker's lock expires (60 s; the client never unlocks it), and an
// official member that could not lock a queue tries again at its next
// rebalance (20 s).
const orderlyWait = 90 * time.Second

// orderlyCall is one handler call of an orderly consumer.
type orderlyCall struct {
	member     string
	official   bool
	queue      queueKey
	start, end time.Time
	msgs       []keySeq // this run's messages, in delivery order
}

type keySeq struct {
	key string
	seq int
}

// callLog records the handler calls of every member of a group.
type callLog struct {
	run   string
	mu    sync.Mutex
	calls []orderlyCall
	seen  map[keySeq]bool
}

func newCallLog(run string) *callLog { return &callLog{run: run, seen: make(map[keySeq]bool)} }

// add records a call; props gives a message's property.
func (l *callLog) add(c orderlyCall, n int, props func(i int, name string) string) {
	for i := 0; i < n; i++ {
		if props(i, propRun) != l.run {
			continue
		}
		seq, err := strconv.Atoi(props(i, propIdx))
		if err != nil {
			continue
		}
		c.msgs = append(c.msgs, keySeq{props(i, propKey), seq})
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	for _, m := range c.msgs {
		l.seen[m] = true
	}
	l.mu.Unlock()
}

// covered reports whether every message of keys with sequence numbers
// below n has been delivered at least once.
func (l *callLog) covered(keys []string, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if !l.seen[keySeq{k, i}] {
				return false
			}
		}
	}
	return true
}

func (l *callLog) missing(keys []string, n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	miss := 0
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if !l.seen[keySeq{k, i}] {
				miss++
			}
		}
	}
	return miss
}

func (l *callLog) snapshot() []orderlyCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// handlerWork stands for what a handler does with a message; long enough
// that a call is often in hand when its queue changes hands.
const handlerWork = time.Millisecond

// startOfficialOrderly starts an official orderly push consumer in group.
func (e *env) startOfficialOrderly(t *testing.T, group, topic, name string, l *callLog) *member {
	t.Helper()
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName(group),
		consumer.WithInstance(name),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumerOrder(true),
	)
	if err != nil {
		t.Fatalf("official orderly consumer: %v", err)
	}
	err = pc.Subscribe(topic, selectAll, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		c := orderlyCall{member: name, official: true, start: time.Now()}
		if len(msgs) > 0 && msgs[0].Queue != nil {
			c.queue = queueKey{msgs[0].Queue.BrokerName, msgs[0].Queue.QueueId}
		}
		time.Sleep(handlerWork)
		c.end = time.Now()
		l.add(c, len(msgs), func(i int, name string) string { return msgs[i].GetProperty(name) })
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatalf("official orderly consumer subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("official orderly consumer start: %v", err)
	}
	m := &member{name: name, shutdown: pc.Shutdown}
	m.assigned = func() map[primitive.MessageQueue]int64 {
		out := make(map[primitive.MessageQueue]int64)
		for mq, pq := range pc.GetConsumerRunningInfo(false).MQTable {
			if mq.Topic == topic && !pq.Dropped {
				out[mq] = pq.CommitOffset
			}
		}
		return out
	}
	t.Cleanup(func() { m.stop(t) })
	return m
}

// startOurOrderly starts our orderly push consumer in group.
func (e *env) startOurOrderly(t *testing.T, group, topic, name string, l *callLog) *member {
	t.Helper()
	c, err := ourconsumer.NewPush(
		ourconsumer.WithGroup(group),
		ourconsumer.WithNameServers(e.ns),
		ourconsumer.WithInstanceName(name),
		ourconsumer.WithConsumeFrom(ourconsumer.FromFirst),
	)
	if err != nil {
		t.Fatalf("our orderly consumer: %v", err)
	}
	err = c.SubscribeOrderly(topic, ourconsumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (ourconsumer.OrderlyResult, error) {
		call := orderlyCall{member: name, start: time.Now()}
		if len(msgs) > 0 {
			call.queue = queueKey{msgs[0].BrokerName, int(msgs[0].QueueID)}
		}
		time.Sleep(handlerWork)
		call.end = time.Now()
		l.add(call, len(msgs), func(i int, name string) string { return msgs[i].Property(name) })
		return ourconsumer.OrderlySuccess, nil
	})
	if err != nil {
		t.Fatalf("our orderly consumer subscribe: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("our orderly consumer start: %v", err)
	}
	m := &member{name: name, shutdown: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return c.Shutdown(ctx)
	}}
	m.assigned = func() map[primitive.MessageQueue]int64 {
		out := make(map[primitive.MessageQueue]int64)
		for _, mq := range c.Assigned() {
			if mq.Topic == topic {
				out[primitive.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueId: mq.QueueID}] = 0
			}
		}
		return out
	}
	t.Cleanup(func() { m.stop(t) })
	return m
}

// orderlySender sends rounds of one message per key with the hash
// selector, numbering each key's messages from 0.
type orderlySender struct {
	e     *env
	p     rmq.Producer
	topic string
	keys  []string
	next  int // sequence number of the next round
	queue map[string]int
}

// send sends rounds rounds, pausing between them so that the traffic
// lasts while members join and leave; it returns the first failure.
func (s *orderlySender) send(rounds int, pause time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for r := 0; r < rounds; r++ {
		for _, key := range s.keys {
			msg := primitive.NewMessage(s.topic, []byte(key+"/"+strconv.Itoa(s.next)))
			msg.WithShardingKey(key)
			msg.WithProperty(propRun, s.e.prefix)
			msg.WithProperty(propKey, key)
			msg.WithProperty(propIdx, strconv.Itoa(s.next))
			res, err := s.p.SendSync(ctx, msg)
			if err != nil {
				return fmt.Errorf("send %s/%d: %w", key, s.next, err)
			}
			if res.Status != primitive.SendOK {
				return fmt.Errorf("send %s/%d: status %v", key, s.next, res.Status)
			}
			if q, ok := s.queue[key]; ok && q != res.MessageQueue.QueueId {
				return fmt.Errorf("key %s went to queues %d and %d: the selector does not hash", key, q, res.MessageQueue.QueueId)
			}
			s.queue[key] = res.MessageQueue.QueueId
		}
		s.next++
		time.Sleep(pause) // pacing the traffic, not waiting for a condition
	}
	return nil
}

// TestMixedGroupOrderly runs our orderly push consumer and the official
// client's in one clustering group on one topic of 8 queues, with 16
// hash-selected keys, while members join and leave under traffic:
//
//	ours u1 alone → ours u2 joins → official o1 joins → u1 leaves →
//	o1 leaves (once everything sent is consumed) → u2 alone
//
// Every handler call is recorded (member, queue, start, end, messages).
// No queue may be in two members' handlers at once, nor in two calls of
// one of our members; each member sees each key's messages in order with
// no gap, starting again at most where the previous holder left off when
// a queue changes hands; and every message is consumed.
//
// The official member leaves only once it is idle: its Shutdown unlocks
// its queues before its handlers finish and persists its offsets after,
// so another member could lock a queue while the official one is still
// in a handler on it.
func TestMixedGroupOrderly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const (
		queues = 8
		keys   = 16
		rounds = 60 // per phase
		pause  = 5 * time.Millisecond
	)
	topic, _ := e.newTopic(t, queues)
	group := e.name("G")
	l := newCallLog(e.prefix)
	s := &orderlySender{
		e: e, topic: topic, queue: make(map[string]int),
		p: e.officialProducer(t, producer.WithQueueSelector(producer.NewHashQueueSelector())),
	}
	for k := 0; k < keys; k++ {
		s.keys = append(s.keys, fmt.Sprintf("key-%d", k))
	}

	// Instance names decide the members' order in the allocation: the
	// official member sorts before ours ("O" < "u"), so it only gains
	// queues when an ours member leaves. A queue it loses stays locked
	// by it until the broker's lock expires.
	var members []*member
	phase := func(name string, change func()) {
		t.Helper()
		start := time.Now()
		errc := make(chan error, 1)
		go func() { errc <- s.send(rounds, pause) }()
		if change != nil {
			change()
		}
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !testutil.Poll(orderlyWait, func() bool { return l.covered(s.keys, s.next) }) {
			t.Fatalf("%s: %d of %d messages never consumed; %s", name, l.missing(s.keys, s.next), keys*s.next, describeAssignment(members...))
		}
		t.Logf("%s: all %d messages consumed after %v; %s", name, keys*s.next, time.Since(start).Round(time.Millisecond), describeAssignment(members...))
	}

	u1 := e.startOurOrderly(t, group, topic, e.name("u"), l)
	members = append(members, u1)
	phase("u1 alone", nil)
	var u2, o1 *member
	phase("u2 joins", func() {
		u2 = e.startOurOrderly(t, group, topic, e.name("u"), l)
		members = append(members, u2)
	})
	phase("o1 joins", func() {
		o1 = e.startOfficialOrderly(t, group, topic, e.name("O"), l)
		members = append(members, o1)
	})
	phase("u1 leaves", func() {
		u1.stop(t)
		members = slices.DeleteFunc(members, func(m *member) bool { return m == u1 })
	})
	// Idle: everything sent so far is consumed.
	o1.stop(t)
	members = slices.DeleteFunc(members, func(m *member) bool { return m == o1 })
	phase("o1 left", nil)
	stopGroup(t, e, group, u2)

	calls := l.snapshot()
	checkOrderlyCalls(t, calls, s.keys, s.next, s.queue)
}

// checkOrderlyCalls checks recorded orderly handler calls: no queue in two
// members' handlers at once (nor in two calls of one of our members);
// per member and key, each message is the one after the member's
// previous one, except at a handover, where the new holder may start
// again at or before where the previous holder got to but never past it;
// every message 0..n-1 of every key delivered. It also wants the queues
// to have changed hands between ours and the official client in both
// directions, so that the checks saw handovers.
func checkOrderlyCalls(t *testing.T, calls []orderlyCall, keys []string, n int, queueOf map[string]int) {
	t.Helper()
	byQueue := make(map[queueKey][]orderlyCall)
	official := make(map[string]bool)
	for _, c := range calls {
		byQueue[c.queue] = append(byQueue[c.queue], c)
		official[c.member] = c.official
	}
	type memberKey struct {
		member, key string
	}
	var (
		overlaps, selfOverlaps, officialSelf int
		handovers                            = make(map[string]int) // "ours→official" etc.
		redelivered                          int
		seen                                 = make(map[keySeq]int)
	)
	side := func(m string) string {
		if official[m] {
			return "official"
		}
		return "ours"
	}
	for q, qc := range byQueue {
		slices.SortStableFunc(qc, func(a, b orderlyCall) int { return a.start.Compare(b.start) })
		maxEnd := make(map[string]time.Time) // member → latest end of its calls so far
		last := make(map[memberKey][2]int)   // member, key → stint and sequence number it saw last
		high := make(map[string]int)         // key → highest sequence number delivered so far
		prev := ""                           // member of the previous call on q
		stint := 0                           // calls of one member in a row on q
		handover := false                    // the stint began when q changed hands
		for _, c := range qc {
			for m, end := range maxEnd {
				if !end.After(c.start) {
					continue
				}
				switch {
				case m != c.member:
					overlaps++
					if overlaps <= 5 {
						t.Errorf("queue %s: %s's call at %s overlaps %s's call that ended at %s",
							q, c.member, c.start.Format("15:04:05.000000"), m, end.Format("15:04:05.000000"))
					}
				case !c.official:
					selfOverlaps++
					if selfOverlaps <= 5 {
						t.Errorf("queue %s: two calls of %s at once (one from %s, one until %s)",
							q, c.member, c.start.Format("15:04:05.000000"), end.Format("15:04:05.000000"))
					}
				default:
					officialSelf++
				}
			}
			if c.end.After(maxEnd[c.member]) {
				maxEnd[c.member] = c.end
			}
			if c.member != prev {
				stint++
				handover = prev != ""
				if handover {
					handovers[side(prev)+"→"+side(c.member)]++
				}
				prev = c.member
			}
			for _, m := range c.msgs {
				if qi, ok := queueOf[m.key]; ok && qi != q.id {
					t.Errorf("key %s (queue %d) delivered from queue %s", m.key, qi, q)
				}
				seen[m]++
				mk := memberKey{c.member, m.key}
				h, any := high[m.key]
				if !any {
					h = -1
				}
				l, had := last[mk]
				switch {
				case m.seq > h+1:
					t.Errorf("queue %s: %s got %s/%d after %d was the highest delivered: a gap", q, c.member, m.key, m.seq, h)
				case had && l[0] == stint && m.seq != l[1]+1:
					t.Errorf("queue %s: %s got %s/%d after %d: out of order", q, c.member, m.key, m.seq, l[1])
				case had && l[0] == stint:
				case handover:
					// A new holder starts at the committed offset, which may lie
					// before what the previous holder had consumed.
					if m.seq <= h {
						redelivered++
					}
				case m.seq != h+1:
					t.Errorf("queue %s: %s got %s/%d first, after %d was the highest delivered", q, c.member, m.key, m.seq, h)
				}
				last[mk] = [2]int{stint, m.seq}
				high[m.key] = max(h, m.seq)
			}
		}
	}
	missing := 0
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if seen[keySeq{k, i}] == 0 {
				missing++
				if missing <= 5 {
					t.Errorf("message %s/%d never delivered", k, i)
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d messages never delivered", missing)
	}
	if overlaps > 0 || selfOverlaps > 0 {
		t.Errorf("%d calls overlapped another member's on their queue, %d another call of the same member of ours", overlaps, selfOverlaps)
	}
	if handovers["ours→official"] == 0 || handovers["official→ours"] == 0 {
		t.Errorf("handovers %v: want queues changing hands both ways between ours and the official client", handovers)
	}
	var hs []string
	for k, v := range handovers {
		hs = append(hs, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(hs)
	t.Logf("%d calls; handovers: %s; %d redelivered at a handover; %d overlapping calls within the official member", len(calls), strings.Join(hs, ", "), redelivered, officialSelf)
}
