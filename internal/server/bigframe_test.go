package server

import (
	"context"
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
