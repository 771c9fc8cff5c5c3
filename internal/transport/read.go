package transport

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Reading. One goroutine at a time owns the read side of a connection and
// dispatches every frame it reads. A caller waiting for a response takes
// the read side when it is free and reads its response itself (lead):
// one sync caller at a time then costs no handoff from a reader goroutine
// (the wake-up of another thread per call). When the caller has its
// response it lets go: the read loop takes over at once if other calls
// are pending, else once the read side has stayed free for a while
// (idleReadDelay, backing off while callers keep reading), so that server
// requests and a closed peer are noticed on an idle connection too;
// ReadSoon asks for it at once. Under load the read loop keeps the read
// side.
//
// Connections other than plain TCP (TLS, custom dialers) are read by the
// read loop alone.

const (
	readerNone int32 = iota
	readerLoop
	readerCall
)

// idleReadDelay is how long the read side may stay free before the read
// loop takes it. While callers keep reading, the loop's timer is not moved
// on every call (see releaseRead) and backs off, doubling up to
// idleReadMax: a caller that sends back to back then never meets the read
// loop, and a server request on a connection that has just gone idle
// waits at most about twice idleReadMax (ReadSoon cuts that short when
// one is expected).
const (
	idleReadDelay = time.Millisecond
	idleReadMax   = 32 * time.Millisecond
)

// readState is the read buffer; only the owner of the read side uses it.
//
// A frame of ownMin bytes or more is read into a buffer of its own, made
// as soon as its length is known, which its command keeps: its body (a
// pull response's messages alias it) is then not copied again. While such
// frames arrive (capped), reads into the shared buffer stop at minRead
// bytes, so that most of a large frame goes straight into its own buffer.
// Smaller frames are decoded out of the shared buffer, which is reused.
type readState struct {
	buf    []byte // small, or a large frame's own buffer (own)
	small  []byte
	r, w   int
	own    bool
	capped bool
	dl     time.Time // read deadline last set on the socket
}

// ownMin is the smallest frame read into a buffer of its own: below it a
// copy out of the shared buffer costs less than the extra read.
const ownMin = 8 << 10

// takeRead makes who the owner of the read side if nobody is.
func (cn *conn) takeRead(who int32) bool {
	if who == readerCall && !cn.canLead {
		return false
	}
	if !cn.reader.CompareAndSwap(readerNone, who) {
		return false
	}
	if who == readerCall {
		cn.leads.Add(1)
	}
	return true
}

// releaseRead lets go of the read side and makes sure somebody will read
// whatever is pending.
func (cn *conn) releaseRead() {
	cn.reader.Store(readerNone)
	// Checked after the store: a call registered before it either sees
	// the read side free or is counted here.
	if cn.pendingLen() > 0 {
		select {
		case cn.rsig <- struct{}{}:
		default:
		}
		return
	}
	// Arm the idle timer unless it is armed: resetting it on every call
	// of a caller that keeps reading would cost more than the call itself
	// (timers move between the Ps' heaps). The read loop checks, when it
	// fires, whether callers read meanwhile, and looks again later if so.
	if !cn.idleArmed.Swap(true) {
		cn.idleGen.Store(cn.leads.Load())
		cn.idle.Reset(time.Duration(cn.idleWait.Load()))
	}
}

// ReadSoon makes the read loop of addr's connection read it now if no
// caller does, for a server request expected shortly (a request-reply
// reply) that should not wait for the loop's idle timer.
func (c *Client) ReadSoon(addr string) {
	if cn := c.readyConn(addr); cn != nil && cn.canLead {
		select {
		case cn.rsig <- struct{}{}:
		default:
		}
	}
}

// setReadDeadline sets the socket's read deadline unless it is set already.
func (cn *conn) setReadDeadline(t time.Time) error {
	if t.Equal(cn.rs.dl) {
		return nil
	}
	if err := cn.nc.SetReadDeadline(t); err != nil {
		return err
	}
	cn.rs.dl = t
	return nil
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// readLoop is the connection's reader when no caller reads.
func (cn *conn) readLoop() {
	if !cn.canLead {
		cn.reader.Store(readerLoop)
		for {
			if err := cn.readOnce(); err != nil {
				cn.close(ErrConnClosed, err)
				return
			}
		}
	}
	defer cn.idle.Stop()
	for {
		select {
		case <-cn.rsig:
		case <-cn.idle.C:
			if g := cn.leads.Load(); g != cn.idleGen.Load() {
				// Callers read since the timer was armed: not idle. Look
				// again later, and later each time.
				cn.idleGen.Store(g)
				w := min(2*time.Duration(cn.idleWait.Load()), max(idleReadMax, cn.c.cfg.idleRead))
				cn.idleWait.Store(int64(w))
				cn.idle.Reset(w)
				continue
			}
			cn.idleArmed.Store(false)
			cn.idleWait.Store(int64(cn.c.cfg.idleRead))
		case <-cn.done:
			return
		}
		if !cn.takeRead(readerLoop) {
			continue // a caller reads; it wakes us when it leaves
		}
		for {
			err := cn.setReadDeadline(time.Time{})
			if err == nil {
				err = cn.readOnce()
			}
			if err != nil {
				if isTimeout(err) && !cn.closed.Load() {
					// A deadline left on the socket: clear it, go on.
					cn.rs.dl = time.Unix(1, 0)
					continue
				}
				cn.close(ErrConnClosed, err)
				cn.releaseRead()
				return
			}
			if cn.pendingLen() == 0 {
				cn.releaseRead()
				break
			}
		}
	}
}

// ctxPoll is how often a caller reading its own response checks its ctx:
// a ctx that can end (Done != nil) bounds the read deadline to this far
// ahead, instead of a context.AfterFunc per call that would interrupt the
// read (registering and removing one costs more than the rest of the
// call's bookkeeping). A cancelled ctx is noticed up to this much late.
const ctxPoll = 10 * time.Millisecond

// lead reads the connection, as owner of its read side, until cl's
// response arrives, the call's deadline passes or ctx ends, then lets go.
func (cn *conn) lead(ctx context.Context, cl *call, opaque int32) (*remoting.Command, error) {
	dl, ctxDL := cl.until, false
	if d, ok := ctx.Deadline(); ok && (dl.IsZero() || !dl.Before(d)) {
		dl, ctxDL = d, true
	}
	r, kind, cause := cn.readUntil(ctx, cl, dl, ctxDL)
	cn.releaseRead()
	if kind != nil {
		return cn.giveUp(cl, opaque, kind, cause)
	}
	return r.resp, r.err
}

// readUntil is lead's loop: a result, or why there is none. ctxDL says dl
// is ctx's deadline.
//
// The socket's read deadline is the earlier of dl and, for a ctx that can
// end, ctxPoll from now. An earlier deadline still set by a previous call
// is kept: when it fires, this call's is set. Back-to-back calls thus set
// the socket's deadline about once per ctxPoll (or timeout), not per call.
func (cn *conn) readUntil(ctx context.Context, cl *call, dl time.Time, ctxDL bool) (r result, kind, cause error) {
	poll := ctx.Done() != nil
	next := func() time.Time {
		if !poll {
			return dl
		}
		if p := time.Now().Add(ctxPoll); dl.IsZero() || p.Before(dl) {
			return p
		}
		return dl
	}
	var err error
	if want, cur := next(), cn.rs.dl; want.IsZero() || cur.IsZero() || cur.After(want) {
		err = cn.setReadDeadline(want)
	}
	for {
		select {
		case r := <-cl.ch:
			return r, nil, nil
		default:
		}
		if err == nil {
			err = cn.readOnce()
		}
		if err == nil {
			continue
		}
		if !isTimeout(err) || cn.closed.Load() {
			// Closing fails every pending call, ours included, unless its
			// response was dispatched first.
			cn.close(ErrConnClosed, err)
			return <-cl.ch, nil, nil
		}
		if e := ctx.Err(); e != nil {
			if e == context.DeadlineExceeded {
				return result{}, ErrTimeout, e
			}
			return result{}, e, nil
		}
		if !dl.IsZero() && !time.Now().Before(dl) {
			if ctxDL { // ctx's own timer may not have fired yet
				return result{}, ErrTimeout, context.DeadlineExceeded
			}
			return result{}, ErrTimeout, nil
		}
		// A poll, or an earlier deadline left by a previous call: ours
		// again (forced: the socket's deadline is not what rs.dl says).
		cn.rs.dl = time.Unix(1, 0)
		err = cn.setReadDeadline(next())
	}
}

// readOnce reads once into the read buffer and dispatches every complete
// frame in it. The read's error comes back after the data read with it has
// been dispatched.
func (cn *conn) readOnce() error {
	rs := &cn.rs
	maxFrame := cn.c.cfg.maxFrame
	into := rs.buf[rs.w:]
	if rs.capped && !rs.own && len(into) > minRead {
		into = into[:minRead]
	}
	n, rerr := cn.nc.Read(into)
	if n > 0 {
		rs.w += n
		cn.rx.Store(cn.rx.Load() + 1) // one writer: no atomic add needed
		cn.touch()
	}
	for {
		size, err := remoting.FrameSize(rs.buf[rs.r:rs.w], maxFrame)
		if err == remoting.ErrIncomplete {
			break
		}
		if err != nil {
			if pe := sniff(rs.buf[rs.r:rs.w], err); pe != nil {
				err = pe
			}
			cn.c.log.Warn("rocketmq: bad frame, closing connection", "addr", cn.addr, "err", err)
			return err
		}
		rs.capped = size >= ownMin
		if rs.w-rs.r < size {
			switch {
			case rs.own: // the rest is read into it
			case size >= ownMin:
				nb := make([]byte, size)
				rs.w = copy(nb, rs.buf[rs.r:rs.w])
				rs.r = 0
				rs.buf, rs.own = nb, true
			case size > len(rs.buf)-rs.r:
				copy(rs.buf, rs.buf[rs.r:rs.w])
				rs.w -= rs.r
				rs.r = 0
			}
			break
		}
		var cmd *remoting.Command
		if rs.own { // the command keeps the buffer
			cmd, _, err = remoting.DecodeFrameView(rs.buf[rs.r:rs.r+size], maxFrame)
		} else {
			cmd, _, err = remoting.DecodeFrame(rs.buf[rs.r:rs.r+size], maxFrame)
		}
		if err != nil {
			cn.c.log.Warn("rocketmq: bad frame, closing connection", "addr", cn.addr, "err", err)
			return err
		}
		rs.r += size
		cn.dispatch(cmd)
	}
	if rs.r == rs.w {
		rs.r, rs.w = 0, 0
		rs.buf, rs.own = rs.small, false
	} else if len(rs.buf)-rs.w < minRead && rs.r > 0 {
		copy(rs.buf, rs.buf[rs.r:rs.w])
		rs.w -= rs.r
		rs.r = 0
	}
	return rerr
}
