package server

import (
	"context"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
)

const codeHuge int32 = 1003

// hugeHeaderFrame is a 13 MiB frame of a million ext fields.
func hugeHeaderFrame(t *testing.T) []byte {
	t.Helper()
	ext := make(remoting.ExtFields, 1_000_000)
	for i := range ext {
		ext[i] = remoting.Field{Key: strconv.Itoa(i), Value: "v"}
	}
	r := remoting.NewRequest(codeHuge, ext, nil)
	r.Opaque = 1
	r.Serialize = remoting.SerializeRocketMQ
	frame := rawframe.Frame(t, r)
	if len(frame) < 12<<20 {
		t.Fatalf("frame of %d bytes, want about 13 MiB", len(frame))
	}
	return frame
}

// TestHugeHeaderDoesNotStallOthers: while one connection's frame with a
// million ext fields is decoded, another client on the same event loop
// keeps getting answers quickly, and the huge request is still served.
func TestHugeHeaderDoesNotStallOthers(t *testing.T) {
	frame := hugeHeaderFrame(t)
	var fields atomic.Int64
	s := New(Config{EventLoops: 1})
	s.Handle(codeEcho, echo)
	s.Handle(codeHuge, func(_ context.Context, _ *Conn, req *remoting.Command) *remoting.Command {
		fields.Store(int64(len(req.Ext)))
		return remoting.NewResponse(remoting.Success, "")
	})
	addr := startServer(t, s)
	small := rawframe.Dial(t, addr)
	small.Call(req(codeEcho, 1, remoting.SerializeJSON, "warm"))

	huge := rawframe.Dial(t, addr)
	began := time.Now()
	done := make(chan *remoting.Command, 1)
	go func() {
		if _, err := huge.NetConn().Write(frame); err != nil {
			done <- nil
			return
		}
		_ = huge.NetConn().SetReadDeadline(time.Now().Add(60 * time.Second))
		resp, err := huge.ReadErr(60 * time.Second)
		if err != nil {
			resp = nil
		}
		done <- resp
	}()

	var worst time.Duration
	calls := 0
	deadline := time.After(60 * time.Second)
	for {
		select {
		case resp := <-done:
			if resp == nil || resp.Code != remoting.Success {
				t.Fatalf("huge request not answered with SUCCESS: %+v", resp)
			}
			if got := fields.Load(); got != 1_000_000 {
				t.Errorf("handler saw %d ext fields, want 1000000", got)
			}
			// Decoded on the loop, the small client waits out the whole
			// decode (0.9 s, 1.8 s with -race), most of the huge request's
			// time. Off the loop it waits for GC pauses at most: under a
			// fixed bound, or on a loaded machine well under half the
			// huge request's time.
			const bound = 600 * time.Millisecond
			total := time.Since(began)
			if worst > bound && 2*worst > total {
				t.Errorf("worst small-request latency %v during the huge request's %v, want under %v or under half of it", worst, total, bound)
			}
			t.Logf("worst latency %v over %d calls in %v", worst, calls, total)
			return
		case <-deadline:
			t.Fatal("huge request not answered")
		default:
		}
		start := time.Now()
		calls++
		if resp := small.Call(req(codeEcho, int32(calls+1), remoting.SerializeJSON, "x")); resp.Code != remoting.Success {
			t.Fatalf("echo: code %d", resp.Code)
		}
		worst = max(worst, time.Since(start))
	}
}

// TestLargeRequestsTakeTurns: requests over 1 MiB from several
// connections at once, with room for one at a time, are each handled
// whole, one after the other, while a small request is served meanwhile.
func TestLargeRequestsTakeTurns(t *testing.T) {
	var running, most atomic.Int32
	s := New(Config{MaxLargeRequests: 2 << 20})
	s.Handle(codeEcho, echo)
	s.Handle(codeBig, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Ext = remoting.ExtFields{{Key: "sum", Value: fmt.Sprint(crc32.ChecksumIEEE(r.Body))}}
		return resp
	})
	addr := startServer(t, s)
	const conns = 4
	body := make([]byte, 3<<19) // 1.5 MiB
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := fmt.Sprint(crc32.ChecksumIEEE(body))
	errs := make(chan error, conns)
	for i := range conns {
		cl := rawframe.Dial(t, addr)
		go func() {
			resp, err := readReply(cl, req(codeBig, int32(i+1), remoting.SerializeJSON, string(body)))
			if err == nil {
				if sum, _ := resp.Ext.Get("sum"); resp.Code != remoting.Success || sum != want {
					err = fmt.Errorf("request %d: code %d sum %q, want %s", i, resp.Code, sum, want)
				}
			}
			errs <- err
		}()
	}
	small := rawframe.Dial(t, addr)
	if resp := small.Call(req(codeEcho, 1, remoting.SerializeJSON, "x")); resp.Code != remoting.Success {
		t.Fatalf("small request: code %d", resp.Code)
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d large requests handled at once, want 1", m)
	}
}

// readReply writes r on cl and reads its answer, off the test goroutine.
func readReply(cl *rawframe.Conn, r *remoting.Command) (*remoting.Command, error) {
	frame, err := r.AppendFrame(nil)
	if err != nil {
		return nil, err
	}
	if _, err := cl.NetConn().Write(frame); err != nil {
		return nil, err
	}
	return cl.ReadErr(30 * time.Second)
}
