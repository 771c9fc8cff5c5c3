package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Handler answers a request the server sends to the client. It runs on a
// goroutine owned by the Client, never on a connection's reader. A nil
// reply sends nothing; a non-nil one is sent with the request's opaque and
// header encoding. Replies to oneway requests are never sent. ctx is
// cancelled when the Client closes.
type Handler func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command

// Client holds one connection per remote address and matches responses to
// calls by opaque. It is safe for concurrent use.
type Client struct {
	cfg   config
	log   *slog.Logger
	start time.Time // monotonic base for idle tracking

	// ctx is cancelled by Close: it aborts dials and is the handlers' ctx.
	ctx    context.Context
	cancel context.CancelFunc

	opaque atomic.Int32

	// mu serialises changes to conns; readers load the map without it
	// (copy on write: addresses change rarely, calls are frequent).
	mu    sync.Mutex
	conns atomic.Pointer[map[string]*entry]

	// lifeMu orders goroutine starts against Close: a start holds the read
	// lock across the closed check and wg.Add, so no Add races wg.Wait.
	lifeMu sync.RWMutex
	closed atomic.Bool
	wg     sync.WaitGroup

	hmu      sync.RWMutex
	handlers map[int32]Handler

	asyncSem   chan struct{}
	handlerSem chan struct{}
	async      asyncState // InvokeAsync completions (async.go)

	calls sync.Pool // *call
}

// entry is one address: the dial in progress or the connection it made.
type entry struct {
	addr  string
	ready chan struct{} // closed when the dial has finished
	cn    *conn         // written under Client.mu before ready is closed; nil on failure
	err   error         // written before ready is closed

	waiters atomic.Int32 // callers blocked on ready (tests)
}

// New returns a Client; it dials nothing until the first call.
func New(opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.log
	if log == nil {
		log = slog.New(discardHandler{})
	}
	c := &Client{
		cfg:        cfg,
		log:        log,
		start:      time.Now(),
		handlers:   make(map[int32]Handler),
		asyncSem:   make(chan struct{}, cfg.maxAsync),
		handlerSem: make(chan struct{}, cfg.maxHandlers),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.async.cond.L = &c.async.mu
	empty := map[string]*entry{}
	c.conns.Store(&empty)
	if cfg.idleTimeout > 0 {
		c.spawn(c.idleLoop)
	}
	return c, nil
}

// RegisterHandler sets the handler for server→client requests with code;
// nil removes it. Requests without a handler are answered
// REQUEST_CODE_NOT_SUPPORTED unless they are oneway.
func (c *Client) RegisterHandler(code int32, h Handler) {
	c.hmu.Lock()
	if h == nil {
		delete(c.handlers, code)
	} else {
		c.handlers[code] = h
	}
	c.hmu.Unlock()
}

func (c *Client) handler(code int32) Handler {
	c.hmu.RLock()
	h := c.handlers[code]
	c.hmu.RUnlock()
	return h
}

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

// hold counts the calling goroutine in the client's WaitGroup, like a
// goroutine started by spawn; false once the client is closed.
func (c *Client) hold() bool {
	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed.Load() {
		return false
	}
	c.wg.Add(1)
	return true
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
	return nil, newErr("wait", cn.addr, opaque, kind, cause)
}

// call is one pending request. Calls are pooled: a call goes back to the
// pool only once nothing can send on ch and ch is empty.
type call struct {
	async *asyncCall  // set for InvokeAsync calls, which get no result on ch
	ch    chan result // cap 1; exactly one send per registration
	timer *time.Timer
	tc    <-chan time.Time // nil until armed, and when ctx's deadline comes first
	fired bool             // tc has been received from
	until time.Time        // end of the client's timeout; zero when ctx's deadline comes first or none
}

type result struct {
	resp *remoting.Command
	err  error
}

// newCall returns a call whose timeout starts now. Its timer is started by
// arm, at once when armNow; a caller that reads the response itself
// (conn.lead) uses a read deadline instead and never needs the timer.
func (c *Client) newCall(ctx context.Context, timeout time.Duration, armNow bool) *call {
	cl, _ := c.calls.Get().(*call)
	if cl == nil {
		cl = &call{ch: make(chan result, 1)}
	}
	cl.tc, cl.fired, cl.until = nil, false, time.Time{}
	if timeout > 0 {
		now := time.Now()
		if dl, ok := ctx.Deadline(); !ok || dl.Sub(now) > timeout {
			cl.until = now.Add(timeout)
		}
	}
	if armNow {
		cl.arm()
	}
	return cl
}

// arm starts the call's timer if it has a timeout and returns its channel
// (nil without a timeout: ctx alone bounds the call).
func (cl *call) arm() <-chan time.Time {
	if cl.tc != nil || cl.until.IsZero() {
		return cl.tc
	}
	d := max(time.Until(cl.until), time.Nanosecond)
	if cl.timer == nil {
		cl.timer = time.NewTimer(d)
	} else {
		cl.timer.Reset(d)
	}
	cl.tc = cl.timer.C
	return cl.tc
}

func (c *Client) freeCall(cl *call) {
	if cl.tc != nil && !cl.fired && !cl.timer.Stop() {
		// Fired but not received: drain so the next Reset starts clean
		// (needed with the pre-1.23 timer semantics go.mod selects).
		select {
		case <-cl.timer.C:
		default:
		}
	}
	cl.tc = nil
	c.calls.Put(cl)
}

// readyConn returns the live connection to addr without blocking, or nil.
func (c *Client) readyConn(addr string) *conn {
	e := (*c.conns.Load())[addr]
	if e == nil {
		return nil
	}
	select {
	case <-e.ready:
		if e.cn != nil && !e.cn.closed.Load() {
			return e.cn
		}
	default:
	}
	return nil
}

// getConn returns the connection to addr, dialing it if needed. Concurrent
// callers share one dial; a dial blocks only callers of its own address.
func (c *Client) getConn(ctx context.Context, addr string, tc <-chan time.Time) (*conn, error) {
	if cn := c.readyConn(addr); cn != nil {
		return cn, nil
	}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return nil, newErr("dial", addr, 0, ErrClosed, nil)
	}
	m := *c.conns.Load()
	e := m[addr]
	startDial := false
	if e == nil || e.dead() {
		e = &entry{addr: addr, ready: make(chan struct{})}
		nm := maps.Clone(m)
		nm[addr] = e
		c.conns.Store(&nm)
		startDial = true
	}
	c.mu.Unlock()
	if startDial && !c.spawn(func() { c.dial(e) }) {
		c.dropEntry(e)
		e.err = newErr("dial", addr, 0, ErrClosed, nil)
		close(e.ready)
	}
	e.waiters.Inc()
	defer e.waiters.Dec()
	select {
	case <-e.ready:
	case <-ctx.Done():
		kind, cause := ctx.Err(), error(nil)
		if kind == context.DeadlineExceeded {
			kind, cause = ErrTimeout, context.DeadlineExceeded
		}
		return nil, newErr("dial", addr, 0, kind, cause)
	case <-tc:
		return nil, newErr("dial", addr, 0, ErrTimeout, nil)
	case <-c.ctx.Done():
		return nil, newErr("dial", addr, 0, ErrClosed, nil)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.cn, nil
}

// dead reports a finished dial that failed or whose connection has closed.
// Called with Client.mu held (e.cn is written under it).
func (e *entry) dead() bool {
	select {
	case <-e.ready:
		return e.cn == nil || e.cn.closed.Load()
	default:
		return false
	}
}

// dial runs on its own goroutine so that a caller giving up does not abort
// a dial other callers wait for; Close aborts it through c.ctx.
func (c *Client) dial(e *entry) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.dialTimeout)
	nc, err := c.cfg.dial(ctx, "tcp", e.addr)
	if err == nil && c.cfg.tls != nil {
		nc, err = c.handshake(ctx, nc, e.addr)
	}
	cancel()
	if err != nil {
		kind := ErrDial
		if c.ctx.Err() != nil {
			kind = ErrClosed
		} else if errors.Is(err, context.DeadlineExceeded) {
			// Our own dial timeout, not the caller's deadline: keep it out
			// of the chain so remoting.IsRetriable still says yes.
			err = errors.New("timed out after " + c.cfg.dialTimeout.String() + ": " + err.Error())
		}
		c.log.Warn("rocketmq: dial failed", "addr", e.addr, "err", err)
		c.dropEntry(e)
		e.err = newErr("dial", e.addr, 0, kind, err)
		close(e.ready)
		return
	}
	cn := newConn(c, e.addr, nc)
	if !c.spawn(cn.readLoop, cn.writeLoop) {
		nc.Close()
		c.dropEntry(e)
		e.err = newErr("dial", e.addr, 0, ErrClosed, nil)
		close(e.ready)
		return
	}
	c.mu.Lock()
	mapped := (*c.conns.Load())[e.addr] == e
	if mapped {
		e.cn = cn
	}
	c.mu.Unlock()
	if !mapped { // CloseConn or Close while dialing
		cn.close(ErrConnClosed, errors.New("closed while dialing"))
		kind := ErrConnClosed
		if c.closed.Load() {
			kind = ErrClosed
		}
		e.err = newErr("dial", e.addr, 0, kind, nil)
	} else {
		c.log.Debug("rocketmq: connected", "addr", e.addr)
	}
	close(e.ready)
}

func (c *Client) handshake(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	cfg := c.cfg.tls.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// dropEntry unmaps e if it is still the entry of its address.
func (c *Client) dropEntry(e *entry) {
	c.mu.Lock()
	m := *c.conns.Load()
	if m[e.addr] == e {
		nm := maps.Clone(m)
		delete(nm, e.addr)
		c.conns.Store(&nm)
	}
	c.mu.Unlock()
}

// dropConn unmaps the entry holding cn, so the next call re-dials.
func (c *Client) dropConn(cn *conn) {
	c.mu.Lock()
	m := *c.conns.Load()
	if e := m[cn.addr]; e != nil && e.cn == cn {
		nm := maps.Clone(m)
		delete(nm, cn.addr)
		c.conns.Store(&nm)
	}
	c.mu.Unlock()
}

// spawn starts each fn on a goroutine counted in c.wg, all or none; false
// once the client is closed.
func (c *Client) spawn(fns ...func()) bool {
	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed.Load() {
		return false
	}
	c.wg.Add(len(fns))
	for _, fn := range fns {
		go func() {
			defer c.wg.Done()
			fn()
		}()
	}
	return true
}

// CloseConn closes the connection to addr (e.g. a broker that left the
// route); its pending calls fail with ErrConnClosed. The next call to addr
// dials again.
func (c *Client) CloseConn(addr string) {
	c.mu.Lock()
	m := *c.conns.Load()
	e := m[addr]
	var cn *conn
	if e != nil {
		cn = e.cn
		nm := maps.Clone(m)
		delete(nm, addr)
		c.conns.Store(&nm)
	}
	c.mu.Unlock()
	if cn != nil {
		cn.close(ErrConnClosed, errors.New("closed by client"))
	}
}

// Connected reports whether a live connection to addr exists.
func (c *Client) Connected(addr string) bool { return c.readyConn(addr) != nil }

// Close closes every connection, fails pending calls with ErrClosed, and
// waits for every goroutine of the client, callbacks and handlers
// included; so it must not be called from a callback or handler. Calls
// after Close fail with ErrClosed.
func (c *Client) Close() error {
	c.lifeMu.Lock()
	if c.closed.Load() {
		c.lifeMu.Unlock()
		return nil
	}
	c.closed.Store(true)
	c.lifeMu.Unlock()
	c.cancel()

	c.mu.Lock()
	m := *c.conns.Load()
	empty := map[string]*entry{}
	c.conns.Store(&empty)
	var cns []*conn
	for _, e := range m {
		if e.cn != nil {
			cns = append(cns, e.cn)
		}
	}
	c.mu.Unlock()
	for _, cn := range cns {
		cn.close(ErrClosed, nil)
	}
	c.stopWorkers()
	c.wg.Wait()
	return nil
}

// handleRequest dispatches a server→client request; called by a reader.
func (c *Client) handleRequest(cn *conn, req *remoting.Command) {
	h := c.handler(req.Code)
	if h == nil {
		c.log.Debug("rocketmq: request code not supported", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque)
		if !req.IsOneway() {
			c.reply(cn, req, remoting.NewResponse(remoting.RequestCodeNotSupported,
				" request type "+strconv.Itoa(int(req.Code))+" not supported"))
		}
		return
	}
	select {
	case c.handlerSem <- struct{}{}:
	default:
		c.log.Warn("rocketmq: too many server requests, refusing", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque)
		if !req.IsOneway() {
			c.reply(cn, req, remoting.NewResponse(remoting.SystemBusy,
				"[OVERLOAD]system busy, too many requests being handled"))
		}
		return
	}
	if !c.spawn(func() {
		defer func() { <-c.handlerSem }()
		resp := h(c.ctx, cn.addr, req)
		if resp != nil && !req.IsOneway() {
			c.reply(cn, req, resp)
		}
	}) {
		<-c.handlerSem
	}
}

// reply sends resp as the answer to req, in req's header encoding.
func (c *Client) reply(cn *conn, req, resp *remoting.Command) {
	resp.Opaque = req.Opaque
	resp.Flag = resp.Flag&^remoting.FlagOneway | remoting.FlagResponse
	resp.Serialize = req.Serialize
	resp.Language = c.cfg.language
	resp.Version = c.cfg.version
	if err := cn.enqueue(resp, false); err != nil {
		c.log.Debug("rocketmq: reply not sent", "addr", cn.addr, "code", req.Code, "opaque", req.Opaque, "err", err)
	}
}

// idleLoop closes connections without traffic or pending calls.
func (c *Client) idleLoop() {
	tick := max(c.cfg.idleTimeout/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Since(c.start)
		for addr, e := range *c.conns.Load() {
			var cn *conn
			select {
			case <-e.ready:
				cn = e.cn
			default:
			}
			if cn == nil || cn.closed.Load() {
				continue
			}
			if now-time.Duration(cn.active.Load()) >= c.cfg.idleTimeout && cn.pendingLen() == 0 {
				c.log.Debug("rocketmq: closing idle connection", "addr", addr)
				c.dropConn(cn)
				cn.close(ErrConnClosed, errors.New("idle"))
			}
		}
	}
}

// pendingLen is the number of calls waiting on addr (tests).
func (c *Client) pendingLen(addr string) int {
	if cn := c.readyConn(addr); cn != nil {
		return cn.pendingLen()
	}
	return 0
}
