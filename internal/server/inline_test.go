package server

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// inlineServer counts where each request of codeEcho was served: by the
// inline fast path (which declines bodies starting with "slow") or by the
// worker handler.
type inlineServer struct {
	inline, worker atomic.Int32
}

func (is *inlineServer) start(t *testing.T) string {
	t.Helper()
	s := New(Config{})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) *remoting.Command {
		is.worker.Add(1)
		return echo(ctx, c, req)
	})
	s.HandleInline(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) (*remoting.Command, bool) {
		switch body := string(req.Body); {
		case strings.HasPrefix(body, "slow"):
			return nil, false
		case body == "panic":
			panic("inline boom")
		}
		is.inline.Add(1)
		return echo(ctx, c, req), true
	})
	return startServer(t, s)
}

func TestInlineServesALoneRequest(t *testing.T) {
	var is inlineServer
	c := rawframe.Dial(t, is.start(t))
	for i := range 5 {
		resp := c.CallNext(req(codeEcho, int32(i), remoting.SerializeJSON, "fast"+strconv.Itoa(i)))
		if string(resp.Body) != "fast"+strconv.Itoa(i) || resp.Code != remoting.Success {
			t.Fatalf("response %d: code %d body %q", i, resp.Code, resp.Body)
		}
	}
	if in, w := is.inline.Load(), is.worker.Load(); in != 5 || w != 0 {
		t.Fatalf("one request at a time: %d inline, %d on workers; want 5 and 0", in, w)
	}
}

func TestInlineDeclinedGoesToWorker(t *testing.T) {
	var is inlineServer
	c := rawframe.Dial(t, is.start(t))
	resp := c.CallNext(req(codeEcho, 7, remoting.SerializeRocketMQ, "slow path"))
	if string(resp.Body) != "slow path" || resp.Serialize != remoting.SerializeRocketMQ {
		t.Fatalf("declined request answered with %q in %v", resp.Body, resp.Serialize)
	}
	if in, w := is.inline.Load(), is.worker.Load(); in != 0 || w != 1 {
		t.Fatalf("declined request: %d inline, %d on workers; want 0 and 1", in, w)
	}
}

func TestInlinePanicIsSystemError(t *testing.T) {
	var is inlineServer
	c := rawframe.Dial(t, is.start(t))
	resp := c.CallNext(req(codeEcho, 3, remoting.SerializeJSON, "panic"))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "inline boom") {
		t.Fatalf("panic answered with code %d remark %q", resp.Code, resp.Remark)
	}
	// The loop survived: the connection still works.
	if resp := c.CallNext(req(codeEcho, 4, remoting.SerializeJSON, "after")); string(resp.Body) != "after" {
		t.Fatalf("after the panic: body %q", resp.Body)
	}
}

// A burst read at once is served on the loop in order, and its replies are
// held back while it runs (cork), so that they leave together.
func TestInlineBurstInOrderAndCorked(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	var conn atomic.Pointer[Conn]
	var heldBack atomic.Int32 // replies still queued when the next request ran
	s.HandleInline(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) (*remoting.Command, bool) {
		c.mu.Lock()
		if len(c.out) > 0 {
			heldBack.Add(1)
		}
		c.mu.Unlock()
		conn.Store(c)
		return echo(ctx, c, req), true
	})
	cl := rawframe.Dial(t, startServer(t, s))
	const n = 32
	var burst []byte
	for i := range n {
		burst = append(burst, rawframe.Frame(t, req(codeEcho, int32(i), remoting.SerializeJSON, strconv.Itoa(i)))...)
	}
	cl.Write(burst)
	for i := range n {
		resp := cl.Read()
		if resp.Opaque != int32(i) || string(resp.Body) != strconv.Itoa(i) {
			t.Fatalf("response %d: opaque %d body %q; want the burst's order", i, resp.Opaque, resp.Body)
		}
	}
	// TCP may split the burst over a few reads; within each, every reply
	// but the first was queued behind the earlier ones.
	if h := heldBack.Load(); h < n/2 {
		t.Fatalf("only %d of %d inline replies found earlier ones still queued: replies were not held back", h, n)
	}
	c := conn.Load()
	c.mu.Lock()
	corked, pending := c.corks > 0, len(c.out)
	c.mu.Unlock()
	if corked || pending != 0 {
		t.Fatalf("after the burst: corked %v, %d bytes unsent", corked, pending)
	}
}

// A declined request's reply from a worker is not stranded by the cork.
func TestInlineMixedBurst(t *testing.T) {
	var is inlineServer
	cl := rawframe.Dial(t, is.start(t))
	const n = 40
	var burst []byte
	for i := range n {
		body := "fast"
		if i%3 == 0 {
			body = "slow"
		}
		burst = append(burst, rawframe.Frame(t, req(codeEcho, int32(i), remoting.SerializeJSON, body))...)
	}
	cl.Write(burst)
	seen := map[int32]bool{}
	for range n {
		resp := cl.Read()
		if resp.Code != remoting.Success || seen[resp.Opaque] {
			t.Fatalf("response opaque %d code %d (seen before: %v)", resp.Opaque, resp.Code, seen[resp.Opaque])
		}
		seen[resp.Opaque] = true
	}
	if in, w := is.inline.Load(), is.worker.Load(); in != n-(n+2)/3 || w != (n+2)/3 {
		t.Fatalf("%d inline, %d on workers; want %d and %d", in, w, n-(n+2)/3, (n+2)/3)
	}
}

// Close waits for an inline handler as for any other, and a declined
// request still counts against nothing once the server is closed.
func TestInlineAndClose(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	release := make(chan struct{})
	entered := make(chan struct{})
	s.HandleInline(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) (*remoting.Command, bool) {
		close(entered)
		<-release // a test-only stall, to observe Close waiting
		return echo(ctx, c, req), true
	})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	c := rawframe.Dial(t, s.Addr())
	c.Send(req(codeEcho, 1, remoting.SerializeJSON, "x"))
	recv(t, entered, "the inline handler to start")
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- s.Close(ctx)
	}()
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v while an inline handler was running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := recv(t, closed, "Close"); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// Inline replies held back by the cork and then too big for the socket
// (the client reads nothing until it has sent everything) still arrive
// whole and in order, through gnet's buffer.
func TestInlineRepliesSurviveAFullSocket(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	s.HandleInline(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) (*remoting.Command, bool) {
		return echo(ctx, c, req), true
	})
	cl, sc := dialConn(t, s)

	const n, size = 100, 128 << 10
	body := make([]byte, size)
	var all []byte
	for i := range n {
		r := req(codeEcho, int32(i), remoting.SerializeRocketMQ, "")
		r.Body = body
		binary.BigEndian.PutUint32(body, uint32(i))
		all = append(all, rawframe.Frame(t, r)...)
	}
	writeErr := make(chan error, 1)
	go func() { _, err := cl.NetConn().Write(all); writeErr <- err }()
	testutil.WaitFor(t, 0, "replies to back up into gnet", func() bool {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.viaLoop
	})
	for i := range n {
		got, err := cl.ReadErr(10 * time.Second)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if got.Opaque != int32(i) || len(got.Body) != size || binary.BigEndian.Uint32(got.Body) != uint32(i) {
			t.Fatalf("reply %d: opaque %d, %d bytes, sequence %d", i, got.Opaque, len(got.Body), binary.BigEndian.Uint32(got.Body))
		}
	}
	if err := recv(t, writeErr, "the client's write"); err != nil {
		t.Fatalf("client write: %v", err)
	}
}

// Replies given while another goroutine holds a cork wait for its last
// Uncork and then leave together, in the order given.
func TestCorkFromAnotherGoroutine(t *testing.T) {
	got := make(chan heldReq, 8)
	s := New(Config{})
	s.Handle(codeEcho, func(_ context.Context, c *Conn, req *remoting.Command) *remoting.Command {
		got <- heldReq{c, req}
		return nil // answered later
	})
	cl := rawframe.Dial(t, startServer(t, s))
	const n = 3
	var reqs []heldReq
	for i := range n {
		cl.Send(req(codeEcho, int32(i), remoting.SerializeJSON, strconv.Itoa(i)))
		reqs = append(reqs, recv(t, got, "request "+strconv.Itoa(i)))
	}
	c := reqs[0].c
	queued := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.out)
	}
	c.Cork()
	c.Cork()
	var sent int
	for _, h := range reqs {
		if err := c.Reply(h.req, echo(nil, c, h.req)); err != nil {
			t.Fatal(err)
		}
		if q := queued(); q <= sent {
			t.Fatalf("reply %d while corked: %d bytes queued, %d before; want it held back", h.req.Opaque, q, sent)
		}
		sent = queued()
	}
	c.Uncork()
	if q := queued(); q != sent {
		t.Fatalf("after the inner Uncork: %d bytes queued, want all %d still held", q, sent)
	}
	c.Uncork()
	for i := range n {
		resp := cl.Read()
		if resp.Opaque != int32(i) || string(resp.Body) != strconv.Itoa(i) {
			t.Fatalf("reply %d: opaque %d body %q", i, resp.Opaque, resp.Body)
		}
	}
	if q := queued(); q != 0 {
		t.Fatalf("after the last Uncork: %d bytes unsent", q)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Uncork without Cork did not panic")
		}
	}()
	c.Uncork()
}

// An inline handler reads its body straight from the connection's buffer;
// a declined request gets its own copy before a worker sees it, so frames
// read after it (which reuse that buffer) cannot change it.
func TestDeclinedBodyOutlivesTheBuffer(t *testing.T) {
	s := New(Config{})
	release := make(chan struct{})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) *remoting.Command {
		<-release // answer only after later frames went through the buffer
		return echo(ctx, c, req)
	})
	s.HandleInline(codeEcho, func(ctx context.Context, c *Conn, req *remoting.Command) (*remoting.Command, bool) {
		if strings.HasPrefix(string(req.Body), "slow") {
			return nil, false
		}
		return echo(ctx, c, req), true
	})
	cl := rawframe.Dial(t, startServer(t, s))
	slow := "slow-" + strings.Repeat("s", 3000)
	cl.Send(req(codeEcho, 1, remoting.SerializeJSON, slow))
	for i := range 20 {
		fast := strings.Repeat(strconv.Itoa(i%10), 3000+i)
		resp := cl.CallNext(req(codeEcho, int32(10+i), remoting.SerializeJSON, fast))
		if string(resp.Body) != fast {
			t.Fatalf("inline reply %d: body of %d bytes, want the request's %d", i, len(resp.Body), len(fast))
		}
	}
	close(release)
	if resp := cl.Read(); resp.Opaque != 1 || string(resp.Body) != slow {
		t.Fatalf("declined request answered with opaque %d and a body that differs from the one sent", resp.Opaque)
	}
}
