package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// TestOfficialProducer sends every kind of message the official producer
// has (sync, async, oneway, batch, a 5 KiB and a 1 MiB body, both
// compressed by the client) to two brokers, checks what each send
// reports, then reads every queue back with the official pull consumer
// and compares content, tags, keys, properties, ids and offsets.
func TestOfficialProducer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2)
	topic, masters := e.newTopic(t, 4)
	p := e.officialProducer(t)
	pl := newPlan(e, topic)
	ctx := context.Background()
	tags := []string{"TagA", "TagB"}

	t.Run("sync", func(t *testing.T) {
		for i := 0; i < 16; i++ {
			s := pl.add("sync", tags[i%2], 64+i*31)
			msg := s.official(topic)
			res, err := p.SendSync(ctx, msg)
			if err != nil {
				t.Fatalf("send %d: %v", s.idx, err)
			}
			recordResult(t, masters, s, msg, res)
		}
	})

	t.Run("async", func(t *testing.T) {
		type done struct {
			s   *sent
			msg *primitive.Message
			res *primitive.SendResult
			err error
		}
		const n = 16
		ch := make(chan done, n) // never blocks a callback, even after a failure here
		for i := 0; i < n; i++ {
			s := pl.add("async", tags[i%2], 200+i)
			msg := s.official(topic)
			err := p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
				ch <- done{s, msg, res, err}
			}, msg)
			if err != nil {
				t.Fatalf("send %d: %v", s.idx, err)
			}
		}
		timeout := time.After(30 * time.Second)
		for i := 0; i < n; i++ {
			select {
			case d := <-ch:
				if d.err != nil {
					t.Errorf("async send %d: %v", d.s.idx, d.err)
					continue
				}
				recordResult(t, masters, d.s, d.msg, d.res)
			case <-timeout:
				t.Fatalf("%d of %d async callbacks missing", n-i, n)
			}
		}
	})

	t.Run("oneway", func(t *testing.T) {
		for i := 0; i < 8; i++ {
			s := pl.add("oneway", tags[i%2], 300+i)
			msg := s.official(topic)
			if err := p.SendOneWay(ctx, msg); err != nil {
				t.Fatalf("oneway %d: %v", s.idx, err)
			}
			// The client wrote the id into the message; the broker's
			// answer (it answers, see interop/README.md) is dropped.
			s.msgID = msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex)
			if len(s.msgID) != 32 {
				t.Errorf("oneway %d: UNIQ_KEY %q", s.idx, s.msgID)
			}
		}
	})

	t.Run("batch", func(t *testing.T) {
		for b := 0; b < 3; b++ {
			var batch []*sent
			var msgs []*primitive.Message
			for i := 0; i < 8; i++ {
				s := pl.add("batch", tags[i%2], 100+50*i)
				batch = append(batch, s)
				msgs = append(msgs, s.official(topic))
			}
			res, err := p.SendSync(ctx, msgs...)
			if err != nil {
				t.Fatalf("batch %d: %v", b, err)
			}
			if res.Status != primitive.SendOK || res.MessageQueue == nil {
				t.Fatalf("batch %d: %v", b, res)
			}
			// The official client gives batch members no UNIQ_KEY and so
			// reports an empty MsgID; the broker answers one offsetMsgId
			// per member. (Our broker also stores a UNIQ_KEY with each
			// member, which 4.9.8 does not: checkDelivered accepts both.)
			ids := strings.Split(res.OffsetMsgID, ",")
			if len(ids) != len(batch) {
				t.Fatalf("batch %d: offsetMsgId %q has %d ids for %d messages", b, res.OffsetMsgID, len(ids), len(batch))
			}
			last := int64(-1)
			for i, s := range batch {
				off := checkOffsetMsgID(t, masters, "batch member", ids[i], res.MessageQueue.BrokerName)
				if off <= last {
					t.Errorf("batch %d: commit-log offsets not increasing: %v", b, ids)
				}
				last = off
				s.offsetMsgID = ids[i]
				s.queue, s.queueOffset = *res.MessageQueue, res.QueueOffset+int64(i)
			}
		}
	})

	t.Run("large", func(t *testing.T) {
		for _, size := range []int{5 << 10, 5 << 10, 5 << 10, 1 << 20, 1 << 20} {
			s := pl.add("large", tags[size%2], size)
			msg := s.official(topic)
			res, err := p.SendSync(ctx, msg)
			if err != nil {
				t.Fatalf("send %d bytes: %v", size, err)
			}
			// The premise: the client compressed it (threshold 4 KiB).
			if !msg.Compress {
				t.Errorf("%d-byte body was not compressed by the client", size)
			}
			recordResult(t, masters, s, msg, res)
		}
	})

	pc := e.officialPull(t, topic)
	mqs, err := pc.GetTopicRouteInfo(topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(mqs) != 4*len(masters) {
		t.Fatalf("pull consumer sees %d queues, want %d", len(mqs), 4*len(masters))
	}
	// A pull at the end of a queue is held by the broker for the client's
	// suspend time (20 s): the reads stop at the broker's max offset.
	maxOffsets := make(map[*primitive.MessageQueue]int64)
	for _, mq := range mqs {
		maxOffsets[mq] = e.maxOffset(t, masters[mq.BrokerName], topic, mq.QueueId)
	}

	t.Run("pull/all", func(t *testing.T) {
		seen := make(map[int]int)
		for _, mq := range mqs {
			var got []*primitive.MessageExt
			end := maxOffsets[mq]
			for off := int64(0); off < end; {
				res, err := pc.PullFrom(ctx, mq, off, 32)
				if err != nil {
					t.Fatalf("pull %s at %d: %v", mq, off, err)
				}
				msgs := res.GetMessageExts()
				if res.Status != primitive.PullFound || len(msgs) == 0 || res.NextBeginOffset != off+int64(len(msgs)) {
					t.Fatalf("pull %s at %d: status %v, %d messages, next offset %d", mq, off, res.Status, len(msgs), res.NextBeginOffset)
				}
				if res.MinOffset != 0 || res.MaxOffset != end {
					t.Errorf("pull %s at %d: min/max offset %d/%d, want 0/%d", mq, off, res.MinOffset, res.MaxOffset, end)
				}
				got = append(got, msgs...)
				off = res.NextBeginOffset
			}
			// Queue offsets are consecutive from 0: the topic is new.
			for i, m := range got {
				if m.QueueOffset != int64(i) {
					t.Errorf("%s: message %d has queue offset %d", mq, i, m.QueueOffset)
				}
				s, err := pl.find(m)
				if err != nil {
					t.Error(err)
					continue
				}
				seen[s.idx]++
				checkDelivered(t, masters, topic, s, m)
			}
		}
		for _, s := range pl.msgs {
			if seen[s.idx] != 1 {
				t.Errorf("msg %d (%s) read %d times", s.idx, s.kind, seen[s.idx])
			}
		}
	})

	t.Run("pull/from-offset", func(t *testing.T) {
		for _, mq := range mqs {
			end := maxOffsets[mq]
			if end < 3 {
				continue
			}
			res, err := pc.PullFrom(ctx, mq, end-2, 1)
			if err != nil {
				t.Fatal(err)
			}
			if msgs := res.GetMessageExts(); res.Status != primitive.PullFound || len(msgs) != 1 ||
				msgs[0].QueueOffset != end-2 || res.NextBeginOffset != end-1 {
				t.Errorf("%s: pull 1 at %d: status %v, %d messages, next %d", mq, end-2, res.Status, len(msgs), res.NextBeginOffset)
			}
			// Beyond the end the broker answers at once (no long poll).
			res, err = pc.PullFrom(ctx, mq, end+5, 4)
			if err != nil || res.Status != primitive.PullOffsetIllegal || res.NextBeginOffset != end {
				t.Errorf("%s: pull at %d beyond max offset %d: %+v, %v", mq, end+5, end, res, err)
			}
			return
		}
		t.Fatal("no queue holds 3 messages")
	})

	t.Run("pull/long-poll", func(t *testing.T) {
		// A pull at the end of a queue is held until a message arrives.
		mq := mqs[0]
		end := maxOffsets[mq]
		type result struct {
			res *primitive.PullResult
			err error
		}
		ch := make(chan result, 1)
		start := time.Now()
		go func() {
			res, err := pc.PullFrom(ctx, mq, end, 4)
			ch <- result{res, err}
		}()
		// Give the pull time to be parked; if the message wins the race
		// the pull finds it at once, which passes too.
		time.Sleep(300 * time.Millisecond)
		mp := e.officialProducer(t, producer.WithQueueSelector(producer.NewManualQueueSelector()))
		s := pl.add("long-poll", "TagA", 32)
		msg := s.official(topic)
		msg.Queue = mq
		res, err := mp.SendSync(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		recordResult(t, masters, s, msg, res)
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatal(r.err)
			}
			msgs := r.res.GetMessageExts()
			if r.res.Status != primitive.PullFound || len(msgs) != 1 {
				t.Fatalf("held pull: status %v, %d messages", r.res.Status, len(msgs))
			}
			checkDelivered(t, masters, topic, s, msgs[0])
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("held pull answered after %v: not woken by the message", d)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("held pull never answered")
		}
	})
}

// officialPull starts a pull consumer of the official client on topic,
// shut down when the test ends.
func (e *env) officialPull(t *testing.T, topic string) rmq.PullConsumer {
	t.Helper()
	pc, err := rmq.NewPullConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName(e.name("PULL")),
		consumer.WithInstance(e.name("c")),
	)
	if err != nil {
		t.Fatalf("official pull consumer: %v", err)
	}
	// Assigned no queues, the consumer runs no pulls of its own: in
	// subscribe mode its background pulls fill a channel that Shutdown
	// closes while they may still send to it (a data race, and a possible
	// panic, in the official client). PullFrom needs no assignment.
	if err := pc.Assign(topic, nil); err != nil {
		t.Fatalf("official pull consumer assign: %v", err)
	}
	startOfficial(t, "official pull consumer", pc)
	return pc
}
