package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// versionV5 is the first broker version with timer messages (V5_0_0).
const versionV5 = 413

// chooseQueue applies sel (nil or RoundRobin: the fault strategy).
func (p *Producer) chooseQueue(e *envelope, queues []rocketmq.MessageQueue, sel QueueSelector, lastBroker string) (rocketmq.MessageQueue, error) {
	if sel == nil {
		return p.fault.selectQueue(queues, p.index(e.topic), lastBroker), nil
	}
	if _, ok := sel.(roundRobin); ok {
		return p.fault.selectQueue(queues, p.index(e.topic), lastBroker), nil
	}
	view := queues
	if p.cfg.namespace != "" {
		view = make([]rocketmq.MessageQueue, len(queues))
		for i, q := range queues {
			q.Topic = e.userTopic
			view[i] = q
		}
	}
	mq := sel.Select(e.msgs[0], view, lastBroker)
	if mq.Topic != e.userTopic && mq.Topic != e.topic {
		return mq, fmt.Errorf("%w: %s is not %s", ErrWrongQueue, mq.Topic, e.userTopic)
	}
	if mq.BrokerName == "" || mq.QueueID < 0 {
		return mq, fmt.Errorf("%w: selector returned %+v", ErrNoQueue, mq)
	}
	mq.Topic = e.topic
	return mq, nil
}

// sendState is the retry loop's state (Java sendDefaultImpl), shared by
// the sync loop (sendEnvelope) and the callback chain of async sends
// (asyncSend): the send timeout is a budget for all attempts; a failed
// attempt marks its broker in the fault strategy and the next one prefers
// another broker.
type sendState struct {
	e          *envelope
	sel        QueueSelector
	begin      time.Time
	attempt    int
	attempts   int
	lastBroker string
	lastErr    error
	lastRes    *rocketmq.SendResult
	// The brokers tried, for a SendError: the first len(bstack) in bstack,
	// the rest in bmore. (A slice into bstack would make sendState point
	// into itself, which moves it to the heap on every send.)
	nbrokers int
	bstack   [4]string
	bmore    []string
}

func (st *sendState) addBroker(name string) {
	if st.nbrokers < len(st.bstack) {
		st.bstack[st.nbrokers] = name
	} else {
		st.bmore = append(st.bmore, name)
	}
	st.nbrokers++
}

// brokers returns a copy of the brokers tried.
func (st *sendState) brokers() []string {
	out := make([]string, 0, st.nbrokers)
	out = append(out, st.bstack[:min(st.nbrokers, len(st.bstack))]...)
	return append(out, st.bmore...)
}

func (p *Producer) newSendState(st *sendState, e *envelope, sel QueueSelector) {
	*st = sendState{e: e, sel: sel, begin: time.Now(), attempts: 1 + p.cfg.retries}
	if e.kind == KindOneway {
		st.attempts = 1
	}
}

// try is one attempt chosen by nextAttempt.
type try struct {
	mq        rocketmq.MessageQueue
	addr      string
	now       time.Time // start, and born time of the request
	remaining time.Duration
}

// nextAttempt picks the queue and broker of the next attempt, or ends the
// send (done) with its outcome.
func (p *Producer) nextAttempt(ctx context.Context, r *runState, st *sendState) (t try, done bool, res *rocketmq.SendResult, err error) {
	e := st.e
	for ; st.attempt < st.attempts; st.attempt++ {
		if err := ctx.Err(); err != nil {
			st.lastErr = err
			break
		}
		if err := r.ctx.Err(); err != nil {
			st.lastErr = ErrNotStarted // Shutdown gave up waiting
			break
		}
		pi, err := r.api.publishInfo(ctx, e.topic)
		if err != nil {
			// No route: Java gives up at once too.
			return t, true, nil, &SendError{Topic: e.userTopic, Attempts: st.attempt, Brokers: st.brokers(), Err: fmt.Errorf("%w: %w", ErrNoQueue, err)}
		}
		mq, err := p.chooseQueue(e, pi.Queues, st.sel, st.lastBroker)
		if err != nil {
			return t, true, nil, err
		}
		st.addBroker(mq.BrokerName)
		addr, ok := r.api.brokerAddr(mq.BrokerName)
		if !ok {
			r.api.refreshRoute(e.topic)
			st.lastBroker, st.lastErr = mq.BrokerName, fmt.Errorf("%w: %s", ErrBrokerNotFound, mq.BrokerName)
			continue
		}
		now := st.begin // the first attempt starts right away
		if st.attempt > 0 {
			now = time.Now()
		}
		cost := now.Sub(st.begin)
		if cost >= p.cfg.sendTimeout {
			st.lastErr = errors.Join(ErrSendTimeout, st.lastErr)
			break
		}
		if e.timer && p.cfg.timerCheck {
			if v, ok := r.api.brokerVersion(addr); ok && v < versionV5 {
				return t, true, nil, fmt.Errorf("%w: %s (%s) reports version %d", ErrTimerNotSupported, mq.BrokerName, addr, v)
			}
		}
		if e.kind == KindRequest {
			// The broker pushes the reply over the channel our heartbeat
			// registered; make sure there is one.
			_ = r.api.ensureHeartbeat(ctx, addr)
		}
		return try{mq: mq, addr: addr, now: now, remaining: p.cfg.sendTimeout - cost}, false, nil, nil
	}
	res, err = st.outcome()
	return t, true, res, err
}

// afterAttempt records the outcome of attempt t; done ends the send.
func (p *Producer) afterAttempt(ctx context.Context, r *runState, st *sendState, t try, res *rocketmq.SendResult, err error) (done bool, _ *rocketmq.SendResult, _ error) {
	e := st.e
	latency := time.Since(t.now)
	if err == nil {
		p.fault.update(t.mq.BrokerName, latency, false, true)
		if r.trace != nil {
			r.trace.pub(e, t, res)
		}
		if e.kind == KindOneway {
			return true, nil, nil
		}
		if res.Status != rocketmq.SendOK && p.cfg.retryNotStoreOK && st.attempt+1 < st.attempts {
			st.lastRes, st.lastBroker = res, t.mq.BrokerName
			st.attempt++
			return false, nil, nil
		}
		return true, res, nil
	}
	p.fault.update(t.mq.BrokerName, latency, true, !isNetworkError(err))
	p.log.Debug("rocketmq: send attempt failed", "topic", e.userTopic, "addr", t.addr, "attempt", st.attempt, "err", err)
	st.lastBroker, st.lastErr = t.mq.BrokerName, err
	if ctx.Err() != nil || !remoting.IsRetriable(err) {
		res, err := st.outcome()
		return true, res, err
	}
	r.api.refreshRoute(e.topic)
	st.attempt++
	return false, nil, nil
}

// outcome is the result of a send whose attempts are over.
func (st *sendState) outcome() (*rocketmq.SendResult, error) {
	if st.lastRes != nil {
		return st.lastRes, nil
	}
	err := st.lastErr
	if err == nil {
		err = ErrNoQueue
	}
	return nil, &SendError{Topic: st.e.userTopic, Attempts: st.nbrokers, Brokers: st.brokers(), Err: err}
}

// sendEnvelope is the retry loop of sync and oneway sends.
func (p *Producer) sendEnvelope(ctx context.Context, r *runState, e *envelope, sel QueueSelector) (*rocketmq.SendResult, error) {
	var st sendState
	p.newSendState(&st, e, sel)
	for {
		t, done, res, err := p.nextAttempt(ctx, r, &st)
		if done {
			p.measure(&st, err)
			return res, err
		}
		res, err = p.attempt(ctx, r, e, t.mq, t.addr, st.attempt, t.remaining, t.now)
		if done, res, err := p.afterAttempt(ctx, r, &st, t, res, err); done {
			p.measure(&st, err)
			return res, err
		}
	}
}

// isNetworkError tells transport failures (the broker may be unreachable)
// from broker answers.
func isNetworkError(err error) bool {
	var re *remoting.Error
	return !errors.As(err, &re)
}

// attempt sends once, through the interceptors.
func (p *Producer) attempt(ctx context.Context, r *runState, e *envelope, mq rocketmq.MessageQueue, addr string, n int, timeout time.Duration, now time.Time) (*rocketmq.SendResult, error) {
	if len(p.cfg.interceptors) == 0 {
		return p.call(ctx, r, e, mq, addr, timeout, now)
	}
	call := func(ctx context.Context) (*rocketmq.SendResult, error) {
		return p.call(ctx, r, e, mq, addr, timeout, time.Now())
	}
	q := mq
	q.Topic = e.userTopic
	info := &SendInfo{Kind: e.kind, Batch: e.batch, Group: p.cfg.group, Topic: e.userTopic, Messages: e.msgs, Queue: q, BrokerAddr: addr, Attempt: n}
	return intercept(ctx, p.cfg.interceptors, info, call)
}

// call sends one attempt's request and decodes the answer.
// now is the born timestamp.
func (p *Producer) call(ctx context.Context, r *runState, e *envelope, mq rocketmq.MessageQueue, addr string, timeout time.Duration, now time.Time) (*rocketmq.SendResult, error) {
	req := p.request(e, mq, now)
	if e.kind == KindOneway {
		return nil, r.api.invokeOneway(ctx, addr, req)
	}
	resp, err := r.api.invoke(ctx, addr, req, timeout)
	if err != nil {
		return nil, err
	}
	return p.result(e, mq, resp)
}
