package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestRetryOnce: a handler that fails on a message's first delivery (by
// asking for a retry, or by returning an error, whatever result goes with
// it) gets it again with ReconsumeTimes 1, under its original topic and
// id, carrying what Java's send-back puts on it: RETRY_TOPIC (the original
// topic) and ORIGIN_MESSAGE_ID (the broker's id of the first delivery).
func TestRetryOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func() (consumer.Result, error)
	}{
		{"retry later", func() (consumer.Result, error) { return consumer.RetryLater, nil }},
		{"error", func() (consumer.Result, error) { return consumer.Success, errors.New("not now") }},
	} {
		t.Run(tc.name, func(t *testing.T) { testRetryOnce(t, tc.fail) })
	}
}

func testRetryOnce(t *testing.T, fail func() (consumer.Result, error)) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	c := e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(_ context.Context, m *rocketmq.MessageExt, n int) (consumer.Result, error) {
		if n == 1 {
			return fail()
		}
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst))
	p := e.newProducer(t)
	ids := send(t, p, topic, 3, producer.Tag("TagR"))
	rec.waitAll(t, ids, 2)
	e.waitConsumed(t, g, topic, 3)
	e.waitConsumed(t, g, retryTopic(g), 3)
	// Statistics count the failed first deliveries and the retries under
	// the original topic.
	var st consumer.Stats
	for _, s := range c.Stats() {
		if s.Topic == topic {
			st = s
		}
	}
	if st.OKTotal != 3 || st.FailedTotal != 3 {
		t.Errorf("stats of %s: %d ok, %d failed; want 3 and 3", topic, st.OKTotal, st.FailedTotal)
	}
	for i, id := range ids {
		ds := rec.deliveries(id)
		if len(ds) != 2 {
			t.Errorf("message %s delivered %d times, want 2", id, len(ds))
			continue
		}
		first, again := ds[0].msg, ds[1].msg
		// Delay level 3 is 150 ms here: a new group's first retry must
		// not wait for a periodic rebalance (20 s) to find %RETRY%group.
		if d := ds[1].at.Sub(ds[0].at); e.cluster != nil && d > 5*time.Second {
			t.Errorf("message %s came back after %v", id, d)
		}
		checks := []struct {
			what      string
			got, want any
		}{
			{"reconsume times of the first delivery", first.ReconsumeTimes, int32(0)},
			{"reconsume times of the second delivery", again.ReconsumeTimes, int32(1)},
			{"topic", again.Topic, topic},
			{"message id", again.MsgID, id},
			{"UNIQ_KEY", again.UniqKey(), id},
			{"body", string(again.Body), string(first.Body)},
			{"keys", again.Keys(), []string{keyOf(i)}},
			{"tag", again.Tag(), "TagR"},
			{"RETRY_TOPIC", again.Property(rocketmq.PropertyRetryTopic), topic},
			{"ORIGIN_MESSAGE_ID", again.Property(rocketmq.PropertyOriginMessageID), first.OffsetMsgID},
		}
		for _, c := range checks {
			if !equal(c.got, c.want) {
				t.Errorf("message %s: %s %v, want %v", id, c.what, c.got, c.want)
			}
		}
	}
}

func keyOf(i int) string { return fmt.Sprintf("key-%d", i) }

func equal(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, ok := b.([]string)
		return ok && slices.Equal(as, bs)
	}
	return a == b
}

// TestDeadLetter: with WithMaxReconsumeTimes(1) and a handler that always
// asks for a retry, a message is delivered twice (reconsume times 0 and 1)
// and then moves to %DLQ%group, where a consumer of that topic reads it
// with its original body, keys, UNIQ_KEY and RETRY_TOPIC, as Java does.
func TestDeadLetter(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(context.Context, *rocketmq.MessageExt, int) (consumer.Result, error) {
		return consumer.RetryLater, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithMaxReconsumeTimes(1))
	p := e.newProducer(t)
	body := []byte("dead letter \x00\xff")
	id := sendOne(t, p, topic, string(body), producer.Keys("dlq-1", "dlq-2"), producer.Tag("TagD"), producer.Property("user", "u1"))
	rec.waitAll(t, []string{id}, 2)

	// The dead-letter topic may not have its route yet when its reader
	// starts; the reader finds it without a setting of its own.
	dead := newRecorder()
	e.startConsumer(t, group(t, "_dlq"), dlqTopic(g), consumer.All, dead.handler("dlq", nil),
		consumer.WithConsumeFrom(consumer.FromFirst))
	dead.waitAll(t, []string{id}, 1)
	// The retry topic's one message is committed: nothing else is on its way.
	e.waitConsumed(t, g, retryTopic(g), 1)

	if ds := rec.deliveries(id); len(ds) != 2 || ds[0].msg.ReconsumeTimes != 0 || ds[1].msg.ReconsumeTimes != 1 {
		t.Errorf("delivered %d times, reconsume times %v; want 2 deliveries, 0 then 1", len(ds), reconsumeTimes(ds))
	}
	d := dead.deliveries(id)[0].msg
	if d.Topic != dlqTopic(g) || !bytes.Equal(d.Body, body) || !slices.Equal(d.Keys(), []string{"dlq-1", "dlq-2"}) ||
		d.UniqKey() != id || d.Tag() != "TagD" || d.Property("user") != "u1" ||
		d.Property(rocketmq.PropertyRetryTopic) != topic || d.Property(rocketmq.PropertyOriginMessageID) == "" {
		t.Errorf("dead letter: topic %s body %q properties %v", d.Topic, d.Body, d.Properties)
	}
	if got := len(dead.deliveries(id)); got != 1 {
		t.Errorf("dead letter read %d times", got)
	}
}

// TestNamespace: a consumer and a producer in a namespace use "ns%name" on
// the wire for topics and the group, and the handler sees the topic
// without it, also for a message that came back through the group's
// retry topic (%RETRY%ns%group on the wire).
func TestNamespace(t *testing.T) {
	const ns = "e2ens"
	e := start(t)
	topic := "CE2E_NS_" + fmt.Sprint(time.Now().UnixNano()%1e9)
	if err := rmqtest.CreateTopic(context.Background(), e.ns, ns+"%"+topic, 4, rmqtest.TopicOnBrokers(e.broker)); err != nil {
		t.Fatal(err)
	}
	g := group(t, "")
	rec := newRecorder()
	c := e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(_ context.Context, m *rocketmq.MessageExt, n int) (consumer.Result, error) {
		if n == 1 {
			return consumer.RetryLater, nil
		}
		return consumer.Success, nil
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithNamespace(ns))
	if c.Group() != g {
		t.Errorf("Group() = %q, want %q", c.Group(), g)
	}
	p, err := producer.New(producer.WithGroup("pg_e2e_ns"), producer.WithNameServers(e.ns), producer.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	ids := send(t, p, topic, 4)
	rec.waitAll(t, ids, 2)
	e.waitConsumed(t, ns+"%"+g, ns+"%"+topic, 4)
	e.waitConsumed(t, ns+"%"+g, "%RETRY%"+ns+"%"+g, 4)
	for _, id := range ids {
		for _, d := range rec.deliveries(id) {
			if d.msg.Topic != topic {
				t.Errorf("message %s (reconsume times %d) has topic %q, want %q", id, d.msg.ReconsumeTimes, d.msg.Topic, topic)
			}
		}
	}
	for _, q := range c.Assigned() {
		if q.Topic != topic && q.Topic != retryTopic(g) {
			t.Errorf("assigned queue %v: topic with the namespace", q)
		}
	}
}

// TestConsumeTimeout: a handler still running after the consume timeout
// has its ctx cancelled, and its message comes again (ReconsumeTimes 1),
// as Java's expired-message sweep gives it back.
func TestConsumeTimeout(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	g := group(t, "")
	rec := newRecorder()
	cancelled := make(chan time.Duration, 1)
	e.startConsumer(t, g, topic, consumer.All, rec.handler("c", func(ctx context.Context, m *rocketmq.MessageExt, n int) (consumer.Result, error) {
		if n > 1 {
			return consumer.Success, nil
		}
		began := time.Now()
		select {
		case <-ctx.Done():
			cancelled <- time.Since(began)
			return consumer.RetryLater, ctx.Err()
		case <-time.After(wait):
			t.Errorf("handler ctx not cancelled within %v of a 1 s consume timeout", wait)
			return consumer.Success, nil
		}
	}), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithConsumeTimeout(time.Second))
	ids := send(t, e.newProducer(t), topic, 1)
	rec.waitAll(t, ids, 2)
	select {
	case d := <-cancelled:
		if d < 900*time.Millisecond {
			t.Errorf("handler ctx cancelled after %v, before the 1 s consume timeout", d)
		}
	case <-time.After(wait):
		t.Fatal("the first handler call's ctx was never cancelled")
	}
	e.waitConsumed(t, g, topic, 1)
	e.waitConsumed(t, g, retryTopic(g), 1)
	if ds := rec.deliveries(ids[0]); len(ds) != 2 || ds[1].msg.ReconsumeTimes != 1 {
		t.Errorf("%d deliveries, reconsume times %v; want 2, the second with 1", len(ds), reconsumeTimes(ds))
	}
}
