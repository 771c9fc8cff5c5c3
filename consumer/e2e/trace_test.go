package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/trace"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// traceReader collects the records of the trace topic by message id.
type traceReader struct {
	mu      sync.Mutex
	records map[string][]trace.Context
	keys    map[string][]string // trace message keys by message id recorded
}

func (r *traceReader) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		cs, err := trace.Decode(string(m.Body))
		if err != nil {
			return consumer.RetryLater, err
		}
		for _, c := range cs {
			id := c.Beans[0].MsgID
			r.records[id] = append(r.records[id], c)
			r.keys[id] = m.Keys()
		}
	}
	return consumer.Success, nil
}

func (r *traceReader) of(id string) ([]trace.Context, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records[id]), r.keys[id]
}

func countType(cs []trace.Context, typ trace.Type) int {
	n := 0
	for _, c := range cs {
		if c.Type == typ {
			n++
		}
	}
	return n
}

// TestTrace sends and consumes with tracing on, then reads the trace
// topic: each message has a Pub record from the producer and a SubBefore
// and SubAfter per delivery, with Java's fields; the first message's
// first delivery fails and is recorded so.
func TestTrace(t *testing.T) {
	if os.Getenv(envExternal) != "" && os.Getenv("ROCKETMQ_TRACE") != "1" {
		t.Skip("needs a broker with traceTopicEnable=true; set ROCKETMQ_TRACE=1 when the external cluster has it")
	}
	e := start(t, rmqtest.WithTraceTopic(""))
	topic := e.newTopic(t, 2)
	pg := fmt.Sprintf("pg_trace_%d", time.Now().UnixNano()%1e9)
	p, err := producer.New(producer.WithGroup(pg), producer.WithNameServers(e.ns), producer.WithTrace(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 3
	results := map[string]*rocketmq.SendResult{}
	var ids []string
	for i := range n {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprintf("body-%d", i)), producer.Tag("TagT"), producer.Keys(fmt.Sprintf("key-%d", i), "shared"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		results[res.MsgID] = res
		ids = append(ids, res.MsgID)
	}

	cg := group(t, "")
	var failedOnce sync.Once
	rec := newRecorder()
	c := e.startConsumer(t, cg, topic, consumer.All, rec.handler("m", func(_ context.Context, m *rocketmq.MessageExt, _ int) (consumer.Result, error) {
		res := consumer.Success
		if m.MsgID == ids[0] {
			failedOnce.Do(func() { res = consumer.RetryLater })
		}
		return res, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithTrace(""))
	rec.waitAll(t, ids, 1)
	rec.waitAll(t, ids[:1], 2)

	// Shutdown sends the records still queued.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if d := p.TraceDropped() + c.TraceDropped(); d != 0 {
		t.Errorf("%d trace records dropped", d)
	}

	r := &traceReader{records: map[string][]trace.Context{}, keys: map[string][]string{}}
	e.startConsumer(t, group(t, "_reader"), rocketmq.TopicTrace, consumer.All, r.handler, consumer.WithConsumeFrom(consumer.FromFirst))
	complete := func(id string) bool {
		cs, _ := r.of(id)
		want := 1
		if id == ids[0] {
			want = 2
		}
		return countType(cs, trace.Pub) == 1 && countType(cs, trace.SubBefore) == want && countType(cs, trace.SubAfter) == want
	}
	testutil.WaitFor(t, wait, "the trace records of every message", func() bool {
		return !slices.ContainsFunc(ids, func(id string) bool { return !complete(id) })
	})

	for i, id := range ids {
		cs, keys := r.of(id)
		if !slices.Contains(keys, id) {
			t.Errorf("%s: trace message keys %q lack the message id", id, keys)
		}
		before := map[string]trace.Context{}
		for _, c := range cs {
			b := c.Beans[0]
			switch c.Type {
			case trace.Pub:
				res := results[id]
				if c.Group != pg || b.Topic != topic || b.Tags != "TagT" || b.Keys != fmt.Sprintf("key-%d shared", i) ||
					!c.Success || b.OffsetMsgID != res.OffsetMsgID || b.BodyLength != len(fmt.Sprintf("body-%d", i)) ||
					b.MsgType != trace.NormalMsg || b.StoreHost == "" || c.RegionID != res.RegionID || c.CostTime < 0 {
					t.Errorf("%s: Pub %+v", id, c)
				}
				if !slices.Contains(keys, fmt.Sprintf("key-%d", i)) || !slices.Contains(keys, "shared") {
					t.Errorf("%s: trace message keys %q", id, keys)
				}
			case trace.SubBefore:
				if c.Group != cg || c.RequestID == "" || b.Keys != fmt.Sprintf("key-%d shared", i) || c.TimeStamp == 0 {
					t.Errorf("%s: SubBefore %+v", id, c)
				}
				before[c.RequestID] = c
			}
		}
		for _, c := range cs {
			if c.Type != trace.SubAfter {
				continue
			}
			sb, ok := before[c.RequestID]
			if !ok {
				t.Errorf("%s: SubAfter of request %s has no SubBefore", id, c.RequestID)
				continue
			}
			wantOK := !(i == 0 && sb.Beans[0].RetryTimes == 0)
			code := trace.ReturnSuccess
			if !wantOK {
				code = trace.ReturnFailed
			}
			if c.Group != cg || c.Success != wantOK || c.ContextCode != code || c.TimeStamp != sb.TimeStamp || c.CostTime < 0 {
				t.Errorf("%s: SubAfter %+v after SubBefore %+v", id, c, sb)
			}
		}
	}
}
