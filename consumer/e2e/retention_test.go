package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// retentionClock is the brokers' injected clock.
type retentionClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *retentionClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *retentionClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// physSent is a sent message with its commit-log offset.
type physSent struct {
	id   string
	mq   rocketmq.MessageQueue
	off  int64
	phys int64
}

func sendPhys(t *testing.T, p *producer.Producer, topic string, n int) []physSent {
	t.Helper()
	out := make([]physSent, 0, n)
	for i := range n {
		m, err := producer.NewMessage(topic, fmt.Appendf(nil, "retained-%d-%0100d", i, i))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		_, phys, err := rocketmq.DecodeOffsetMsgID(res.OffsetMsgID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, physSent{id: res.MsgID, mq: res.Queue, off: res.QueueOffset, phys: phys})
	}
	return out
}

// lastFileHoldsBoth reports whether the commit-log file of the last of
// sent holds at least two messages of each of two queues. A message never
// straddles two files.
func lastFileHoldsBoth(sent []physSent, segSize int64) bool {
	last := sent[len(sent)-1].phys / segSize
	perQueue := map[rocketmq.MessageQueue]int{}
	for _, s := range sent {
		if s.phys/segSize == last {
			perQueue[s.mq]++
		}
	}
	if len(perQueue) != 2 {
		return false
	}
	for _, n := range perQueue {
		if n < 2 {
			return false
		}
	}
	return true
}

// TestRetentionMovesConsumers: after retention deletes the head of the
// commit log, GET_MIN_OFFSET and the topic stats show each queue's new
// minimum, a pull below it answers PULL_OFFSET_MOVED with the minimum as
// next offset, and a group whose committed offsets fell below it goes on
// from the minimum without losing a retained message.
func TestRetentionMovesConsumers(t *testing.T) {
	const segSize = 16 << 10
	clock := &retentionClock{t: time.Date(2026, 3, 10, 1, 0, 0, 0, time.Local)}
	e := start(t, rmqtest.WithCommitLogSegmentSize(segSize), rmqtest.WithConsumeQueueEntries(32), rmqtest.WithIndexSize(64, 128),
		rmqtest.WithRetention(rmqtest.Retention{
			FileReservedTime: time.Hour,
			CleanInterval:    -1,
			Clock:            clock.now,
			DiskUsage:        func(string) (uint64, uint64, error) { return 30, 100, nil },
		}))
	e.needFaults(t, "injects the broker's clock and runs its retention pass")
	topic := e.newTopic(t, 2)
	p := e.newProducer(t)
	g := group(t, "")

	early := sendPhys(t, p, topic, 20)
	rec := newRecorder()
	c := e.startConsumer(t, g, topic, consumer.All, rec.handler("first", nil), consumer.WithConsumeFrom(consumer.FromFirst))
	e.waitConsumed(t, g, topic, 20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	all := append(early, sendPhys(t, p, topic, 400)...)
	// Retention keeps the newest commit-log file. Where the 420 messages
	// end in it depends on their sizes (topic and group names vary), so
	// send on until that file holds messages of both queues; otherwise
	// only one queue's minimum would move.
	for !lastFileHoldsBoth(all, segSize) {
		if len(all) > 1000 {
			t.Fatalf("setup: the newest commit-log file still holds one queue after %d messages", len(all))
		}
		all = append(all, sendPhys(t, p, topic, 1)...)
	}

	clock.set(time.Date(2026, 3, 10, 4, 0, 0, 0, time.Local))
	deleted, err := e.cluster.CleanStore(e.broker)
	if err != nil || deleted == 0 {
		t.Fatalf("CleanStore = %d, %v; want files deleted", deleted, err)
	}
	clMin := int64(deleted) * segSize
	wantMin := map[rocketmq.MessageQueue]int64{}
	var retained []string
	for _, s := range all {
		if s.phys < clMin {
			continue
		}
		retained = append(retained, s.id)
		if _, ok := wantMin[s.mq]; !ok {
			wantMin[s.mq] = s.off
		}
	}
	if len(wantMin) != 2 || len(retained) == len(all) {
		t.Fatalf("setup: %d of %d messages retained, minimums %v", len(retained), len(all), wantMin)
	}

	checkStats := func(when string) {
		t.Helper()
		a, err := admin.New(admin.WithNameServers(e.ns))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close(context.Background())
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		stats, err := a.TopicStats(context.Background(), topic)
		if err != nil {
			t.Fatal(err)
		}
		for mq, want := range wantMin {
			if got := stats[mq].MinOffset; got != want {
				t.Fatalf("%s: topic stats min offset of %v = %d, want %d", when, mq, got, want)
			}
			resp := e.adminCall(t, remoting.GetMinOffset, &remoting.GetMinOffsetRequestHeader{Topic: topic, QueueID: int32(mq.QueueID)})
			var h remoting.OffsetResponseHeader
			if err := h.FromExt(resp.Ext); err != nil || h.Offset != want {
				t.Fatalf("%s: GET_MIN_OFFSET of %v = %d, %v; want %d", when, mq, h.Offset, err, want)
			}
		}
	}
	checkStats("after the pass")

	pc := e.newPull(t, group(t, "_pull"))
	if err := pc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for mq, want := range wantMin {
		res, err := pc.Pull(context.Background(), mq, consumer.All, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != consumer.PullOffsetIllegal || res.NextOffset != want || res.MinOffset != want {
			t.Fatalf("pull %v at 0 = %v next %d min %d; want OFFSET_ILLEGAL next %d", mq, res.Status, res.NextOffset, res.MinOffset, want)
		}
		res, err = pc.Pull(context.Background(), mq, consumer.All, want, 1)
		if err != nil || res.Status != consumer.PullFound || res.Messages[0].QueueOffset != want {
			t.Fatalf("pull %v at its minimum %d = %+v, %v", mq, want, res, err)
		}
	}

	// The group committed offsets below the minimum: it goes on from there.
	rec2 := newRecorder()
	e.startConsumer(t, g, topic, consumer.All, rec2.handler("again", func(_ context.Context, m *rocketmq.MessageExt, _ int) (consumer.Result, error) {
		if want := wantMin[rocketmq.MessageQueue{Topic: m.Topic, BrokerName: m.BrokerName, QueueID: int(m.QueueID)}]; m.QueueOffset < want {
			t.Errorf("delivered %s/%d offset %d below the minimum %d", m.BrokerName, m.QueueID, m.QueueOffset, want)
		}
		return consumer.Success, nil
	}))
	rec2.waitAll(t, retained, 1)
	e.waitConsumed(t, g, topic, int64(len(all)))

	if err := e.cluster.StopBroker(context.Background(), e.broker); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.StartBroker(e.broker); err != nil {
		t.Fatal(err)
	}
	checkStats("after a restart")
}
