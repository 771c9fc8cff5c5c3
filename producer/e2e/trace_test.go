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
