package consumer

import (
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/metrics"
)

// The push consumer's reports to the metrics hook. Each costs a nil check
// when no hook is set.

func metricsQueue(mq rocketmq.MessageQueue, wireGroup string) metrics.Queue {
	return metrics.Queue{Topic: mq.Topic, Group: wireGroup, Broker: mq.BrokerName, ID: mq.QueueID}
}

// measureHandler reports one handler call on msgs messages of topic.
func (r *runState) measureHandler(topic string, res Result, err error, msgs int, d time.Duration) {
	h := r.cfg.client.Metrics
	if h == nil {
		return
	}
	out := metrics.OK
	switch {
	case err != nil:
		out = metrics.Error
	case res != Success:
		out = metrics.Retry
	}
	h.Consume(topic, r.c.wireGroup, out, msgs, d)
}

// measureCached reports how many messages q holds (0 once dropped). The
// pull goroutine and the handler goroutines report without a lock held,
// so their reports may cross: each reads the count again after reporting
// and reports again if it changed, so that the last report is current.
func (r *runState) measureCached(q *queueState) {
	h := r.cfg.client.Metrics
	if h == nil {
		return
	}
	held := func() int {
		if q.pq.isDropped() {
			return 0
		}
		n, _, _ := q.pq.stats()
		return n
	}
	mq := metricsQueue(q.mq, r.c.wireGroup)
	for n := held(); ; {
		h.Cached(mq, n)
		now := held()
		if now == n {
			return
		}
		n = now
	}
}

// measureLag reports a queue's lag after a pull answered its max offset.
func (r *runState) measureLag(q *queueState, maxOffset, next int64) {
	h := r.cfg.client.Metrics
	if h == nil {
		return
	}
	h.Lag(metricsQueue(q.mq, r.c.wireGroup), max(maxOffset-next, 0))
}

// measureRebalance reports the queues of wireTopic held after a rebalance
// that changed them.
func (r *runState) measureRebalance(wireTopic string) {
	h := r.cfg.client.Metrics
	if h == nil {
		return
	}
	h.Rebalance(wireTopic, r.c.wireGroup, len(r.heldQueues(wireTopic)))
}

// The lite pull consumer's reports.

// measureLagPulled reports q's lag after a pull, before its messages
// reach Poll: once Poll returned a message, the lag of the pull that
// brought it has been reported.
func (c *PullConsumer) measureLagPulled(q *liteQueue, res *PullResult) {
	h := c.cfg.client.Metrics
	if h == nil || res.Status == PullOffsetIllegal {
		return
	}
	h.Lag(metricsQueue(q.mq, c.wireGroup), max(res.MaxOffset-res.NextOffset, 0))
}

// measureCached reports the messages held of q, as runState.measureCached
// does: the pull goroutine and Poll both report, and the last report is
// the current count.
func (c *PullConsumer) measureCached(q *liteQueue) {
	h := c.cfg.client.Metrics
	if h == nil {
		return
	}
	mq := metricsQueue(q.mq, c.wireGroup)
	c.mu.Lock()
	n := q.count
	c.mu.Unlock()
	for {
		h.Cached(mq, int(n))
		c.mu.Lock()
		now := q.count
		c.mu.Unlock()
		if now == n {
			return
		}
		n = now
	}
}

// measurePoll reports a batch Poll returned: consumed (the application
// takes it from here) and no longer held.
func (c *PullConsumer) measurePoll(b *liteBatch) {
	h := c.cfg.client.Metrics
	if h == nil {
		return
	}
	h.Consume(b.q.mq.Topic, c.wireGroup, metrics.OK, len(b.msgs), 0)
	c.measureCached(b.q)
}

// measureStopped reports a queue no longer held: nothing cached.
func (c *PullConsumer) measureStopped(q *liteQueue) {
	if h := c.cfg.client.Metrics; h != nil {
		h.Cached(metricsQueue(q.mq, c.wireGroup), 0)
	}
}

// measureRebalance reports the queues of wt held after a change.
func (c *PullConsumer) measureRebalance(wt string) {
	h := c.cfg.client.Metrics
	if h == nil {
		return
	}
	n := 0
	for _, mq := range c.Assigned() {
		if c.wrap(mq).Topic == wt {
			n++
		}
	}
	h.Rebalance(wt, c.wireGroup, n)
}
