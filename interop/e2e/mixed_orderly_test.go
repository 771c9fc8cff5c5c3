package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq"
	ourconsumer "github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// orderlyWait bounds each phase of the mixed orderly test: a queue the
// official client gives up on a rebalance stays locked by it until the
// broker's lock expires (60 s; the client never unlocks it), and an
// official member that could not lock a queue tries again at its next
// rebalance (20 s).
const orderlyWait = 2 * time.Minute

// handlerWork stands for what a handler does with a message; long enough
// that a call is often in hand when its queue changes hands.
const handlerWork = time.Millisecond

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
		// Wall clock only, as the official member's times are.
		call := orderlyCall{member: name, start: time.Now().Round(0)}
		if len(msgs) > 0 {
			call.queue = queueKey{msgs[0].BrokerName, int(msgs[0].QueueID)}
		}
		time.Sleep(handlerWork)
		call.end = time.Now().Round(0)
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
//	ours u3 joins → o1 leaves (once everything sent is consumed)
//
// Every handler call is recorded (member, queue, start, end, messages).
// No queue may be in two members' handlers at once, nor in two calls of
// one of our members; each member sees each key's messages in order with
// no gap, starting again at most where the previous holder left off when
// a queue changes hands; and every message is consumed.
//
// The official member runs in a process of its own (see
// officialChildFlag), so that the test runs under -race too. It leaves
// only once it is idle: its Shutdown unlocks its queues before its
// handlers finish and persists its offsets after, so another member could
// lock a queue while the official one is still in a handler on it.
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
	// official member sorts before ours ("O" < "u"), so it gains queues
	// when it joins and when u1 leaves, and loses one only when u3 joins.
	// A queue it loses stays locked by it until the broker's lock expires
	// (it never unlocks a queue on a rebalance).
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
	// o1 gives up a queue to an ours member but keeps it locked: ours may
	// take it only once the broker's lock has expired.
	var u3 *member
	phase("u3 joins", func() {
		u3 = e.startOurOrderly(t, group, topic, e.name("u"), l)
		members = append(members, u3)
	})
	// Idle: everything sent so far is consumed.
	o1.stop(t)
	members = slices.DeleteFunc(members, func(m *member) bool { return m == o1 })
	phase("o1 left", nil)
	stopGroup(t, e, group, u2, u3)

	calls := l.snapshot()
	checkOrderlyCalls(t, calls, s.keys, s.next, s.queue)
}
