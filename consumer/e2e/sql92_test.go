package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envSQL92 must be 1 for the SQL92 tests to run on an external cluster,
// whose brokers then need enablePropertyFilter=true (Java's default is
// false; rmqtest turns it on).
const envSQL92 = "ROCKETMQ_SQL92"

const sql92Expr = "a > 5 AND b = 'x'"

// startSQL92 starts the test's cluster, skipping on an external one
// whose brokers are not declared to filter SQL92.
func startSQL92(t *testing.T) *env {
	t.Helper()
	if os.Getenv(envExternal) != "" && os.Getenv(envSQL92) != "1" {
		t.Skipf("needs brokers with enablePropertyFilter=true: set %s=1 with %s", envSQL92, envExternal)
	}
	return start(t)
}

// sendSQL92 sends 20 messages with properties a=i and b=x for even i, y
// for odd, and returns the bodies sql92Expr selects.
func sendSQL92(t *testing.T, e *env, topic string) []string {
	t.Helper()
	p := e.newProducer(t)
	var want []string
	for i := range 20 {
		b := "x"
		if i%2 == 1 {
			b = "y"
		}
		body := fmt.Sprintf("m-%d-%s", i, b)
		sendOne(t, p, topic, body, producer.Property("a", strconv.Itoa(i)), producer.Property("b", b))
		if i > 5 && b == "x" {
			want = append(want, body)
		}
	}
	return want
}

// checkSQL92 fails unless msgs are exactly the bodies in want, each
// carrying properties that match sql92Expr.
func checkSQL92(t *testing.T, msgs []*rocketmq.MessageExt, want []string) {
	t.Helper()
	var got []string
	for _, m := range msgs {
		a, err := strconv.Atoi(m.Property("a"))
		if err != nil || a <= 5 || m.Property("b") != "x" {
			t.Errorf("message %q with a=%q b=%q delivered, want only %s", m.Body, m.Property("a"), m.Property("b"), sql92Expr)
		}
		got = append(got, string(m.Body))
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
}

func TestSQL92Push(t *testing.T) {
	e := startSQL92(t)
	topic := e.newTopic(t, 2)
	want := sendSQL92(t, e, topic)
	g := group(t, "")
	var mu sync.Mutex
	var got []*rocketmq.MessageExt
	e.startConsumer(t, g, topic, consumer.SQL92(sql92Expr), func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		got = append(got, msgs...)
		mu.Unlock()
		return consumer.Success, nil
	}, consumer.WithConsumeFrom(consumer.FromFirst))
	// The committed offsets move past the messages filtered out too.
	e.waitConsumed(t, g, topic, 20)
	mu.Lock()
	defer mu.Unlock()
	checkSQL92(t, got, want)
}

func TestSQL92LitePull(t *testing.T) {
	e := startSQL92(t)
	topic := e.newTopic(t, 2)
	want := sendSQL92(t, e, topic)
	g := group(t, "")
	c := e.newPull(t, g, consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithAutoCommitInterval(100*time.Millisecond))
	if err := c.Subscribe(topic, consumer.SQL92(sql92Expr)); err != nil {
		t.Fatal(err)
	}
	startPull(t, c)
	checkSQL92(t, pollN(t, c, len(want)), want)
	pollNone(t, c, 300*time.Millisecond)
	e.waitConsumed(t, g, topic, 20)
}

// A bad expression fails the push consumer's Start with the broker's
// SUBSCRIPTION_PARSE_FAILED.
func TestSQL92BadExpression(t *testing.T) {
	e := startSQL92(t)
	topic := e.newTopic(t, 1)
	c := e.newConsumer(t, group(t, ""))
	if err := c.Subscribe(topic, consumer.SQL92("a > 'x'"), func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); !errors.Is(err, remoting.ErrSubscriptionParseFailed) {
		t.Fatalf("Start = %v, want SUBSCRIPTION_PARSE_FAILED", err)
	}
}

// With the filter off the broker refuses SQL92 as a default Java broker.
func TestSQL92FilterOff(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skipf("sets the in-process brokers' enablePropertyFilter (%s is set)", envExternal)
	}
	e := start(t, rmqtest.WithPropertyFilter(false))
	topic := e.newTopic(t, 1)
	c := e.newConsumer(t, group(t, ""))
	if err := c.Subscribe(topic, consumer.SQL92(sql92Expr), func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); !errors.Is(err, remoting.ErrSystemError) {
		t.Fatalf("Start = %v, want SYSTEM_ERROR", err)
	}
}
