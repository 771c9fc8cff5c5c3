package producer

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// asyncSend is one SendAsync in flight without interceptors: the retry
// loop of sendEnvelope as a chain of transport callbacks, so that no
// goroutine waits for the broker's answer. The first attempt is made on
// the caller's goroutine, later ones and cb on the client's.
type asyncSend struct {
	p   *Producer
	r   *runState
	ctx context.Context
	cb  func(*rocketmq.SendResult, error)
	st  sendState
	cur try
}

func (p *Producer) sendAsync(ctx context.Context, e *envelope, sel QueueSelector, cb func(*rocketmq.SendResult, error)) error {
	r, err := p.enter()
	if err != nil {
		p.release(e)
		return err
	}
	if err := r.lim.acquire(ctx, r.ctx, e.size); err != nil {
		r.leave()
		p.release(e)
		return err
	}
	a := &asyncSend{p: p, r: r, ctx: ctx, cb: cb}
	p.newSendState(&a.st, e, sel)
	a.next()
	return nil
}

// next makes attempts until one is in flight or the send is over.
func (a *asyncSend) next() {
	p := a.p
	for {
		t, done, res, err := p.nextAttempt(a.ctx, a.r, &a.st)
		if done {
			a.finish(res, err)
			return
		}
		a.cur = t
		req := p.request(a.st.e, t.mq, t.now)
		err = a.r.api.invokeAsync(a.ctx, t.addr, req, t.remaining, a.done)
		if err == nil {
			return // a.done continues
		}
		if done, res, err := p.afterAttempt(a.ctx, a.r, &a.st, t, nil, err); done {
			a.finish(res, err)
			return
		}
	}
}

// done is the transport's callback for the attempt in flight.
func (a *asyncSend) done(resp *remoting.Command, err error) {
	var res *rocketmq.SendResult
	if err == nil {
		res, err = a.p.result(a.st.e, a.cur.mq, resp)
	}
	if done, res, err := a.p.afterAttempt(a.ctx, a.r, &a.st, a.cur, res, err); done {
		a.finish(res, err)
		return
	}
	a.next()
}

// finish frees the in-flight slot and lets Shutdown go on, then hands the
// outcome to cb, which may send again or shut the producer down (in the
// order goAsync does). cb runs on a client goroutine, which Shutdown
// waits for.
func (a *asyncSend) finish(res *rocketmq.SendResult, err error) {
	a.p.measure(&a.st, err)
	a.p.release(a.st.e)
	a.r.lim.release(a.st.e.size)
	a.r.leave()
	a.cb(res, err)
}

// goAsync runs fn on a goroutine owned by the running producer once an
// in-flight slot of size bytes is free. fn gets the caller's ctx: when
// Shutdown gives up waiting it closes the client, which fails the calls
// in flight, and sendEnvelope stops retrying once r.ctx is cancelled (no
// derived context per send: that costs more than the rest of the
// bookkeeping together). fn returns the callback's call, made once the
// send has freed its slot and left, so that it may shut the producer down.
func (p *Producer) goAsync(ctx context.Context, size int64, fn func(context.Context, *runState) (callback func())) error {
	r, err := p.enter()
	if err != nil {
		return err
	}
	if err := r.lim.acquire(ctx, r.ctx, size); err != nil {
		r.leave()
		return err
	}
	r.gs.Go(func() {
		cb := fn(ctx, r)
		r.lim.release(size)
		r.leave()
		cb()
	})
	return nil
}
