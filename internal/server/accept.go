package server

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Accepting is ours, not gnet's: gnet's acceptor returns an error on
// EMFILE or ENFILE and its main reactor then shuts the whole engine down,
// leaving the process alive with a listener that never accepts again. Our
// loop accepts with Go's listener, backs off and keeps going, and hands
// each connection to gnet's loops (which serve it exactly as before).

// Accept back-off bounds, as net/http's Server uses.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// acceptLoop runs until the listener closes. reserve is a spare
// descriptor opened by Start (before anything else can take the last ones).
func (s *Server) acceptLoop(reserve int) {
	defer close(s.acceptDone)
	defer func() { closeReserve(reserve) }()
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.stats.acceptErrors.Add(1)
			if fdExhausted(err) && reserve >= 0 {
				// Out of descriptors: give one back, take the waiting
				// connection and close it at once, so clients are refused
				// promptly instead of hanging in the backlog.
				closeReserve(reserve)
				c, err := s.ln.Accept()
				if err == nil {
					_ = c.Close()
					s.stats.refused.Add(1)
				}
				reserve = openReserve()
				s.errLog.log(s.log, "out of file descriptors: shedding new connections", "conns", s.conns.Load())
				if err == nil && reserve >= 0 {
					continue // shed the rest of the backlog the same way
				}
			}
			s.errLog.log(s.log, "accept failed; backing off", "err", err, "conns", s.conns.Load())
			delay = min(max(2*delay, minAcceptDelay), maxAcceptDelay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.done:
				t.Stop()
			}
			continue
		}
		delay = 0
		s.admit(nc)
	}
}

// admit hands an accepted connection to gnet, or closes it at once when
// MaxConns connections are open.
func (s *Server) admit(nc net.Conn) {
	if limit := s.cfg.MaxConns; limit > 0 && s.conns.Load() >= int64(limit) {
		_ = nc.Close()
		s.stats.refused.Add(1)
		s.capLog.log(s.log, "connection refused: too many connections",
			logKeyRemote, nc.RemoteAddr().String(), "limit", limit)
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok && s.cfg.TCPDelay {
		_ = tc.SetNoDelay(false)
	}
	s.conns.Add(1)
	if s.tls != nil {
		s.admitTLS(nc)
		return
	}
	s.enroll(nc, nil)
}

// enroll hands a counted connection to gnet with ctx as its gnet context,
// and uncounts it when that fails.
func (s *Server) enroll(nc net.Conn, ctx any) bool {
	// Enroll duplicates the descriptor for gnet and closes nc.
	if _, err := s.cli.EnrollContext(nc, ctx); err != nil {
		s.conns.Add(-1)
		s.stats.acceptErrors.Add(1)
		s.stats.refused.Add(1) // Enroll closed it
		s.errLog.log(s.log, "cannot register connection", logKeyRemote, nc.RemoteAddr().String(), "err", err)
		return false
	}
	return true
}

// fdExhausted reports whether err says the process or system ran out of
// file descriptors.
func fdExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// counters are the server's network statistics.
type counters struct {
	refused      atomic.Int64
	acceptErrors atomic.Int64
	paused       atomic.Int64
	stalled      atomic.Int64
	tlsFailed    atomic.Int64
}

// Stats are counts of what the server's network layer did.
type Stats struct {
	// Conns is the number of open connections.
	Conns int64
	// Refused counts connections closed right after accept: over
	// MaxConns, not registered (out of file descriptors for gnet's
	// duplicate), or taken from the backlog to be shed while accept is
	// out of file descriptors.
	Refused int64
	// AcceptErrors counts failed accepts and registrations.
	AcceptErrors int64
	// Paused counts times a connection's input was held back because its
	// replies were not being read or too many of its requests were running.
	Paused int64
	// Stalled counts connections closed because they stayed paused past
	// MaxConnStall or sent too much while paused.
	Stalled int64
	// TLSFailed counts connections closed before reaching the event loops
	// with TLS on: handshake failed or timed out, no first byte in time,
	// or plain in enforcing mode.
	TLSFailed int64
}

// Stats returns the server's current counts.
func (s *Server) Stats() Stats {
	return Stats{
		Conns:        s.conns.Load(),
		Refused:      s.stats.refused.Load(),
		AcceptErrors: s.stats.acceptErrors.Load(),
		Paused:       s.stats.paused.Load(),
		Stalled:      s.stats.stalled.Load(),
		TLSFailed:    s.stats.tlsFailed.Load(),
	}
}

// rateLog logs a warning at most once per rateLogEvery, with the number of
// occurrences left out since the last line.
type rateLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int
}

const rateLogEvery = time.Second

func (r *rateLog) log(l interface {
	Warn(msg string, args ...any)
}, msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < rateLogEvery {
		r.missed++
		r.mu.Unlock()
		return
	}
	missed := r.missed
	r.last, r.missed = now, 0
	r.mu.Unlock()
	if missed > 0 {
		args = append(args, "suppressed", missed)
	}
	l.Warn(msg, args...)
}
