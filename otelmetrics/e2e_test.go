package otelmetrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// A producer and a push consumer on an in-process cluster report through
// the adapter.
func TestWithClients(t *testing.T) {
	c := rmqtest.StartCluster(t)
	ctx := context.Background()
	if err := c.CreateTopic(ctx, "OtelT", 2); err != nil {
		t.Fatal(err)
	}
	h, r := newHook(t)
	p, err := producer.New(producer.WithNameServers(c.NameServerAddr()), producer.WithGroup("pg_otel"), producer.WithMetrics(h))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	const n = 8
	for i := range n {
		m, err := producer.NewMessage("OtelT", fmt.Appendf(nil, "m-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := consumer.NewPush(consumer.WithNameServers(c.NameServerAddr()), consumer.WithGroup("cg_otel"),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithMetrics(h))
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe("OtelT", consumer.All, func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cs.Shutdown(sctx)
	})
	var sent, consumed, queues, conns int64
	testutil.WaitFor(t, 20*time.Second, "sends, consumption, queues and connections reported", func() bool {
		got := collect(t, r)
		sent, _ = point(t, got["messaging.client.sent.messages"], "messaging.destination.name", "OtelT", "rocketmq.result", "ok")
		consumed, _ = point(t, got["messaging.client.consumed.messages"], "messaging.consumer.group.name", "cg_otel", "rocketmq.result", "ok")
		queues, _ = point(t, got["rocketmq.consumer.queues"], "messaging.destination.name", "OtelT")
		conns, _ = point(t, got["rocketmq.client.connection.events"], "rocketmq.connection.event", "connected")
		return sent == n && consumed == n && queues == 2 && conns >= 2
	})
}
