package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"maps"
	"net"
	"time"
)

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
	if mapped {
		if _, again := c.dialed.LoadOrStore(e.addr, struct{}{}); again && c.cfg.onReconnect != nil {
			c.cfg.onReconnect(e.addr)
		}
	}
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
