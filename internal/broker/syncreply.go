package broker

import (
	"context"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// syncReplies answers sync-flush sends once the group commit covering them
// has reached the device. The send itself returns as soon as the message
// is appended, so neither the event loop nor a worker waits for
// fdatasync: one goroutine answers each round's sends, corking every
// connection so that a round's replies to one client leave in one write.
// A send whose round does not end within the store's SyncFlushTimeout is
// answered FLUSH_DISK_TIMEOUT (stored and readable, as Java answers it),
// and so is every waiting send at once after a failed sync.
type syncReplies struct {
	// progress is the store's FlushProgress (a test's fake in unit tests).
	progress func() (int64, <-chan struct{})
	timeout  time.Duration
	// failed is the store's SyncFailed; nil: syncs never fail.
	failed func() bool
	// timeoutCode replaces SUCCESS at the deadline (FLUSH_DISK_TIMEOUT;
	// the replication waiter's is FLUSH_SLAVE_TIMEOUT).
	timeoutCode int32
	// next, if set, takes the sends this waiter is done with instead of
	// their being answered: a SYNC_MASTER with sync flush waits for the
	// slave, then for the device.
	next *syncReplies

	mu      sync.Mutex
	pending []syncReply // in the order registered: targets nearly ascending
	kick    chan struct{}
}

// syncReply is a send waiting for the device.
type syncReply struct {
	target   int64 // the commit log must be durable up to here
	deadline time.Time
	c        *server.Conn
	req      remoting.Command  // what Reply needs of the request: no body
	resp     *remoting.Command // SUCCESS; becomes FLUSH_DISK_TIMEOUT on timeout
}

func newSyncReplies(progress func() (int64, <-chan struct{}), timeout time.Duration) *syncReplies {
	return &syncReplies{progress: progress, timeout: timeout, timeoutCode: remoting.FlushDiskTimeout, kick: make(chan struct{}, 1)}
}

// add answers req with resp once the commit log is durable up to target.
// The caller has asked the store for a flush round.
func (r *syncReplies) add(c *server.Conn, req, resp *remoting.Command, target int64) {
	r.mu.Lock()
	first := len(r.pending) == 0
	// The request's body may be a view of the connection's input buffer
	// (server.InlineHandler): only its identity is kept.
	id := remoting.Command{Code: req.Code, Opaque: req.Opaque, Flag: req.Flag, Serialize: req.Serialize}
	r.pending = append(r.pending, syncReply{target: target, deadline: time.Now().Add(r.timeout), c: c, req: id, resp: resp})
	r.mu.Unlock()
	if first {
		// The answering goroutine may be idle: it needs a deadline timer.
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// run answers pending sends as rounds end, until ctx ends.
func (r *syncReplies) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var ready []syncReply
	var corked []*server.Conn
	for {
		flushed, next := r.progress()
		failed := r.failed != nil && r.failed()
		var oldest time.Time
		ready, oldest = r.take(ready[:0], flushed, time.Now(), failed)
		if r.next != nil {
			for i := range ready {
				p := &ready[i]
				r.next.add(p.c, &p.req, p.resp, p.target)
			}
		} else {
			corked = answer(ready, corked[:0])
		}
		clear(ready) // drop the connections and commands
		clear(corked)
		if oldest.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(time.Until(oldest))
		}
		select {
		case <-ctx.Done():
			r.mu.Lock()
			r.pending = nil // their connections close with the server
			r.mu.Unlock()
			return
		case <-next:
		case <-r.kick:
		case <-timer.C:
		}
	}
}

// take moves to ready the sends durable at flushed and those past their
// deadline or, after a failed sync, all others (marked
// FLUSH_DISK_TIMEOUT), and returns the earliest deadline of the rest (zero
// if none).
func (r *syncReplies) take(ready []syncReply, flushed int64, now time.Time, failed bool) ([]syncReply, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := r.pending[:0]
	var oldest time.Time
	for _, p := range r.pending {
		switch {
		case p.target <= flushed:
			ready = append(ready, p)
		case failed || !now.Before(p.deadline):
			switch {
			case p.resp.Code != remoting.Success: // a replication failure wins
			case failed:
				p.resp.Code = remoting.FlushDiskTimeout
			default:
				p.resp.Code = r.timeoutCode
			}
			ready = append(ready, p)
		default:
			if oldest.IsZero() || p.deadline.Before(oldest) {
				oldest = p.deadline
			}
			keep = append(keep, p)
		}
	}
	clear(r.pending[len(keep):])
	r.pending = keep
	return ready, oldest
}

// answer replies to every send in ready, each connection corked until all
// of its replies are queued. It returns the connections it corked (the
// slice is reused across rounds).
func answer(ready []syncReply, corked []*server.Conn) []*server.Conn {
	var last *server.Conn
	for i := range ready {
		c := ready[i].c
		if c != last && !containsConn(corked, c) {
			c.Cork()
			corked = append(corked, c)
		}
		last = c
	}
	for i := range ready {
		// A closed connection's client has given up; nothing to do.
		_ = ready[i].c.Reply(&ready[i].req, ready[i].resp)
	}
	for _, c := range corked {
		c.Uncork()
	}
	return corked
}

// containsConn is a linear search: a round's sends come over a handful of
// connections.
func containsConn(cs []*server.Conn, c *server.Conn) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
