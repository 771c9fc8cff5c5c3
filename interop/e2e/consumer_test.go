package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

var (
	selectAll  = consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}
	selectAorB = consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA || TagB"}
)

// sendOfficial sends n messages of kind with the given tags in turn,
// one SendSync each, and records the results.
func sendOfficial(t *testing.T, p rmq.Producer, pl *plan, masters map[string]string, kind string, tags []string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		s := pl.add(kind, tags[i%len(tags)], 100+13*i)
		msg := s.official(pl.topic)
		res, err := p.SendSync(context.Background(), msg)
		if err != nil {
			t.Fatalf("send %d: %v", s.idx, err)
		}
		recordResult(t, masters, s, msg, res)
	}
}

// ownsAll reports whether members hold, between them, every one of total
// queues exactly once, each member at least one.
func ownsAll(total int, members ...*member) bool {
	seen := make(map[queueKey]bool)
	for _, m := range members {
		qs := m.assigned()
		if len(qs) == 0 {
			return false
		}
		for mq := range qs {
			k := queueKey{mq.BrokerName, mq.QueueId}
			if seen[k] {
				return false
			}
			seen[k] = true
		}
	}
	return len(seen) == total
}

// stopGroup shuts the members of one clustering group down one at a time.
// The official client answers a member leaving (the broker notifies the
// rest) with a rebalance that races, in its own code, with a Shutdown of
// the rebalancing member (a data race in rmqClient.Shutdown against
// InvokeSync); so the broker is told first not to notify the group, and
// the members leave without reacting to each other.
func stopGroup(t *testing.T, e *env, group string, members ...*member) {
	t.Helper()
	e.quietGroup(t, group)
	for _, m := range members {
		start := time.Now()
		m.stop(t)
		t.Logf("stop %s: %v", m.name, time.Since(start))
	}
}

// checkConsumed checks that the deliveries are exactly the messages of pl
// that pass want, each delivered once (per member when perMember), with
// content and ids as sent.
func checkConsumed(t *testing.T, masters map[string]string, pl *plan, got []delivery, want func(*sent) bool, perMember []*member) {
	t.Helper()
	type key struct {
		member string
		idx    int
	}
	count := make(map[key]int)
	for _, d := range got {
		s, err := pl.find(d.msg)
		if err != nil {
			t.Error(err)
			continue
		}
		if !want(s) {
			t.Errorf("msg %d (%s, tag %s) delivered to %s, not expected", s.idx, s.kind, s.tag, d.member)
			continue
		}
		k := key{idx: s.idx}
		if perMember != nil {
			k.member = d.member
		}
		count[k]++
		checkDelivered(t, masters, pl.topic, s, d.msg)
	}
	names := []string{""}
	if perMember != nil {
		names = names[:0]
		for _, m := range perMember {
			names = append(names, m.name)
		}
	}
	for _, s := range pl.msgs {
		if !want(s) {
			continue
		}
		for _, name := range names {
			if n := count[key{name, s.idx}]; n != 1 {
				t.Errorf("msg %d (%s, tag %s) delivered %d times%s", s.idx, s.kind, s.tag, n, map[bool]string{true: " to " + name}[name != ""])
			}
		}
	}
}

// waitConsumed waits until s holds at least n deliveries and the members
// have committed up to want (the consumer commits after the callback, so
// every delivery due has happened, and none is still in flight).
func waitConsumed(t *testing.T, s *sink, n int, want map[queueKey]int64, members ...*member) {
	t.Helper()
	if !testutil.Poll(consumeTimeout, func() bool { return s.len() >= n && committedAll(want, members...) }) {
		t.Fatalf("%d of %d messages delivered; committed: %s want %v", s.len(), n, describeAssignment(members...), want)
	}
}

// TestOfficialPushClustering runs two members of one clustering group of
// the official push consumer with a tag expression: they must split the
// queues between them and together consume every TagA and TagB message
// exactly once, and no TagC message.
func TestOfficialPushClustering(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const queues = 8
	topic, masters := e.newTopic(t, queues)
	total := queues * len(masters)
	group := e.name("G")
	var s sink
	m1 := e.startPush(t, group, topic, consumer.Clustering, selectAorB, &s)
	m2 := e.startPush(t, group, topic, consumer.Clustering, selectAorB, &s)
	start := time.Now()
	if !testutil.Poll(assignTimeout, func() bool { return ownsAll(total, m1, m2) }) {
		t.Fatalf("queues never split between the members: %s", describeAssignment(m1, m2))
	}
	t.Logf("rebalanced in %v: %s", time.Since(start).Round(time.Millisecond), describeAssignment(m1, m2))

	p := e.officialProducer(t)
	pl := newPlan(e, topic)
	sendOfficial(t, p, pl, masters, "sync", []string{"TagA", "TagB", "TagC"}, 48)
	wantAorB := func(s *sent) bool { return s.tag != "TagC" }
	waitConsumed(t, &s, 32, pl.maxOffsets(), m1, m2)

	got := s.snapshot()
	checkConsumed(t, masters, pl, got, wantAorB, nil)
	per := make(map[string]int)
	for _, d := range got {
		per[d.member]++
	}
	if per[m1.name] == 0 || per[m2.name] == 0 {
		t.Errorf("deliveries per member %v: one member got nothing", per)
	}
	stopGroup(t, e, group, m2, m1)
}

// TestOfficialPushBroadcasting runs two broadcasting consumers of the
// official client in one group: each must get every message once.
func TestOfficialPushBroadcasting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const queues = 4
	topic, masters := e.newTopic(t, queues)
	total := queues * len(masters)
	group := e.name("G")
	var s sink
	m1 := e.startPush(t, group, topic, consumer.BroadCasting, selectAll, &s)
	m2 := e.startPush(t, group, topic, consumer.BroadCasting, selectAll, &s)
	if !testutil.Poll(assignTimeout, func() bool { return ownsAll(total, m1) && ownsAll(total, m2) }) {
		t.Fatalf("broadcasting members do not hold every queue: %s", describeAssignment(m1, m2))
	}

	p := e.officialProducer(t)
	pl := newPlan(e, topic)
	sendOfficial(t, p, pl, masters, "sync", []string{"TagA", "TagB"}, 24)
	want := pl.maxOffsets()
	if !testutil.Poll(consumeTimeout, func() bool {
		return s.len() >= 2*len(pl.msgs) && committedAll(want, m1) && committedAll(want, m2)
	}) {
		t.Fatalf("%d of %d deliveries; committed: %s want %v", s.len(), 2*len(pl.msgs), describeAssignment(m1, m2), want)
	}
	checkConsumed(t, masters, pl, s.snapshot(), func(*sent) bool { return true }, []*member{m1, m2})
	m1.stop(t)
	m2.stop(t)
}

// TestOfficialConsumerOffsets checks that the official push consumer's
// offsets reach our broker and are honoured by the next member of the
// group: first through the client's periodic persistence (10 s after
// start, then every 5 s), then through the final persist of Shutdown.
// Every new member must get exactly what was sent since the last one
// stopped: no redelivery, nothing skipped.
func TestOfficialConsumerOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const queues = 4
	topic, masters := e.newTopic(t, queues)
	group := e.name("G")
	p := e.officialProducer(t)
	pl := newPlan(e, topic)
	tags := []string{"TagA", "TagB"}

	// brokerHas waits until the broker holds want as the group's offsets.
	brokerHas := func(t *testing.T, want map[queueKey]int64, timeout time.Duration) bool {
		t.Helper()
		var last string
		if testutil.Poll(timeout, func() bool {
			for q, w := range want {
				off, ok := e.committedOffset(t, masters[q.broker], group, topic, q.id)
				if !ok || off != w {
					last = fmt.Sprintf("%s: committed %d (found %v), want %d", q, off, ok, w)
					return false
				}
			}
			return true
		}) {
			return true
		}
		t.Errorf("broker offsets of %s never reached %v: %s", group, want, last)
		return false
	}
	// consumeNew starts a member, expects exactly the messages from index
	// from on, and returns it still running.
	consumeNew := func(t *testing.T, from int) *member {
		t.Helper()
		var s sink
		m := e.startPush(t, group, topic, consumer.Clustering, selectAll, &s)
		waitConsumed(t, &s, len(pl.msgs)-from, pl.maxOffsets(), m)
		checkConsumed(t, masters, pl, s.snapshot(), func(s *sent) bool { return s.idx >= from }, nil)
		return m
	}

	t.Run("periodic", func(t *testing.T) {
		sendOfficial(t, p, pl, masters, "first", tags, 20)
		m := consumeNew(t, 0)
		// Offsets go to the broker while the consumer runs.
		brokerHas(t, pl.maxOffsets(), 20*time.Second)
		m.stop(t)
	})
	if t.Failed() {
		return
	}

	t.Run("shutdown", func(t *testing.T) {
		from := len(pl.msgs)
		sendOfficial(t, p, pl, masters, "second", tags, 12)
		m := consumeNew(t, from)
		// Stopped well before its first periodic persist: what reaches
		// the broker is what Shutdown sends.
		m.stop(t)
		brokerHas(t, pl.maxOffsets(), 10*time.Second)
	})
	if t.Failed() {
		return
	}

	t.Run("resume", func(t *testing.T) {
		from := len(pl.msgs)
		sendOfficial(t, p, pl, masters, "third", tags, 8)
		consumeNew(t, from).stop(t)
	})
}
