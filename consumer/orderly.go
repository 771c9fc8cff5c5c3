package consumer

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Orderly consumption (Java ConsumeMessageOrderlyService and the lock
// part of RebalanceImpl): each queue has at most one consume task, which
// a worker runs holding the queue's consume mutex, taking batches of
// consecutive messages in offset order until the queue is empty, its time
// slice is over (then it goes to the back of the work queue so queues
// share the workers fairly), or a batch is suspended (then it runs again
// after the suspend time, the same batch first). In clustering mode a
// queue is pulled and consumed only while this client holds its broker
// lock (docs/PROTOCOL.md §9.9).

const (
	orderlySlice      = time.Second            // continuous consuming of one queue before it yields its worker
	lockTimeout       = time.Second            // Java lockBatchMQ / unlockBatchMQ timeout
	lockRetryFirst    = time.Second            // first quick rebalance after a refused lock
	relockDelay       = 100 * time.Millisecond // Java tryLockLaterAndReconsume's first wait
	relockAgainDelay  = 3 * time.Second        // Java: not locked, try again after this
	relockedDelay     = 10 * time.Millisecond  // Java: locked, consume after this
	pullDelayUnlocked = 3 * time.Second        // Java pullMessage when the queue is not locked
	releasePoll       = 5 * time.Millisecond
)

// locking reports whether queues are locked on the brokers: orderly
// consumption in clustering mode.
func (r *runState) locking() bool { return r.cfg.model == Clustering && r.c.orderly() }

// lockValid reports whether q's broker lock is held and not expired on
// the client side (Java isLocked && !isLockExpired).
func (r *runState) lockValid(q *queueState, now time.Time) bool {
	return q.locked.Load() && now.UnixMilli()-q.lastLock.Load() <= r.cfg.lockMaxLive.Milliseconds()
}

// scheduleOrderly queues q's consume task unless it is queued or running.
func (r *runState) scheduleOrderly(q *queueState) {
	if q.pq.schedule() {
		r.work.push(&q.task)
	}
}

// consumeOrderly runs q's consume task.
func (r *runState) consumeOrderly(q *queueState, st *msStamp) {
	q.consumeMu.Lock()
	defer q.consumeMu.Unlock()
	locking := r.locking()
	start := time.Now()
	relock := relockDelay
	for ; ; relock = relockedDelay {
		if q.pq.isDropped() {
			q.pq.unschedule()
			return
		}
		now := time.Now()
		if locking && !r.lockValid(q, now) {
			// Java: 100 ms when the task starts unlocked, 10 ms when the
			// lock went while it ran.
			r.relockLater(q, relock)
			return
		}
		if now.Sub(start) >= orderlySlice {
			r.work.push(&q.task)
			return
		}
		nowMS := now.UnixMilli()
		seq, msgs := q.pq.take(r.cfg.consumeBatchSize, nowMS, &q.inflight)
		if msgs == nil {
			return
		}
		if !r.runOrderly(q, seq, msgs, now, st) {
			return
		}
	}
}

// runOrderly runs one batch and processes its result (Java
// processConsumeResult for orderly); false when the task must stop: the
// batch was suspended or its result dropped.
func (r *runState) runOrderly(q *queueState, seq uint64, msgs []*rocketmq.MessageExt, now time.Time, st *msStamp) bool {
	defer q.inflight.Add(-1)
	startS := st.get(now.UnixMilli())
	for _, m := range msgs {
		r.resetTopic(m, r.retryTopic)
		if m.Properties == nil {
			m.Properties = make(map[string]string, 1)
		}
		m.Properties[rocketmq.PropertyConsumeStartTimestamp] = startS
	}
	req := consumeReq{q: q, msgs: msgs, seq: seq}
	var okBuf [16]bool
	ok := okBuf[:0]
	if len(msgs) <= len(okBuf) {
		ok = okBuf[:len(msgs)]
	} else {
		ok = make([]bool, len(msgs))
	}
	r.runHandlers(&req, ok, now)
	end := time.Now()
	if r.closed.Load() || (q.pq.isDropped() && !q.releasing.Load()) {
		// Dropped for an offset reset or Shutdown gave up: whoever
		// consumes the queue next gets these messages again.
		r.log.Debug("rocketmq: results of a dropped queue ignored", "group", r.cfg.group, "queue", queueLog(q.mq), "count", len(msgs))
		return false
	}
	nOK := 0
	for _, v := range ok {
		if v {
			nOK++
		}
	}
	ts := q.stats
	if ts == nil || msgs[0].Topic != q.userTopic {
		ts = r.stats.topic(mqclient.WrapNamespace(r.cfg.client.Namespace, msgs[0].Topic))
	}
	ts.consumed(end.Unix(), nOK, len(ok)-nOK, end.Sub(now))
	if nOK < len(ok) {
		if done := r.suspendBatch(msgs); done < len(msgs) {
			// The messages before the first one suspended are done (in
			// the DLQ); the rest comes again.
			r.commitOrderly(q, seq, msgs[:done], end)
			r.suspend(q, seq+uint64(done), msgs[done])
			return false
		}
	}
	r.commitOrderly(q, seq, msgs, end)
	return true
}

// commitOrderly removes a batch (or its head) from the process queue and
// moves the offset past it.
func (r *runState) commitOrderly(q *queueState, seq uint64, msgs []*rocketmq.MessageExt, end time.Time) {
	if len(msgs) == 0 {
		return
	}
	if off := q.pq.remove(seq, nil, msgs, nil, end.UnixMilli()); off >= 0 {
		q.cell.update(off, true)
	}
	r.measureCached(q)
}

// suspend puts the messages from seq (first) back and queues the task
// again after the suspend time.
func (r *runState) suspend(q *queueState, seq uint64, first *rocketmq.MessageExt) {
	q.pq.putBack(seq)
	r.log.Debug("rocketmq: orderly queue suspended", "group", r.cfg.group, "queue", queueLog(q.mq),
		"offset", first.QueueOffset, "for", r.cfg.suspendTime)
	r.resumeLater(q, r.cfg.suspendTime)
}

// suspendBatch decides a batch that was not acknowledged (Java
// checkReconsumeTimes): a message that has reached the max reconsume
// times goes to the DLQ (send-back with delay level -1); any other, or
// one whose send-back failed, has its ReconsumeTimes counted up and the
// batch is suspended. It returns how many leading messages went to the
// DLQ, and len(msgs) when nothing needs suspending.
func (r *runState) suspendBatch(msgs []*rocketmq.MessageExt) int {
	maxRe := int64(r.c.maxReconsume())
	lead := -1
	for i, m := range msgs {
		if int64(m.ReconsumeTimes) >= maxRe {
			err := r.sendBack(r.handlerCtx, m, -1)
			if err == nil {
				r.log.Warn("rocketmq: orderly message reached the max reconsume times, sent to the DLQ", "group", r.cfg.group,
					"topic", m.Topic, "msgId", m.MsgID, "reconsumeTimes", m.ReconsumeTimes)
				continue
			}
			r.log.Warn("rocketmq: orderly message not sent to the DLQ, queue suspended", "group", r.cfg.group, "topic", m.Topic, "msgId", m.MsgID, "err", err)
		}
		if lead < 0 {
			lead = i
		}
		m.ReconsumeTimes++
	}
	if lead < 0 {
		return len(msgs)
	}
	return lead
}

// resumeLater queues q's task again after d, unless the consumer stops
// or the queue is dropped for good first.
func (r *runState) resumeLater(q *queueState, d time.Duration) {
	r.workers.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.stop:
			return
		case <-q.ctx.Done():
			return
		}
		r.work.push(&q.task)
	})
}

// relockLater: q is not locked (or the lock expired): try to lock it and
// queue its task again, soon when that worked, later when not (Java
// tryLockLaterAndReconsume). Pulls of an unlocked queue pause meanwhile.
func (r *runState) relockLater(q *queueState, d time.Duration) {
	r.workers.Go(func() {
		if !sleepStop(r.stop, q.ctx, d) {
			return
		}
		r.lockMu.Lock()
		if q.pq.isDropped() {
			// Dropped or released meanwhile: no lock after its unlock.
			r.lockMu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(r.pullCtx, lockTimeout)
		got, err := r.lockBatch(ctx, q.mq.BrokerName, []rocketmq.MessageQueue{q.mq})
		cancel()
		r.lockMu.Unlock()
		d = relockAgainDelay
		if err == nil && got[q.mq] {
			q.lastLock.Store(time.Now().UnixMilli())
			q.locked.Store(true)
			d = relockedDelay
		}
		if !sleepStop(r.stop, q.ctx, d) {
			return
		}
		r.work.push(&q.task)
	})
}

// sleepStop waits d unless stop closes or ctx ends first; false when
// one did.
func sleepStop(stop <-chan struct{}, ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
	case <-ctx.Done():
	}
	return false
}

// lockBatch asks the master of broker to lock mqs for this client
// (LOCK_BATCH_MQ) and returns the ones it holds now.
func (r *runState) lockBatch(ctx context.Context, broker string, mqs []rocketmq.MessageQueue) (map[rocketmq.MessageQueue]bool, error) {
	resp, err := r.lockRPC(ctx, remoting.LockBatchMQ, broker, mqs)
	if err != nil {
		return nil, err
	}
	var body remoting.LockBatchResponseBody
	if err := body.DecodeJSON(resp.Body); err != nil {
		return nil, err
	}
	got := make(map[rocketmq.MessageQueue]bool, len(body.LockOKMQSet))
	for _, mq := range body.LockOKMQSet {
		got[mq] = true
	}
	return got, nil
}

// unlockBatch releases mqs on the master of broker (UNLOCK_BATCH_MQ),
// acknowledged.
func (r *runState) unlockBatch(ctx context.Context, broker string, mqs []rocketmq.MessageQueue) error {
	_, err := r.lockRPC(ctx, remoting.UnlockBatchMQ, broker, mqs)
	return err
}

func (r *runState) lockRPC(ctx context.Context, code int32, broker string, mqs []rocketmq.MessageQueue) (*remoting.Command, error) {
	addr, err := masterAddr(ctx, r.cli, mqs[0])
	if err != nil {
		return nil, err
	}
	body := remoting.LockBatchRequestBody{ConsumerGroup: r.c.wireGroup, ClientID: r.cli.ClientID(), MQSet: mqs}
	req := remoting.NewRequest(code, nil, body.AppendJSON(nil, remoting.JSONFastjson))
	resp, err := r.cli.Invoke(ctx, addr, req, lockTimeout)
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// byBroker groups queues by broker name.
func byBroker(mqs []rocketmq.MessageQueue) map[string][]rocketmq.MessageQueue {
	out := map[string][]rocketmq.MessageQueue{}
	for _, mq := range mqs {
		out[mq.BrokerName] = append(out[mq.BrokerName], mq)
	}
	return out
}

// lockNew locks queues about to be added and returns the ones locked; a
// refusal (the previous owner has not released the queue yet) brings
// the next rebalance forward. Called under rebMu.
func (r *runState) lockNew(ctx context.Context, mqs []rocketmq.MessageQueue) ([]rocketmq.MessageQueue, int64) {
	var out []rocketmq.MessageQueue
	refused := false
	for broker, list := range byBroker(mqs) {
		lctx, cancel := context.WithTimeout(ctx, lockTimeout)
		got, err := r.lockBatch(lctx, broker, list)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("rocketmq: lock queues failed", "group", r.cfg.group, "broker", broker, "err", err)
			}
			refused = true
			continue
		}
		for _, mq := range list {
			if got[mq] {
				out = append(out, mq)
			} else {
				refused = true
				r.log.Info("rocketmq: queue locked by another consumer, not taken yet", "group", r.cfg.group, "queue", queueLog(mq))
			}
		}
	}
	now := time.Now().UnixMilli()
	if refused {
		r.rebalanceAfterRefusal()
	} else {
		r.lockRetry = 0
	}
	return out, now
}

// rebalanceAfterRefusal runs a rebalance soon, at 1 s doubling up to
// the rebalance interval while locks keep being refused, rather than at
// the next period. Called under rebMu.
func (r *runState) rebalanceAfterRefusal() {
	if !r.lockRetrying.CompareAndSwap(false, true) {
		return
	}
	d := r.lockRetry
	if d == 0 {
		d = lockRetryFirst
	}
	r.lockRetry = min(2*d, r.cfg.rebalanceInterval)
	d = min(d, r.cfg.rebalanceInterval)
	r.gs.Go(func() {
		defer r.lockRetrying.Store(false)
		if sleep(r.pullCtx, d) {
			r.rebalanceSoon()
		}
	})
}

// lockAll renews the locks of every held queue, those being released
// included, one request per broker (Java RebalanceImpl.lockAll): a queue
// in the answer is locked now, one missing from it is not.
func (r *runState) lockAll() {
	if !r.locking() {
		return
	}
	r.lockMu.Lock()
	defer r.lockMu.Unlock()
	r.qmu.Lock()
	qs := make(map[rocketmq.MessageQueue]*queueState, len(r.queues)+len(r.releasing))
	for mq, q := range r.queues {
		qs[mq] = q
	}
	for mq, q := range r.releasing {
		if !q.unlocking.Load() {
			qs[mq] = q
		}
	}
	r.qmu.Unlock()
	mqs := make([]rocketmq.MessageQueue, 0, len(qs))
	for mq := range qs {
		mqs = append(mqs, mq)
	}
	for broker, list := range byBroker(mqs) {
		ctx, cancel := context.WithTimeout(r.pullCtx, lockTimeout)
		got, err := r.lockBatch(ctx, broker, list)
		cancel()
		if err != nil {
			if r.pullCtx.Err() == nil {
				r.log.Warn("rocketmq: renew queue locks failed", "group", r.cfg.group, "broker", broker, "err", err)
			}
			continue
		}
		now := time.Now().UnixMilli()
		for _, mq := range list {
			q := qs[mq]
			if got[mq] {
				q.lastLock.Store(now)
				if !q.locked.Swap(true) {
					r.log.Info("rocketmq: queue locked again", "group", r.cfg.group, "queue", queueLog(mq))
				}
			} else if q.locked.Swap(false) {
				r.log.Warn("rocketmq: queue lock lost, consuming it stops", "group", r.cfg.group, "queue", queueLog(mq))
			}
		}
	}
}

// unlockNotTaken releases the lock of a queue locked by a rebalance but
// not taken (no start offset, or Shutdown began), so that another member
// need not wait for the broker's expiry.
func (r *runState) unlockNotTaken(ctx context.Context, mq rocketmq.MessageQueue) {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockTimeout)
	defer cancel()
	if err := r.unlockBatch(uctx, mq.BrokerName, []rocketmq.MessageQueue{mq}); err != nil {
		r.log.Debug("rocketmq: unlock a queue not taken", "group", r.cfg.group, "queue", queueLog(mq), "err", err)
	}
}

// unlockAll releases mqs' locks, one request per broker.
func (r *runState) unlockAll(ctx context.Context, mqs []rocketmq.MessageQueue) {
	for broker, list := range byBroker(mqs) {
		if err := r.unlockBatch(ctx, broker, list); err != nil {
			r.log.Warn("rocketmq: unlock queues", "group", r.cfg.group, "broker", broker, "err", err)
		}
	}
}

// leaveQueue stops holding mq after a rebalance: an orderly queue is
// released, others dropped.
func (r *runState) leaveQueue(ctx context.Context, mq rocketmq.MessageQueue) {
	if r.c.orderly() {
		r.releaseQueue(mq)
		return
	}
	r.dropQueue(ctx, mq, true)
}

// releaseQueue lets an orderly queue go: no pull, no further batch; off
// the rebalance goroutine, the batch in hand finishes and commits, the
// offset is persisted (acknowledged) and then, in clustering mode, the
// broker lock released, so the next owner starts after the last batch
// consumed here. Until then the lock is renewed and the queue not taken
// again.
func (r *runState) releaseQueue(mq rocketmq.MessageQueue) {
	r.qmu.Lock()
	q := r.queues[mq]
	if q == nil {
		r.qmu.Unlock()
		return
	}
	delete(r.queues, mq)
	r.releasing[mq] = q
	r.qmu.Unlock()
	q.releasing.Store(true)
	q.pq.setDropped()
	q.pullCancel()
	cancelled := time.Now()
	r.gs.Go(func() { r.release(q, cancelled) })
}

func (r *runState) release(q *queueState, pullsCancelled time.Time) {
	if q.inflight.Load() > 0 {
		q.tryUnlockTimes.Add(1)
	}
	// Once dropped, no batch starts (take checks under the same lock):
	// the count only goes down.
	for q.inflight.Load() > 0 || !isClosed(q.pullDone) {
		if !sleep(r.pullCtx, releasePoll) {
			return // Shutdown persists and unlocks it
		}
	}
	if r.cfg.model == Clustering {
		if d := pullSettle - time.Since(pullsCancelled); d > 0 && !sleep(r.pullCtx, d) {
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.pullCtx, 2*r.cfg.client.RequestTimeout)
	defer cancel()
	// A periodic persist under way may hold an older offset of this queue:
	// it goes out before this one.
	r.persist.Lock()
	err := r.store.persist(ctx, q.mq)
	r.persist.Unlock()
	if err != nil {
		if ctx.Err() != nil && r.pullCtx.Err() != nil {
			return
		}
		r.log.Warn("rocketmq: persist offset of a released queue", "group", r.cfg.group, "queue", queueLog(q.mq), "err", err)
	}
	if r.locking() {
		// No renewal in flight, and none after: the unlock is the last
		// word on this queue.
		r.lockMu.Lock()
		q.unlocking.Store(true)
		err := r.unlockBatch(ctx, q.mq.BrokerName, []rocketmq.MessageQueue{q.mq})
		r.lockMu.Unlock()
		if err != nil {
			if r.pullCtx.Err() != nil {
				return
			}
			r.log.Warn("rocketmq: unlock released queue", "group", r.cfg.group, "queue", queueLog(q.mq), "err", err)
		}
	}
	r.qmu.Lock()
	if r.releasing[q.mq] == q {
		delete(r.releasing, q.mq)
		if r.queues[q.mq] == nil {
			r.store.remove(q.mq)
		}
	}
	r.qmu.Unlock()
	q.cancel()
	r.log.Info("rocketmq: queue released", "group", r.cfg.group, "queue", queueLog(q.mq))
	r.rebalanceSoon()
}

// idleQueues returns those of mqs (held or being released) with no
// handler call running: at Shutdown, a queue whose call ignored its
// cancelled ctx stays locked until the broker expires the lock, so that
// its next owner does not consume it while that call still runs.
func (r *runState) idleQueues(mqs []rocketmq.MessageQueue) []rocketmq.MessageQueue {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	out := make([]rocketmq.MessageQueue, 0, len(mqs))
	for _, mq := range mqs {
		q := r.queues[mq]
		if q == nil {
			q = r.releasing[mq]
		}
		if q != nil && q.inflight.Load() > 0 {
			r.log.Warn("rocketmq: shutdown: queue left locked, its handler still runs", "group", r.cfg.group, "queue", queueLog(mq))
			continue
		}
		out = append(out, mq)
	}
	return out
}

// releasingQueues returns the queues being released.
func (r *runState) releasingQueues() []rocketmq.MessageQueue {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	out := make([]rocketmq.MessageQueue, 0, len(r.releasing))
	for mq := range r.releasing {
		out = append(out, mq)
	}
	return out
}
