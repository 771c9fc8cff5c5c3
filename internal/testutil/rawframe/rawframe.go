// Package rawframe is a RocketMQ remoting client for tests that speaks only
// the frame codec: it writes frames (or any bytes) exactly as given and
// reads whatever comes back, so a test can send what a real client never
// would and see how a server answers. It is a package of its own so that
// internal/testutil stays free of imports every test package can use.
package rawframe

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Wait bounds dialling, writing and the reads of Read and Call.
const Wait = 5 * time.Second

// Conn is one raw connection. Its methods fail the test on I/O errors and
// must be called from the test's goroutine, except ReadErr.
type Conn struct {
	t      testing.TB
	nc     net.Conn
	buf    []byte
	opaque int32
}

// Dial connects to addr and closes the connection at the test's cleanup.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, Wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return Wrap(t, nc)
}

// Wrap uses an established connection; the caller keeps closing it.
func Wrap(t testing.TB, nc net.Conn) *Conn {
	return &Conn{t: t, nc: nc, opaque: 1000}
}

// ReportTo makes c fail t, a subtest, from now on.
func (c *Conn) ReportTo(t testing.TB) { c.t = t }

// NetConn is the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// LocalAddr is the client's side of the connection as host:port, the way a
// broker prints its peer (RemotingHelper.parseChannelRemoteAddr).
func (c *Conn) LocalAddr() string { return c.nc.LocalAddr().String() }

// Frame encodes cmd, failing t if it cannot be.
func Frame(t testing.TB, cmd *remoting.Command) []byte {
	t.Helper()
	b, err := cmd.AppendFrame(nil)
	if err != nil {
		t.Fatalf("AppendFrame: %v", err)
	}
	return b
}

// Write writes b as it is.
func (c *Conn) Write(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(Wait))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// Send writes cmd with the opaque it has.
func (c *Conn) Send(cmd *remoting.Command) {
	c.t.Helper()
	c.Write(Frame(c.t, cmd))
}

// Post writes req after giving it a fresh opaque if it has none.
func (c *Conn) Post(req *remoting.Command) {
	c.t.Helper()
	if req.Opaque == 0 {
		c.opaque++
		req.Opaque = c.opaque
	}
	c.Send(req)
}

// ReadErr returns the next frame, or the error that ended the wait: a
// timeout after d, io.EOF or a reset when the server closed, or the frame
// codec's error for bytes that are no frame.
func (c *Conn) ReadErr(d time.Duration) (*remoting.Command, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	var tmp [64 << 10]byte
	for {
		cmd, n, err := remoting.DecodeFrame(c.buf, remoting.DefaultMaxFrameSize)
		if err == nil {
			c.buf = c.buf[n:]
			return cmd, nil
		}
		if !errors.Is(err, remoting.ErrIncomplete) {
			return nil, err
		}
		k, err := c.nc.Read(tmp[:])
		c.buf = append(c.buf, tmp[:k]...)
		if err != nil && k == 0 {
			return nil, err
		}
	}
}

// Read returns the next frame, failing the test after Wait.
func (c *Conn) Read() *remoting.Command {
	c.t.Helper()
	cmd, err := c.ReadErr(Wait)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return cmd
}

// Call posts req and returns the response carrying its opaque, skipping
// any other frame (server-initiated requests, answers to earlier posts).
func (c *Conn) Call(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	c.Post(req)
	return c.Await(req)
}

// CallNext posts req and reads one frame, which must be its response: it
// is Call for tests that also assert nothing else arrives first.
func (c *Conn) CallNext(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	c.Post(req)
	resp := c.Read()
	if !resp.IsResponse() || resp.Opaque != req.Opaque {
		c.t.Fatalf("got flag %#x opaque %d code %d, want the response to opaque %d", resp.Flag, resp.Opaque, resp.Code, req.Opaque)
	}
	return resp
}

// Await reads until the response to req arrives.
func (c *Conn) Await(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	for {
		resp, err := c.ReadErr(Wait)
		if err != nil {
			c.t.Fatalf("code %d opaque %d: read response: %v", req.Code, req.Opaque, err)
		}
		if resp.IsResponse() && resp.Opaque == req.Opaque {
			return resp
		}
	}
}

// Replay writes a captured request frame verbatim and returns its
// response, or nil for a oneway request.
func (c *Conn) Replay(frame []byte) *remoting.Command {
	c.t.Helper()
	req, _, err := remoting.DecodeFrame(frame, 0)
	if err != nil {
		c.t.Fatalf("decode captured frame: %v", err)
	}
	c.Write(frame)
	if req.IsOneway() {
		return nil
	}
	return c.Await(req)
}

// ExpectClosed fails unless the server closes the connection (EOF or
// reset) within d without sending anything.
func (c *Conn) ExpectClosed(d time.Duration) {
	c.t.Helper()
	resp, err := c.ReadErr(d)
	if err == nil {
		c.t.Fatalf("got a frame (code %d remark %q) instead of a closed connection", resp.Code, resp.Remark)
	}
	if IsTimeout(err) {
		c.t.Fatalf("connection still open after %v", d)
	}
	if !IsClosed(err) {
		c.t.Fatalf("read: %v, want EOF or reset", err)
	}
}

// WaitClosed reports whether the server closed the connection within d,
// reading past any frames that arrive first.
func (c *Conn) WaitClosed(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		_, err := c.ReadErr(time.Until(deadline))
		if err == nil {
			continue
		}
		return !IsTimeout(err)
	}
}

// ExpectNothing fails if a frame arrives or the connection closes within
// d. Waiting out d is the assertion.
func (c *Conn) ExpectNothing(d time.Duration) {
	c.t.Helper()
	resp, err := c.ReadErr(d)
	if err == nil {
		c.t.Fatalf("unexpected frame: code %d remark %q", resp.Code, resp.Remark)
	}
	if !IsTimeout(err) {
		c.t.Fatalf("connection failed: %v", err)
	}
}

// IsTimeout reports whether err is a read deadline passing.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// IsClosed reports whether err means the peer closed the connection.
func IsClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset")
}
