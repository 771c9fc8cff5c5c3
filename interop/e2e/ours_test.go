package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

// ourMessage builds the message of s for our producer.
func (s *sent) ours(t *testing.T, topic string) *rocketmq.Message {
	t.Helper()
	opts := []producer.MessageOption{producer.Tag(s.tag), producer.Keys(s.keys...)}
	for k, v := range s.props {
		opts = append(opts, producer.Property(k, v))
	}
	m, err := producer.NewMessage(topic, s.body, opts...)
	if err != nil {
		t.Fatalf("msg %d: %v", s.idx, err)
	}
	return m
}

// recordOurs checks what our producer reported for msgs sent in one call
// (a batch when several) and stores it on their sent records.
func recordOurs(t *testing.T, masters map[string]string, batch []*sent, res *rocketmq.SendResult) {
	t.Helper()
	if res.Status != rocketmq.SendOK {
		t.Errorf("msg %d: status %v", batch[0].idx, res.Status)
	}
	ids := strings.Split(res.MsgID, ",")
	offIDs := strings.Split(res.OffsetMsgID, ",")
	if len(ids) != len(batch) || len(offIDs) != len(batch) {
		t.Fatalf("msg %d: %d messages, msgId %q, offsetMsgId %q", batch[0].idx, len(batch), res.MsgID, res.OffsetMsgID)
	}
	for i, s := range batch {
		if len(ids[i]) != 32 {
			t.Errorf("msg %d: msgId %q", s.idx, ids[i])
		}
		checkOffsetMsgID(t, masters, "our send", offIDs[i], res.Queue.BrokerName)
		s.msgID, s.offsetMsgID = ids[i], offIDs[i]
		s.queue = primitive.MessageQueue{Topic: res.Queue.Topic, BrokerName: res.Queue.BrokerName, QueueId: res.Queue.QueueID}
		s.queueOffset = res.QueueOffset + int64(i)
	}
}

// TestOursToOfficial sends with our producer (single messages, batches,
// bodies our producer compresses) to two brokers and consumes with the
// official push consumer: content, tags, keys, properties, msgIds, queues
// and offsets must be what our producer sent and reported.
func TestOursToOfficial(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	const queues = 4
	topic, masters := e.newTopic(t, queues)

	ctx := context.Background()
	p, err := producer.New(producer.WithGroup(e.name("PG")), producer.WithNameServers(e.ns), producer.WithInstanceName(e.name("ours")))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Shutdown(context.Background()); err != nil {
			t.Errorf("our producer shutdown: %v", err)
		}
	})
	pl := newPlan(e, topic)
	tags := []string{"TagA", "TagB"}

	for i := 0; i < 12; i++ {
		s := pl.add("ours-sync", tags[i%2], 50+17*i)
		res, err := p.Send(ctx, s.ours(t, topic))
		if err != nil {
			t.Fatalf("send %d: %v", s.idx, err)
		}
		recordOurs(t, masters, []*sent{s}, res)
	}
	for b := 0; b < 2; b++ {
		var batch []*sent
		var msgs []*rocketmq.Message
		for i := 0; i < 8; i++ {
			s := pl.add("ours-batch", tags[i%2], 80+9*i)
			batch = append(batch, s)
			msgs = append(msgs, s.ours(t, topic))
		}
		res, err := p.Send(ctx, msgs...)
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		recordOurs(t, masters, batch, res)
	}
	// Above our producer's compression threshold (4 KiB, zlib).
	for _, size := range []int{5 << 10, 1 << 20} {
		s := pl.add("ours-large", "TagA", size)
		res, err := p.Send(ctx, s.ours(t, topic))
		if err != nil {
			t.Fatalf("send %d bytes: %v", size, err)
		}
		recordOurs(t, masters, []*sent{s}, res)
	}

	var s sink
	m := e.startPush(t, e.name("G"), topic, consumer.Clustering, selectAll, &s)
	waitConsumed(t, &s, len(pl.msgs), pl.maxOffsets(), m)
	checkConsumed(t, masters, pl, s.snapshot(), func(*sent) bool { return true }, nil)
	m.stop(t)
}
