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
// input until the replies drain. gnet keeps reading the socket into its
// inbound buffer meanwhile, so a paused connection that sends MaxFrameSize
// more, or stays paused MaxConnStall, is closed.

// pauseRecheck is how often a paused connection is looked at again: gnet
// says nothing when its outbound buffer drains.
const pauseRecheck = 10 * time.Millisecond

// overLimits reports whether c must not have more requests decoded. Runs
// on the event loop.
func (s *Server) overLimits(c *Conn, gc gnet.Conn) bool {
	if int(c.inflight.Load()) >= s.cfg.MaxConnPending {
		return true
	}
	return int(c.outLen.Load())+gc.OutboundBuffered() >= s.cfg.MaxConnOutbound
}

// holdBack pauses c (or keeps it paused) and reports whether it must be
// closed instead. Runs on the event loop.
func (s *Server) holdBack(c *Conn, gc gnet.Conn) (closeIt bool) {
	now := time.Now()
	if c.pausedAt.IsZero() {
		c.pausedAt = now
		s.stats.paused.Add(1)
		s.log.Debug("connection paused: replies not read", logKeyConn, c.id, logKeyRemote, c.remoteStr)
	} else if now.Sub(c.pausedAt) > s.cfg.MaxConnStall || gc.InboundBuffered() > s.cfg.MaxFrameSize {
		s.stats.stalled.Add(1)
		s.stallLog.log(s.log, "closing connection that does not read its replies",
			logKeyConn, c.id, logKeyRemote, c.remoteStr, "paused", now.Sub(c.pausedAt).String(),
			"inbound", gc.InboundBuffered())
		return true
	}
	if gc.InboundBuffered() > 0 {
		c.scheduleRecheck()
	}
	return false
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
