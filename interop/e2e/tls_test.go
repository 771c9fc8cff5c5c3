package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestOfficialClientTLS: the official Go client in its TLS mode
// (producer.WithTls / consumer.WithTls) sends to and consumes from our
// NameServer and broker serving TLS only. That client does not verify the
// server's certificate (it dials with InsecureSkipVerify); ours does.
func TestOfficialClientTLS(t *testing.T) {
	e := newEnv(t, 1, rmqtest.WithTLS(nil), rmqtest.WithTLSMode("enforcing"))
	if e.cluster == nil {
		t.Skip("needs the in-process cluster's TLS settings (" + envExternal + " is set)")
	}
	// The official client keeps its remoting settings in a package-level
	// variable, and WithTls sets UseTls there for every client of the
	// process: put it back so the other tests' official clients dial plain
	// TCP. This test is not parallel, so none of them runs meanwhile.
	t.Cleanup(func() {
		if _, err := producer.NewDefaultProducer(producer.WithTls(false), producer.WithInstanceName(e.name("plain")),
			producer.WithNsResolver(e.resolver())); err != nil {
			t.Errorf("resetting the official client's TLS switch: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	adm, err := admin.New(admin.WithNameServers(e.ns), admin.WithTLS(e.cluster.TLSClientConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer adm.Close(context.Background())
	topic := e.name("T")
	if err := adm.CreateTopic(ctx, e.cluster.BrokerAddr("broker-a"), admin.TopicConfig{Name: topic, ReadQueues: 4, WriteQueues: 4}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the route of "+topic, func() bool {
		r, err := adm.TopicRoute(ctx, topic)
		return err == nil && len(r.QueueDatas) > 0
	})

	p := e.officialProducer(t, producer.WithTls(true))
	const n = 6
	for i := range n {
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("tls body")))
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("official send %d over TLS: %v %v", i, res, err)
		}
	}

	var s sink
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName(e.name("CG")),
		consumer.WithInstance(e.name("c")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTls(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}, s.handler("c")); err != nil {
		t.Fatal(err)
	}
	startOfficial(t, "official consumer", pc)
	testutil.WaitFor(t, consumeTimeout, "the official consumer to receive every message over TLS", func() bool { return s.len() >= n })
}
