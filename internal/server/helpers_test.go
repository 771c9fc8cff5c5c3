package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// Codes used by the tests' handlers.
const (
	codeEcho    int32 = 1001
	codeUnknown int32 = 9999
)

// echo answers SUCCESS with the request's body and extFields.
func echo(_ context.Context, _ *Conn, req *remoting.Command) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = req.Body
	resp.Ext = req.Ext
	return resp
}

// startServer starts s on a loopback port and closes it at cleanup.
func startServer(t testing.TB, s *Server) string {
	t.Helper()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s.Addr()
}

// echoServer starts a server with cfg that serves codeEcho with echo and
// returns its address.
func echoServer(t testing.TB, cfg Config) string {
	t.Helper()
	s := New(cfg)
	s.Handle(codeEcho, echo)
	return startServer(t, s)
}

func req(code, opaque int32, st remoting.SerializeType, body string) *remoting.Command {
	r := remoting.NewRequest(code, remoting.ExtFields{{Key: "k", Value: "v"}}, []byte(body))
	r.Opaque = opaque
	r.Serialize = st
	return r
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func hexDiff(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch\ngot:\n%s\nwant:\n%s", what, hex.Dump(got), hex.Dump(want))
	}
}

// heldReq is a request a handler kept to answer later.
type heldReq struct {
	c   *Conn
	req *remoting.Command
}

// dialConn starts s, dials it, and returns the client with the server's
// side of the connection.
func dialConn(t *testing.T, s *Server) (*rawframe.Conn, *Conn) {
	t.Helper()
	conns := make(chan *Conn, 1)
	s.OnConnOpen(func(c *Conn) { conns <- c })
	cl := rawframe.Dial(t, startServer(t, s))
	return cl, recv(t, conns, "connection")
}
