package console

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/trace"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// steps returns the kind and status of each step row of the trace of id.
func steps(body, id string) []string {
	sec := regexp.MustCompile(`(?s)<section class="trace" data-msgid="` + id + `">(.*?)</section>`).FindStringSubmatch(body)
	if sec == nil {
		return nil
	}
	var out []string
	for _, m := range regexp.MustCompile(`<td class="kind">([^<]*)</td>.*?<td class="status">([^<]*)</td>`).FindAllStringSubmatch(sec[1], -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

// TestTrace: with tracing on in the producer and the consumer, a message
// found by id or by key shows its Pub and its consume as a timeline with
// cost and status; another trace topic has none of them.
func TestTrace(t *testing.T) {
	e := start(t, rmqtest.WithTraceTopic(""))
	topic, group := name(t, "TT"), name(t, "tg")
	e.createTopic(t, topic, 1)
	p, err := producer.New(producer.WithGroup("pg_"+topic), producer.WithNameServers(e.ns), producer.WithTrace(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	var ids []string
	for i := range 2 {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprint("traced ", i)), producer.Tag("TagT"), producer.Keys(fmt.Sprintf("tkey-%d-%s", i, topic)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(ctxT(t), m)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MsgID)
	}
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(e.ns), consumer.WithTrace(""), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	if err := c.Subscribe(topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		n.Add(int64(len(msgs)))
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())

	var pg page
	testutil.WaitFor(t, wait, "the pub and consume records of the first message", func() bool {
		pg = e.get(t, "/trace?by=id&id="+ids[0])
		s := steps(pg.body, ids[0])
		return len(s) == 2 && s[0] == "Pub:success" && s[1] == "Consume:success"
	})
	if pg.status != http.StatusOK {
		t.Fatalf("trace page %d", pg.status)
	}
	if g, _ := cell(pg.body, "data-kind", "Consume", "group"); g != group {
		t.Errorf("consume step of group %q", g)
	}
	if g, _ := cell(pg.body, "data-kind", "Pub", "group"); g != "pg_"+topic {
		t.Errorf("pub step of group %q", g)
	}
	if c, _ := cell(pg.body, "data-kind", "Pub", "cost"); c == "" || c == "-" {
		t.Errorf("pub cost %q", c)
	}
	if !strings.Contains(pg.body, `<g class="step" data-kind="Pub">`) || !strings.Contains(pg.body, `<g class="step" data-kind="Consume">`) {
		t.Error("no timeline of the steps")
	}
	if strings.Contains(pg.body, `data-msgid="`+ids[1]+`"`) {
		t.Error("trace by id shows another message")
	}
	testutil.WaitFor(t, wait, "the second message's trace by key", func() bool {
		pg = e.get(t, "/trace?by=key&key=tkey-1-"+topic)
		return len(steps(pg.body, ids[1])) == 2
	})
	if strings.Contains(pg.body, `data-msgid="`+ids[0]+`"`) {
		t.Error("trace by key shows a message without the key")
	}
	e.createTopic(t, "OtherTrace_"+topic, 1)
	if pg := e.get(t, "/trace?by=id&traceTopic=OtherTrace_"+topic+"&id="+ids[0]); !strings.Contains(pg.body, `<span id="traced">0</span>`) {
		t.Errorf("another trace topic: %s", errorText(pg.body))
	}
	if pg := e.get(t, "/trace?by=id&id="); pg.status != http.StatusBadRequest {
		t.Errorf("trace of no id: %d", pg.status)
	}
}

// TestBuildTraces: records of one message from several trace messages
// become one timeline in time order; a SubBefore pairs with its SubAfter
// by request id, and a failure and an end of transaction show their
// status.
func TestBuildTraces(t *testing.T) {
	const id = "0A0000010000000000000000000000AA"
	bean := trace.Bean{Topic: "T", MsgID: id, Keys: "k1", StoreHost: "10.0.0.1:10911", RetryTimes: 1}
	enc := func(cs ...trace.Context) *rocketmq.MessageExt {
		var b []byte
		for i := range cs {
			b, _ = trace.Encode(b, &cs[i], nil)
		}
		return &rocketmq.MessageExt{Message: rocketmq.Message{Body: b}}
	}
	t0 := time.Date(2026, 12, 7, 14, 30, 0, 0, time.Local).UnixMilli()
	msgs := []*rocketmq.MessageExt{
		enc(trace.Context{Type: trace.SubAfter, RequestID: "r1", Group: "cg", CostTime: 7, Success: false, ContextCode: trace.ReturnFailed, TimeStamp: t0 + 30, Beans: []trace.Bean{bean}}),
		enc(trace.Context{Type: trace.Pub, TimeStamp: t0, Group: "pg", CostTime: 3, Success: true, Beans: []trace.Bean{bean}},
			trace.Context{Type: trace.SubBefore, TimeStamp: t0 + 20, Group: "cg", RequestID: "r1", Beans: []trace.Bean{bean}}),
		enc(trace.Context{Type: trace.EndTransaction, TimeStamp: t0 + 10, Group: "pg", Beans: []trace.Bean{{MsgID: id, TransactionState: "COMMIT_MESSAGE", TransactionID: "tx1"}}}),
		enc(trace.Context{Type: trace.Pub, TimeStamp: t0, Group: "pg", CostTime: 3, Success: true, Beans: []trace.Bean{{MsgID: "other"}}}),
	}
	out := buildTraces(msgs, func(b trace.Bean) bool { return b.MsgID == id })
	if len(out) != 1 || out[0].MsgID != id || out[0].Topic != "T" {
		t.Fatalf("traces %+v", out)
	}
	var got []string
	for _, s := range out[0].Steps {
		got = append(got, fmt.Sprintf("%s %s %d %v %s", s.Kind, s.Group, s.At-t0, s.HasCost, s.Status))
	}
	want := []string{"Pub pg 0 true success", "EndTransaction pg 10 false COMMIT_MESSAGE", "Consume cg 20 true failed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out[0].Steps[2].Retry != 1 || out[0].Steps[2].Cost != 7 {
		t.Errorf("consume step %+v", out[0].Steps[2])
	}
	if !strings.Contains(string(out[0].Chart), `data-kind="EndTransaction"`) {
		t.Error("timeline without the end of transaction")
	}
}
