package producer

import (
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
)

// faultStrategy is Java 5.x's MQFaultStrategy with its
// LatencyFaultTolerance (docs/PROTOCOL.md §8.4): brokers that failed or were
// slow are "not available" until a deadline; brokers whose last call
// failed at the network level are "not reachable" until a call succeeds.
type faultStrategy struct {
	enabled      bool
	latencyMax   []time.Duration
	notAvailable []time.Duration
	now          func() time.Time

	mu    sync.RWMutex
	items map[string]*faultItem
}

type faultItem struct {
	latency     time.Duration
	availableAt time.Time
	reachable   bool
}

func newFaultStrategy(enabled bool, latencyMax, notAvailable []time.Duration, now func() time.Time) *faultStrategy {
	if now == nil {
		now = time.Now
	}
	return &faultStrategy{enabled: enabled, latencyMax: latencyMax, notAvailable: notAvailable, now: now, items: map[string]*faultItem{}}
}

// isolationLatency is the latency a failure counts as (5.x; 4.x used 30 s).
const isolationLatency = 10 * time.Second

// notAvailableFor maps a latency to how long the broker is avoided:
// the entry of the largest latencyMax not above it.
func (f *faultStrategy) notAvailableFor(latency time.Duration) time.Duration {
	for i := len(f.latencyMax) - 1; i >= 0; i-- {
		if latency >= f.latencyMax[i] {
			return f.notAvailable[i]
		}
	}
	return 0
}

// update records the outcome of a call to broker (Java updateFaultItem).
// isolation marks a failure; reachable is false after a network failure.
func (f *faultStrategy) update(broker string, latency time.Duration, isolation, reachable bool) {
	if !f.enabled {
		return
	}
	if isolation {
		latency = isolationLatency
	}
	d := f.notAvailableFor(latency)
	if d == 0 && reachable {
		// The common case, a quick success: it changes nothing unless the
		// broker was marked unreachable (latency is informational), so it
		// costs no write lock and no clock read.
		f.mu.RLock()
		it := f.items[broker]
		same := it == nil || it.reachable
		f.mu.RUnlock()
		if same {
			return
		}
	}
	var now time.Time
	if d > 0 {
		now = f.now()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it := f.items[broker]
	if it == nil {
		it = &faultItem{}
		f.items[broker] = it
	}
	it.latency = latency
	it.reachable = reachable
	// Keep the later deadline (5.x updateNotAvailableDuration).
	if d > 0 && now.Add(d).After(it.availableAt) {
		it.availableAt = now.Add(d)
	}
}

func (f *faultStrategy) available(broker string) bool {
	f.mu.RLock()
	var at time.Time
	if it := f.items[broker]; it != nil {
		at = it.availableAt
	}
	f.mu.RUnlock()
	return at.IsZero() || !f.now().Before(at)
}

func (f *faultStrategy) reachable(broker string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	it := f.items[broker]
	return it == nil || it.reachable
}

// pick rotates over queues from idx, returning the first accepted one.
func pick(queues []rocketmq.MessageQueue, idx *atomic.Uint32, ok func(rocketmq.MessageQueue) bool) (rocketmq.MessageQueue, bool) {
	n := uint32(len(queues))
	for i := uint32(0); i < n; i++ {
		q := queues[idx.Inc()%n]
		if ok(q) {
			return q, true
		}
	}
	return rocketmq.MessageQueue{}, false
}

// selectQueue is Java 5.x selectOneMessageQueue: a queue on an available
// broker other than lastBroker, else on a reachable one other than
// lastBroker, else the next queue; without the strategy only lastBroker is
// skipped.
func (f *faultStrategy) selectQueue(queues []rocketmq.MessageQueue, idx *atomic.Uint32, lastBroker string) rocketmq.MessageQueue {
	notLast := func(q rocketmq.MessageQueue) bool { return lastBroker == "" || q.BrokerName != lastBroker }
	if f.enabled {
		if q, ok := pick(queues, idx, func(q rocketmq.MessageQueue) bool { return notLast(q) && f.available(q.BrokerName) }); ok {
			return q
		}
		if q, ok := pick(queues, idx, func(q rocketmq.MessageQueue) bool { return notLast(q) && f.reachable(q.BrokerName) }); ok {
			return q
		}
	} else if lastBroker != "" {
		if q, ok := pick(queues, idx, notLast); ok {
			return q
		}
	}
	return queues[idx.Inc()%uint32(len(queues))]
}
