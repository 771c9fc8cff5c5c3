package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// startPullConsumer starts a lite pull consumer of group subscribed to topic from
// the first message, shut down at the end of the test.
func (e *env) startPullConsumer(t *testing.T, group, topic string, opts ...consumer.Option) *consumer.PullConsumer {
	t.Helper()
	opts = append([]consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(e.ns),
		consumer.WithConsumeFrom(consumer.FromFirst)}, opts...)
	c, err := consumer.NewPull(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.Tags("*")); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return c
}

// pollPullBodies polls c until n messages arrived and returns how often each
// body came.
func pollPullBodies(t *testing.T, c *consumer.PullConsumer, n int) map[string]int {
	t.Helper()
	ctx := ctxT(t)
	seen := map[string]int{}
	for got := 0; got < n; {
		msgs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", got, n, err)
		}
		for _, m := range msgs {
			seen[string(m.Body)]++
		}
		got += len(msgs)
	}
	return seen
}

// pullClientID returns the client id of the one member of group.
func (e *env) pullClientID(t *testing.T, group string) string {
	t.Helper()
	cc, err := e.adm.ConsumerConnection(ctxT(t), group)
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID == "" || cc.ConsumeType != remoting.ConsumeTypeActively {
		t.Fatalf("connections of %s: %+v, consume type %q", group, cc.ConnectionSet, cc.ConsumeType)
	}
	return cc.ConnectionSet[0].ClientID
}

// TestResetOffsetPullConsumer: an admin's reset of a running lite pull
// consumer's group seeks the queues it holds, so it polls every message
// again from the offsets reset to, and commits from there.
func TestResetOffsetPullConsumer(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 2)
	g := name(t, "cgpull")
	before := time.Now().Add(-time.Second)
	const n = 10
	e.send(t, topic, n)
	c := e.startPullConsumer(t, g, topic, consumer.WithAutoCommitInterval(100*time.Millisecond))
	first := pollPullBodies(t, c, n)
	if len(first) != n {
		t.Fatalf("first poll: %v", first)
	}
	testutil.WaitFor(t, wait, "all committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, g, topic)
		return err == nil && len(cs.Queues) == 2 && cs.Lag() == 0
	})
	e.pullClientID(t, g) // the group has its one member online

	table, err := e.adm.ResetOffsetByTime(ctx, g, topic, before, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 {
		t.Fatalf("reset table: %v", table)
	}
	for mq, off := range table {
		if mq.Topic != topic || off != 0 {
			t.Fatalf("reset table: %v", table)
		}
	}
	again := pollPullBodies(t, c, n)
	for i := range n {
		if b := fmt.Sprintf("body-%d", i); again[b] != 1 {
			t.Fatalf("after the reset %s came %d times: %v", b, again[b], again)
		}
	}
	// Held from the reset offsets on: the queues end where they did.
	for _, mq := range c.Assigned() {
		ctx := ctxT(t)
		testutil.WaitFor(t, wait, "the offset committed again", func() bool {
			off, err := c.Committed(ctx, mq)
			return err == nil && off == pullQueueMaxOffset(t, e, topic, mq)
		})
	}
}

// pullQueueMaxOffset returns the offset past the last message of mq.
func pullQueueMaxOffset(t *testing.T, e *env, topic string, mq rocketmq.MessageQueue) int64 {
	t.Helper()
	st, err := e.adm.TopicStats(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := st[mq]
	if !ok {
		t.Fatalf("no stats of %v in %v", mq, st)
	}
	return o.MaxOffset
}

// TestRunningInfoPullConsumer: a lite pull consumer's running info shows
// it consumes actively, with its settings, its subscription, and per held
// queue what it holds pulled and what it consumed.
func TestRunningInfoPullConsumer(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 2)
	g := name(t, "cgpull")
	const n = 8
	e.send(t, topic, n)
	c := e.startPullConsumer(t, g, topic, consumer.WithPullBatchSize(16), consumer.WithPullThresholdForAll(500))
	client := e.pullClientID(t, g)

	info := func() *remoting.ConsumerRunningInfo {
		info, err := e.adm.ConsumerRunningInfo(ctx, g, client)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	sums := func(ri *remoting.ConsumerRunningInfo) (queues int, cached, committed int64) {
		for mq, pq := range ri.MQTable {
			if mq.Topic != topic || mq.BrokerName != e.broker {
				t.Fatalf("held queue %v: not of %s on %s", mq, topic, e.broker)
			}
			queues++
			cached += int64(pq.CachedMsgCount)
			if pq.CommitOffset > 0 {
				committed += pq.CommitOffset
			}
		}
		return
	}
	// Pulled, not polled yet: held, nothing consumed.
	var ri *remoting.ConsumerRunningInfo
	testutil.WaitFor(t, wait, "every message pulled", func() bool {
		ri = info()
		q, cached, _ := sums(ri)
		return q == 2 && cached == n
	})
	p := ri.Properties
	want := map[string]string{
		remoting.PropConsumeType: remoting.ConsumeTypeActively,
		"consumerGroup":          g,
		"messageModel":           "CLUSTERING",
		"consumeFromWhere":       "CONSUME_FROM_FIRST_OFFSET",
		"pullBatchSize":          "16",
		"pullThresholdForAll":    "500",
		"autoCommit":             "true",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("property %s = %q, want %q (all: %v)", k, p[k], v, p)
		}
	}
	if len(ri.SubscriptionSet) != 1 || ri.SubscriptionSet[0].Topic != topic || ri.SubscriptionSet[0].SubString != "*" {
		t.Fatalf("subscriptions: %+v", ri.SubscriptionSet)
	}
	for mq, pq := range ri.MQTable {
		if pq.CachedMsgCount > 0 && (pq.CachedMsgMinOffset != 0 || pq.CachedMsgMaxOffset != int64(pq.CachedMsgCount)-1) {
			t.Fatalf("queue %v holds %d messages as offsets %d..%d", mq, pq.CachedMsgCount, pq.CachedMsgMinOffset, pq.CachedMsgMaxOffset)
		}
	}

	// Polled: nothing held, the consumed offsets at the queues' ends.
	if got := pollPullBodies(t, c, n); len(got) != n {
		t.Fatalf("polled %v", got)
	}
	q, cached, committed := sums(info())
	if q != 2 || cached != 0 || committed != n {
		t.Fatalf("after polling: %d queues holding %d, consumed offsets summing to %d; want 2, 0, %d", q, cached, committed, n)
	}
}
