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

// measureCached reports how many messages q holds (0 once dropped).
func (r *runState) measureCached(q *queueState) {
	h := r.cfg.client.Metrics
	if h == nil {
		return
	}
	n := 0
	if !q.pq.isDropped() {
		n, _, _ = q.pq.stats()
	}
	h.Cached(metricsQueue(q.mq, r.c.wireGroup), n)
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

// measurePulled reports q's lag and held messages after a pull.
func (c *PullConsumer) measurePulled(q *liteQueue, res *PullResult) {
	h := c.cfg.client.Metrics
	if h == nil {
		return
	}
	c.mu.Lock()
	n := q.count
	c.mu.Unlock()
	mq := metricsQueue(q.mq, c.wireGroup)
	h.Cached(mq, int(n))
	if res.Status != PullOffsetIllegal {
		h.Lag(mq, max(res.MaxOffset-res.NextOffset, 0))
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
	c.mu.Lock()
	n := b.q.count
	c.mu.Unlock()
	h.Cached(metricsQueue(b.q.mq, c.wireGroup), int(n))
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
