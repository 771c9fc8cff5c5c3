package consumer

import (
	"context"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Java's pull timings (DefaultMQPushConsumerImpl, docs/PROTOCOL.md §8.8).
const (
	pullCallTimeout    = 30 * time.Second      // long-poll RPC timeout
	pullDelayOnError   = 3 * time.Second       // PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION (4.x)
	pullDelayOnFlowCtl = 50 * time.Millisecond // PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL
	flowLogEvery       = 1000                  // log one flow-control pause in this many, as Java
)

// pullLoop pulls q from offset until ctx ends or q is dropped. It is the
// only writer of the queue's next offset.
func (r *runState) pullLoop(ctx context.Context, q *queueState, offset int64) {
	next := offset
	var hdr remoting.PullMessageRequestHeader
	for ctx.Err() == nil {
		if q.pq.isDropped() {
			return
		}
		q.pq.setLastPull(time.Now().UnixMilli())
		if r.flowControlled(q) {
			if !sleep(ctx, pullDelayOnFlowCtl) {
				return
			}
			continue
		}
		if q.lockNeeded && !q.locked.Load() {
			// Java pulls an orderly queue only while it is locked.
			if !sleep(ctx, pullDelayUnlocked) {
				return
			}
			continue
		}
		s := r.c.subscription(q.mq.Topic)
		if s == nil {
			// Unsubscribed: the next rebalance drops the queue.
			if !sleep(ctx, pullDelayOnError) {
				return
			}
			continue
		}
		n, err := r.pullOnce(ctx, q, s, &hdr, &next)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if err == errDropped {
				return
			}
			r.log.Warn("rocketmq: pull failed", "group", r.cfg.group, "queue", queueLog(q.mq), "offset", next, "err", err)
			if !sleep(ctx, pullDelayOnError) {
				return
			}
			continue
		}
		if n > 0 && r.cfg.pullInterval > 0 {
			if !sleep(ctx, r.cfg.pullInterval) {
				return
			}
		}
	}
}

// flowControlled reports whether q holds too much to pull more now
// (Java pullMessage's three checks), counting the pauses.
func (r *runState) flowControlled(q *queueState) bool {
	count, bytes, span := q.pq.stats()
	var why string
	switch {
	case int64(count) > q.capCount.Load():
		why = "count"
	case bytes > q.capBytes.Load():
		why = "size"
	case span > int64(r.cfg.maxSpan) && !q.orderly: // Java checks the span of concurrent consumers only
		why = "span"
	default:
		return false
	}
	if n := q.flowCtl.Add(1); n%flowLogEvery == 1 {
		r.log.Warn("rocketmq: pulls paused: flow control", "group", r.cfg.group, "queue", queueLog(q.mq), "reason", why,
			"count", count, "bytes", bytes, "span", span, "pauses", n)
	}
	return true
}

// pullOnce sends one PULL_MESSAGE and handles its answer; it returns the
// number of messages taken.
func (r *runState) pullOnce(ctx context.Context, q *queueState, s *subscription, hdr *remoting.PullMessageRequestHeader, next *int64) (int, error) {
	br, ok := r.cli.FindBroker(q.mq.BrokerName, q.brokerID.Load(), false)
	if !ok {
		_ = r.cli.UpdateRoute(ctx, q.mq.Topic)
		if br, ok = r.cli.FindBroker(q.mq.BrokerName, q.brokerID.Load(), false); !ok {
			return 0, errNoBroker(q.mq)
		}
	}
	// The piggy-backed commit (docs/PROTOCOL.md §8.8): clustering only,
	// and only to the master.
	commit := int64(0)
	sysFlag := remoting.PullFlagSuspend | remoting.PullFlagSubscription
	if r.cfg.model == Clustering {
		if v := q.cell.v.Load(); v > 0 {
			commit = v
			if !br.Slave {
				sysFlag |= remoting.PullFlagCommitOffset
			}
		}
	}
	expr, typ := s.data.SubString, s.data.ExpressionType
	*hdr = remoting.PullMessageRequestHeader{
		ConsumerGroup:        r.c.wireGroup,
		Topic:                q.mq.Topic,
		QueueID:              int32(q.mq.QueueID),
		QueueOffset:          *next,
		MaxMsgNums:           int32(r.cfg.pullBatchSize),
		SysFlag:              sysFlag,
		CommitOffset:         commit,
		SuspendTimeoutMillis: r.cfg.suspendBrokerMillis.Milliseconds(),
		Subscription:         &expr,
		SubVersion:           s.data.SubVersion,
		ExpressionType:       &typ,
		BrokerName:           &q.mq.BrokerName,
	}
	start := time.Now()
	req := remoting.NewRequest(remoting.PullMessage, hdr.AppendExt(make(remoting.ExtFields, 0, 12)), nil)
	resp, err := r.cli.Invoke(ctx, br.Addr, req, pullCallTimeout)
	if err != nil {
		return 0, err
	}
	if q.pq.isDropped() {
		return 0, errDropped
	}
	var rh remoting.PullMessageResponseHeader
	switch resp.Code {
	case remoting.Success, remoting.PullNotFound, remoting.PullRetryImmediately, remoting.PullOffsetMoved:
		if err := rh.FromExt(resp.Ext); err != nil {
			return 0, err
		}
	default:
		return 0, remoting.ResponseError(resp)
	}
	q.brokerID.Store(rh.SuggestWhichBrokerID)
	switch resp.Code {
	case remoting.Success:
		msgs, err := message.DecodeRecords(resp.Body)
		if err != nil {
			r.log.Warn("rocketmq: pulled messages partly unreadable", "group", r.cfg.group, "queue", queueLog(q.mq), "err", err)
		}
		r.stats.pulled(q.mq.Topic, len(msgs), time.Since(start))
		*next = rh.NextBeginOffset
		charge := pullChargeOf(msgs, len(resp.Body))
		msgs = r.prepare(q, s, msgs, rh.MinOffset, rh.MaxOffset)
		if len(msgs) == 0 {
			r.correctOffset(q, *next)
			return 0, nil
		}
		seq, msgs := q.pq.add(msgs, charge)
		r.measureCached(q)
		r.measureLag(q, rh.MaxOffset, *next)
		switch {
		case len(msgs) == 0:
		case q.orderly:
			r.scheduleOrderly(q)
		default:
			r.dispatch(q, msgs, seq)
		}
		return len(msgs), nil
	case remoting.PullNotFound, remoting.PullRetryImmediately:
		*next = rh.NextBeginOffset
		r.correctOffset(q, *next)
		r.measureLag(q, rh.MaxOffset, *next)
		return 0, nil
	default: // PULL_OFFSET_MOVED
		r.offsetIllegal(q, *next, rh.NextBeginOffset)
		return 0, errDropped
	}
}

// prepare filters and completes pulled messages as Java
// processPullResult: the broker filters tags by hash only, so the tag
// string is checked again; each message gets its broker name and the
// queue's min/max offsets.
func (r *runState) prepare(q *queueState, s *subscription, msgs []*rocketmq.MessageExt, minOff, maxOff int64) []*rocketmq.MessageExt {
	filter := s.sel.Type == SelectorTag && !s.filter.MatchAll()
	minS, maxS := strconv.FormatInt(minOff, 10), strconv.FormatInt(maxOff, 10)
	out := msgs[:0]
	for _, m := range msgs {
		if filter && !s.filter.Matches(m.Tag()) {
			continue
		}
		m.BrokerName = q.mq.BrokerName
		if m.Properties == nil {
			m.Properties = make(map[string]string, 2)
		}
		m.Properties[rocketmq.PropertyMinOffset] = minS
		m.Properties[rocketmq.PropertyMaxOffset] = maxS
		out = append(out, m)
	}
	clear(msgs[len(out):])
	return out
}

// correctOffset moves the stored offset past messages the broker or the
// tag filter skipped, when nothing is held (Java correctTagsOffset).
func (r *runState) correctOffset(q *queueState, next int64) {
	if count, _, _ := q.pq.stats(); count == 0 {
		q.cell.update(next, true)
	}
}

// offsetIllegal: the broker says the offset is out of range (Java
// PULL_OFFSET_MOVED handling): the queue is dropped, its offset set to
// the broker's next offset and persisted, and a rebalance takes it again.
func (r *runState) offsetIllegal(q *queueState, asked, next int64) {
	r.log.Warn("rocketmq: pull offset illegal, queue restarts at the broker's offset", "group", r.cfg.group,
		"queue", queueLog(q.mq), "offset", asked, "next", next)
	q.pq.setDropped()
	r.gs.Go(func() {
		r.rebMu.Lock()
		defer r.rebMu.Unlock()
		r.dropQueue(r.pullCtx, q.mq, false)
		r.store.update(q.mq, next, false)
		ctx, cancel := context.WithTimeout(r.pullCtx, r.cfg.client.RequestTimeout)
		if err := r.store.persist(ctx, q.mq); err != nil && ctx.Err() == nil {
			r.log.Warn("rocketmq: persist moved offset", "group", r.cfg.group, "queue", queueLog(q.mq), "err", err)
		}
		cancel()
		r.store.remove(q.mq)
		r.rebalanceSoon()
	})
}

type noBrokerError struct{ mq rocketmq.MessageQueue }

func (e noBrokerError) Error() string {
	return "rocketmq: broker " + e.mq.BrokerName + " of " + e.mq.Topic + " has no known address"
}

func errNoBroker(mq rocketmq.MessageQueue) error { return noBrokerError{mq} }
