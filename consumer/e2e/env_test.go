// Package e2e runs the push consumer against an in-process cluster
// (rmqtest) or, with ROCKETMQ_NAMESRV=host:port, an external one. Tests
// that need fault controls, several brokers or the in-process broker's
// settings skip there with the reason. It is a package of its own so that
// the consumer's unit tests never depend on the servers.
package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envExternal names the variable that points the tests at an external
// cluster.
const envExternal = "ROCKETMQ_NAMESRV"

// shortDelays replaces the brokers' 18 delay levels (1 s 5 s 10 s ... 2 h)
// so that a message given back returns within a fraction of a second
// instead of after 10 s (level 3, the first retry).
const shortDelays = "50ms 100ms 150ms 200ms 250ms 300ms 350ms 400ms 450ms 500ms 550ms 600ms 650ms 700ms 750ms 800ms 850ms 900ms"

// wait bounds every wait for something the cluster or a consumer does
// within a fraction of a second when all is well; an external cluster
// retries after 10 s (delay level 3), hence the margin.
const wait = 30 * time.Second

type env struct {
	ns         string
	cluster    *rmqtest.Cluster // nil for an external cluster
	broker     string           // the broker new topics are created on
	brokerAddr string           // its master's address
}

// start returns the cluster of a test: an in-process one with short
// retry delays, or the external one.
func start(t *testing.T, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.cluster = rmqtest.StartCluster(t, append([]rmqtest.Option{rmqtest.WithDelayLevels(shortDelays)}, opts...)...)
		e.ns = e.cluster.NameServerAddr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	masters, err := rmqtest.MasterBrokers(ctx, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	e.broker = slices.Sorted(maps.Keys(masters))[0]
	e.brokerAddr = masters[e.broker]
	return e
}

// needFaults skips t on an external cluster.
func (e *env) needFaults(t *testing.T, why string) {
	t.Helper()
	if e.cluster == nil {
		t.Skipf("needs the in-process cluster's fault controls (%s is set): %s", envExternal, why)
	}
}

// newTopic creates a topic with queues queues on one broker.
func (e *env) newTopic(t *testing.T, queues int) string {
	t.Helper()
	topic := fmt.Sprintf("CE2E_%s_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
	if err := rmqtest.CreateTopic(context.Background(), e.ns, topic, queues, rmqtest.TopicOnBrokers(e.broker)); err != nil {
		t.Fatal(err)
	}
	return topic
}

// group returns a group name of its own for t (and suffix).
func group(t *testing.T, suffix string) string {
	return fmt.Sprintf("cg_%s%s_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), suffix, time.Now().UnixNano()%1e9)
}

func (e *env) newProducer(t *testing.T) *producer.Producer {
	t.Helper()
	p, err := producer.New(producer.WithGroup("pg_e2e"), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// send sends n messages to topic, one at a time, with body, key and tag
// derived from their index, and returns their ids in order.
func send(t *testing.T, p *producer.Producer, topic string, n int, opts ...producer.MessageOption) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		ids = append(ids, sendOne(t, p, topic, fmt.Sprintf("body-%d", i), append([]producer.MessageOption{producer.Keys(fmt.Sprintf("key-%d", i))}, opts...)...))
	}
	return ids
}

func sendOne(t *testing.T, p *producer.Producer, topic, body string, opts ...producer.MessageOption) string {
	t.Helper()
	m, err := producer.NewMessage(topic, []byte(body), opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return res.MsgID
}

// newConsumer returns a consumer of group on the test's cluster, not
// started, shut down at the end of the test. Offsets are committed every
// 100 ms so that waits on the broker's committed offsets are short.
func (e *env) newConsumer(t *testing.T, group string, opts ...consumer.Option) *consumer.PushConsumer {
	t.Helper()
	c, err := consumer.NewPush(append([]consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(e.ns),
		consumer.WithOffsetPersistInterval(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return c
}

// startConsumer is newConsumer subscribed to topic and started.
func (e *env) startConsumer(t *testing.T, group, topic string, sel consumer.Selector, h consumer.Handler, opts ...consumer.Option) *consumer.PushConsumer {
	t.Helper()
	c := e.newConsumer(t, group, opts...)
	if err := c.Subscribe(topic, sel, h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitConsumed waits until group's committed offsets of topic add up to n.
func (e *env) waitConsumed(t *testing.T, group, topic string, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := rmqtest.WaitConsumed(ctx, e.ns, group, topic, n); err != nil {
		t.Fatal(err)
	}
}

// assigned returns the queues of topic c pulls from.
func assigned(c *consumer.PushConsumer, topic string) []rocketmq.MessageQueue {
	var out []rocketmq.MessageQueue
	for _, q := range c.Assigned() {
		if q.Topic == topic {
			out = append(out, q)
		}
	}
	return out
}

// waitBalanced waits until the members split the queues of topic between
// them as AllocateMessageQueueAveragely does: every queue held by exactly
// one member, each member holding queues/members rounded down or up.
func waitBalanced(t *testing.T, topic string, queues int, members ...*consumer.PushConsumer) {
	t.Helper()
	var last string
	if !testutil.Poll(wait, func() bool {
		held := map[rocketmq.MessageQueue]int{}
		var sizes []int
		for _, c := range members {
			qs := assigned(c, topic)
			sizes = append(sizes, len(qs))
			for _, q := range qs {
				held[q]++
			}
		}
		last = fmt.Sprintf("sizes %v, %d queues held", sizes, len(held))
		if len(held) != queues {
			return false
		}
		for _, n := range held {
			if n != 1 {
				return false
			}
		}
		lo := queues / len(members)
		return !slices.ContainsFunc(sizes, func(n int) bool { return n < lo || n > lo+1 })
	}) {
		t.Fatalf("queues of %s not split between %d members: %s", topic, len(members), last)
	}
}

// delivery is one message handed to a handler.
type delivery struct {
	seq    int64     // order of arrival over all members
	at     time.Time // when the handler got it
	member string
	msg    *rocketmq.MessageExt
}

// recorder keeps every delivery by message id (UNIQ_KEY).
type recorder struct {
	mu   sync.Mutex
	seq  atomic.Int64
	byID map[string][]delivery
}

func newRecorder() *recorder { return &recorder{byID: map[string][]delivery{}} }

// handler records each message for member, then asks then (nil:
// Success) for the batch's result.
func (r *recorder) handler(member string, then func(ctx context.Context, m *rocketmq.MessageExt, n int) (consumer.Result, error)) consumer.Handler {
	return func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		res := consumer.Success
		for _, m := range msgs {
			n := r.add(member, m)
			if then == nil {
				continue
			}
			if got, err := then(ctx, m, n); got != consumer.Success || err != nil {
				return got, err
			}
		}
		return res, nil
	}
}

// add records m and returns how many times it has been delivered.
func (r *recorder) add(member string, m *rocketmq.MessageExt) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[m.MsgID] = append(r.byID[m.MsgID], delivery{seq: r.seq.Add(1), at: time.Now(), member: member, msg: m})
	return len(r.byID[m.MsgID])
}

func (r *recorder) deliveries(id string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.byID[id])
}

// count returns how many of ids were delivered at least times times.
func (r *recorder) count(ids []string, times int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, id := range ids {
		if len(r.byID[id]) >= times {
			n++
		}
	}
	return n
}

// total returns every delivery so far.
func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ds := range r.byID {
		n += len(ds)
	}
	return n
}

// waitAll waits until each of ids was delivered at least times times.
func (r *recorder) waitAll(t *testing.T, ids []string, times int) {
	t.Helper()
	if !testutil.Poll(wait, func() bool { return r.count(ids, times) == len(ids) }) {
		t.Fatalf("%d of %d messages delivered %d times within %v", r.count(ids, times), len(ids), times, wait)
	}
}

// byMember counts deliveries per member.
func (r *recorder) byMember() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, ds := range r.byID {
		for _, d := range ds {
			out[d.member]++
		}
	}
	return out
}
