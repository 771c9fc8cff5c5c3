package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// TLS on a server: gnet has no TLS, so a TLS connection is served by two
// goroutines that run crypto/tls on the accepted socket and copy plaintext
// to and from one end of a socket pair; the other end is handed to gnet,
// which serves it like any connection. The socket pair's buffers bound what
// is in flight between the two, so back-pressure on either side reaches the
// other (docs/DESIGN.md, "TLS on the servers").

// TLSMode says which connections a server accepts, with the names of Java's
// TlsSystemConfig tlsMode.
type TLSMode string

const (
	// TLSDisabled serves plain connections only.
	TLSDisabled TLSMode = "disabled"
	// TLSPermissive serves both on one port: a connection whose first byte
	// is 0x16 (a TLS handshake record) is TLS, any other is plain.
	TLSPermissive TLSMode = "permissive"
	// TLSEnforcing serves TLS only and closes plain connections.
	TLSEnforcing TLSMode = "enforcing"
)

// ParseTLSMode reads a mode name as Java's tls.server.mode property spells it.
func ParseTLSMode(s string) (TLSMode, error) {
	switch m := TLSMode(s); m {
	case TLSDisabled, TLSPermissive, TLSEnforcing:
		return m, nil
	}
	return "", fmt.Errorf("rocketmq: unknown TLS mode %q (want disabled, permissive or enforcing)", s)
}

// TLS defaults.
const (
	// DefaultTLSHandshakeTimeout is Netty's SslHandler handshake timeout.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultMaxTLSHandshakes bounds connections being sniffed or in a
	// TLS handshake at once.
	DefaultMaxTLSHandshakes = 256
)

// tlsRecordHandshake is the first byte of every TLS ClientHello, the byte
// Java's TlsModeHandler (SslHandler.isEncrypted) looks at.
const tlsRecordHandshake = 0x16

// tlsBridgeBuffer is the copy buffer of each direction: one TLS record.
const tlsBridgeBuffer = 16 << 10

// errPlainRefused closes a plain connection in enforcing mode.
var errPlainRefused = errors.New("rocketmq: plain connection refused: the server enforces TLS")

// tlsServer is a server's TLS state; nil when TLS is disabled.
type tlsServer struct {
	cfg     *tls.Config
	mode    TLSMode
	timeout time.Duration
	slots   chan struct{} // connections being sniffed or in a handshake

	mu      sync.Mutex
	closing bool
	pending map[net.Conn]struct{} // closed by stop to end their handshakes

	handshakes sync.WaitGroup // handshake goroutines
	bridges    sync.WaitGroup // copy goroutines
	failLog    rateLog
}

// peerAddrs is the gnet context of a bridged connection: the addresses of
// the TCP connection, not of the socket pair.
type peerAddrs struct{ local, remote net.Addr }

// checkTLS validates the TLS settings; Start calls it.
func (c Config) checkTLS() error {
	switch c.TLSMode {
	case TLSDisabled:
		return nil
	case TLSPermissive, TLSEnforcing:
	default:
		return fmt.Errorf("rocketmq: unknown TLS mode %q (want disabled, permissive or enforcing)", c.TLSMode)
	}
	if c.TLS == nil {
		return fmt.Errorf("rocketmq: TLS mode %s needs a TLS configuration", c.TLSMode)
	}
	if len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return errors.New("rocketmq: TLS configuration has no server certificate")
	}
	if !tlsSupported {
		return errors.New("rocketmq: TLS is not supported by the server on this system")
	}
	return nil
}

// startTLS validates the TLS settings and prepares the server's TLS state.
func (s *Server) startTLS() error {
	if err := s.cfg.checkTLS(); err != nil {
		return err
	}
	if s.cfg.TLSMode == TLSDisabled {
		return nil
	}
	s.tls = &tlsServer{
		cfg:     s.cfg.TLS,
		mode:    s.cfg.TLSMode,
		timeout: s.cfg.TLSHandshakeTimeout,
		slots:   make(chan struct{}, s.cfg.MaxTLSHandshakes),
		pending: make(map[net.Conn]struct{}),
	}
	return nil
}

// admitTLS sniffs and, for TLS, handshakes a connection on a goroutine of
// its own, so that a slow client never holds up the accept loop. nc is
// already counted in s.conns.
func (s *Server) admitTLS(nc net.Conn) {
	t := s.tls
	select {
	case t.slots <- struct{}{}:
	default:
		s.conns.Add(-1)
		_ = nc.Close()
		s.stats.refused.Add(1)
		s.capLog.log(s.log, "connection refused: too many TLS handshakes",
			logKeyRemote, nc.RemoteAddr().String(), "limit", cap(t.slots))
		return
	}
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		<-t.slots
		s.conns.Add(-1)
		_ = nc.Close()
		return
	}
	t.pending[nc] = struct{}{}
	t.handshakes.Add(1)
	t.mu.Unlock()
	go s.handshakeTLS(nc)
}

// handshakeTLS looks at the first byte without consuming it: plain
// connections go to gnet as they are (permissive mode), TLS ones through a
// bridge once the handshake is done.
func (s *Server) handshakeTLS(nc net.Conn) {
	t := s.tls
	defer t.handshakes.Done()
	release := func() {
		t.mu.Lock()
		delete(t.pending, nc)
		closing := t.closing
		t.mu.Unlock()
		<-t.slots
		if closing {
			_ = nc.Close()
		}
	}
	fail := func(err error) {
		release()
		_ = nc.Close()
		s.conns.Add(-1)
		s.stats.tlsFailed.Add(1)
		t.failLog.log(s.log, "TLS connection closed", logKeyRemote, nc.RemoteAddr().String(), "err", err)
	}

	_ = nc.SetDeadline(time.Now().Add(t.timeout))
	first, err := peekByte(nc)
	if err != nil {
		fail(fmt.Errorf("rocketmq: no first byte: %w", err))
		return
	}
	if first != tlsRecordHandshake {
		if t.mode == TLSEnforcing {
			fail(errPlainRefused)
			return
		}
		_ = nc.SetDeadline(time.Time{})
		release()
		if s.tlsClosing() {
			s.conns.Add(-1)
			return
		}
		s.enroll(nc, nil)
		return
	}
	tc := tls.Server(nc, t.cfg)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		fail(fmt.Errorf("rocketmq: TLS handshake: %w", err))
		return
	}
	_ = nc.SetDeadline(time.Time{})
	release()
	if s.tlsClosing() {
		s.conns.Add(-1)
		_ = nc.Close()
		return
	}
	s.bridgeTLS(tc, nc)
}

func (s *Server) tlsClosing() bool {
	s.tls.mu.Lock()
	defer s.tls.mu.Unlock()
	return s.tls.closing
}

// bridgeTLS hands one end of a socket pair to gnet with the TCP
// connection's addresses, and copies between the other end and tc.
func (s *Server) bridgeTLS(tc *tls.Conn, nc net.Conn) {
	inner, outer, err := socketPair()
	if err != nil {
		_ = tc.Close()
		s.conns.Add(-1)
		s.stats.acceptErrors.Add(1)
		s.stats.refused.Add(1)
		s.errLog.log(s.log, "cannot bridge TLS connection", logKeyRemote, nc.RemoteAddr().String(), "err", err)
		return
	}
	if !s.enroll(inner, &peerAddrs{local: nc.LocalAddr(), remote: nc.RemoteAddr()}) {
		_ = outer.Close()
		_ = tc.Close()
		return
	}
	t := s.tls
	t.bridges.Add(2)
	closeBoth := func() {
		_ = tc.Close()
		_ = outer.Close()
	}
	go func() {
		defer t.bridges.Done()
		pump(outer, tc)
		closeBoth()
	}()
	go func() {
		defer t.bridges.Done()
		pump(tc, outer)
		closeBoth()
	}()
}

// pump copies src to dst until either fails or src ends. A blocked dst
// stops the reads from src: that is the back-pressure.
func pump(dst, src net.Conn) {
	buf := make([]byte, tlsBridgeBuffer)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stopHandshakes ends every sniff and handshake in progress and waits for
// their goroutines; later ones are refused. Called after the accept loop
// has ended and before gnet stops.
func (s *Server) stopHandshakes() {
	t := s.tls
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closing = true
	for nc := range t.pending {
		_ = nc.Close()
	}
	t.mu.Unlock()
	t.handshakes.Wait()
}

// waitBridges waits for the copy goroutines, which end once gnet has
// closed its ends of the socket pairs.
func (s *Server) waitBridges() {
	if s.tls != nil {
		s.tls.bridges.Wait()
	}
}
