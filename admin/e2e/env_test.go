// Package e2e runs the admin client against an in-process cluster
// (rmqtest) or, with ROCKETMQ_NAMESRV=host:port, an external one. It is a
// package of its own so that the admin package's unit tests never depend
// on the servers.
package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envExternal names the variable that points the tests at an external
// cluster.
const envExternal = "ROCKETMQ_NAMESRV"

// wait bounds every wait for something the cluster or a consumer does
// within a fraction of a second when all is well.
const wait = 30 * time.Second

type env struct {
	ns         string
	local      *rmqtest.Cluster // nil for an external cluster
	cluster    string           // the cluster name
	broker     string           // the broker new topics are created on
	brokerAddr string           // its master's address
	adm        *admin.Admin
}

// start returns the cluster of a test, in-process (with opts) or external,
// and an admin client on it, closed at the end of the test.
func start(t *testing.T, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.local = rmqtest.StartCluster(t, opts...)
		e.ns = e.local.NameServerAddr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	masters, err := rmqtest.MasterBrokers(ctx, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	e.broker = slices.Sorted(maps.Keys(masters))[0]
	e.brokerAddr = masters[e.broker]
	e.adm, err = admin.New(admin.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.adm.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	ci, err := e.adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for c, names := range ci.ClusterAddrTable {
		if slices.Contains(names, e.broker) {
			e.cluster = c
		}
	}
	if e.cluster == "" {
		t.Fatalf("broker %s in no cluster: %+v", e.broker, ci.ClusterAddrTable)
	}
	return e
}

// needLocal skips t on an external cluster.
func (e *env) needLocal(t *testing.T, why string) {
	t.Helper()
	if e.local == nil {
		t.Skipf("needs the in-process cluster (%s is set): %s", envExternal, why)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// name returns a topic or group name of its own for t.
func name(t *testing.T, prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}

func (e *env) newTopic(t *testing.T, queues int32) string {
	t.Helper()
	topic := name(t, "AE2E")
	ctx := ctxT(t)
	if err := e.adm.CreateTopic(ctx, e.brokerAddr, admin.TopicConfig{Name: topic, ReadQueues: queues, WriteQueues: queues}); err != nil {
		t.Fatal(err)
	}
	// The broker registers the topic with the NameServer on its own
	// schedule; a producer asking before then would send by the default
	// topic's route, to queues this topic does not have.
	testutil.WaitFor(t, wait, "the topic's route", func() bool {
		r, err := e.adm.TopicRoute(ctx, topic)
		return err == nil && len(r.QueueDatas) > 0 && r.QueueDatas[0].WriteQueueNums == queues
	})
	return topic
}

// send sends n messages to topic, body "body-i" and key "key-i", and
// returns their ids.
func (e *env) send(t *testing.T, topic string, n int) []string {
	t.Helper()
	var ids []string
	for _, r := range e.sendResults(t, topic, n) {
		ids = append(ids, r.MsgID)
	}
	return ids
}

// sendResults is send returning the send results.
func (e *env) sendResults(t *testing.T, topic string, n int) []*rocketmq.SendResult {
	t.Helper()
	p, err := producer.New(producer.WithGroup("pg_admin_e2e"), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	var out []*rocketmq.SendResult
	for i := range n {
		m, err := producer.NewMessage(topic, []byte(fmt.Sprintf("body-%d", i)), producer.Keys(fmt.Sprintf("key-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Send(ctxT(t), m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	return out
}

// startConsumer starts a push consumer of group on topic from the first
// message, counting what it consumes, shut down at the end of the test.
func (e *env) startConsumer(t *testing.T, group, topic string, count *atomic.Int64) *consumer.PushConsumer {
	t.Helper()
	return e.startConsumerFunc(t, group, topic, func(*rocketmq.MessageExt) { count.Add(1) })
}

// startConsumerFunc is startConsumer calling fn with every message.
func (e *env) startConsumerFunc(t *testing.T, group, topic string, fn func(*rocketmq.MessageExt)) *consumer.PushConsumer {
	t.Helper()
	return e.startConsumerSel(t, group, topic, consumer.Tags("*"), fn)
}

// startConsumerSel is startConsumerFunc with a selector.
func (e *env) startConsumerSel(t *testing.T, group, topic string, sel consumer.Selector, fn func(*rocketmq.MessageExt)) *consumer.PushConsumer {
	t.Helper()
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(e.ns),
		consumer.WithOffsetPersistInterval(100*time.Millisecond), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	err = c.Subscribe(topic, sel, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			fn(m)
		}
		return consumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return c
}
