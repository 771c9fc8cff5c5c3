package namesrv

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

const wireDir = "../../testdata/wire"

// startNS starts a NameServer on a loopback port and closes it at cleanup.
func startNS(t *testing.T, cfg Config) *NameServer {
	t.Helper()
	ns, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := ns.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ns.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return ns
}

// client is a raw test client speaking only the frame codec.
type client struct {
	t      *testing.T
	nc     net.Conn
	buf    []byte
	opaque int32
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, opaque: 1000}
}

// send writes cmd as is (opaque included).
func (c *client) send(cmd *remoting.Command) {
	c.t.Helper()
	frame, err := cmd.AppendFrame(nil)
	if err != nil {
		c.t.Fatalf("AppendFrame: %v", err)
	}
	c.write(frame)
}

func (c *client) write(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next frame, failing the test after 5 s.
func (c *client) read() *remoting.Command {
	c.t.Helper()
	cmd, err := c.readErr(5 * time.Second)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return cmd
}

func (c *client) readErr(timeout time.Duration) (*remoting.Command, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(timeout))
	tmp := make([]byte, 64<<10)
	for {
		cmd, n, err := remoting.DecodeFrame(c.buf, 0)
		if err == nil {
			c.buf = c.buf[n:]
			return cmd, nil
		}
		if !errors.Is(err, remoting.ErrIncomplete) {
			return nil, err
		}
		k, err := c.nc.Read(tmp)
		c.buf = append(c.buf, tmp[:k]...)
		if err != nil && k == 0 {
			return nil, err
		}
	}
}

// call sends req with a fresh opaque and returns its response.
func (c *client) call(req *remoting.Command) *remoting.Command {
	c.t.Helper()
	c.opaque++
	req.Opaque = c.opaque
	c.send(req)
	for {
		resp := c.read()
		if resp.IsResponse() && resp.Opaque == req.Opaque {
			return resp
		}
	}
}

// replay sends a captured request frame verbatim and returns the response.
func (c *client) replay(frame []byte) *remoting.Command {
	c.t.Helper()
	req, _, err := remoting.DecodeFrame(frame, 0)
	if err != nil {
		c.t.Fatalf("decode captured frame: %v", err)
	}
	c.write(frame)
	if req.IsOneway() {
		return nil
	}
	for {
		resp := c.read()
		if resp.IsResponse() && resp.Opaque == req.Opaque {
			return resp
		}
	}
}

// waitClosed reports whether the server closed the connection in time.
func (c *client) waitClosed(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		_, err := c.readErr(time.Until(deadline))
		if err == nil {
			continue // a late frame; keep reading
		}
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
}

// request builds a request with the given Java version.
func request(code int32, version int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	r := remoting.NewRequest(code, ext, body)
	r.Version = version
	return r
}

func headerReq(code int32, h remoting.CustomHeader, body []byte) *remoting.Command {
	var ext remoting.ExtFields
	if h != nil {
		ext = h.AppendExt(nil)
	}
	return request(code, remoting.DefaultVersion, ext, body)
}

// wireFile reads one captured frame by its number.
func wireFile(t *testing.T, n int) []byte {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(wireDir, padNum(n)+"-*.bin"))
	if err != nil || len(m) != 1 {
		t.Fatalf("captured frame %d: %v %v", n, m, err)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wireCommand(t *testing.T, n int) *remoting.Command {
	t.Helper()
	cmd, _, err := remoting.DecodeFrame(wireFile(t, n), 0)
	if err != nil {
		t.Fatalf("decode captured frame %d: %v", n, err)
	}
	return cmd
}

func padNum(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// wantCode fails unless resp has the code (and remark, when not empty).
func wantCode(t *testing.T, resp *remoting.Command, code int32, remark string) {
	t.Helper()
	if resp.Code != code || (remark != "" && resp.Remark != remark) {
		t.Fatalf("response %s %q, want %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark,
			remoting.ResponseCodeName(code), remark)
	}
}

// sameBytes fails with hex dumps when got != want.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s mismatch\n got %q\nwant %q\n got hex:\n%s\nwant hex:\n%s", what, got, want,
			hex.Dump(got), hex.Dump(want))
	}
}

// poll waits until cond holds, failing after timeout.
func poll(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
