package consumer

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// BenchmarkConsumePath measures the client's own work per message, from a
// pull response body to the acknowledged offset, without the network:
// decode, filter, process queue, work queue, handler call, statistics.
func BenchmarkConsumePath(b *testing.B) {
	const topic, batch = "BenchTopic", 32
	c, err := NewPush(WithGroup("bench"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	if err := c.Subscribe(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		n += len(msgs)
		return Success, nil
	}); err != nil {
		b.Fatal(err)
	}
	r := &runState{c: c, cfg: &c.cfg, log: slog.New(slog.DiscardHandler), stats: newStatsTable(), work: newWorkQueue(), store: newLocalStore(b.TempDir() + "/o.json")}
	r.handlerCtx, r.handlerCancel = context.WithCancel(context.Background())
	defer r.handlerCancel()
	mq := rocketmq.MessageQueue{Topic: topic, BrokerName: "broker-a"}
	q := &queueState{mq: mq, pq: newProcessQueue(), cell: r.store.cell(mq)}
	q.ctx, q.cancel = context.WithCancel(r.handlerCtx)
	s := c.subscription(topic)

	body := make([]byte, 1024)
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var raw []byte
	for i := 0; i < batch; i++ {
		m := &rocketmq.MessageExt{
			Message:     rocketmq.Message{Topic: topic, Body: body, Properties: map[string]string{rocketmq.PropertyUniqKey: "7F0000010001000000000000000" + string(rune('A'+i)), rocketmq.PropertyWaitStoreMsgOK: "true"}},
			QueueOffset: int64(i), CommitLogOffset: int64(i) * 1200, BornHost: host, StoreHost: host,
		}
		raw, err = message.AppendMessageExt(raw, m)
		if err != nil {
			b.Fatal(err)
		}
	}
	var st msStamp
	var buf [workerTake]*consumeReq
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		msgs, err := message.DecodeRecords(raw)
		if err != nil {
			b.Fatal(err)
		}
		for j, m := range msgs {
			m.QueueOffset = int64(i*batch + j)
		}
		msgs = r.prepare(q, s, msgs, 0, int64((i+1)*batch))
		seq, _ := q.pq.add(msgs, int64(len(raw)))
		r.dispatch(q, msgs, seq)
		for k := 0; k < batch; k++ {
			reqs, _ := r.work.pop(buf[:0], batch)
			r.consume(reqs[0], &st)
		}
	}
	b.StopTimer()
	if n != b.N*batch {
		b.Fatalf("handled %d, want %d", n, b.N*batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/msg")
}

// BenchmarkConsumePathOrderly is BenchmarkConsumePath for an orderly
// consumer holding its queue's lock: the queue's task takes the batches.
func BenchmarkConsumePathOrderly(b *testing.B) {
	const topic, batch = "BenchTopic", 32
	c, err := NewPush(WithGroup("bench"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	if err := c.SubscribeOrderly(topic, All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error) {
		n += len(msgs)
		return OrderlySuccess, nil
	}); err != nil {
		b.Fatal(err)
	}
	r := &runState{c: c, cfg: &c.cfg, log: slog.New(slog.DiscardHandler), stats: newStatsTable(), work: newWorkQueue(), store: newLocalStore(b.TempDir() + "/o.json")}
	r.handlerCtx, r.handlerCancel = context.WithCancel(context.Background())
	defer r.handlerCancel()
	mq := rocketmq.MessageQueue{Topic: topic, BrokerName: "broker-a"}
	q := &queueState{mq: mq, pq: newProcessQueue(), cell: r.store.cell(mq), orderly: true, lockNeeded: true}
	q.task.q = q
	q.consumeMu = new(sync.Mutex)
	q.locked.Store(true)
	q.ctx, q.cancel = context.WithCancel(r.handlerCtx)
	s := c.subscription(topic)

	body := make([]byte, 1024)
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var raw []byte
	for i := 0; i < batch; i++ {
		m := &rocketmq.MessageExt{
			Message:     rocketmq.Message{Topic: topic, Body: body, Properties: map[string]string{rocketmq.PropertyUniqKey: "7F0000010001000000000000000" + string(rune('A'+i)), rocketmq.PropertyWaitStoreMsgOK: "true"}},
			QueueOffset: int64(i), CommitLogOffset: int64(i) * 1200, BornHost: host, StoreHost: host,
		}
		raw, err = message.AppendMessageExt(raw, m)
		if err != nil {
			b.Fatal(err)
		}
	}
	var st msStamp
	var buf [workerTake]*consumeReq
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.lastLock.Store(time.Now().UnixMilli())
		msgs, err := message.DecodeRecords(raw)
		if err != nil {
			b.Fatal(err)
		}
		for j, m := range msgs {
			m.QueueOffset = int64(i*batch + j)
		}
		msgs = r.prepare(q, s, msgs, 0, int64((i+1)*batch))
		q.pq.add(msgs, int64(len(raw)))
		r.scheduleOrderly(q)
		reqs, _ := r.work.pop(buf[:0], 1)
		r.consumeOrderly(reqs[0].q, &st)
	}
	b.StopTimer()
	if n != b.N*batch {
		b.Fatalf("handled %d, want %d", n, b.N*batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/msg")
}
