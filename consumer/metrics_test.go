package consumer

import (
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/metrics"
)

// cachedHook records the last Cached report and runs during, once, inside
// the first one: another goroutine's report crossing it.
type cachedHook struct {
	metrics.Hook
	mu     sync.Mutex
	last   int
	during func()
}

func (h *cachedHook) Cached(_ metrics.Queue, n int) {
	h.mu.Lock()
	f := h.during
	h.during = nil
	h.mu.Unlock()
	if f != nil {
		f()
	}
	h.mu.Lock()
	h.last = n
	h.mu.Unlock()
}

func (h *cachedHook) Lag(metrics.Queue, int64)                                   {}
func (h *cachedHook) Consume(string, string, metrics.Result, int, time.Duration) {}

// The pull goroutine reports 5 held; before its report lands, Poll takes
// them and reports 0. The pull goroutine's report must not be the last.
func TestLiteCachedReportsCross(t *testing.T) {
	h := &cachedHook{}
	c := &PullConsumer{wireGroup: "g"}
	c.cfg.client.Metrics = h
	q := &liteQueue{mq: rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}, count: 5}
	h.during = func() {
		c.mu.Lock()
		q.count = 0
		c.mu.Unlock()
		c.measureCached(q) // Poll's report, landing first
	}
	c.measureCached(q) // the pull goroutine's, read at 5
	if h.last != 0 {
		t.Fatalf("last report %d held, want the current 0", h.last)
	}
}
