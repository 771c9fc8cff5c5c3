package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestConsumeFrom: a new group starts where ConsumeFrom says. Messages
// "before" are stored at least a second before the consume timestamp,
// "after" from that timestamp on.
//
// A broker answers a new group's offset query with 0 while the queue
// still starts at offset 0 and its first message is in memory (Java's
// ConsumerManageProcessor does; so does ours), and the group then reads
// from the beginning whatever ConsumeFrom says. ConsumeFrom matters for
// queues whose first message is gone or on disk, where the answer is
// QUERY_NOT_FOUND; the last and timestamp cases make the broker give that
// answer to their group. A timestamp before the queue's first message
// starts at its first offset.
func TestConsumeFrom(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	p := e.newProducer(t)
	before := send(t, p, topic, 8)
	at := time.Now().Truncate(time.Second).Add(2 * time.Second)
	testutil.WaitFor(t, 3*time.Second, "the consume timestamp", func() bool { return !time.Now().Before(at) })

	gLast, gStamp, gOld := group(t, "_last"), group(t, "_stamp"), group(t, "_old")
	lastRec := newRecorder()
	var probes []string
	if e.cluster != nil {
		// The broker answers these groups' offset queries on topic as for
		// a topic whose first message left memory long ago.
		err := e.cluster.Intercept(e.broker, remoting.QueryConsumerOffset, rmqtest.Fault{Respond: true, Code: remoting.QueryNotFound,
			Remark: "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first",
			Match: func(req *remoting.Command) bool {
				g, _ := req.Ext.Get("consumerGroup")
				tp, _ := req.Ext.Get("topic")
				return (g == gLast || g == gStamp || g == gOld) && tp == topic
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.cluster.ClearIntercept(e.broker, remoting.QueryConsumerOffset) })

		// The last-offset member must have its start offsets before the
		// "after" messages are sent: probes are sent until it has received
		// one on every queue.
		e.startConsumer(t, gLast, topic, consumer.All, lastRec.handler("last", nil), consumer.WithConsumeFrom(consumer.FromLast))
		queues := map[int32]bool{}
		testutil.WaitFor(t, wait, "a probe on each queue", func() bool {
			id := sendOne(t, p, topic, "probe")
			probes = append(probes, id)
			testutil.Poll(time.Second, func() bool { return len(lastRec.deliveries(id)) > 0 })
			for _, id := range probes {
				for _, d := range lastRec.deliveries(id) {
					queues[d.msg.QueueID] = true
				}
			}
			return len(queues) == 4
		})
	}
	after := send(t, p, topic, 8)
	all := slices.Concat(before, probes, after)
	total := int64(len(all))
	sinceStamp := slices.Concat(probes, after)
	noBoot := "a new group on a fresh topic starts at offset 0 whatever ConsumeFrom says"

	t.Run("first", func(t *testing.T) {
		g := group(t, "")
		rec := newRecorder()
		e.startConsumer(t, g, topic, consumer.All, rec.handler("first", nil), consumer.WithConsumeFrom(consumer.FromFirst))
		rec.waitAll(t, all, 1)
		e.waitConsumed(t, g, topic, total)
		expectOnly(t, rec, all, all)
	})
	t.Run("last", func(t *testing.T) {
		e.needFaults(t, noBoot)
		lastRec.waitAll(t, after, 1)
		e.waitConsumed(t, gLast, topic, total)
		// A probe sent before the member took its start offset is not
		// delivered; the later ones are.
		expectOnly(t, lastRec, slices.Concat(before, after), after)
		for _, id := range probes {
			if n := len(lastRec.deliveries(id)); n > 1 {
				t.Errorf("probe %s delivered %d times", id, n)
			}
		}
	})
	t.Run("timestamp", func(t *testing.T) {
		e.needFaults(t, noBoot)
		rec := newRecorder()
		e.startConsumer(t, gStamp, topic, consumer.All, rec.handler("timestamp", nil),
			consumer.WithConsumeFrom(consumer.FromTimestamp), consumer.WithConsumeTimestamp(at))
		rec.waitAll(t, sinceStamp, 1)
		e.waitConsumed(t, gStamp, topic, total)
		expectOnly(t, rec, all, sinceStamp)
	})
	t.Run("timestamp before the first message", func(t *testing.T) {
		e.needFaults(t, noBoot)
		rec := newRecorder()
		e.startConsumer(t, gOld, topic, consumer.All, rec.handler("old", nil),
			consumer.WithConsumeFrom(consumer.FromTimestamp), consumer.WithConsumeTimestamp(at.Add(-time.Hour)))
		rec.waitAll(t, all, 1)
		e.waitConsumed(t, gOld, topic, total)
		expectOnly(t, rec, all, all)
	})
}

// expectOnly checks that of all, exactly want were delivered, once each.
func expectOnly(t *testing.T, rec *recorder, all, want []string) {
	t.Helper()
	wanted := map[string]bool{}
	for _, id := range want {
		wanted[id] = true
	}
	for _, id := range all {
		n := len(rec.deliveries(id))
		switch {
		case wanted[id] && n != 1:
			t.Errorf("message %s delivered %d times, want once", id, n)
		case !wanted[id] && n != 0:
			t.Errorf("message %s delivered %d times, want never", id, n)
		}
	}
}
