package transport

import (
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/remoting"
)

const (
	readBufSize = 64 << 10
	// minRead: compact the read buffer before a read with less room.
	minRead = 4 << 10
	// maxKeptWriteBuf: a write buffer grown past this by a large frame is
	// dropped after use rather than kept for the life of the connection.
	maxKeptWriteBuf = 1 << 20
)

// conn is one connection with its reader and writer goroutines.
//
// Writes are coalesced: callers append encoded frames to wbuf under wmu.
// One goroutine at a time owns the socket's write side (writing). A caller
// that finds it free takes it and writes what is queued itself, with one
// non-blocking syscall (direct.go), which saves waking the writer
// goroutine on every call; whatever it cannot write at once, or finds
// queued after its write, goes to the writer goroutine, which swaps wbuf
// for its spare buffer and writes everything queued with one blocking
// syscall. Under load many frames share a write.
type conn struct {
	c    *Client
	addr string
	nc   net.Conn

	closed atomic.Bool
	done   chan struct{} // closed by close(); stops the writer

	wmu     sync.Mutex
	wbuf    []byte
	spare   []byte        // the other write buffer, when no write uses it
	writing bool          // a goroutine owns the write side
	carry   []byte        // unwritten tail of a direct write, handed to the writer with the write side
	wsig    chan struct{} // cap 1: wake the writer

	direct *directWriter // nil: every write goes through the writer goroutine

	// Read side (read.go).
	reader    atomic.Int32  // who reads: readerNone, readerLoop or readerCall
	canLead   bool          // callers may read (the socket takes read deadlines cheaply)
	rsig      chan struct{} // cap 1: wake the read loop to take the read side
	idle      *time.Timer   // wakes the read loop when the read side stayed free
	idleArmed atomic.Bool   // idle is set to fire
	idleWait  atomic.Int64  // the next arming's delay (time.Duration)
	idleGen   atomic.Uint32 // leads when idle was set
	leads     atomic.Uint32 // times a caller took the read side
	rs        readState     // the reader's buffer, used by whoever reads

	pmu     sync.Mutex
	pending map[int32]*call // nil once closed

	active atomic.Int64 // last traffic, as time.Duration since Client.start
	// rx counts reads that returned data; only the read side's owner
	// writes it. A timed-out call compares it with its value when the
	// call was registered (timedOut).
	rx     atomic.Uint32
	writes atomic.Int64 // write syscalls (benchmark metric)
}

func newConn(c *Client, addr string, nc net.Conn) *conn {
	cn := &conn{
		c:       c,
		addr:    addr,
		nc:      nc,
		done:    make(chan struct{}),
		wsig:    make(chan struct{}, 1),
		pending: make(map[int32]*call),
		direct:  newDirectWriter(nc),
		rsig:    make(chan struct{}, 1),
	}
	cn.rs.small = make([]byte, readBufSize)
	cn.rs.buf = cn.rs.small
	_, cn.canLead = nc.(*net.TCPConn)
	if cn.canLead {
		cn.idle = time.NewTimer(c.cfg.idleRead)
		cn.idleArmed.Store(true)
		cn.idleWait.Store(int64(c.cfg.idleRead))
	}
	cn.touch()
	return cn
}

// touch records traffic for the idle loop; without one (the default) it
// skips the clock read it would cost on every read and write.
func (cn *conn) touch() {
	if cn.c.cfg.idleTimeout > 0 {
		cn.active.Store(int64(time.Since(cn.c.start)))
	}
}

// register adds a pending call and returns how many are pending; false
// once the connection is closed.
func (cn *conn) register(opaque int32, cl *call) (int, bool) {
	cn.pmu.Lock()
	if cn.pending == nil {
		cn.pmu.Unlock()
		return 0, false
	}
	cn.pending[opaque] = cl
	n := len(cn.pending)
	cn.pmu.Unlock()
	return n, true
}

// abandon removes a call the caller gives up on. If the call is no longer
// pending, its result is on the way (reader or close took it): abandon
// waits for it, returns it and true, leaving cl reusable either way.
func (cn *conn) abandon(opaque int32, cl *call) (result, bool) {
	cn.pmu.Lock()
	if cn.pending != nil && cn.pending[opaque] == cl {
		delete(cn.pending, opaque)
		cn.pmu.Unlock()
		return result{}, false
	}
	cn.pmu.Unlock()
	return <-cl.ch, true
}

// unregister removes a call that is still pending; false when someone
// else took it (its result is theirs to deliver).
func (cn *conn) unregister(opaque int32, cl *call) bool {
	cn.pmu.Lock()
	defer cn.pmu.Unlock()
	if cn.pending != nil && cn.pending[opaque] == cl {
		delete(cn.pending, opaque)
		return true
	}
	return false
}

func (cn *conn) pendingLen() int {
	cn.pmu.Lock()
	n := len(cn.pending)
	cn.pmu.Unlock()
	return n
}

// enqueue encodes cmd into the write buffer and gets it written: with
// direct by this goroutine when the write side is free, else by its owner
// or the writer goroutine.
func (cn *conn) enqueue(cmd *remoting.Command, direct bool) error {
	cn.wmu.Lock()
	if cn.closed.Load() {
		cn.wmu.Unlock()
		return ErrConnClosed
	}
	n := len(cn.wbuf)
	buf, err := cmd.AppendFrame(cn.wbuf)
	if err != nil {
		cn.wmu.Unlock()
		return err
	}
	if size := len(buf) - n; size > cn.c.cfg.maxFrame {
		cn.wbuf = buf[:n]
		cn.wmu.Unlock()
		return &remoting.FrameError{Kind: remoting.ErrFrameTooLarge,
			Detail: "outgoing frame of " + strconv.Itoa(size) + " bytes exceeds " + strconv.Itoa(cn.c.cfg.maxFrame)}
	}
	cn.wbuf = buf
	if cn.writing {
		// The owner looks at wbuf again before it lets go.
		cn.wmu.Unlock()
		return nil
	}
	if !direct || cn.direct == nil {
		cn.wmu.Unlock()
		if n == 0 {
			// Only the first frame after a swap signals: a non-empty
			// buffer means a signal is already pending for it.
			cn.wake()
		}
		return nil
	}
	cn.writing = true
	buf = cn.wbuf
	cn.wbuf = cn.spare[:0]
	cn.spare = nil
	cn.wmu.Unlock()
	cn.writeDirect(buf)
	return nil
}

// wake signals the writer goroutine (at most one signal is pending).
func (cn *conn) wake() {
	select {
	case cn.wsig <- struct{}{}:
	default:
	}
}

// writeDirect writes buf, taken from wbuf by this goroutine as owner of
// the write side, with one syscall that does not wait for room in the
// socket buffer. What is left, and anything queued meanwhile, is the
// writer goroutine's. A failed write closes the connection, which fails
// the pending calls; the frame's caller learns it from its call.
func (cn *conn) writeDirect(buf []byte) {
	n, err := cn.direct.write(buf)
	cn.writes.Inc()
	if err != nil {
		cn.close(ErrConnClosed, err)
		return
	}
	cn.touch()
	cn.wmu.Lock()
	if cn.closed.Load() {
		cn.wmu.Unlock()
		return
	}
	if n < len(buf) {
		// The socket buffer is full: the writer finishes with blocking
		// writes, the write side goes with it.
		cn.carry = buf[n:]
		cn.wmu.Unlock()
		cn.wake()
		return
	}
	if cap(buf) <= maxKeptWriteBuf {
		cn.spare = buf[:0]
	}
	cn.writing = false
	more := len(cn.wbuf) > 0
	cn.wmu.Unlock()
	if more {
		// Frames queued during the write: the next caller or the writer,
		// whichever comes first, takes them.
		cn.wake()
	}
}

func (cn *conn) writeLoop() {
	for {
		select {
		case <-cn.wsig:
		case <-cn.done:
			return
		}
		// Callers woken by the last batch of responses are about to queue
		// their next frames: let them run first so one write carries many
		// frames (without this, ~2 frames per write under load; with it, ~20).
		runtime.Gosched()
		cn.wmu.Lock()
		buf := cn.carry
		switch {
		case buf != nil: // handed over with the write side
			cn.carry = nil
		case cn.writing || len(cn.wbuf) == 0:
			cn.wmu.Unlock()
			continue
		default:
			cn.writing = true
			buf = cn.wbuf
			cn.wbuf = cn.spare[:0]
			cn.spare = nil
		}
		cn.wmu.Unlock()
		if !cn.drain(buf) {
			return
		}
	}
}

// drain writes buf and then whatever is queued until wbuf is empty, and
// lets go of the write side; false when the connection failed.
func (cn *conn) drain(buf []byte) bool {
	for {
		cn.writes.Inc()
		if _, err := cn.nc.Write(buf); err != nil {
			cn.close(ErrConnClosed, err)
			return false
		}
		cn.touch()
		cn.wmu.Lock()
		if cn.closed.Load() {
			cn.wmu.Unlock()
			return false
		}
		if cap(buf) <= maxKeptWriteBuf && cap(buf) > cap(cn.spare) {
			cn.spare = buf[:0]
		}
		if len(cn.wbuf) == 0 {
			cn.writing = false
			cn.wmu.Unlock()
			return true
		}
		buf = cn.wbuf
		cn.wbuf = cn.spare[:0]
		cn.spare = nil
		cn.wmu.Unlock()
	}
}

func (cn *conn) dispatch(cmd *remoting.Command) {
	if !cmd.IsResponse() {
		cn.c.handleRequest(cn, cmd)
		return
	}
	cn.pmu.Lock()
	cl := cn.pending[cmd.Opaque]
	if cl != nil {
		delete(cn.pending, cmd.Opaque)
	}
	cn.pmu.Unlock()
	if cl == nil {
		cn.c.log.Debug("rocketmq: response without pending call dropped", "addr", cn.addr, "opaque", cmd.Opaque, "code", cmd.Code)
		return
	}
	if cl.async != nil {
		cl.async.finish(cmd, nil)
		return
	}
	cl.ch <- result{resp: cmd}
}

// close closes the connection once and fails every pending call promptly
// with kind (ErrConnClosed, or ErrClosed when the client closes).
func (cn *conn) close(kind, cause error) {
	cn.pmu.Lock()
	if cn.pending == nil {
		cn.pmu.Unlock()
		return
	}
	pend := cn.pending
	cn.pending = nil
	cn.pmu.Unlock()

	cn.wmu.Lock()
	cn.closed.Store(true)
	cn.wbuf = nil
	cn.wmu.Unlock()
	close(cn.done)
	cn.nc.Close()
	cn.c.dropConn(cn)
	if kind == ErrClosed {
		cn.c.log.Debug("rocketmq: connection closed", "addr", cn.addr)
	} else {
		cn.c.log.Info("rocketmq: connection closed", "addr", cn.addr, "pending", len(pend), "err", cause)
	}
	for opaque, cl := range pend {
		err := newErr("wait", cn.addr, opaque, kind, cause)
		if cl.async != nil {
			cl.async.finish(nil, err)
			continue
		}
		cl.ch <- result{err: err}
	}
}

// errSilent is why a connection closed by timedOut was closed.
var errSilent = errors.New("nothing received since a request on it timed out")

// timedOut closes cn, as the timeout mode says, after a call registered
// when cn.rx was rx timed out: the peer is taken for dead when nothing at
// all came back since (Java NettyRemotingClient.invokeSync closes the
// channel on every timeout; docs/DESIGN.md says why we differ).
func (cn *conn) timedOut(rx uint32, sync bool) {
	switch mode := cn.c.cfg.timeoutClose; {
	case mode == CloseNever:
		return
	case mode == CloseAlways && sync:
		cn.close(ErrConnClosed, errors.New("closed after a request on it timed out"))
		return
	}
	if cn.rx.Load() == rx {
		cn.close(ErrConnClosed, errSilent)
	}
}
