package console

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// deadLetters has a member of group fail every message of topic once
// with no retries allowed, so the n messages sent move to %DLQ%group.
func (e *env) deadLetters(t *testing.T, topic, group string, n int) []*rocketmq.SendResult {
	t.Helper()
	e.createTopic(t, topic, 1)
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(e.ns), consumer.WithMaxReconsumeTimes(0),
		consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.All, func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.RetryLater, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	res := e.send(t, topic, "pg_"+topic, n)
	ctx := ctxT(t)
	testutil.WaitFor(t, wait, "the messages in the dead-letter queue", func() bool {
		st, err := e.adm.TopicStats(ctx, rocketmq.DLQTopic(group))
		var total int64
		for _, o := range st {
			total += o.MaxOffset
		}
		return err == nil && total == int64(n)
	})
	if err := c.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDeadLetters: the group's dead letters are listed with the topic
// they came from, exported as CSV and JSON, and resent one at a time or
// all at once to the group, whose member receives them on their topic.
func TestDeadLetters(t *testing.T) {
	e := start(t)
	topic, group := name(t, "DT"), name(t, "dg")
	pr, err := newProducer(e, "console_"+topic)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Shutdown(ctxT(t))
	e.serve(t, Config{Admin: e.adm, Producer: pr})
	res := e.deadLetters(t, topic, group, 3)

	p := e.get(t, "/groups/"+group+"/dlq")
	if n, _ := byID(p.body, "span", "dlq-count"); p.status != http.StatusOK || n != "3" {
		t.Fatalf("dead letters page: %d, count %q, error %q", p.status, n, errorText(p.body))
	}
	for _, r := range res {
		if o, _ := cell(p.body, "data-msgid", r.MsgID, "origin"); o != topic {
			t.Errorf("dead letter %s from %q", r.MsgID, o)
		}
	}
	if p := e.get(t, "/groups/"+group+"/dlq?end=1000"); !strings.Contains(p.body, `<span id="dlq-count">0</span>`) {
		t.Error("a range before the messages lists some")
	}
	if p := e.get(t, "/groups/NoDeadLetters/dlq"); p.status != http.StatusOK || !strings.Contains(p.body, `<span id="dlq-count">0</span>`) {
		t.Errorf("group without dead letters: %d %q", p.status, errorText(p.body))
	}

	resp, err := e.cli.Get(e.http.URL + "/groups/" + group + "/dlq/export?format=csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || len(recs) != 4 || recs[0][0] != "msgId" || recs[0][11] != "body" {
		t.Fatalf("CSV %v, %v", recs, err)
	}
	found := 0
	for _, rec := range recs[1:] {
		if rec[0] == res[1].MsgID {
			found++
			if rec[2] != topic || rec[11] != `{"n":1}` || rec[4] != "key-1" {
				t.Errorf("CSV row %v", rec)
			}
		}
	}
	if found != 1 {
		t.Errorf("CSV has %d rows of %s", found, res[1].MsgID)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") {
		t.Errorf("CSV Content-Disposition %q", cd)
	}
	resp, err = e.cli.Get(e.http.URL + "/groups/" + group + "/dlq/export?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var js []struct {
		MsgID, OriginTopic, Body string
	}
	err = json.NewDecoder(resp.Body).Decode(&js)
	resp.Body.Close()
	if err != nil || len(js) != 3 {
		t.Fatalf("JSON %+v, %v", js, err)
	}
	found = 0
	for _, x := range js {
		if x.MsgID == res[2].MsgID {
			found++
			if x.Body != `{"n":2}` || x.OriginTopic != topic {
				t.Errorf("JSON record %+v", x)
			}
		}
	}
	if found != 1 {
		t.Errorf("JSON has %d records of %s", found, res[2].MsgID)
	}
	if p := e.get(t, "/groups/"+group+"/dlq/export?format=xml"); p.status != http.StatusBadRequest {
		t.Errorf("export as xml: %d", p.status)
	}

	// A member that succeeds receives what is resent, on the first topic.
	var mu sync.Mutex
	got := map[string]int{}
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(e.ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Subscribe(topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if m.Topic == topic {
				got[string(m.Body)]++
			}
		}
		return consumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })
	count := func(body string) int { mu.Lock(); defer mu.Unlock(); return got[body] }

	r := e.post(t, "/groups/"+group+"/dlq/resend", url.Values{"id": {res[1].MsgID}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "1 of 1 dead letters sent again") {
		t.Fatalf("resend one: %d %q", r.status, errorText(r.body))
	}
	if nid, _ := cell(r.body, "data-msgid", res[1].MsgID, "new-msgid"); nid == "" {
		t.Error("no id of the resent message")
	}
	testutil.WaitFor(t, wait, "the resent message consumed", func() bool { return count(`{"n":1}`) == 1 })
	r = e.post(t, "/groups/"+group+"/dlq/resend", url.Values{"all": {"true"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "3 of 3 dead letters sent again") {
		t.Fatalf("resend all: %d %q", r.status, errorText(r.body))
	}
	testutil.WaitFor(t, wait, "every resent message consumed", func() bool {
		return count(`{"n":0}`) == 1 && count(`{"n":1}`) == 2 && count(`{"n":2}`) == 1
	})
	if r := e.post(t, "/groups/"+group+"/dlq/resend", url.Values{}); r.status != http.StatusBadRequest {
		t.Errorf("resend of nothing: %d", r.status)
	}
}
