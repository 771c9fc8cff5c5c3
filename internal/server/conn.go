package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/go-rocketmq/rocketmq/remoting"
)

var errNilResponse = errors.New("rocketmq: nil response")

// maxKeptBuffer is the largest write buffer an idle connection keeps for
// reuse. Replies that queue up behind a write in progress (pull responses
// of tens of KiB each) need more: they get a bigBuffer from the server's
// pool, which goes back there once everything queued is written, instead
// of growing and clearing a fresh buffer for every burst.
const (
	maxKeptBuffer = 256 << 10
	bigBuffer     = 2 << 20
)

// frameSlack is what a reply's frame is assumed to need beyond its body
// when c.out is grown for it: the length words and a typical header.
const frameSlack = 512

// Conn is one client connection. Its methods are safe for concurrent use.
type Conn struct {
	srv       *Server
	gc        gnet.Conn
	id        uint64
	local     net.Addr
	remote    net.Addr
	remoteStr string

	ctx    context.Context // cancelled when the connection or server closes
	cancel context.CancelFunc
	closed chan struct{}

	// Writes: a sender appends its encoded frame to out. If no write is
	// under way it becomes the writer and writes out to the socket itself,
	// again and again until out is empty, so replies finishing while a
	// write runs coalesce into the next one. Only when the socket does not
	// take everything does the rest go to gnet on the event loop (viaLoop),
	// and every later frame follows it there, in order, until gnet's
	// buffer has drained. Writing from the sender saves the event-loop
	// wake-up (an eventfd write and two epoll_waits) per reply.
	mu       sync.Mutex
	out      []byte
	spare    []byte
	writing  bool // a writer (a sender or the loop's flusher) owns out
	viaLoop  bool // gnet may hold unsent bytes: write through the loop
	corks    int  // Cork calls not yet matched by Uncork: replies are held back
	loopDone bool // event loop only: OnClose ran, gc must not be used
	lowat    int  // event loop only: the socket's SO_RCVLOWAT (0: never set, i.e. 1)

	// Back-pressure, event loop only: when the connection was paused
	// (zero: it is not) and whether a re-check is scheduled.
	pausedAt  time.Time
	drainedAt time.Time // when the paused connection's outbound last shrank
	pausedOut int       // its outbound at the last check
	recheck   bool
	decoding  bool   // a frame with a large header is being decoded aside
	large     []byte // a large frame being collected (collectLarge)
	loop      gnet.EventLoop

	// inHand is the length of the buffer a writer took from out and has
	// not yet handed to the socket or gnet (c.mu).
	inHand int
	// outLen is len(out)+inHand, for the event loop to read without c.mu.
	outLen atomic.Int64
	// loopOut is gnet's outbound buffer as the event loop last saw it,
	// for Push to read off the loop.
	loopOut atomic.Int64

	// inflight counts this connection's requests handed to workers whose
	// handler has not returned yet; a writer that sees some yields once
	// so their replies can join its write.
	inflight atomic.Int32

	// resume asks the next handler that returns to wake the paused
	// connection (see handlerDone).
	resume atomic.Bool

	fd     int
	fdMu   sync.Mutex // held during a direct write; OnClose takes it before gnet closes fd
	fdDone bool       // under fdMu: fd is about to close (or was)

	pmu        sync.Mutex
	pending    map[int32]chan *remoting.Command // server→client calls by opaque
	pendClosed bool
	nextOpaque atomic.Int32

	vmu    sync.Mutex
	values map[any]any
}

func newConn(s *Server, gc gnet.Conn) *Conn {
	ctx, cancel := context.WithCancel(s.baseCtx)
	local, remote := localAddr(gc.Fd(), gc.LocalAddr()), gc.RemoteAddr()
	if p, ok := gc.Context().(*peerAddrs); ok { // a TLS bridge (tls.go)
		local, remote = p.local, p.remote
	}
	c := &Conn{
		srv:    s,
		gc:     gc,
		id:     s.nextConn.Add(1),
		local:  local,
		remote: remote,
		ctx:    ctx,
		cancel: cancel,
		closed: make(chan struct{}),
		fd:     gc.Fd(),
		loop:   gc.EventLoop(),
	}
	if c.remote != nil {
		c.remoteStr = c.remote.String()
	}
	return c
}

// ID is unique among the connections of one server.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr is the server side address of the connection.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddrPort is RemoteAddr as a netip.AddrPort (zero if not TCP).
func (c *Conn) RemoteAddrPort() netip.AddrPort {
	if a, ok := c.remote.(*net.TCPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// String returns the remote address, as logs name a client.
func (c *Conn) String() string { return c.remoteStr }

// Context is cancelled when the connection or the server closes.
func (c *Conn) Context() context.Context { return c.ctx }

// Closed is closed once the connection has closed.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// IsClosed reports whether the connection has closed.
func (c *Conn) IsClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// SetValue stores per-connection state (a client id, say) under key.
func (c *Conn) SetValue(key, value any) {
	c.vmu.Lock()
	if c.values == nil {
		c.values = make(map[any]any)
	}
	c.values[key] = value
	c.vmu.Unlock()
}

// Value returns what SetValue stored under key, or nil.
func (c *Conn) Value(key any) any {
	c.vmu.Lock()
	defer c.vmu.Unlock()
	return c.values[key]
}

// Close closes the connection; Closed fires once it is done.
func (c *Conn) Close() error {
	s := c.srv
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.stopped {
		return ErrServerClosed
	}
	if c.IsClosed() {
		return nil
	}
	return c.gc.Close()
}

// Reply sends resp as the answer to req: opaque and serialize type come from
// req and the response flag is set. resp itself is not modified. Replying
// to a oneway request does nothing.
func (c *Conn) Reply(req, resp *remoting.Command) error {
	if req.IsOneway() {
		return nil
	}
	if resp == nil {
		return errNilResponse
	}
	r := *resp
	r.Opaque = req.Opaque
	r.Flag = (r.Flag | remoting.FlagResponse) &^ remoting.FlagOneway
	r.Serialize = req.Serialize
	return c.send(&r, 0)
}

// Invoke sends a request to the client and waits for its response. The
// request is sent with a fresh opaque and no response/oneway flags; req is
// not modified. Without a deadline on ctx the server's InvokeTimeout
// applies. The call fails early if the connection or the server closes.
func (c *Conn) Invoke(ctx context.Context, req *remoting.Command) (*remoting.Command, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.srv.cfg.InvokeTimeout)
		defer cancel()
	}
	r := *req
	r.Opaque = c.nextOpaque.Add(1)
	r.Flag &^= remoting.FlagResponse | remoting.FlagOneway

	ch := make(chan *remoting.Command, 1)
	c.pmu.Lock()
	if c.pendClosed {
		c.pmu.Unlock()
		return nil, ErrConnClosed
	}
	if c.pending == nil {
		c.pending = make(map[int32]chan *remoting.Command)
	}
	c.pending[r.Opaque] = ch
	c.pmu.Unlock()

	if err := c.send(&r, 0); err != nil {
		c.forget(r.Opaque)
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		c.forget(r.Opaque)
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: code %d opaque %d to %s: %w", ErrTimeout, r.Code, r.Opaque, c.remoteStr, err)
		}
		return nil, fmt.Errorf("rocketmq: code %d opaque %d to %s: %w", r.Code, r.Opaque, c.remoteStr, err)
	case <-c.closed:
		c.forget(r.Opaque)
		return nil, fmt.Errorf("%w: code %d opaque %d to %s", ErrConnClosed, r.Code, r.Opaque, c.remoteStr)
	case <-c.srv.done:
		c.forget(r.Opaque)
		return nil, ErrServerClosed
	}
}

// InvokeOneway sends a request with the oneway flag; no response is expected.
func (c *Conn) InvokeOneway(req *remoting.Command) error {
	r := *req
	r.Opaque = c.nextOpaque.Add(1)
	r.Flag = (r.Flag | remoting.FlagOneway) &^ remoting.FlagResponse
	return c.send(&r, 0)
}

// ErrPushDropped is Push's answer when the connection's queue is full.
var ErrPushDropped = errors.New("rocketmq: push dropped: the client is behind reading")

// Push is InvokeOneway for a hint the client can do without (a
// NOTIFY_CONSUMER_IDS_CHANGED, say): while MaxPushQueued bytes or more
// wait to be written to the connection it sends nothing and returns
// ErrPushDropped. Java bounds such pushes too (a semaphore on oneway
// requests in flight, over which they are dropped).
func (c *Conn) Push(req *remoting.Command) error {
	r := *req
	r.Opaque = c.nextOpaque.Add(1)
	r.Flag = (r.Flag | remoting.FlagOneway) &^ remoting.FlagResponse
	return c.send(&r, c.srv.cfg.MaxPushQueued)
}

func (c *Conn) forget(opaque int32) {
	c.pmu.Lock()
	delete(c.pending, opaque)
	c.pmu.Unlock()
}

// deliver hands a response from the client to the Invoke waiting for it.
// Runs on the event loop.
func (c *Conn) deliver(resp *remoting.Command) {
	c.pmu.Lock()
	ch := c.pending[resp.Opaque]
	delete(c.pending, resp.Opaque)
	c.pmu.Unlock()
	if ch == nil {
		// Late (timed out) or unasked: some clients answer "oneway"
		// requests that were sent without the flag.
		c.srv.log.Debug("response without a pending request", logKeyOpaque, resp.Opaque, logKeyCode, resp.Code, logKeyRemote, c.remoteStr)
		return
	}
	ch <- resp // buffered; one response per opaque
}

// send encodes cmd onto the connection's write queue and writes it out,
// or leaves it to the writer already at work. With limit > 0 it drops
// cmd when limit bytes or more are queued.
func (c *Conn) send(cmd *remoting.Command, limit int) error {
	s := c.srv
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.stopped {
		return ErrServerClosed
	}
	if c.IsClosed() {
		return ErrConnClosed
	}
	c.mu.Lock()
	if limit > 0 && c.queuedLocked() >= limit {
		if c.viaLoop && !c.writing {
			// gnet's buffer may have drained since the loop looked:
			// let the loop look again.
			c.writing = true
			c.mu.Unlock()
			_ = c.scheduleFlush()
			return ErrPushDropped
		}
		c.mu.Unlock()
		return ErrPushDropped
	}
	c.growOut(len(cmd.Body) + frameSlack)
	out, err := cmd.AppendFrame(c.out)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	c.out = out
	c.outLen.Store(int64(len(out) + c.inHand))
	if c.writing || c.corks > 0 {
		c.mu.Unlock()
		return nil // the writer at work, or the last Uncork, takes it along
	}
	// Replies of requests read in the same burst are usually a moment
	// away: let the runnable ones append first, so one write (one trip
	// through the kernel's TCP stack) carries them all.
	return c.writeQueuedLocked(c.inflight.Load() > 0)
}

// queuedLocked is the bytes waiting to be written to the socket (c.mu
// held), gnet's as last seen by the loop.
func (c *Conn) queuedLocked() int {
	n := len(c.out) + c.inHand
	if c.viaLoop {
		n += int(c.loopOut.Load())
	}
	return n
}

// writeQueuedLocked makes the caller the writer of c.out (c.mu held; it
// returns with c.mu released): through gnet's loop while gnet may hold
// unsent bytes, else directly, after yielding once if yield is set.
func (c *Conn) writeQueuedLocked(yield bool) error {
	c.writing = true
	if c.viaLoop {
		c.mu.Unlock()
		return c.scheduleFlush()
	}
	if yield {
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	return c.writeOutLocked()
}

// writeOutLocked writes c.out until it is empty, as the writer (c.writing
// is set, c.mu held; it returns with c.mu released).
func (c *Conn) writeOutLocked() error {
	for {
		buf := c.out
		c.out, c.spare = c.spare[:0], nil
		c.inHand = len(buf) // still queued until written
		c.mu.Unlock()
		n, err := c.writeDirect(buf)
		c.mu.Lock()
		c.inHand = 0
		if err != nil || n < len(buf) {
			// The socket is full (or the write failed; then gnet's own
			// write reports it and closes): gnet takes the rest in order,
			// ahead of whatever queued meanwhile. The rest moves to the
			// front of buf, whose room usually holds what queued too, and
			// the queue's buffer becomes the spare again.
			rest := append(buf[:copy(buf, buf[n:])], c.out...)
			c.keep(c.out)
			c.out = rest
			c.outLen.Store(int64(len(rest)))
			c.viaLoop = true
			c.mu.Unlock()
			return c.scheduleFlush()
		}
		c.keep(buf)
		c.outLen.Store(int64(len(c.out)))
		if len(c.out) == 0 {
			c.writing = false
			c.trimBuffers()
			c.mu.Unlock()
			return nil
		}
	}
}

// growOut makes room for need more bytes in c.out (c.mu held), at least
// doubling it: append grows large slices by a quarter, which would copy
// a queue of pull responses several times over.
func (c *Conn) growOut(need int) {
	if cap(c.out)-len(c.out) >= need {
		return
	}
	if size := len(c.out) + need; size+len(c.out) > maxKeptBuffer && size <= bigBuffer {
		big := c.srv.getBig()
		c.out = append(big, c.out...)
		return
	}
	c.out = slices.Grow(c.out, max(need, len(c.out)))
}

// keep takes back a write buffer whose bytes have been written or copied
// (c.mu held): the larger of it and the spare stays as the spare, a big
// one of the two goes back to the server's pool.
func (c *Conn) keep(buf []byte) {
	if cap(buf) > cap(c.spare) && cap(buf) <= bigBuffer {
		buf, c.spare = c.spare, buf[:0]
	}
	c.srv.putBig(buf)
}

// trimBuffers returns write buffers above maxKeptBuffer to the server's
// pool once nothing is queued (c.mu held).
func (c *Conn) trimBuffers() {
	if cap(c.spare) > maxKeptBuffer {
		c.srv.putBig(c.spare)
		c.spare = nil
	}
	if len(c.out) == 0 && cap(c.out) > maxKeptBuffer {
		c.srv.putBig(c.out)
		c.out = nil
	}
}

// Cork holds the connection's replies back until the matching Uncork, so
// that one write carries all the replies a caller produces together: the
// event loop corks while it serves requests inline, the broker while it
// answers the sends one group commit made durable. Corks nest; any
// goroutine may cork, and must Uncork.
func (c *Conn) Cork() {
	c.mu.Lock()
	c.corks++
	c.mu.Unlock()
}

// Uncork ends a Cork. The last one writes what was held back (unless a
// writer is at work, which then takes it along).
func (c *Conn) Uncork() {
	c.mu.Lock()
	if c.corks == 0 {
		c.mu.Unlock()
		panic("rocketmq: Conn.Uncork without Cork")
	}
	c.corks--
	if c.corks > 0 || c.writing || len(c.out) == 0 {
		c.mu.Unlock()
		return
	}
	if err := c.writeQueuedLocked(false); err != nil {
		c.srv.log.Debug("write failed", logKeyConn, c.id, logKeyRemote, c.remoteStr, "err", err)
	}
}

// scheduleFlush hands the queued bytes to the event loop. Called by the
// writer (c.writing is set).
func (c *Conn) scheduleFlush() error {
	if err := c.gc.EventLoop().Execute(context.Background(), (*flusher)(c)); err != nil {
		c.mu.Lock()
		c.writing = false
		c.out = c.out[:0]
		c.inHand = 0
		c.outLen.Store(0)
		c.mu.Unlock()
		return fmt.Errorf("rocketmq: write to %s: %w", c.remoteStr, err)
	}
	return nil
}

// flusher is Conn's gnet.Runnable: it writes the queued frames on the loop.
type flusher Conn

func (f *flusher) Run(context.Context) error {
	c := (*Conn)(f)
	// The loop must not queue behind senders copying replies in under
	// c.mu: every other connection of the loop would wait too. When the
	// lock is busy the flush runs again later; c.writing stays set, so the
	// senders just queue their frames for it.
	if !c.mu.TryLock() {
		return c.retryFlush()
	}
	c.inHand = 0 // what an earlier run took went to gnet
	for len(c.out) > 0 {
		buf := c.out
		c.out, c.spare = c.spare[:0], nil
		c.inHand = len(buf)
		c.mu.Unlock()
		if !c.loopDone {
			// gnet copies what the socket does not take at once.
			if _, err := c.gc.Write(buf); err != nil {
				c.srv.log.Debug("write failed", logKeyConn, c.id, logKeyRemote, c.remoteStr, "err", err)
			}
		}
		if !c.mu.TryLock() {
			return c.retryFlush()
		}
		c.inHand = 0
		c.keep(buf)
	}
	c.outLen.Store(0)
	if !c.loopDone {
		c.loopOut.Store(int64(c.gc.OutboundBuffered()))
	}
	if !c.loopDone && c.gc.OutboundBuffered() == 0 {
		c.viaLoop = false // gnet has sent everything: senders may write again
		c.trimBuffers()
	}
	c.writing = false
	c.mu.Unlock()
	return nil // an error here would not be reported anywhere useful
}

// retryFlush queues the flusher again behind the loop's other work.
func (c *Conn) retryFlush() error {
	if c.loopDone {
		c.mu.Lock()
		c.writing = false
		c.out = c.out[:0]
		c.inHand = 0
		c.outLen.Store(0)
		c.mu.Unlock()
		return nil
	}
	if err := c.loop.Execute(context.Background(), (*flusher)(c)); err != nil {
		c.mu.Lock()
		c.writing = false
		c.out = c.out[:0]
		c.inHand = 0
		c.outLen.Store(0)
		c.mu.Unlock()
	}
	return nil
}

// maxLowat bounds the wake-up threshold: a larger frame is read as it comes.
// A threshold above about a quarter of the receive buffer makes the kernel
// grow the buffer, and older kernels then also clamp the receive window to
// the threshold for good; 16 KiB stays far below the 128 KiB default.
const maxLowat = 16 << 10

// wakeAfter tells the kernel not to report the socket readable before need
// more bytes have arrived: the rest of the frame being waited for. Many
// clients write a request in several pieces (the official Go client in
// four: length, header length, header, body), and most wake-ups used to
// find only part of a frame, each costing an epoll_wait and a read that
// also sent an ACK. At a frame boundary need is 4, the length prefix.
// End of stream and errors still wake the loop at once. Runs on the event
// loop.
func (c *Conn) wakeAfter(need int) {
	if need <= 1 || need > maxLowat {
		need = 1
	}
	cur := max(c.lowat, 1)
	if need == cur {
		return
	}
	if err := setRcvLowat(c.fd, need); err != nil {
		// Not supported here: keep waking on every byte.
		c.lowat = 1
		return
	}
	c.lowat = need
}

// closeOnLoop marks the connection closed; runs in gnet's OnClose.
func (c *Conn) closeOnLoop() {
	c.fdMu.Lock() // waits for a direct write in progress
	c.fdDone = true
	c.fdMu.Unlock()
	c.mu.Lock()
	c.loopDone = true
	c.mu.Unlock()
	c.pmu.Lock()
	c.pendClosed = true
	c.pending = nil
	c.pmu.Unlock()
	close(c.closed)
	c.cancel()
}
