package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
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

// client is a raw test client using only the frame codec.
type client struct {
	t   *testing.T
	nc  net.Conn
	buf []byte
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc}
}

func frame(t *testing.T, cmd *remoting.Command) []byte {
	t.Helper()
	b, err := cmd.AppendFrame(nil)
	if err != nil {
		t.Fatalf("AppendFrame: %v", err)
	}
	return b
}

func (c *client) writeRaw(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(cmd *remoting.Command) { c.t.Helper(); c.writeRaw(frame(c.t, cmd)) }

// read returns the next frame, or an error (io.EOF when the server closed).
func (c *client) read(timeout time.Duration) (*remoting.Command, error) {
	deadline := time.Now().Add(timeout)
	var tmp [4096]byte
	for {
		cmd, n, err := remoting.DecodeFrame(c.buf, 0)
		if err == nil {
			c.buf = c.buf[n:]
			return cmd, nil
		}
		if !errors.Is(err, remoting.ErrIncomplete) {
			return nil, err
		}
		_ = c.nc.SetReadDeadline(deadline)
		m, err := c.nc.Read(tmp[:])
		c.buf = append(c.buf, tmp[:m]...)
		if err != nil {
			return nil, err
		}
	}
}

func (c *client) mustRead() *remoting.Command {
	c.t.Helper()
	cmd, err := c.read(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return cmd
}

// call sends req and reads one frame, which must answer it.
func (c *client) call(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	c.send(req)
	resp := c.mustRead()
	if !resp.IsResponse() || resp.Opaque != req.Opaque {
		c.t.Fatalf("got flag %#x opaque %d, want a response to opaque %d", resp.Flag, resp.Opaque, req.Opaque)
	}
	return resp
}

// expectClosed waits until the server has closed the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	for {
		cmd, err := c.read(5 * time.Second)
		if err == nil {
			c.t.Fatalf("expected the connection to close, got a frame with code %d", cmd.Code)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.t.Fatalf("connection still open: %v", err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset") {
			return
		}
		c.t.Fatalf("unexpected read error: %v", err)
	}
}

func req(code, opaque int32, st remoting.SerializeType, body string) *remoting.Command {
	r := remoting.NewRequest(code, remoting.ExtFields{{Key: "k", Value: "v"}}, []byte(body))
	r.Opaque = opaque
	r.Serialize = st
	return r
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
func dialConn(t *testing.T, s *Server) (*client, *Conn) {
	t.Helper()
	conns := make(chan *Conn, 1)
	s.OnConnOpen(func(c *Conn) { conns <- c })
	cl := dial(t, startServer(t, s))
	return cl, recv(t, conns, "connection")
}
