package transport

import (
	"context"
	"errors"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Invoke sends req to addr and waits for the response. The deadline is the
// earlier of ctx's and the client's timeout. Invoke sets req's Opaque,
// Language, Version, Serialize and flag bits; req must not be in use
// elsewhere until Invoke returns. A response with a non-success code is
// returned as a response, not as an error.
func (c *Client) Invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	return c.InvokeTimeout(ctx, addr, req, c.cfg.timeout)
}

// InvokeTimeout is Invoke with its own timeout instead of the client's,
// e.g. for long-polling pulls; timeout <= 0 leaves only ctx's deadline.
func (c *Client) InvokeTimeout(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration) (*remoting.Command, error) {
	if req == nil {
		return nil, errors.New("rocketmq: transport: nil request")
	}
	cl := c.newCall(ctx, timeout, false)
	resp, err := c.roundTrip(ctx, addr, req, cl)
	c.freeCall(cl)
	return resp, err
}

func (c *Client) roundTrip(ctx context.Context, addr string, req *remoting.Command, cl *call) (*remoting.Command, error) {
	cn := c.readyConn(addr)
	if cn == nil {
		var err error
		if cn, err = c.getConn(ctx, addr, cl.arm()); err != nil {
			return nil, err
		}
	}
	opaque, err := c.send(cn, req, cl)
	if err != nil {
		return nil, err
	}
	return c.wait(ctx, cn, cl, opaque)
}

// InvokeAsync sends req and calls cb exactly once with the response or the
// error, on a goroutine owned by the Client (never with a lock held), if
// and only if it returns nil. It returns an error only when the call is not
// accepted: the client is closed, the in-flight bound is reached, or ctx
// ends while waiting for a slot. The ctx covers the whole call, and req
// must be left alone until cb runs (it may be encoded late, after a dial).
// When addr is already connected the frame is queued before InvokeAsync
// returns, so calls made one after another from one goroutine go out in
// order. No goroutine waits for the answer (async.go): callbacks run on a
// pool of client goroutines, and an expired timeout or an ended ctx is
// noticed within sweepTick (10 ms).
func (c *Client) InvokeAsync(ctx context.Context, addr string, req *remoting.Command, cb func(*remoting.Command, error)) error {
	return c.InvokeAsyncTimeout(ctx, addr, req, c.cfg.timeout, cb)
}

// InvokeAsyncTimeout is InvokeAsync with its own timeout (<= 0: ctx only).
// No goroutine waits for the response: the reader completes the call
// (async.go).
func (c *Client) InvokeAsyncTimeout(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration, cb func(*remoting.Command, error)) error {
	if req == nil || cb == nil {
		return errors.New("rocketmq: transport: nil request or callback")
	}
	if c.closed.Load() {
		return newErr("send", addr, 0, ErrClosed, nil)
	}
	a := &asyncCall{c: c, ctx: ctx, cb: cb}
	a.call.async = a
	if timeout > 0 {
		now := time.Now()
		if dl, ok := ctx.Deadline(); !ok || dl.Sub(now) > timeout {
			a.until = now.Add(timeout)
		}
	}
	if err := c.acquireAsync(ctx, addr, a.until); err != nil {
		return err
	}
	if cn := c.readyConn(addr); cn != nil {
		a.start(cn, req)
		return nil
	}
	ok := c.spawn(func() {
		var tc <-chan time.Time
		if !a.until.IsZero() {
			t := time.NewTimer(max(time.Until(a.until), time.Nanosecond))
			defer t.Stop()
			tc = t.C
		}
		cn, err := c.getConn(ctx, addr, tc)
		if err != nil {
			<-c.asyncSem
			cb(nil, err)
			return
		}
		a.start(cn, req)
	})
	if !ok {
		<-c.asyncSem
		return newErr("send", addr, 0, ErrClosed, nil)
	}
	return nil
}

// acquireAsync takes an in-flight slot, waiting (unless fail-fast) until
// ctx ends, until passes (zero: no bound) or the client closes.
func (c *Client) acquireAsync(ctx context.Context, addr string, until time.Time) error {
	select {
	case c.asyncSem <- struct{}{}:
		return nil
	default:
	}
	if c.cfg.asyncFailFast {
		return newErr("send", addr, 0, ErrTooManyInflight, nil)
	}
	var tc <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(max(time.Until(until), time.Nanosecond))
		defer t.Stop()
		tc = t.C
	}
	select {
	case c.asyncSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return newErr("send", addr, 0, ctx.Err(), ErrTooManyInflight)
	case <-tc:
		return newErr("send", addr, 0, ErrTooManyInflight, nil)
	case <-c.ctx.Done():
		return newErr("send", addr, 0, ErrClosed, nil)
	}
}

// InvokeOneway sends req with the oneway flag and returns once the frame
// is queued for writing; no response is expected. ctx and the client's
// timeout bound only a dial.
func (c *Client) InvokeOneway(ctx context.Context, addr string, req *remoting.Command) error {
	if req == nil {
		return errors.New("rocketmq: transport: nil request")
	}
	cn := c.readyConn(addr)
	if cn == nil {
		t := time.NewTimer(c.cfg.timeout)
		var err error
		cn, err = c.getConn(ctx, addr, t.C)
		t.Stop()
		if err != nil {
			return err
		}
	}
	opaque := c.prepare(cn.addr, req, remoting.FlagOneway)
	if err := cn.enqueue(req, cn.pendingLen() == 0); err != nil {
		return c.sendErr(cn.addr, opaque, err)
	}
	return nil
}

// prepare stamps a request with a fresh opaque, the client's identity and
// flag bits, then runs the hooks.
func (c *Client) prepare(addr string, req *remoting.Command, flag int32) int32 {
	opaque := c.opaque.Inc()
	req.Opaque = opaque
	req.Flag = req.Flag&^(remoting.FlagResponse|remoting.FlagOneway) | flag
	req.Language = c.cfg.language
	req.Version = c.cfg.version
	req.Serialize = c.cfg.serialize
	for _, h := range c.cfg.hooks {
		h(addr, req)
	}
	return opaque
}

// send registers cl under a fresh opaque and queues the frame.
func (c *Client) send(cn *conn, req *remoting.Command, cl *call) (int32, error) {
	opaque := c.prepare(cn.addr, req, 0)
	cl.rx = cn.rx.Load()
	n, ok := cn.register(opaque, cl)
	if !ok {
		return 0, newErr("send", cn.addr, opaque, ErrConnClosed, nil)
	}
	// Alone on the connection, the caller writes its frame itself; with
	// other calls in flight the writer goroutine batches frames.
	if err := cn.enqueue(req, n == 1); err != nil {
		if r, raced := cn.abandon(opaque, cl); raced {
			return 0, r.err // the connection closed under us; its error says why
		}
		return 0, c.sendErr(cn.addr, opaque, err)
	}
	return opaque, nil
}

func (c *Client) sendErr(addr string, opaque int32, err error) error {
	if errors.Is(err, ErrConnClosed) {
		return newErr("send", addr, opaque, ErrConnClosed, nil)
	}
	return err // an encode error, already descriptive
}

// wait blocks until the response, the deadline, ctx or a broken connection.
// When nobody is reading the connection the caller reads it itself
// (conn.lead), which saves handing the response over from the reader.
func (c *Client) wait(ctx context.Context, cn *conn, cl *call, opaque int32) (*remoting.Command, error) {
	if cn.takeRead(readerCall) {
		return cn.lead(ctx, cl, opaque)
	}
	var kind, cause error
	select {
	case r := <-cl.ch:
		return r.resp, r.err
	case <-ctx.Done():
		kind = ctx.Err()
		if kind == context.DeadlineExceeded {
			kind, cause = ErrTimeout, context.DeadlineExceeded
		}
	case <-cl.arm():
		cl.fired = true
		kind = ErrTimeout
	}
	return cn.giveUp(cl, opaque, kind, cause)
}

// giveUp abandons a call that timed out or whose ctx ended, unless its
// result is already on the way.
func (cn *conn) giveUp(cl *call, opaque int32, kind, cause error) (*remoting.Command, error) {
	if r, raced := cn.abandon(opaque, cl); raced {
		return r.resp, r.err // it arrived after all: the server did the work
	}
	if kind == ErrTimeout {
		cn.timedOut(cl.rx, true)
	}
	return nil, newErr("wait", cn.addr, opaque, kind, cause)
}
