package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/testutil/testca"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// startTLSProducer starts a producer with the given TLS configuration (nil:
// plain) and a short send timeout.
func startTLSProducer(t *testing.T, ns string, cfg *tls.Config) *producer.Producer {
	t.Helper()
	opts := []producer.Option{producer.WithGroup(group(t, "_pg")), producer.WithNameServers(ns)}
	if cfg != nil {
		opts = append(opts, producer.WithTLS(cfg))
	}
	p, err := producer.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func trySend(p *producer.Producer, topic, body string) error {
	m, err := producer.NewMessage(topic, []byte(body))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = p.Send(ctx, m)
	return err
}

// The admin client, a producer and a push consumer, all with TLS, work
// against a NameServer and broker serving TLS (the broker registering over
// TLS too); the broker lists the producer by its TCP address. A plain
// client is served in permissive mode and gets an error, not a hang, in
// enforcing mode; a client trusting another CA fails either way.
func TestTLSClients(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skipf("needs the in-process cluster's TLS settings (%s is set)", envExternal)
	}
	for _, mode := range []string{"enforcing", "permissive"} {
		t.Run(mode, func(t *testing.T) {
			cluster := rmqtest.StartCluster(t, rmqtest.WithTLS(nil), rmqtest.WithTLSMode(mode))
			ns := cluster.NameServerAddr()
			clientTLS := cluster.TLSClientConfig()
			if clientTLS == nil {
				t.Fatal("no client TLS configuration for the cluster's CA")
			}

			adm, err := admin.New(admin.WithNameServers(ns), admin.WithTLS(clientTLS))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := adm.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = adm.Close(context.Background()) })
			topic := fmt.Sprintf("TLS_%s_%d", mode, time.Now().UnixNano()%1e9)
			if err := adm.CreateTopicInCluster(ctx, "DefaultCluster", admin.TopicConfig{Name: topic, ReadQueues: 2, WriteQueues: 2}); err != nil {
				t.Fatalf("create topic over TLS: %v", err)
			}

			var mu sync.Mutex
			got := map[string]bool{}
			g := group(t, "")
			c, err := consumer.NewPush(consumer.WithGroup(g), consumer.WithNameServers(ns), consumer.WithTLS(clientTLS),
				consumer.WithConsumeFrom(consumer.FromFirst))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Subscribe(topic, consumer.Tags("*"), func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					got[string(m.Body)] = true
				}
				return consumer.Success, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Shutdown(context.Background()) })

			p := startTLSProducer(t, ns, clientTLS)
			const n = 4
			for i := range n {
				if err := trySend(p, topic, fmt.Sprintf("tls-%d", i)); err != nil {
					t.Fatalf("send over TLS: %v", err)
				}
			}
			testutil.WaitFor(t, wait, "the consumer to receive every message", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) == n
			})

			conns, err := adm.ProducerConnection(ctx, p.Group(), topic)
			if err != nil {
				t.Fatalf("producer connections: %v", err)
			}
			if len(conns) != 1 || !strings.HasPrefix(conns[0].ClientAddr, "127.0.0.1:") {
				t.Errorf("broker lists the TLS producer as %+v, want one 127.0.0.1 address", conns)
			}

			plain := startTLSProducer(t, ns, nil)
			err = trySend(plain, topic, "plain")
			if mode == "permissive" && err != nil {
				t.Errorf("plain send in permissive mode: %v", err)
			}
			if mode == "enforcing" && err == nil {
				t.Error("plain send succeeded in enforcing mode")
			}

			other, err := testca.New()
			if err != nil {
				t.Fatal(err)
			}
			if err := trySend(startTLSProducer(t, ns, other.ClientConfig()), topic, "wrong CA"); err == nil ||
				!strings.Contains(err.Error(), "certificate") {
				t.Errorf("send trusting another CA: %v, want a certificate error", err)
			}
			// The servers keep serving TLS clients.
			if err := trySend(p, topic, "after"); err != nil {
				t.Errorf("TLS send after the refused clients: %v", err)
			}
		})
	}
}
