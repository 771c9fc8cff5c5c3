package transport

import (
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
// Writes are coalesced: callers append encoded frames to wbuf under wmu and
// wake the writer, which swaps wbuf for its spare buffer and writes
// everything queued with one syscall. Under load many frames share a write.
type conn struct {
	c    *Client
	addr string
	nc   net.Conn

	closed atomic.Bool
	done   chan struct{} // closed by close(); stops the writer

	wmu  sync.Mutex
	wbuf []byte
	wsig chan struct{} // cap 1: wbuf went from empty to non-empty

	pmu     sync.Mutex
	pending map[int32]*call // nil once closed

	active atomic.Int64 // last traffic, as time.Duration since Client.start
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
	}
	cn.touch()
	return cn
}

func (cn *conn) touch() { cn.active.Store(int64(time.Since(cn.c.start))) }

// register adds a pending call; false once the connection is closed.
func (cn *conn) register(opaque int32, cl *call) bool {
	cn.pmu.Lock()
	if cn.pending == nil {
		cn.pmu.Unlock()
		return false
	}
	cn.pending[opaque] = cl
	cn.pmu.Unlock()
	return true
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

func (cn *conn) pendingLen() int {
	cn.pmu.Lock()
	n := len(cn.pending)
	cn.pmu.Unlock()
	return n
}

// enqueue encodes cmd into the write buffer and wakes the writer.
func (cn *conn) enqueue(cmd *remoting.Command) error {
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
	cn.wmu.Unlock()
	if n == 0 {
		// Only the first frame after a swap signals: a non-empty buffer
		// means a signal is already pending for it.
		select {
		case cn.wsig <- struct{}{}:
		default:
		}
	}
	return nil
}

func (cn *conn) writeLoop() {
	var spare []byte
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
		buf := cn.wbuf
		cn.wbuf = spare[:0]
		cn.wmu.Unlock()
		if len(buf) == 0 {
			spare = buf
			continue
		}
		cn.writes.Inc()
		if _, err := cn.nc.Write(buf); err != nil {
			cn.close(ErrConnClosed, err)
			return
		}
		cn.touch()
		if cap(buf) > maxKeptWriteBuf {
			buf = nil
		}
		spare = buf
	}
}

// readLoop reads into a buffer it manages and decodes every complete frame
// in it per read. A frame larger than the buffer gets a buffer of its own
// for as long as it takes to read.
func (cn *conn) readLoop() {
	maxFrame := cn.c.cfg.maxFrame
	small := make([]byte, readBufSize)
	buf := small
	r, w := 0, 0
	for {
		n, rerr := cn.nc.Read(buf[w:])
		if n > 0 {
			w += n
			cn.touch()
		}
		for {
			size, err := remoting.FrameSize(buf[r:w], maxFrame)
			if err == remoting.ErrIncomplete {
				break
			}
			if err != nil {
				cn.c.log.Warn("rocketmq: bad frame, closing connection", "addr", cn.addr, "err", err)
				cn.close(ErrConnClosed, err)
				return
			}
			if w-r < size {
				if size > len(buf)-r { // make room for the whole frame
					if size > len(buf) {
						nb := make([]byte, size)
						copy(nb, buf[r:w])
						buf = nb
					} else {
						copy(buf, buf[r:w])
					}
					w -= r
					r = 0
				}
				break
			}
			cmd, _, err := remoting.DecodeFrame(buf[r:r+size], maxFrame)
			if err != nil {
				cn.c.log.Warn("rocketmq: bad frame, closing connection", "addr", cn.addr, "err", err)
				cn.close(ErrConnClosed, err)
				return
			}
			r += size
			cn.dispatch(cmd)
		}
		if r == w {
			r, w = 0, 0
			buf = small
		} else if len(buf)-w < minRead && r > 0 {
			copy(buf, buf[r:w])
			w -= r
			r = 0
		}
		if rerr != nil {
			cn.close(ErrConnClosed, rerr)
			return
		}
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
		cl.ch <- result{err: newErr("wait", cn.addr, opaque, kind, cause)}
	}
}
