package server

import (
	"context"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Back-pressure. A client that pipelines requests and never reads the
// replies would make the server queue replies without bound. Before each
// frame the event loop checks what the connection holds: handlers running
// for it (MaxConnPending) and reply bytes not yet taken by the socket
// (MaxConnOutbound). Over either, it stops decoding that connection's
// input until the handlers return and the replies drain.
//
// gnet keeps reading the socket into its inbound buffer meanwhile (it has
// no way to stop reading one connection), so what waits there is bounded
// too, by how the peer behaves. A peer whose replies do not drain does not
// read them: once its outbound has not shrunk for readGrace, it is closed
// when it has sent MaxFrameSize more, or when it stays so past
// MaxConnStall. A peer that reads is only ever paused because the server
// is behind, and is closed only past MaxConnInbound of waiting input.

// pauseRecheck is how often a paused connection is looked at again: gnet
// says nothing when its outbound buffer drains.
const pauseRecheck = 10 * time.Millisecond

// maxReadGrace bounds how long replies over MaxConnOutbound may sit
// without any of them being taken before the peer counts as not reading.
const maxReadGrace = time.Second

// outbound is the reply bytes queued for c and not yet taken by the
// socket. Runs on the event loop.
func outbound(c *Conn, gc gnet.Conn) int {
	loop := gc.OutboundBuffered()
	c.loopOut.Store(int64(loop))
	return int(c.outLen.Load()) + loop
}

// overLimits reports whether c must not have more requests decoded. Runs
// on the event loop.
func (s *Server) overLimits(c *Conn, gc gnet.Conn) bool {
	if int(c.inflight.Load()) >= s.cfg.MaxConnPending {
		return true
	}
	return outbound(c, gc) >= s.cfg.MaxConnOutbound
}

// holdBack pauses c (or keeps it paused) and reports whether it must be
// closed instead. Runs on the event loop.
func (s *Server) holdBack(c *Conn, gc gnet.Conn) (closeIt bool) {
	now := time.Now()
	out, in := outbound(c, gc), gc.InboundBuffered()
	if c.pausedAt.IsZero() {
		c.pausedAt, c.drainedAt = now, now
		s.stats.paused.Add(1)
		s.log.Debug("connection paused", logKeyConn, c.id, logKeyRemote, c.remoteStr,
			"pending", c.inflight.Load(), "outbound", out)
	} else if out < c.pausedOut {
		c.drainedAt = now // the peer took replies: it reads
	}
	c.pausedOut = out
	stuck := now.Sub(c.drainedAt)
	notReading := out >= s.cfg.MaxConnOutbound && stuck >= min(maxReadGrace, s.cfg.MaxConnStall)
	switch {
	case notReading && (in > s.cfg.MaxFrameSize || stuck > s.cfg.MaxConnStall):
		s.stats.stalled.Add(1)
		s.stallLog.log(s.log, "closing connection that does not read its replies",
			logKeyConn, c.id, logKeyRemote, c.remoteStr, "stuck", stuck.String(),
			"outbound", out, "inbound", in)
		return true
	case in > s.cfg.MaxConnInbound:
		s.stats.stalled.Add(1)
		s.stallLog.log(s.log, "closing connection that sends faster than it is served",
			logKeyConn, c.id, logKeyRemote, c.remoteStr, "paused", now.Sub(c.pausedAt).String(),
			"outbound", out, "inbound", in, "limit", s.cfg.MaxConnInbound)
		return true
	}
	if in > 0 {
		c.resume.Store(true)
		c.scheduleRecheck()
	}
	return false
}

// handlerDone is called on the handler's goroutine after one of c's
// handlers returned and its reply was queued: a connection paused with
// input waiting is woken at once rather than at its next recheck, so a
// client that pipelines gets its requests served as fast as handlers
// return.
func (s *Server) handlerDone(c *Conn) {
	if !c.resume.Load() || !c.resume.CompareAndSwap(true, false) {
		return
	}
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.stopped || c.IsClosed() {
		return
	}
	_ = c.loop.Execute(context.Background(), (*unpauser)(c))
}

// scheduleRecheck wakes c's OnTraffic after pauseRecheck. Runs on the loop.
func (c *Conn) scheduleRecheck() {
	if c.recheck {
		return
	}
	c.recheck = true
	time.AfterFunc(pauseRecheck, func() {
		_ = c.loop.Execute(context.Background(), (*rechecker)(c))
	})
}

// rechecker is Conn's gnet.Runnable that wakes a paused connection.
type rechecker Conn

func (r *rechecker) Run(context.Context) error {
	c := (*Conn)(r)
	c.recheck = false
	if !c.loopDone {
		_ = c.gc.Wake(nil)
	}
	return nil
}

// unpauser is Conn's gnet.Runnable that wakes a paused connection whose
// handler just returned.
type unpauser Conn

func (r *unpauser) Run(context.Context) error {
	c := (*Conn)(r)
	if !c.loopDone && !c.pausedAt.IsZero() {
		_ = c.gc.Wake(nil)
	}
	return nil
}
