package e2e

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/go-rocketmq/rocketmq"
	ourconsumer "github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// asOfficial converts a message our consumer delivered into the official
// client's type, so that checkDelivered compares both clients' deliveries
// the same way.
func asOfficial(m *rocketmq.MessageExt) *primitive.MessageExt {
	out := &primitive.MessageExt{
		Message: primitive.Message{
			Topic: m.Topic,
			Body:  m.Body,
			Flag:  m.Flag,
			Queue: &primitive.MessageQueue{Topic: m.Topic, BrokerName: m.BrokerName, QueueId: int(m.QueueID)},
		},
		MsgId:                     m.MsgID,
		OffsetMsgId:               m.OffsetMsgID,
		StoreSize:                 m.StoreSize,
		QueueOffset:               m.QueueOffset,
		SysFlag:                   m.SysFlag,
		BornTimestamp:             m.BornTimestamp,
		BornHost:                  m.BornHost.String(),
		StoreTimestamp:            m.StoreTimestamp,
		StoreHost:                 m.StoreHost.String(),
		CommitLogOffset:           m.CommitLogOffset,
		BodyCRC:                   m.BodyCRC,
		ReconsumeTimes:            m.ReconsumeTimes,
		PreparedTransactionOffset: m.PreparedTransactionOffset,
	}
	out.WithProperties(maps.Clone(m.Properties))
	return out
}

// startOurPush starts our push consumer in group, clustering, from the
// first offset, delivering into s. Its assigned offsets are what the
// broker holds for the group: our consumer persists them every second
// here and piggy-backs them on pulls.
func (e *env) startOurPush(t *testing.T, group, topic string, s *sink) *member {
	t.Helper()
	name := e.name("ours")
	c, err := ourconsumer.NewPush(
		ourconsumer.WithGroup(group),
		ourconsumer.WithNameServers(e.ns),
		ourconsumer.WithInstanceName(name),
		ourconsumer.WithConsumeFrom(ourconsumer.FromFirst),
		ourconsumer.WithOffsetPersistInterval(time.Second),
	)
	if err != nil {
		t.Fatalf("our consumer: %v", err)
	}
	err = c.Subscribe(topic, ourconsumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (ourconsumer.Result, error) {
		s.mu.Lock()
		for _, m := range msgs {
			s.got = append(s.got, delivery{member: name, msg: asOfficial(m)})
		}
		s.mu.Unlock()
		return ourconsumer.Success, nil
	})
	if err != nil {
		t.Fatalf("our consumer subscribe: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("our consumer start: %v", err)
	}
	masters := e.masters(t)
	m := &member{name: name, shutdown: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return c.Shutdown(ctx)
	}}
	m.assigned = func() map[primitive.MessageQueue]int64 {
		out := make(map[primitive.MessageQueue]int64)
		for _, mq := range c.Assigned() {
			if mq.Topic != topic {
				continue
			}
			off, _ := e.committedOffset(t, masters[mq.BrokerName], group, topic, mq.QueueID)
			out[primitive.MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueId: mq.QueueID}] = off
		}
		return out
	}
	t.Cleanup(func() { m.stop(t) })
	return m
}

// TestMixedGroup runs our push consumer and the official client's as the
// two members of one clustering group. They must split the queues
// without overlap, and in steady state every message is consumed exactly
// once between them, by the member that holds its queue.
func TestMixedGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const queues = 8
	topic, masters := e.newTopic(t, queues)
	total := queues * len(masters)
	group := e.name("G")
	var s sink
	theirs := e.startPush(t, group, topic, consumer.Clustering, selectAll, &s)
	ours := e.startOurPush(t, group, topic, &s)
	members := []*member{theirs, ours}
	start := time.Now()
	if !testutil.Poll(assignTimeout, func() bool { return ownsAll(total, members...) }) {
		t.Fatalf("queues never split between the members: %s", describeAssignment(members...))
	}
	t.Logf("rebalanced in %v: %s", time.Since(start).Round(time.Millisecond), describeAssignment(members...))
	owner := make(map[queueKey]string)
	for _, m := range members {
		for mq := range m.assigned() {
			owner[queueKey{mq.BrokerName, mq.QueueId}] = m.name
		}
	}

	p := e.officialProducer(t)
	pl := newPlan(e, topic)
	sendOfficial(t, p, pl, masters, "sync", []string{"TagA", "TagB"}, 64)
	waitConsumed(t, &s, len(pl.msgs), pl.maxOffsets(), members...)

	got := s.snapshot()
	checkConsumed(t, masters, pl, got, func(*sent) bool { return true }, nil)
	per := make(map[string]int)
	for _, d := range got {
		per[d.member]++
		k := queueKey{d.msg.Queue.BrokerName, d.msg.Queue.QueueId}
		if owner[k] != d.member {
			t.Errorf("msg from %s delivered to %s, which does not hold the queue (%s does)", k, d.member, owner[k])
		}
	}
	if per[theirs.name] == 0 || per[ours.name] == 0 {
		t.Errorf("deliveries per member %v: one member got nothing", per)
	}
	// Steady state: nobody took over a queue while the messages flowed.
	for _, m := range members {
		for mq := range m.assigned() {
			if k := (queueKey{mq.BrokerName, mq.QueueId}); owner[k] != m.name {
				t.Errorf("%s now holds %s, which %s held", m.name, k, owner[k])
			}
		}
	}
	t.Logf("deliveries per member: %v", per)
	stopGroup(t, e, group, ours, theirs)
}
