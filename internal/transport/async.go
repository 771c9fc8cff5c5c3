package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Async calls. No goroutine and no timer per call: an InvokeAsync call is
// registered in its connection's pending map and completed exactly once by
// whoever takes it out of the map: the reader with the response, the
// connection closing, or the sweeper when its timeout passes or its ctx
// ends. Completions go to a queue that a pool of the client's goroutines
// (workers) drains, running the callbacks; a busy worker keeps taking
// queued completions, so under load there is no wake-up per call.
//
// Liveness: a callback that blocks holds up only its own worker. While
// completions wait, the sweeper starts another worker whenever a tick
// passes without any callback finishing.

// sweepTick is how often the sweeper looks for expired async calls (and
// stalled workers) while async calls are in flight: a timeout or a
// cancelled ctx is noticed up to this much late.
const sweepTick = 10 * time.Millisecond

// asyncCall is an InvokeAsync call in flight.
type asyncCall struct {
	call  // registered in pending; call.async points back here
	c     *Client
	ctx   context.Context
	cb    func(*remoting.Command, error)
	cn    *conn
	op    int32     // opaque
	until time.Time // end of the client's timeout; zero: ctx alone
}

// asyncDone is a completed call waiting for a worker.
type asyncDone struct {
	a    *asyncCall
	resp *remoting.Command
	err  error
}

// asyncState is a Client's completion queue, workers and sweeper.
type asyncState struct {
	mu       sync.Mutex
	cond     sync.Cond // workers wait on it, with mu
	q        []asyncDone
	head     int // q[head:] are waiting
	workers  int
	awake    int           // workers not waiting on cond (or signalled)
	finished atomic.Uint64 // callbacks run: the sweeper's progress check

	inflight atomic.Int64 // registered async calls not yet completed
	sweeping atomic.Bool  // a sweeper goroutine runs
}

// start registers the call on cn and queues its frame. A failure to send
// is delivered to cb like any other outcome.
func (a *asyncCall) start(cn *conn, req *remoting.Command) {
	c := a.c
	a.cn = cn
	a.op = c.prepare(cn.addr, req, 0)
	c.async.inflight.Add(1)
	c.ensureSweeper()
	a.call.rx = cn.rx.Load()
	n, ok := cn.register(a.op, &a.call)
	if !ok {
		a.finish(nil, newErr("send", cn.addr, a.op, ErrConnClosed, nil))
		return
	}
	// Alone on the connection the caller writes the frame itself.
	if err := cn.enqueue(req, n == 1); err != nil && cn.unregister(a.op, &a.call) {
		a.finish(nil, c.sendErr(cn.addr, a.op, err))
	} // else: queued, or the connection closed under us and completed the call
}

// finish completes the call: it frees the in-flight slot (first: cb may
// issue the next call) and queues cb for a worker.
func (a *asyncCall) finish(resp *remoting.Command, err error) {
	c := a.c
	<-c.asyncSem
	c.pushDone(asyncDone{a: a, resp: resp, err: err})
	// Counted down after the push: the sweeper, which watches the queue,
	// must not leave between the two.
	c.async.inflight.Add(-1)
}

// expired returns why the call has to end now, if it does.
func (a *asyncCall) expired(now time.Time) (kind, cause error) {
	if !a.until.IsZero() && !now.Before(a.until) {
		return ErrTimeout, nil
	}
	if done := a.ctx.Done(); done != nil {
		select {
		case <-done:
			kind = a.ctx.Err()
			if kind == context.DeadlineExceeded {
				return ErrTimeout, context.DeadlineExceeded
			}
			return kind, nil
		default:
		}
	}
	return nil, nil
}

// pushDone queues a completion and makes sure a worker will run it: an
// awake worker will, else a waiting one is signalled, else one is started.
// Once the client is closed and no worker is left, the callback runs here
// (Close, or a goroutine Close waits for, is completing the call).
func (c *Client) pushDone(d asyncDone) {
	s := &c.async
	s.mu.Lock()
	if s.awake == 0 {
		switch {
		case s.workers > 0:
			s.awake++
			s.cond.Signal()
		case c.hold():
			s.workers++
			s.awake++
			go c.worker()
		default:
			s.mu.Unlock()
			d.a.cb(d.resp, d.err)
			return
		}
	}
	s.q = append(s.q, d)
	s.mu.Unlock()
}

// worker runs queued callbacks until the client is closed and the queue
// is empty.
func (c *Client) worker() {
	defer c.gs.Enter()()
	s := &c.async
	s.mu.Lock()
	for {
		for s.head == len(s.q) {
			// One waiting worker is enough: those the sweeper added for a
			// stall leave once it is over, or a long-lived client would
			// keep one more goroutine for every stall it ever had.
			if c.closed.Load() || s.workers-s.awake > 0 {
				s.workers--
				s.awake--
				s.mu.Unlock()
				return
			}
			s.awake--
			s.cond.Wait() // the signaller counted us awake again
		}
		d := s.q[s.head]
		s.q[s.head] = asyncDone{}
		s.head++
		if s.head == len(s.q) {
			s.q, s.head = s.q[:0], 0
		}
		s.mu.Unlock()
		d.a.cb(d.resp, d.err)
		s.finished.Add(1)
		s.mu.Lock()
	}
}

// stopWorkers wakes every waiting worker after Close has completed every
// call, so that they drain the queue and exit.
func (c *Client) stopWorkers() {
	s := &c.async
	s.mu.Lock()
	s.awake = s.workers
	s.cond.Broadcast()
	s.mu.Unlock()
}

// ensureSweeper starts the sweeper unless it runs. Called after
// inflight.Add: either the sweeper sees the new call or this sees it gone.
func (c *Client) ensureSweeper() {
	s := &c.async
	if s.sweeping.Load() {
		return
	}
	s.mu.Lock()
	if !s.sweeping.Load() && c.hold() {
		s.sweeping.Store(true)
		go c.sweeper()
	}
	s.mu.Unlock()
}

// sweeper expires async calls whose timeout passed or whose ctx ended, and
// adds a worker when callbacks stall; it exits when nothing is in flight
// or queued.
func (c *Client) sweeper() {
	defer c.gs.Enter()()
	s := &c.async
	t := time.NewTicker(sweepTick)
	defer t.Stop()
	var expired []asyncDone
	lastFinished := s.finished.Load()
	for {
		select {
		case <-t.C:
		case <-c.ctx.Done():
			s.sweeping.Store(false)
			return
		}
		s.mu.Lock()
		if s.head == len(s.q) {
			s.sweeping.Store(false)
			if s.inflight.Load() == 0 {
				s.mu.Unlock()
				return
			}
			s.sweeping.Store(true) // a call came in meanwhile
		} else if f := s.finished.Load(); f == lastFinished && c.hold() {
			// Completions wait and no callback finished for a whole tick:
			// the awake workers are stuck in callbacks.
			s.workers++
			s.awake++
			go c.worker()
		}
		lastFinished = s.finished.Load()
		s.mu.Unlock()
		expired = c.sweep(time.Now(), expired[:0])
		for _, d := range expired {
			d.a.finish(nil, d.err)
		}
		clear(expired)
	}
}

// sweep takes the expired async calls out of every connection's pending map.
func (c *Client) sweep(now time.Time, out []asyncDone) []asyncDone {
	for _, e := range *c.conns.Load() {
		var cn *conn
		select {
		case <-e.ready:
			cn = e.cn
		default:
		}
		if cn == nil {
			continue
		}
		timedOut, rx := false, uint32(0)
		cn.pmu.Lock()
		for op, cl := range cn.pending {
			if cl.async == nil {
				continue
			}
			if kind, cause := cl.async.expired(now); kind != nil {
				delete(cn.pending, op)
				out = append(out, asyncDone{a: cl.async, err: newErr("wait", cn.addr, op, kind, cause)})
				if kind == ErrTimeout && (!timedOut || cl.rx == cn.rx.Load()) {
					timedOut, rx = true, cl.rx
				}
			}
		}
		cn.pmu.Unlock()
		if timedOut {
			// A silent connection fails its other calls now, not one
			// timeout at a time (the same dead peer as a sync timeout).
			cn.timedOut(rx, false)
		}
	}
	return out
}
