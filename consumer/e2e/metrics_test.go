package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/metrics"
	"github.com/go-rocketmq/rocketmq/producer"
)

// recHook records what a client reports to its metrics hook.
type recHook struct {
	mu        sync.Mutex
	sends     map[string]int // "topic/result" → messages
	consumes  map[string]int // "topic/group/result" → messages
	cached    map[metrics.Queue]int
	lag       map[metrics.Queue]int64
	rebalance map[string]int // "topic/group" → queues held
	conns     map[metrics.ConnEvent]int
}

func newRecHook() *recHook {
	return &recHook{sends: map[string]int{}, consumes: map[string]int{}, cached: map[metrics.Queue]int{},
		lag: map[metrics.Queue]int64{}, rebalance: map[string]int{}, conns: map[metrics.ConnEvent]int{}}
}

func (h *recHook) Send(topic string, r metrics.Result, n int, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d <= 0 {
		panic("send without a duration")
	}
	h.sends[topic+"/"+r.String()] += n
}

func (h *recHook) Consume(topic, group string, r metrics.Result, n int, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.consumes[topic+"/"+group+"/"+r.String()] += n
}

func (h *recHook) Cached(q metrics.Queue, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cached[q] = n
}

func (h *recHook) Lag(q metrics.Queue, lag int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lag[q] = lag
}

func (h *recHook) Rebalance(topic, group string, queues int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rebalance[topic+"/"+group] = queues
}

func (h *recHook) Conn(addr string, e metrics.ConnEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[e]++
}

// read runs f under the hook's lock.
func (h *recHook) read(f func(h *recHook) bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return f(h)
}

// metricQueues returns the values recorded for the queues of topic in m.
func metricQueues[V any](m map[metrics.Queue]V, topic string) []V {
	var out []V
	for q, v := range m {
		if q.Topic == topic {
			out = append(out, v)
		}
	}
	return out
}

// A producer reports its sends and connections, a push consumer its
// handler calls by result, its queues after a rebalance, the lag and the
// messages it holds per queue, and a pull consumer its polls.
func TestMetricsHook(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)

	ph := newRecHook()
	p, err := producer.New(producer.WithGroup("pg_e2e_metrics"), producer.WithNameServers(e.ns), producer.WithMetrics(ph))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 10
	send(t, p, topic, n)
	if !ph.read(func(h *recHook) bool { return h.sends[topic+"/ok"] == n && h.conns[metrics.Connected] >= 2 }) {
		t.Fatalf("producer sends %v, connections %v", ph.sends, ph.conns)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !ph.read(func(h *recHook) bool { return h.conns[metrics.Closed] == h.conns[metrics.Connected] }) {
		t.Fatalf("connections after Shutdown %v", ph.conns)
	}

	ch := newRecHook()
	g := group(t, "")
	var once sync.Once
	c := e.startConsumer(t, g, topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		retry := false
		if string(msgs[0].Body) == "body-0" {
			once.Do(func() { retry = true })
		}
		if retry {
			return consumer.RetryLater, nil
		}
		return consumer.Success, nil
	}, consumer.WithMetrics(ch), consumer.WithConsumeBatchSize(1))
	testutil.WaitFor(t, wait, "every message consumed once, one given back", func() bool {
		return ch.read(func(h *recHook) bool {
			return h.consumes[topic+"/"+g+"/ok"] == n && h.consumes[topic+"/"+g+"/retry"] == 1
		})
	})
	testutil.WaitFor(t, wait, "rebalance, lag and cached of both queues", func() bool {
		return ch.read(func(h *recHook) bool {
			lags, cached := metricQueues(h.lag, topic), metricQueues(h.cached, topic)
			if h.rebalance[topic+"/"+g] != 2 || len(lags) != 2 || len(cached) != 2 {
				return false
			}
			for i := range 2 {
				if lags[i] != 0 || cached[i] != 0 {
					return false
				}
			}
			return true
		})
	})
	if len(assigned(c, topic)) != 2 {
		t.Fatalf("assigned %v", assigned(c, topic))
	}

	lh := newRecHook()
	lg := group(t, "_lite")
	lc := e.newPull(t, lg, consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithMetrics(lh))
	if err := lc.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, lc)
	pollN(t, lc, n)
	// The queues' rebalance report follows their start, so it may come
	// after the first messages.
	if !testutil.Poll(wait, func() bool {
		return lh.read(func(h *recHook) bool {
			if h.consumes[topic+"/"+lg+"/ok"] != n || h.rebalance[topic+"/"+lg] != 2 || len(metricQueues(h.lag, topic)) != 2 {
				return false
			}
			cached := metricQueues(h.cached, topic)
			return len(cached) == 2 && cached[0] == 0 && cached[1] == 0
		})
	}) {
		lh.read(func(h *recHook) bool {
			t.Fatalf("pull consumer: consumes %v, rebalance %v, lag %v, cached %s", h.consumes, h.rebalance, h.lag, fmt.Sprint(h.cached))
			return false
		})
	}

	// A pull consumer that never polls holds every message until it stops.
	sh := newRecHook()
	sc := e.newPull(t, group(t, "_idle"), consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithMetrics(sh))
	if err := sc.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	startPull(t, sc)
	cachedSum := func(h *recHook) int {
		sum := 0
		for _, v := range metricQueues(h.cached, topic) {
			sum += v
		}
		return sum
	}
	testutil.WaitFor(t, wait, "every message pulled and held", func() bool {
		return sh.read(func(h *recHook) bool { return cachedSum(h) == n })
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !sh.read(func(h *recHook) bool { return cachedSum(h) == 0 }) {
		t.Fatalf("a stopped pull consumer still reports cached messages: %v", sh.cached)
	}
}
