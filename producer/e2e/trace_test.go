package e2e

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/trace"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestE2ETraceTransaction: a traced transactional producer records its
// half messages (Pub, Trans_Msg_Half) and each decision (EndTransaction):
// a commit of ExecuteLocal, and for a transaction left unknown, that
// unknown and then the commit of the broker's check.
func TestE2ETraceTransaction(t *testing.T) {
	var e *txE2E
	if os.Getenv(envExternal) != "" {
		if os.Getenv("ROCKETMQ_TRACE") != "1" {
			t.Skip("needs a broker with traceTopicEnable=true; set ROCKETMQ_TRACE=1 when the external cluster has it")
		}
		e = startTx(t)
	} else {
		e = &txE2E{e2e: startE2EWith(t, 1, rmqtest.WithTransactionCheck(200*time.Millisecond, time.Second), rmqtest.WithTraceTopic("")),
			checkWait: 15 * time.Second}
	}
	topic := e.txTopic(t)
	group := txGroup(t, "")
	d := newDecisions(group)
	d.set("now", producer.LocalCommit, producer.LocalRollback)
	d.set("later", producer.LocalUnknown, producer.LocalCommit)
	p := e.newTx(t, group, d, producer.WithTrace(""))
	now := sendTx(t, p, topic, "now", producer.LocalCommit)
	later := sendTx(t, p, topic, "later", producer.LocalUnknown)
	testutil.WaitFor(t, e.checkWait, "the check of the unknown transaction", func() bool { return d.checks(later) > 0 })
	// The check's answer is recorded before it is sent; Shutdown sends
	// the records queued.
	e.waitVisible(t, topic, e.checkWait, now, later)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.TraceDropped(); n != 0 {
		t.Errorf("%d trace records dropped", n)
	}

	records := map[string][]trace.Context{}
	testutil.WaitFor(t, 30*time.Second, "the trace records", func() bool {
		clear(records)
		for _, m := range e.pullAll(t, rocketmq.TopicTrace) {
			cs, err := trace.Decode(string(m.Body))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				records[c.Beans[0].MsgID] = append(records[c.Beans[0].MsgID], c)
			}
		}
		return len(records[now]) >= 2 && len(records[later]) >= 3
	})
	type end struct {
		state string
		check bool
	}
	for id, want := range map[string][]end{
		now:   {{"COMMIT_MESSAGE", false}},
		later: {{"UNKNOW", false}, {"COMMIT_MESSAGE", true}},
	} {
		var ends []end
		pubs := 0
		for _, c := range records[id] {
			b := c.Beans[0]
			switch c.Type {
			case trace.Pub:
				pubs++
				if c.Group != group || b.Topic != topic || b.MsgType != trace.TransMsgHalf || !c.Success || b.Tags != "TagTx" {
					t.Errorf("%s: Pub %+v", id, c)
				}
			case trace.EndTransaction:
				ends = append(ends, end{b.TransactionState, b.FromTransactionCheck})
				if c.Group != group || b.Topic != topic || b.MsgType != trace.TransMsgCommit || b.TransactionID != id ||
					b.Tags != "TagTx" || b.StoreHost == "" || c.RegionID == "" {
					t.Errorf("%s: EndTransaction %+v", id, c)
				}
			default:
				t.Errorf("%s: unexpected %v record", id, c.Type)
			}
		}
		// Batches may arrive in any order on a trace topic of several
		// queues; a real broker may check an unknown transaction again.
		slices.SortStableFunc(ends, func(a, b end) int {
			if a.check == b.check {
				return 0
			}
			if !a.check {
				return -1
			}
			return 1
		})
		if pubs != 1 || len(ends) < len(want) || !slices.Equal(ends[:len(want)], want) {
			t.Errorf("%s: %d Pub records, decisions %v, want %v", id, pubs, ends, want)
		}
	}
}

// TestE2ETraceNeverFailsSends: with a trace topic that has no route (the
// brokers create no topics), sync, async, oneway and batch sends still
// succeed, Shutdown returns at once, and the lost records are counted.
func TestE2ETraceNeverFailsSends(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skip("needs brokers with autoCreateTopicEnable=false")
	}
	e := startE2EWith(t, 1, rmqtest.WithoutAutoCreateTopic())
	topic := "TraceLess"
	if err := rmqtest.CreateTopic(context.Background(), e.ns, topic, 2); err != nil {
		t.Fatal(err)
	}
	p, err := producer.New(producer.WithGroup("pg_trace_lost"), producer.WithNameServers(e.ns), producer.WithTrace("NO_SUCH_TRACE_TOPIC"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	msg := func() *rocketmq.Message {
		m, err := producer.NewMessage(topic, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ctx := context.Background()
	if _, err := p.Send(ctx, msg()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, msg(), msg()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if err := p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) { done <- err }, msg()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := p.SendOneway(ctx, msg()); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := p.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Shutdown took %v", el)
	}
	// Sync, batch and async sends each made one Pub record; a oneway send
	// has no answer to record, as in Java.
	if n := p.TraceDropped(); n != 3 {
		t.Errorf("%d trace records dropped, want 3", n)
	}
}
