package consumer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Concurrent consumption (Java ConsumeMessageConcurrentlyService): pulled
// messages are cut into batches of consumeBatchSize and run by a fixed
// pool of consumeGoroutines workers.

const (
	sendBackTimeout   = 5 * time.Second // Java consumerSendMessageBack's timeout
	retrySendTimeout  = 3 * time.Second // Java's producer send timeout, for the fallback copy
	localRetryDelay   = 5 * time.Second // Java submitConsumeRequestLater
	expiredDelayLevel = 3               // Java cleanExpiredMsg's send-back level
	expiredPerRound   = 16              // Java cleanExpiredMsg looks at 16 per queue
)

// consumeReq is one batch of one queue, or with msgs nil an orderly
// queue's consume task.
type consumeReq struct {
	q    *queueState
	msgs []*rocketmq.MessageExt
	seq  uint64     // seq of msgs[0]; consecutive for a pulled batch
	seqs []uint64   // per message, for a local retry (else nil)
	hc   handlerCtx // the first handler call's ctx, allocated with the request
}

// dispatch hands msgs, just added at seq, to the workers in batches.
// The work queue is unbounded, as Java's consume executor: what a
// consumer holds is bounded by flow control, per queue.
func (r *runState) dispatch(q *queueState, msgs []*rocketmq.MessageExt, seq uint64) {
	bs := r.cfg.consumeBatchSize
	n := (len(msgs) + bs - 1) / bs
	reqs := make([]consumeReq, n)
	r.work.mu.Lock()
	for k := range reqs {
		i := k * bs
		end := min(i+bs, len(msgs))
		reqs[k] = consumeReq{q: q, msgs: msgs[i:end:end], seq: seq + uint64(i)}
		r.work.pushLocked(&reqs[k])
	}
	wake := min(n, r.work.waiting)
	r.work.mu.Unlock()
	for ; wake > 0; wake-- {
		r.work.cond.Signal()
	}
}

// workerTake is the most batches a worker takes at once, when the queue is
// deep enough that every worker has that many: fewer lock round trips,
// and no worker left idle while another holds several.
const workerTake = 4

func (r *runState) worker() {
	var st msStamp
	var buf [workerTake]*consumeReq
	for {
		reqs, ok := r.work.pop(buf[:0], r.cfg.consumeGoroutines)
		if !ok {
			return
		}
		for i, req := range reqs {
			switch {
			case r.work.shut.Load():
			case req.msgs == nil:
				r.consumeOrderly(req.q, &st)
			default:
				r.consume(req, &st)
			}
			buf[i] = nil
		}
	}
}

// msStamp caches the decimal form of a unix-ms time: one worker's batches
// in one millisecond share it.
type msStamp struct {
	ms int64
	s  string
}

func (m *msStamp) get(ms int64) string {
	if ms != m.ms || m.s == "" {
		m.ms, m.s = ms, strconv.FormatInt(ms, 10)
	}
	return m.s
}

// workQueue is the FIFO of batches waiting for a worker.
type workQueue struct {
	mu       sync.Mutex
	cond     sync.Cond
	buf      []*consumeReq
	head     int
	closed   bool        // pop fails at once
	draining bool        // pop fails once the queue is empty
	waiting  int         // workers waiting in pop
	shut     atomic.Bool // closed, for workers holding batches already taken
}

func newWorkQueue() *workQueue {
	w := &workQueue{}
	w.cond.L = &w.mu
	return w
}

func (w *workQueue) pushLocked(req *consumeReq) {
	if w.head > 0 && w.head == len(w.buf) {
		w.buf, w.head = w.buf[:0], 0
	} else if w.head > 1024 && w.head*2 > len(w.buf) {
		n := copy(w.buf, w.buf[w.head:])
		clear(w.buf[n:])
		w.buf, w.head = w.buf[:n], 0
	}
	w.buf = append(w.buf, req)
}

func (w *workQueue) push(req *consumeReq) {
	w.mu.Lock()
	w.pushLocked(req)
	w.mu.Unlock()
	w.cond.Signal()
}

// pop waits for batches and appends to dst one, or up to workerTake when
// more than that many are queued per worker (one orderly queue task at a
// time); false once the queue is closed, or drained and empty.
func (w *workQueue) pop(dst []*consumeReq, workers int) ([]*consumeReq, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.head == len(w.buf) && !w.closed && !w.draining {
		w.waiting++
		w.cond.Wait()
		w.waiting--
	}
	if w.closed || w.head == len(w.buf) {
		return dst, false
	}
	n := min(workerTake, max(1, (len(w.buf)-w.head)/max(workers, 1)))
	if w.buf[w.head].msgs == nil {
		// An orderly queue's task may run for its whole time slice: the
		// others stay for the idle workers.
		n = 1
	}
	for ; n > 0; n-- {
		dst = append(dst, w.buf[w.head])
		w.buf[w.head] = nil
		w.head++
	}
	return dst, true
}

// drain lets the workers take what is queued, then end.
func (w *workQueue) drain() {
	w.mu.Lock()
	w.draining = true
	w.mu.Unlock()
	w.cond.Broadcast()
}

// close wakes every worker for good; batches still queued are dropped
// (not consumed, not acknowledged).
func (w *workQueue) close() {
	w.shut.Store(true)
	w.mu.Lock()
	w.closed = true
	clear(w.buf)
	w.buf, w.head = nil, 0
	w.mu.Unlock()
	w.cond.Broadcast()
}

// consume runs one batch and processes its result (Java ConsumeRequest.run
// and processConsumeResult).
func (r *runState) consume(req *consumeReq, st *msStamp) {
	q := req.q
	now := time.Now()
	nowMS := now.UnixMilli()
	startS := st.get(nowMS)
	for _, m := range req.msgs {
		r.resetTopic(m, r.retryTopic)
		if m.Properties == nil {
			m.Properties = make(map[string]string, 1)
		}
		m.Properties[rocketmq.PropertyConsumeStartTimestamp] = startS
	}
	if !q.pq.begin(req.seq, req.seqs, len(req.msgs), nowMS, &q.inflight) {
		return
	}
	defer q.inflight.Add(-1)

	var okBuf [16]bool
	ok := okBuf[:0]
	if len(req.msgs) <= len(okBuf) {
		ok = okBuf[:len(req.msgs)]
	} else {
		ok = make([]bool, len(req.msgs))
	}
	r.runHandlers(req, ok, now)
	end := time.Now()
	rt := end.Sub(now)

	if q.pq.isDropped() || r.closed.Load() {
		// Java: a dropped queue's results are not processed; whoever holds
		// the queue now gets these messages again.
		r.log.Debug("rocketmq: results of a dropped queue ignored", "group", r.cfg.group, "queue", queueLog(q.mq), "count", len(req.msgs))
		return
	}
	nOK := 0
	for _, v := range ok {
		if v {
			nOK++
		}
	}
	ts := q.stats
	if ts == nil || req.msgs[0].Topic != q.userTopic {
		ts = r.stats.topic(mqclient.WrapNamespace(r.cfg.client.Namespace, req.msgs[0].Topic))
	}
	ts.consumed(end.Unix(), nOK, len(ok)-nOK, rt)

	var keep []bool
	if nOK < len(ok) {
		keep = r.handleFailed(req, ok)
	}
	off := q.pq.remove(req.seq, req.seqs, req.msgs, keep, end.UnixMilli())
	if off >= 0 && !q.pq.isDropped() {
		q.cell.update(off, true)
	}
	r.measureCached(q)
}

// resetTopic gives a retried message its original topic back and takes
// the namespace off (Java resetRetryAndNamespace).
func (r *runState) resetTopic(m *rocketmq.MessageExt, retryTopic string) {
	if m.Topic == retryTopic {
		if t := m.Property(rocketmq.PropertyRetryTopic); t != "" {
			m.Topic = t
		}
	}
	if ns := r.cfg.client.Namespace; ns != "" {
		m.Topic = mqclient.UnwrapNamespace(ns, m.Topic)
	}
}

// runHandlers calls the handlers of msgs (one call for a batch of one
// topic; messages of the retry topic may come from several) and marks
// the acknowledged ones in ok.
func (r *runState) runHandlers(req *consumeReq, ok []bool, now time.Time) {
	q, msgs := req.q, req.msgs
	hc := &req.hc
	for i := 0; i < len(msgs); {
		j := i + 1
		for j < len(msgs) && msgs[j].Topic == msgs[i].Topic {
			j++
		}
		s := r.c.handlerFor(mqclient.WrapNamespace(r.cfg.client.Namespace, msgs[i].Topic))
		if s == nil {
			r.log.Warn("rocketmq: no handler for the topic of a message, given back", "group", r.cfg.group, "topic", msgs[i].Topic, "count", j-i)
			i = j
			continue
		}
		if hc == nil {
			hc = new(handlerCtx)
		}
		hc.init(q.ctx, now.Add(r.cfg.consumeTimeout))
		var start time.Time
		if r.cfg.client.Metrics != nil {
			start = time.Now()
		}
		res, err := r.call(hc, s, msgs[i:j:j])
		hc = nil
		if r.cfg.client.Metrics != nil {
			r.measureHandler(mqclient.WrapNamespace(r.cfg.client.Namespace, msgs[i].Topic), res, err, j-i, time.Since(start))
		}
		if res == Success && err == nil {
			for k := i; k < j; k++ {
				ok[k] = true
			}
		} else if err != nil {
			r.log.Warn("rocketmq: handler failed, messages given back", "group", r.cfg.group, "topic", msgs[i].Topic, "err", err, "count", j-i)
		}
		i = j
	}
}

// call runs the handler chain on msgs with the handler context; a panic
// becomes RetryLater with the stack logged.
func (r *runState) call(hc *handlerCtx, s *subscription, msgs []*rocketmq.MessageExt) (res Result, err error) {
	defer hc.release()
	// Registered before the recover below, so it runs after it and sees a
	// panic's result.
	tc := r.trace.before(msgs)
	defer func() { r.trace.after(tc, len(msgs), res, err) }()
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("rocketmq: handler panicked, messages given back", "group", r.cfg.group, "topic", msgs[0].Topic,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res, err = RetryLater, fmt.Errorf("rocketmq: handler panicked: %v", p)
		}
	}()
	return s.chain(hc, msgs)
}

// chainOf wraps h in the interceptors, the first outermost.
func chainOf(h Handler, in []Interceptor) Handler {
	for i := len(in) - 1; i >= 0; i-- {
		ic, next := in[i], h
		h = func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) { return ic(ctx, msgs, next) }
	}
	return h
}

// handleFailed gives back the messages not acknowledged and returns which
// stay held for a local retry (nil: none).
func (r *runState) handleFailed(req *consumeReq, ok []bool) []bool {
	if r.cfg.model == Broadcasting {
		for i, m := range req.msgs {
			if !ok[i] {
				r.log.Warn("rocketmq: broadcasting: message not consumed, dropped", "group", r.cfg.group, "topic", m.Topic, "msgId", m.MsgID)
			}
		}
		return nil
	}
	var keep []bool
	var later []int
	for i, m := range req.msgs {
		if ok[i] {
			continue
		}
		seq := seqOf(req.seq, req.seqs, i)
		held, swept := req.q.pq.claimFailed(seq, m)
		if !held {
			continue // the expiry sweep gave it back meanwhile
		}
		if swept {
			// The sweep is sending it back now; it stays held until the
			// sweep removes it, or retries it locally if that fails.
			if keep == nil {
				keep = make([]bool, len(req.msgs))
			}
			keep[i] = true
			continue
		}
		if err := r.sendBack(r.handlerCtx, m, 0); err != nil {
			r.log.Warn("rocketmq: message given back locally", "group", r.cfg.group, "topic", m.Topic, "msgId", m.MsgID, "err", err)
			req.q.pq.unclaim(seq, m)
			prepareLocalRetry(m)
			if keep == nil {
				keep = make([]bool, len(req.msgs))
			}
			keep[i] = true
			later = append(later, i)
		}
	}
	if len(later) > 0 {
		lr := &consumeReq{q: req.q, seqs: make([]uint64, len(later))}
		for k, i := range later {
			lr.msgs = append(lr.msgs, req.msgs[i])
			lr.seqs[k] = seqOf(req.seq, req.seqs, i)
		}
		r.submitLater(lr)
	}
	return keep
}

// prepareLocalRetry readies a message that could not be given back for
// its local retry.
func prepareLocalRetry(m *rocketmq.MessageExt) {
	m.ReconsumeTimes++
	// Its body aliases the whole pull response: a copy lets the rest of
	// that response go while it waits.
	m.Body = slices.Clone(m.Body)
}

// submitLater runs req again after localRetryDelay, unless the consumer
// stops or the queue is dropped first.
func (r *runState) submitLater(req *consumeReq) {
	if r.stopping.Load() {
		return // Shutdown: the messages stay held, not acknowledged
	}
	// Counted with the workers: the calling worker is one, so the count is
	// not zero while Shutdown may be waiting on it.
	r.workers.Go(func() {
		t := time.NewTimer(localRetryDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.stop:
			return
		case <-req.q.ctx.Done():
			return
		}
		r.work.push(req)
	})
}

// sendBack returns a message to the broker for a later retry (Java
// DefaultMQPushConsumerImpl.sendMessageBack): CONSUMER_SEND_MSG_BACK to
// the master of its broker, else a copy sent to the retry topic. Each
// attempt has its own timeout, derived from ctx: 5 s for the send-back as
// Java's, 3 s for the copy as Java's producer.
func (r *runState) sendBack(ctx context.Context, m *rocketmq.MessageExt, delayLevel int32) error {
	ns := r.cfg.client.Namespace
	wireTopic := mqclient.WrapNamespace(ns, m.Topic)
	maxRe := int32(r.c.maxReconsume())
	actx, cancel := context.WithTimeout(ctx, sendBackTimeout)
	err := r.sendBackRPC(actx, m, wireTopic, delayLevel, maxRe)
	cancel()
	if err == nil {
		return nil
	}
	r.log.Warn("rocketmq: send-back failed, sending to the retry topic", "group", r.cfg.group, "msgId", m.MsgID, "err", err)
	actx, cancel = context.WithTimeout(ctx, retrySendTimeout)
	err2 := r.sendToRetryTopic(actx, m, wireTopic, maxRe)
	cancel()
	if err2 != nil {
		return errors.Join(err, err2)
	}
	return nil
}

func (r *runState) sendBackRPC(ctx context.Context, m *rocketmq.MessageExt, wireTopic string, delayLevel, maxRe int32) error {
	addr, ok := r.cli.BrokerAddr(m.BrokerName)
	if !ok {
		if m.StoreHost.IsValid() {
			addr = m.StoreHost.String()
		} else {
			return fmt.Errorf("rocketmq: broker %s has no master", m.BrokerName)
		}
	}
	msgID := m.MsgID
	h := remoting.ConsumerSendMsgBackRequestHeader{
		Offset:            m.CommitLogOffset,
		Group:             r.c.wireGroup,
		DelayLevel:        delayLevel,
		OriginMsgID:       &msgID,
		OriginTopic:       &wireTopic,
		MaxReconsumeTimes: &maxRe,
	}
	if m.BrokerName != "" {
		bname := m.BrokerName
		h.BrokerName = &bname // Java 4.9.8 sets bname too
	}
	resp, err := r.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.ConsumerSendMsgBack, h.AppendExt(nil), nil), sendBackTimeout)
	if err != nil {
		return err
	}
	return remoting.ResponseError(resp)
}

// sendToRetryTopic sends a copy of m to the group's retry topic with
// SEND_MESSAGE_V2, as Java's fallback does through its inner producer.
func (r *runState) sendToRetryTopic(ctx context.Context, m *rocketmq.MessageExt, wireTopic string, maxRe int32) error {
	retryTopic := mqclient.RetryTopicOf(r.cfg.client.Namespace, r.cfg.group)
	// The retry topic may have no route yet (its broker creates it at the
	// first heartbeat and registers it a little later): a broker creates
	// a retry topic on a send to it, so the message's own broker takes it
	// then.
	mq := rocketmq.MessageQueue{Topic: retryTopic, BrokerName: m.BrokerName}
	if info, err := r.cli.PublishInfo(ctx, retryTopic, "", 0); err == nil && len(info.Queues) > 0 {
		mq = info.Queues[rand.IntN(len(info.Queues))]
	}
	addr, ok := r.cli.BrokerAddr(mq.BrokerName)
	if !ok {
		return fmt.Errorf("rocketmq: broker %s has no master", mq.BrokerName)
	}
	props := make(map[string]string, len(m.Properties)+4)
	for k, v := range m.Properties {
		props[k] = v
	}
	origin := m.Property(rocketmq.PropertyOriginMessageID)
	if origin == "" {
		origin = m.MsgID
	}
	props[rocketmq.PropertyOriginMessageID] = origin
	props[rocketmq.PropertyRetryTopic] = wireTopic
	props[rocketmq.PropertyDelayLevel] = strconv.Itoa(3 + int(m.ReconsumeTimes))
	delete(props, rocketmq.PropertyTransactionPrepared)
	// The producer moves these two to the header for retry topics.
	delete(props, rocketmq.PropertyReconsumeTime)
	delete(props, rocketmq.PropertyMaxReconsumeTimes)
	if props[rocketmq.PropertyUniqKey] == "" {
		props[rocketmq.PropertyUniqKey] = m.MsgID
	}
	ps := message.EncodeProperties(props)
	reconsume := m.ReconsumeTimes + 1
	bname := mq.BrokerName
	h := remoting.SendMessageRequestHeaderV2{
		ProducerGroup:         rocketmq.GroupClientInnerProducer,
		Topic:                 retryTopic,
		DefaultTopic:          rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4,
		QueueID:               int32(mq.QueueID),
		BornTimestamp:         time.Now().UnixMilli(),
		Flag:                  m.Flag,
		Properties:            &ps,
		ReconsumeTimes:        &reconsume,
		MaxReconsumeTimes:     &maxRe,
		BrokerName:            &bname,
	}
	resp, err := r.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.SendMessageV2, h.AppendExt(nil), m.Body), retrySendTimeout)
	if err != nil {
		return err
	}
	return remoting.ResponseError(resp)
}

func (r *runState) cleanExpired() {
	if r.c.orderly() {
		return // Java's orderly service has no expiry sweep
	}
	r.qmu.Lock()
	qs := make([]*queueState, 0, len(r.queues))
	for _, q := range r.queues {
		qs = append(qs, q)
	}
	r.qmu.Unlock()
	cutoff := time.Now().Add(-r.cfg.consumeTimeout).UnixMilli()
	for _, q := range qs {
		for _, e := range q.pq.expired(cutoff, expiredPerRound) {
			err := r.sendBack(r.pullCtx, e.msg, expiredDelayLevel)
			if err != nil {
				r.log.Warn("rocketmq: expired message not given back", "group", r.cfg.group, "queue", queueLog(q.mq), "msgId", e.msg.MsgID, "err", err)
				if q.pq.unclaim(e.seq, e.msg) {
					// Its handler failed meanwhile and left it to us.
					prepareLocalRetry(e.msg)
					r.submitLater(&consumeReq{q: q, msgs: []*rocketmq.MessageExt{e.msg}, seqs: []uint64{e.seq}})
				}
				continue
			}
			r.log.Info("rocketmq: expired message given back", "group", r.cfg.group, "queue", queueLog(q.mq), "msgId", e.msg.MsgID, "offset", e.msg.QueueOffset)
			if off, ok := q.pq.removeOne(e.seq, e.msg); ok && off >= 0 && !q.pq.isDropped() {
				q.cell.update(off, true)
			}
		}
	}
}

// handlerCtx is a handler's context: its base (cancelled when the queue
// is dropped or Shutdown gives up) with the consume timeout as deadline.
// The timer behind the deadline is made only when the handler asks for
// Done, so a handler that never looks costs no timer. Once the handler
// has returned, the context is over.
type handlerCtx struct {
	base     context.Context
	deadline time.Time
	made     atomic.Bool // ctx is set
	mu       sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	released bool
}

// doneCtx is the context of a handler that has returned.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func newHandlerCtx(base context.Context, deadline time.Time) *handlerCtx {
	c := new(handlerCtx)
	c.init(base, deadline)
	return c
}

// init sets a zero handlerCtx up.
func (c *handlerCtx) init(base context.Context, deadline time.Time) {
	c.base, c.deadline = base, deadline
}

func (c *handlerCtx) get() context.Context {
	if c.made.Load() {
		return c.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		if c.released {
			c.ctx = doneCtx
		} else {
			c.ctx, c.cancel = context.WithDeadline(c.base, c.deadline)
		}
		c.made.Store(true)
	}
	return c.ctx
}

func (c *handlerCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *handlerCtx) Done() <-chan struct{} { return c.get().Done() }

// Err answers without making the timer while the ctx is live.
func (c *handlerCtx) Err() error {
	if !c.made.Load() {
		if err := c.base.Err(); err != nil {
			return err
		}
		if time.Now().Before(c.deadline) {
			return nil
		}
	}
	return c.get().Err()
}

func (c *handlerCtx) Value(key any) any { return c.base.Value(key) }

// release ends the context when the handler has returned.
func (c *handlerCtx) release() {
	c.mu.Lock()
	c.released = true
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
