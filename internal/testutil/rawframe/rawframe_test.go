package rawframe

import (
	"net"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// peer accepts one connection and runs serve on it.
func peer(t *testing.T, serve func(c *Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(Wrap(t, nc))
	}()
	return ln.Addr().String()
}

func TestCallSkipsOtherFrames(t *testing.T) {
	errs := make(chan error, 1)
	addr := peer(t, func(c *Conn) {
		req, err := c.ReadErr(Wait)
		if err != nil {
			errs <- err
			return
		}
		// A server-initiated request, then the answer.
		push := remoting.NewRequest(40, nil, nil)
		push.Opaque = 1
		resp := remoting.NewResponse(remoting.Success, "ok")
		resp.Opaque = req.Opaque
		b, _ := push.AppendFrame(nil)
		b, _ = resp.AppendFrame(b)
		_, err = c.NetConn().Write(b)
		errs <- err
	})
	c := Dial(t, addr)
	resp := c.Call(remoting.NewRequest(105, nil, nil))
	if resp.Remark != "ok" || resp.Opaque == 0 {
		t.Fatalf("Call returned %+v", resp)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	c.ExpectClosed(Wait)
}

func TestExpectNothing(t *testing.T) {
	addr := peer(t, func(c *Conn) { c.ReadErr(Wait) })
	c := Dial(t, addr)
	start := time.Now()
	c.ExpectNothing(50 * time.Millisecond)
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("ExpectNothing returned early")
	}
}
