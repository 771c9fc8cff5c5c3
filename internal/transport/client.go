package transport

import (
	"context"
	"log/slog"
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
	// dialed holds every address connected to so far, for onReconnect.
	dialed sync.Map

	// lifeMu orders goroutine starts against Close: a start holds the read
	// lock across the closed check and gs.Add, so no Add races gs.Wait.
	lifeMu sync.RWMutex
	closed atomic.Bool
	gs     Goroutines

	hmu      sync.RWMutex
	handlers map[int32]Handler
	inline   map[int32]bool // handlers run on the reader goroutine

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
		inline:     make(map[int32]bool),
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
// REQUEST_CODE_NOT_SUPPORTED unless they are oneway. Handlers run on
// their own goroutines, at most WithMaxHandlers at once; a request beyond
// that is refused.
func (c *Client) RegisterHandler(code int32, h Handler) { c.register(code, h, false) }

// RegisterInlineHandler sets a handler that runs on the connection's
// reader goroutine, for requests that arrive in bursts and only hand
// their work on (a broker's round of transaction checks): such requests
// are never refused for want of a handler goroutine. h must not block.
func (c *Client) RegisterInlineHandler(code int32, h Handler) { c.register(code, h, true) }

func (c *Client) register(code int32, h Handler, inline bool) {
	c.hmu.Lock()
	if h == nil {
		delete(c.handlers, code)
		delete(c.inline, code)
	} else {
		c.handlers[code] = h
		c.inline[code] = inline
	}
	c.hmu.Unlock()
}

func (c *Client) handler(code int32) (Handler, bool) {
	c.hmu.RLock()
	h, inline := c.handlers[code], c.inline[code]
	c.hmu.RUnlock()
	return h, inline
}

// hold counts a goroutine about to be started (it calls gs.Enter), like
// one started by spawn; false once the client is closed.
func (c *Client) hold() bool {
	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed.Load() {
		return false
	}
	c.gs.Add(1)
	return true
}

// spawn starts each fn on a goroutine counted in c.gs, all or none; false
// once the client is closed.
func (c *Client) spawn(fns ...func()) bool {
	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed.Load() {
		return false
	}
	c.gs.Add(len(fns))
	for _, fn := range fns {
		go func() {
			defer c.gs.Enter()()
			fn()
		}()
	}
	return true
}

// Connected reports whether a live connection to addr exists.
func (c *Client) Connected(addr string) bool { return c.readyConn(addr) != nil }

// Close closes every connection, fails pending calls with ErrClosed, and
// waits for every goroutine of the client, callbacks and handlers
// included. Called from a callback or handler, it waits for all the other
// goroutines and returns; the caller's goroutine ends once its callback
// returns. Calls after Close fail with ErrClosed.
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
	c.gs.Wait()
	return nil
}
