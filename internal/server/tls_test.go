package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/internal/testutil/testca"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func newCA(t testing.TB) (*testca.CA, *tls.Config) {
	t.Helper()
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	return ca, srv
}

// dialTLS connects with TLS and completes the handshake.
func dialTLS(t testing.TB, addr string, cfg *tls.Config) (*tls.Conn, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { tc.Close() })
	return tc, nil
}

// Each mode serves the clients it should, and a connection the server
// serves is named by the client's TCP address.
func TestTLSModes(t *testing.T) {
	ca, srvCfg := newCA(t)
	for _, tc := range []struct {
		mode      TLSMode
		plainOK   bool
		tlsServed bool
	}{
		{TLSPermissive, true, true},
		{TLSEnforcing, false, true},
		{"", true, true}, // permissive once a certificate is set, as Java
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s := New(Config{TLS: srvCfg, TLSMode: tc.mode})
			s.Handle(codeEcho, echo)
			opened := make(chan *Conn, 4)
			s.OnConnOpen(func(c *Conn) { opened <- c })
			addr := startServer(t, s)

			tconn, err := dialTLS(t, addr, ca.ClientConfig())
			if err != nil {
				t.Fatalf("TLS dial: %v", err)
			}
			cl := rawframe.Wrap(t, tconn)
			if got := cl.Call(req(codeEcho, 1, remoting.SerializeJSON, "over tls")); string(got.Body) != "over tls" {
				t.Fatalf("TLS echo body %q", got.Body)
			}
			sc := recv(t, opened, "TLS connection")
			if got, want := sc.RemoteAddr().String(), tconn.LocalAddr().String(); got != want {
				t.Errorf("server names the TLS client %s, want %s", got, want)
			}
			if got, want := sc.LocalAddr().String(), tconn.RemoteAddr().String(); got != want {
				t.Errorf("server's local address %s, want %s", got, want)
			}

			plain := rawframe.Dial(t, addr)
			if tc.plainOK {
				if got := plain.Call(req(codeEcho, 2, remoting.SerializeJSON, "plain")); string(got.Body) != "plain" {
					t.Fatalf("plain echo body %q", got.Body)
				}
				recv(t, opened, "plain connection")
			} else {
				plain.Send(req(codeEcho, 2, remoting.SerializeJSON, "plain"))
				plain.ExpectClosed(5 * time.Second)
				if got := s.Stats().TLSFailed; got != 1 {
					t.Errorf("TLSFailed = %d, want 1", got)
				}
			}
			// The server keeps serving TLS after either.
			if got := cl.Call(req(codeEcho, 3, remoting.SerializeRocketMQ, "again")); string(got.Body) != "again" {
				t.Fatalf("second TLS echo body %q", got.Body)
			}
			if got := s.Stats().Conns; got != 2 && tc.plainOK || got != 1 && !tc.plainOK {
				t.Errorf("Conns = %d", got)
			}
		})
	}
}

// A client that does not trust the server's CA, or asks for another name,
// fails the handshake; the server keeps serving.
func TestTLSClientVerifies(t *testing.T) {
	ca, srvCfg := newCA(t)
	other, _ := newCA(t)
	addr := echoServer(t, Config{TLS: srvCfg, TLSMode: TLSEnforcing})

	_, err := dialTLS(t, addr, other.ClientConfig())
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("dial with another CA: %v, want an unknown authority error", err)
	}
	wrongName := ca.ClientConfig()
	wrongName.ServerName = "broker.example.com"
	_, err = dialTLS(t, addr, wrongName)
	var host x509.HostnameError
	if !errors.As(err, &host) {
		t.Errorf("dial with another server name: %v, want a host name error", err)
	}
	tconn, err := dialTLS(t, addr, ca.ClientConfig())
	if err != nil {
		t.Fatalf("good dial after failures: %v", err)
	}
	if got := rawframe.Wrap(t, tconn).Call(req(codeEcho, 1, remoting.SerializeJSON, "ok")); string(got.Body) != "ok" {
		t.Fatalf("echo body %q", got.Body)
	}
}

// A client that stalls before or inside its handshake is closed after the
// handshake timeout; one over MaxTLSHandshakes is closed at once.
func TestTLSHandshakeStalls(t *testing.T) {
	_, srvCfg := newCA(t)
	// Long enough that the stalled connection still holds the slot when
	// the one over the bound dials, on a loaded machine too.
	const timeout = time.Second
	for _, tc := range []struct {
		name  string
		first []byte
	}{
		{"silent", nil},
		{"partial ClientHello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{TLS: srvCfg, TLSHandshakeTimeout: timeout, MaxTLSHandshakes: 1})
			addr := startServer(t, s)
			start := time.Now() // before the stalled connection's timer starts
			stalled := rawframe.Dial(t, addr)
			if tc.first != nil {
				stalled.Write(tc.first)
			}
			testutil.WaitFor(t, 0, "the stalled connection to hold the handshake slot", func() bool {
				return len(s.tls.slots) == 1
			})
			// Over the bound: closed at once, well before the timeout.
			over := rawframe.Dial(t, addr)
			over.ExpectClosed(5 * time.Second)
			if s.Stats().Refused != 1 {
				t.Errorf("Refused = %d, want 1", s.Stats().Refused)
			}
			stalled.ExpectClosed(5 * time.Second)
			if e := time.Since(start); e < timeout {
				t.Errorf("stalled connection closed after %v, before the timeout", e)
			}
			testutil.WaitFor(t, 0, "the stall to be counted", func() bool {
				return s.Stats().TLSFailed == 1 && s.Stats().Conns == 0
			})
		})
	}
}

// Close ends handshakes in progress and bridged connections and leaves no
// goroutine behind.
func TestTLSCloseLeaksNothing(t *testing.T) {
	ca, srvCfg := newCA(t)
	base := runtime.NumGoroutine()
	s := New(Config{TLS: srvCfg, TLSMode: TLSEnforcing, TLSHandshakeTimeout: time.Minute})
	s.Handle(codeEcho, echo)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	tconn, err := dialTLS(t, s.Addr(), ca.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	cl := rawframe.Wrap(t, tconn)
	cl.Call(req(codeEcho, 1, remoting.SerializeJSON, "x"))
	stalled := rawframe.Dial(t, s.Addr())
	testutil.WaitFor(t, 0, "a handshake in progress", func() bool { return len(s.tls.slots) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if e := time.Since(start); e > 5*time.Second {
		t.Errorf("Close took %v", e)
	}
	cl.ExpectClosed(5 * time.Second)
	stalled.ExpectClosed(5 * time.Second)
	tconn.Close()
	stalled.NetConn().Close()
	testutil.WaitFor(t, 0, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

// Replies a TLS client does not read fill the bridge and then pause the
// connection, as on a plain one.
func TestTLSBackPressure(t *testing.T) {
	ca, srvCfg := newCA(t)
	s := New(Config{TLS: srvCfg, MaxConnPending: 8, MaxConnOutbound: 1 << 20})
	big := strings.Repeat("b", 256<<10)
	s.Handle(codeEcho, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = []byte(big)
		return resp
	})
	addr := startServer(t, s)
	tconn, err := dialTLS(t, addr, ca.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Keep sending without reading until the server stops taking input.
	frame := rawframe.Frame(t, req(codeEcho, 1, remoting.SerializeJSON, ""))
	go func() {
		for {
			_ = tconn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := tconn.Write(frame); err != nil {
				return
			}
		}
	}()
	testutil.WaitFor(t, 0, "the connection to pause", func() bool { return s.Stats().Paused > 0 })
}

func TestTLSConfigErrors(t *testing.T) {
	_, srvCfg := newCA(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"enforcing without certificate", Config{TLSMode: TLSEnforcing}, "needs a TLS configuration"},
		{"permissive without certificate", Config{TLSMode: TLSPermissive, TLS: &tls.Config{}}, "no server certificate"},
		{"unknown mode", Config{TLSMode: "strict", TLS: srvCfg}, "unknown TLS mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.cfg)
			err := s.Start("127.0.0.1:0")
			if err == nil {
				_ = s.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start: %v, want %q", err, tc.want)
			}
		})
	}
	for _, s := range []string{"disabled", "permissive", "enforcing"} {
		if m, err := ParseTLSMode(s); err != nil || string(m) != s {
			t.Errorf("ParseTLSMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseTLSMode("on"); err == nil {
		t.Error("ParseTLSMode accepted on")
	}
}
