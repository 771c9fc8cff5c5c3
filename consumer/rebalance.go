package consumer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/rebalance"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Rebalance (Java RebalanceImpl / RebalancePushImpl): every
// rebalanceInterval and at once when asked (NOTIFY_CONSUMER_IDS_CHANGED,
// a subscription change, an illegal offset), each subscribed topic's
// readable queues are split between the group's members; queues that
// leave stop pulling and persist their offset, queues that arrive start a
// pull loop at their stored offset or where ConsumeFrom says.

func (r *runState) rebalanceLoop() {
	t := time.NewTicker(r.cfg.rebalanceInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.rebNow:
		}
		r.rebalance(r.pullCtx)
	}
}

// rebalance runs one round over every subscription.
func (r *runState) rebalance(ctx context.Context) {
	r.rebMu.Lock()
	defer r.rebMu.Unlock()
	changed := false
	subs := r.c.subscriptionList()
	topics := make(map[string]bool, len(subs))
	for _, s := range subs {
		if ctx.Err() != nil {
			return
		}
		topics[s.wireTopic] = true
		if r.rebalanceTopic(ctx, s) {
			changed = true
		}
	}
	// Queues of topics no longer subscribed (Java
	// truncateMessageQueueNotMyTopic).
	for _, mq := range r.heldQueues("") {
		if !topics[mq.Topic] {
			r.leaveQueue(ctx, mq)
			changed = true
		}
	}
	if changed {
		r.updateCaps()
		r.cli.TriggerHeartbeat()
	}
}

// rebalanceTopic allocates s's queues and reports whether the held set
// changed. On an error the current assignment stays, as Java's.
func (r *runState) rebalanceTopic(ctx context.Context, s *subscription) bool {
	all, err := r.cli.SubscribeQueues(ctx, s.wireTopic)
	if err != nil || len(all) == 0 {
		if ctx.Err() == nil && !rocketmq.IsRetryTopic(s.wireTopic) {
			r.log.Debug("rocketmq: rebalance: no queues", "group", r.cfg.group, "topic", s.topic, "err", err)
		}
		return false
	}
	all = slices.Clone(all)
	rebalance.SortQueues(all)
	var mine []rocketmq.MessageQueue
	if r.cfg.model == Broadcasting {
		mine = all
	} else {
		cids, err := r.cli.FindConsumerIDs(ctx, s.wireTopic, r.c.wireGroup)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Debug("rocketmq: rebalance: consumer ids", "group", r.cfg.group, "topic", s.topic, "err", err)
			}
			return false
		}
		cids = slices.Clone(cids)
		rebalance.SortClientIDs(cids)
		if err := rebalance.Validate(r.cli.ClientID(), all, cids); err != nil {
			r.log.Debug("rocketmq: rebalance: skipped", "group", r.cfg.group, "topic", s.topic, "err", err)
			return false
		}
		mine = r.cfg.strategy.Allocate(r.c.wireGroup, r.cli.ClientID(), all, cids)
		if !slices.Contains(cids, r.cli.ClientID()) {
			r.log.Debug("rocketmq: rebalance: this client is not among the group's consumers yet", "group", r.cfg.group, "topic", s.topic)
		}
	}
	return r.updateQueues(ctx, s, mine)
}

// updateQueues makes the held queues of s's topic exactly mine.
func (r *runState) updateQueues(ctx context.Context, s *subscription, mine []rocketmq.MessageQueue) bool {
	want := make(map[rocketmq.MessageQueue]bool, len(mine))
	for _, mq := range mine {
		want[mq] = true
	}
	changed := false
	for _, mq := range r.heldQueues(s.wireTopic) {
		if !want[mq] {
			r.leaveQueue(ctx, mq)
			changed = true
		}
	}
	r.qmu.Lock()
	var add []rocketmq.MessageQueue
	for _, mq := range mine {
		if _, resetting := r.resetting[mq]; r.queues[mq] == nil && !resetting && r.releasing[mq] == nil {
			add = append(add, mq)
		}
	}
	r.qmu.Unlock()
	var lockedAt int64
	if len(add) > 0 && r.locking() {
		// Locked before the start offset is read, so that it is the one
		// the previous owner persisted before releasing the lock.
		add, lockedAt = r.lockNew(ctx, add)
	}
	for _, mq := range add {
		r.store.remove(mq) // Java removeDirtyOffset
		off, err := r.computeFrom(ctx, mq)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("rocketmq: rebalance: no start offset, retried at the next rebalance", "group", r.cfg.group, "queue", queueLog(mq), "err", err)
			}
			if lockedAt > 0 {
				r.unlockNotTaken(ctx, mq)
			}
			continue
		}
		if r.addQueue(mq, off, lockedAt) {
			changed = true
			r.log.Info("rocketmq: queue assigned", "group", r.cfg.group, "queue", queueLog(mq), "offset", off)
		} else if lockedAt > 0 && r.stopping.Load() {
			r.unlockNotTaken(ctx, mq)
		}
	}
	if changed {
		r.measureRebalance(s.wireTopic)
	}
	return changed
}

// computeFrom is Java's computePullFromWhereWithException
// (docs/PROTOCOL.md §8.7).
func (r *runState) computeFrom(ctx context.Context, mq rocketmq.MessageQueue) (int64, error) {
	off, err := r.store.readStore(ctx, mq)
	if err == nil && off >= 0 {
		return off, nil
	}
	if err != nil && !errors.Is(err, errNoOffset) {
		return -1, err
	}
	retry := rocketmq.IsRetryTopic(mq.Topic)
	switch r.cfg.from {
	case FromFirst:
		return 0, nil
	case FromTimestamp:
		if retry {
			return r.queryOffset(ctx, mq, remoting.GetMaxOffset, 0)
		}
		// Second precision, as Java parses consumeTimestamp (yyyyMMddHHmmss).
		ts := r.cfg.fromTimestamp.Truncate(time.Second).UnixMilli()
		return r.queryOffset(ctx, mq, remoting.SearchOffsetByTimestamp, ts)
	default:
		if retry {
			return 0, nil
		}
		return r.queryOffset(ctx, mq, remoting.GetMaxOffset, 0)
	}
}

// queryOffset asks mq's master for its max offset or the offset of a
// time.
func (r *runState) queryOffset(ctx context.Context, mq rocketmq.MessageQueue, code int32, ts int64) (int64, error) {
	return queryQueueOffset(ctx, r.cli, mq, code, ts)
}

// addQueue starts holding mq from offset; false when the consumer is
// stopping or the queue is held already. lockedAt is when an orderly
// queue's broker lock was taken (unix ms).
func (r *runState) addQueue(mq rocketmq.MessageQueue, offset, lockedAt int64) bool {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	if _, resetting := r.resetting[mq]; r.stopping.Load() || r.queues[mq] != nil || resetting || r.releasing[mq] != nil {
		return false
	}
	q := &queueState{mq: mq, pq: newProcessQueue(), cell: r.store.cell(mq), pullDone: make(chan struct{})}
	q.task.q = q
	if r.c.orderly() {
		q.orderly = true
		if q.consumeMu = r.consumeMus[mq]; q.consumeMu == nil {
			q.consumeMu = new(sync.Mutex)
			r.consumeMus[mq] = q.consumeMu
		}
		q.lockNeeded = r.cfg.model == Clustering
		q.lastLock.Store(lockedAt)
		q.locked.Store(q.lockNeeded && lockedAt > 0)
	}
	if !rocketmq.IsRetryTopic(mq.Topic) {
		q.userTopic = mqclient.UnwrapNamespace(r.cfg.client.Namespace, mq.Topic)
		q.stats = r.stats.topic(mq.Topic)
	}
	q.ctx, q.cancel = context.WithCancel(r.handlerCtx)
	var pctx context.Context
	pctx, q.pullCancel = context.WithCancel(r.pullCtx)
	q.brokerID.Store(remoting.MasterID)
	r.setCapsLocked(q, r.countTopicLocked(mq.Topic)+1)
	r.queues[mq] = q
	r.gs.Go(func() {
		defer close(q.pullDone)
		r.pullLoop(pctx, q, offset)
	})
	return true
}

// dropQueue stops holding mq (Java removeUnnecessaryMessageQueue): the
// pull loop stops, handlers still running see their ctx cancelled and
// their results are ignored, the offset of what was consumed is persisted
// (acknowledged, when persist) and forgotten.
func (r *runState) dropQueue(ctx context.Context, mq rocketmq.MessageQueue, persist bool) *queueState {
	r.qmu.Lock()
	q := r.queues[mq]
	delete(r.queues, mq)
	r.qmu.Unlock()
	if q == nil {
		return nil
	}
	q.pq.setDropped()
	q.pullCancel()
	q.cancel()
	if persist {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.client.RequestTimeout)
		if err := r.store.persist(pctx, mq); err != nil {
			r.log.Warn("rocketmq: persist offset of a dropped queue", "group", r.cfg.group, "queue", queueLog(mq), "err", err)
		}
		cancel()
		r.store.remove(mq)
	}
	r.log.Info("rocketmq: queue dropped", "group", r.cfg.group, "queue", queueLog(mq))
	r.measureCached(q)
	return q
}

func (r *runState) countTopicLocked(wireTopic string) int {
	n := 0
	for mq := range r.queues {
		if mq.Topic == wireTopic {
			n++
		}
	}
	return n
}

// setCapsLocked sets q's flow-control caps: the per-queue options, or the
// topic caps split over the topic's n held queues when those are set
// (Java messageQueueChanged), at least 1.
func (r *runState) setCapsLocked(q *queueState, n int) {
	count := int64(r.cfg.pullThresholdForQueue)
	bytes := int64(r.cfg.pullThresholdSizeForQueue) << 20
	if n < 1 {
		n = 1
	}
	if r.cfg.pullThresholdForTopic != -1 {
		count = max(1, int64(r.cfg.pullThresholdForTopic)/int64(n))
	}
	if r.cfg.pullThresholdSizeForTopic != -1 {
		bytes = max(1, (int64(r.cfg.pullThresholdSizeForTopic)<<20)/int64(n))
	}
	q.capCount.Store(count)
	q.capBytes.Store(bytes)
}

// updateCaps recomputes every queue's caps after the held set changed.
func (r *runState) updateCaps() {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	per := map[string]int{}
	for mq := range r.queues {
		per[mq.Topic]++
	}
	for mq, q := range r.queues {
		r.setCapsLocked(q, per[mq.Topic])
	}
}

// queueLog formats a queue for logs.
func queueLog(mq rocketmq.MessageQueue) string { return rebalance.QueueString(mq) }
