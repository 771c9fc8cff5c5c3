package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Errors returned by the server and its connections.
var (
	ErrServerClosed  = errors.New("rocketmq: server closed")
	ErrServerStarted = errors.New("rocketmq: server already started")
	ErrConnClosed    = errors.New("rocketmq: connection closed")
	ErrTimeout       = errors.New("rocketmq: request timed out")
)

// Log attribute keys.
const (
	logKeyCode   = "code"
	logKeyOpaque = "opaque"
	logKeyRemote = "remote"
	logKeyConn   = "conn"
)

// maxFramesPerEvent caps the frames decoded in one OnTraffic call so one
// busy connection cannot starve the others on its loop; the rest is picked
// up after a Wake.
const maxFramesPerEvent = 64

// Handler serves one request. A non-nil result is sent as the response
// (opaque, response flag and serialize type are taken from req). nil sends
// nothing now; the handler may answer later with c.Reply. Oneway requests
// never get a response.
//
// ctx is cancelled when the connection or the server closes.
type Handler func(ctx context.Context, c *Conn, req *remoting.Command) *remoting.Command

// InlineHandler is a handler's fast path, tried on the event loop itself
// (see HandleInline). It must not block, sleep or wait on any connection;
// when the request needs anything that might (a file to create, a flush to
// wait for), it returns ok == false before doing any work, and the request
// goes to the code's Handler on a worker goroutine as usual. With ok ==
// true, resp is handled as a Handler's result.
//
// req.Body is a view of the connection's input buffer, valid only until the
// handler returns: copy what must outlive the call (req itself, without
// its body, may be kept for a later c.Reply).
type InlineHandler func(ctx context.Context, c *Conn, req *remoting.Command) (resp *remoting.Command, ok bool)

// Server is a RocketMQ remoting server on gnet. Register handlers, then
// Start; Close stops it.
type Server struct {
	cfg      Config
	log      *slog.Logger
	handlers map[int32]Handler
	inline   map[int32]InlineHandler
	fallback Handler
	onOpen   []func(*Conn)
	onClose  []func(*Conn)

	baseCtx    context.Context
	cancelBase context.CancelFunc
	done       chan struct{} // closed when Close starts

	// gate orders dispatch and writes against Close: dispatch adds to wg
	// only while !draining, and nothing is handed to gnet once stopped
	// (gnet's pollers are closed after its engine stops).
	gate     sync.RWMutex
	started  bool
	draining bool
	stopped  bool

	// big holds *[]byte write buffers of capacity bigBuffer for bursts of
	// replies (Conn.growOut).
	big sync.Pool

	wg       sync.WaitGroup // running handlers
	active   atomic.Int64   // running handlers, for MaxHandlers
	busy     busyLog        // rate-limits the SYSTEM_BUSY warning
	large    atomic.Int64   // bytes of large requests held (takeLarge)
	nextConn atomic.Uint64

	// Handlers run on reusable worker goroutines: a fresh goroutine per
	// request grows its stack from scratch every time (copystack was a
	// sixth of the broker's CPU). An idle worker waits on work; dispatch
	// starts a new one only when none is waiting.
	work    chan job
	bigSem  chan struct{} // frames being decoded aside (decodeAside)
	workers sync.WaitGroup

	cli        *gnet.Client // gnet's loops, without a listener of gnet's
	ln         net.Listener
	extra      extraListeners // ListenAlso (extra.go)
	acceptDone chan struct{}
	addr       string
	closedCh   chan struct{} // closed when Close has finished

	tls      *tlsServer   // nil unless TLS is on (tls.go)
	conns    atomic.Int64 // open connections, for MaxConns
	stats    counters
	capLog   rateLog // connections refused over MaxConns
	errLog   rateLog // accept failures
	stallLog rateLog // connections closed by back-pressure
}

// New returns a server that is not yet listening.
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		handlers:   make(map[int32]Handler),
		inline:     make(map[int32]InlineHandler),
		baseCtx:    ctx,
		cancelBase: cancel,
		done:       make(chan struct{}),
		closedCh:   make(chan struct{}),
		work:       make(chan job),
		bigSem:     make(chan struct{}, maxBigDecodes),
	}
}

func (s *Server) mustNotBeStarted(what string) {
	s.gate.RLock()
	started := s.started
	s.gate.RUnlock()
	if started {
		panic("server: " + what + " after Start")
	}
}

// Handle registers h for a request code. It must be called before Start.
func (s *Server) Handle(code int32, h Handler) {
	s.mustNotBeStarted("Handle")
	s.handlers[code] = h
}

// HandleInline registers a fast path for a request code that also has a
// Handler. It must be called before Start.
//
// Handing a request to a worker goroutine costs a goroutine wake-up, and
// when the loop then goes back to epoll_wait the worker often waits for the
// other CPU or for the runtime to take the loop's P back: for a client with
// one request in flight that was a quarter of the round trip. So requests
// with a fast path are served on the loop, in the order read, and their
// replies are held back until the loop has served everything it read from
// the connection (at most maxFramesPerEvent frames), then leave in one
// write. On two cores this beat handing a burst to workers by a fifth to a
// third in round trips per second and in broker CPU per send.
func (s *Server) HandleInline(code int32, h InlineHandler) {
	s.mustNotBeStarted("HandleInline")
	s.inline[code] = h
}

// HandleDefault registers h for codes without their own handler. Without
// one such codes get REQUEST_CODE_NOT_SUPPORTED. Call before Start.
func (s *Server) HandleDefault(h Handler) {
	s.mustNotBeStarted("HandleDefault")
	s.fallback = h
}

// OnConnOpen adds a callback run on the event loop when a connection opens.
// It must not block. Call before Start.
func (s *Server) OnConnOpen(f func(*Conn)) {
	s.mustNotBeStarted("OnConnOpen")
	s.onOpen = append(s.onOpen, f)
}

// OnConnClose adds a callback run on the event loop after a connection has
// closed (also for every connection when the server closes). It must not
// block. Call before Start.
func (s *Server) OnConnClose(f func(*Conn)) {
	s.mustNotBeStarted("OnConnClose")
	s.onClose = append(s.onClose, f)
}

// Start listens on addr ("host:port", port 0 picks a free one; a gnet
// scheme such as "tcp4://" may be given) and serves in the background. It
// returns once the listening socket is bound.
func (s *Server) Start(addr string) error {
	s.gate.Lock()
	switch {
	case s.draining:
		s.gate.Unlock()
		return ErrServerClosed
	case s.started:
		s.gate.Unlock()
		return ErrServerStarted
	}
	s.started = true
	s.gate.Unlock()

	if err := s.startTLS(); err != nil {
		s.gate.Lock()
		s.started = false
		s.gate.Unlock()
		return err
	}
	network, hostport := "tcp", addr
	if i := strings.Index(addr, "://"); i >= 0 {
		network, hostport = addr[:i], addr[i+3:]
	}
	// Go enables keep-alive on accepted connections unless told otherwise;
	// Java's NettyRemotingServer leaves it off.
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), network, hostport)
	if err != nil {
		s.gate.Lock()
		s.started = false
		s.gate.Unlock()
		return &ListenError{Addr: addr, Err: err}
	}
	opts := []gnet.Option{
		gnet.WithLogger(gnetLogger{s.log.With("component", "gnet")}),
		gnet.WithMulticore(s.cfg.Multicore),
		gnet.WithNumEventLoop(s.cfg.EventLoops),
		gnet.WithTCPKeepAlive(s.cfg.TCPKeepAlive),
	}
	if s.cfg.TCPDelay {
		opts = append(opts, gnet.WithTCPNoDelay(gnet.TCPDelay))
	}
	cli, err := gnet.NewClient(&events{s: s}, opts...)
	if err == nil {
		err = cli.Start()
	}
	if err != nil {
		_ = ln.Close()
		s.gate.Lock()
		s.started = false
		s.gate.Unlock()
		return fmt.Errorf("rocketmq: start event loops for %s: %w", addr, err)
	}
	s.cli = cli
	s.ln = ln
	s.addr = ln.Addr().String()
	s.acceptDone = make(chan struct{})
	go s.acceptLoop(openReserve())
	s.log.Debug("server listening", "addr", s.addr)
	return nil
}

// Addr returns the bound "host:port" after a successful Start.
func (s *Server) Addr() string { return s.addr }

// Close stops accepting requests, cancels handler contexts and fails
// pending server→client calls. Until ctx ends it waits for running handlers
// (their responses are still written); then it forces the rest: it closes
// every connection and stops gnet. It always returns after every handler and
// worker goroutine has ended, with an error wrapping ctx's when the
// graceful phase did not finish in time. A later call waits for the first.
func (s *Server) Close(ctx context.Context) error {
	s.gate.Lock()
	already := s.draining
	s.draining = true
	started := s.started
	s.gate.Unlock()
	if already {
		<-s.closedCh
		return nil
	}

	close(s.done)
	s.cancelBase()
	if !started {
		close(s.closedCh)
		return nil
	}

	var err error
	handlersDone := make(chan struct{})
	go func() {
		s.wg.Wait()
		// Every worker was started by a handler counted in wg, so none
		// can be added any more: idle ones leave on done.
		s.workers.Wait()
		close(handlersDone)
	}()
	select {
	case <-handlersDone:
	case <-ctx.Done():
		err = fmt.Errorf("rocketmq: server close: handlers still running at the deadline: %w", ctx.Err())
	}

	s.gate.Lock()
	s.stopped = true
	s.gate.Unlock()

	s.stopEngine()
	<-handlersDone
	close(s.closedCh)
	return err
}

// stopEngine stops accepting, then stops gnet's loops, which close every
// connection, and waits for them.
func (s *Server) stopEngine() {
	_ = s.ln.Close()
	<-s.acceptDone
	s.closeExtra()
	s.stopHandshakes()
	if err := s.cli.Stop(); err != nil {
		s.log.Debug("event loops stopped", "err", err)
	}
	s.waitBridges()
}

// events is the gnet event handler.
type events struct {
	gnet.BuiltinEventEngine
	s *Server
}

func (e *events) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	s := e.s
	c := newConn(s, gc)
	gc.SetContext(c)
	s.log.Debug("connection opened", logKeyConn, c.id, logKeyRemote, c.remoteStr)
	for _, f := range s.onOpen {
		f(c)
	}
	return nil, gnet.None
}

func (e *events) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*Conn)
	if c == nil {
		return gnet.None
	}
	c.closeOnLoop()
	s := e.s
	s.conns.Add(-1)
	s.log.Debug("connection closed", logKeyConn, c.id, logKeyRemote, c.remoteStr, "err", err)
	for _, f := range s.onClose {
		f(c)
	}
	return gnet.None
}

// OnTraffic decodes whole frames into owned Commands and hands them off.
// A Peek slice is never kept past Discard.
func (e *events) OnTraffic(gc gnet.Conn) gnet.Action {
	s := e.s
	c, _ := gc.Context().(*Conn)
	if c == nil {
		return gnet.Close
	}
	max := s.cfg.MaxFrameSize
	corked := false
	defer func() {
		if corked {
			c.Uncork()
		}
	}()
	for range maxFramesPerEvent {
		if c.decoding {
			return gnet.None // decodeAside wakes the loop when done
		}
		if s.overLimits(c, gc) {
			if s.holdBack(c, gc) {
				return gnet.Close
			}
			return gnet.None
		}
		c.pausedAt = time.Time{}
		var frame []byte // the frame: a view of gnet's buffer, or owned
		owned, big := false, 0
		if c.large != nil {
			act, done := s.collectLarge(c, gc)
			if !done {
				return act
			}
			frame, owned, big = c.large, true, len(c.large)
			c.large = nil
		} else {
			prefix, err := gc.Peek(4)
			if err != nil {
				// Wait for the length prefix (or, at a frame boundary, for
				// anything at all).
				c.wakeAfter(4 - gc.InboundBuffered())
				return gnet.None
			}
			size, err := remoting.FrameSize(prefix, max)
			if err != nil {
				s.badFrame(c, err)
				return gnet.Close
			}
			if size > largeRequest {
				// Collected into a buffer of its own as it arrives:
				// gnet's buffer would grow to twice the frame and keep
				// it while the request waits.
				c.large = make([]byte, 0, size)
				continue
			}
			if frame, err = gc.Peek(size); err != nil {
				c.wakeAfter(size - gc.InboundBuffered()) // wait for the rest of the frame
				return gnet.None
			}
		}
		size := len(frame)
		discard := func(n int) {
			if !owned {
				_, _ = gc.Discard(n)
			}
		}
		if headerLen(frame) > maxLoopHeader {
			s.gate.RLock()
			if s.draining {
				s.gate.RUnlock()
				s.releaseLarge(big)
				return gnet.Close
			}
			s.wg.Add(1)
			s.gate.RUnlock()
			c.decoding = true
			own := frame
			if !owned {
				own = ownFrame(frame)
			}
			discard(size)
			go s.decodeAside(c, own, big)
			return gnet.None
		}
		// The body stays a view of gnet's buffer while an inline handler
		// runs (a batch's 32 KiB need not be copied to be appended); it
		// gets its own copy before the request goes anywhere else.
		cmd, n, err := remoting.DecodeFrameView(frame, max)
		if err != nil {
			s.releaseLarge(big)
			s.badFrame(c, err)
			return gnet.Close
		}
		if f := s.inline[cmd.Code]; f != nil && !cmd.IsResponse() {
			if !corked {
				c.Cork()
				corked = true
			}
			if s.serveInline(c, f, cmd) {
				s.releaseLarge(big)
				discard(n)
				continue
			}
		}
		if !owned {
			cmd.Body = ownBody(cmd.Body)
		}
		discard(n)
		s.dispatch(c, cmd, big)
	}
	// The cap was hit: come back for what is left without starving others.
	if gc.InboundBuffered() > 0 {
		_ = gc.Wake(nil)
	}
	return gnet.None
}

// collectLarge moves what has arrived of c's large frame into c.large.
// Once all of it is there it takes the frame's share of MaxLargeRequests
// and reports done; until then it returns what OnTraffic returns. A
// complete frame whose share is not free waits where it is. Runs on the
// event loop.
func (s *Server) collectLarge(c *Conn, gc gnet.Conn) (gnet.Action, bool) {
	if have, want := len(c.large), cap(c.large); have < want {
		n, _ := gc.Read(c.large[have:want])
		c.large = c.large[:have+n]
		if have+n < want {
			c.wakeAfter(want - have - n)
			return gnet.None, false
		}
	}
	if !s.takeLarge(len(c.large)) {
		// Other large requests are being handled: this one waits.
		if gc.InboundBuffered() > s.cfg.MaxConnInbound {
			return gnet.Close, false
		}
		c.scheduleRecheck()
		return gnet.None, false
	}
	return gnet.None, true
}

// ownBody copies a request body out of gnet's buffer.
func ownBody(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

// serveInline runs req's inline handler on the event loop; false means
// the handler declined and req must be dispatched.
func (s *Server) serveInline(c *Conn, f InlineHandler, req *remoting.Command) bool {
	s.gate.RLock()
	if s.draining {
		s.gate.RUnlock()
		return true // shutting down: the connection is about to close
	}
	s.wg.Add(1)
	s.gate.RUnlock()
	defer s.wg.Done()
	resp, ok := s.callInline(c, f, req)
	if !ok {
		return false
	}
	s.reply(c, req, resp)
	return true
}

// callInline is call for an InlineHandler.
func (s *Server) callInline(c *Conn, f InlineHandler, req *remoting.Command) (resp *remoting.Command, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", logKeyCode, req.Code, logKeyOpaque, req.Opaque, logKeyRemote, c.remoteStr, "panic", r)
			if s.cfg.OnPanic != nil {
				s.cfg.OnPanic(req.Code, r)
			}
			resp, ok = remoting.NewResponse(remoting.SystemError, fmt.Sprint(r)), true
		}
	}()
	return f(c.ctx, c, req)
}

func (s *Server) badFrame(c *Conn, err error) {
	s.log.Warn("closing connection after bad frame", logKeyConn, c.id, logKeyRemote, c.remoteStr, "err", err)
}

// dispatch runs on the event loop and must not block. big is the
// request's share of MaxLargeRequests, given back once it is handled.
func (s *Server) dispatch(c *Conn, cmd *remoting.Command, big int) {
	handed := false
	defer func() {
		if !handed {
			s.releaseLarge(big)
		}
	}()
	if cmd.IsResponse() {
		c.deliver(cmd)
		return
	}
	h := s.handlers[cmd.Code]
	if h == nil {
		h = s.fallback
	}
	if h == nil {
		s.log.Debug("request code not supported", logKeyCode, cmd.Code, logKeyOpaque, cmd.Opaque, logKeyRemote, c.remoteStr)
		if !cmd.IsOneway() {
			_ = c.Reply(cmd, remoting.NewResponse(remoting.RequestCodeNotSupported,
				" request type "+strconv.Itoa(int(cmd.Code))+" not supported"))
		}
		return
	}
	if s.active.Add(1) > int64(s.cfg.MaxHandlers) {
		s.active.Add(-1)
		s.busy.note(s.log, cmd.Code, c.remoteStr)
		if !cmd.IsOneway() {
			_ = c.Reply(cmd, remoting.NewResponse(remoting.SystemBusy,
				"[OVERLOAD]system busy, start flow control for a while"))
		}
		return
	}
	s.gate.RLock()
	if s.draining {
		s.gate.RUnlock()
		s.active.Add(-1)
		return // shutting down: the connection is about to close
	}
	s.wg.Add(1)
	s.gate.RUnlock()
	c.inflight.Add(1)
	handed = true
	j := job{c: c, h: h, req: cmd, big: big}
	select {
	case s.work <- j: // an idle worker took it
	default:
		s.workers.Add(1)
		go s.worker(j)
	}
}

// job is one request for a worker.
type job struct {
	c   *Conn
	h   Handler
	req *remoting.Command
	big int // share of MaxLargeRequests
}

// workerIdle is about how long a worker waits for more work before it
// exits (between one and two periods), so a burst does not leave thousands
// of goroutines behind.
const workerIdle = 10 * time.Second

// worker serves j, then further jobs until it idles out or the server
// closes.
func (s *Server) worker(j job) {
	defer s.workers.Done()
	s.serve(j)
	// The timer is not moved per job (that cost more than a fast handler):
	// when it fires, a worker that served anything since it was armed
	// waits another period, so an idle worker leaves after one to two.
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	served := true
	for {
		j, st := s.nextJob(idle)
		switch st {
		case jobDone:
			return
		case jobIdle:
			if !served {
				return
			}
			served = false
			idle.Reset(workerIdle)
			continue
		}
		s.serve(j)
		served = true
	}
}

// nextJob's outcomes.
const (
	jobReady = iota
	jobIdle  // the idle timer fired
	jobDone  // the server is closing
)

// idleStackPad is stack an idle worker keeps in use while it waits. Every
// GC halves the stack of a parked goroutine that uses less than a quarter
// of it, and the next handler grows it again by copying: with a few
// hundred workers and frequent GCs that was a tenth of the broker's CPU.
// A send handler's deepest path needs well under 16 KiB.
const idleStackPad = 4 << 10

// nextJob waits for a job with idleStackPad bytes of stack in use.
//
//go:noinline
func (s *Server) nextJob(idle *time.Timer) (job, int) {
	var pad [idleStackPad]byte
	keepStack(&pad)
	select {
	case j := <-s.work:
		return j, jobReady
	case <-idle.C:
		return job{}, jobIdle
	case <-s.done:
		return job{}, jobDone
	}
}

// keepStack makes the padding a live part of the caller's frame.
//
//go:noinline
func keepStack(*[idleStackPad]byte) {}

func (s *Server) serve(j job) {
	defer s.wg.Done()
	c, req := j.c, j.req
	resp := s.call(c, j.h, req)
	s.releaseLarge(j.big)
	c.inflight.Add(-1)
	s.active.Add(-1)
	s.reply(c, req, resp)
	s.handlerDone(c)
}

// reply sends a handler's response, if any.
func (s *Server) reply(c *Conn, req, resp *remoting.Command) {
	if resp == nil || req.IsOneway() {
		return
	}
	err := c.Reply(req, resp)
	if errors.Is(err, remoting.ErrEncode) {
		// Do not leave the client waiting for its timeout.
		s.log.Error("cannot encode response", logKeyCode, req.Code, logKeyOpaque, req.Opaque, logKeyRemote, c.remoteStr, "err", err)
		err = c.Reply(req, remoting.NewResponse(remoting.SystemError, err.Error()))
	}
	if err != nil {
		s.log.Debug("response not sent", logKeyCode, req.Code, logKeyOpaque, req.Opaque, logKeyRemote, c.remoteStr, "err", err)
	}
}

// call runs h, turning a panic into SYSTEM_ERROR as Java does with an
// exception in a processor.
func (s *Server) call(c *Conn, h Handler, req *remoting.Command) (resp *remoting.Command) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", logKeyCode, req.Code, logKeyOpaque, req.Opaque, logKeyRemote, c.remoteStr, "panic", r)
			if s.cfg.OnPanic != nil {
				s.cfg.OnPanic(req.Code, r)
			}
			resp = remoting.NewResponse(remoting.SystemError, fmt.Sprint(r))
		}
	}()
	return h(c.ctx, c, req)
}

// getBig returns an empty write buffer of capacity bigBuffer.
func (s *Server) getBig() []byte {
	if p, _ := s.big.Get().(*[]byte); p != nil {
		return (*p)[:0]
	}
	return make([]byte, 0, bigBuffer)
}

// putBig returns b to the pool if it is one of getBig's; other buffers are
// left to the GC.
func (s *Server) putBig(b []byte) {
	if cap(b) == bigBuffer {
		p := new([]byte) // allocated here only, not for every call
		*p = b[:0]
		s.big.Put(p)
	}
}

// ListenError is a Start that could not bind its address. It reads
// "rocketmq: [Who: ]listen on ADDR: CAUSE", the cause without the
// operation and address the net package repeats ("address already in
// use", not "listen tcp ADDR: bind: address already in use"); Err stays
// matchable (errors.Is(err, syscall.EADDRINUSE)).
type ListenError struct {
	Who  string // the server, for example "broker broker-a"; may be empty
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	cause := e.Err.Error()
	var se *os.SyscallError
	var op *net.OpError
	switch {
	case errors.As(e.Err, &se):
		cause = se.Err.Error()
	case errors.As(e.Err, &op) && op.Err != nil:
		cause = op.Err.Error()
	}
	who := ""
	if e.Who != "" {
		who = e.Who + ": "
	}
	return "rocketmq: " + who + "listen on " + e.Addr + ": " + cause
}

func (e *ListenError) Unwrap() error { return e.Err }
