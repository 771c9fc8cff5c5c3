package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
)

const codeBig int32 = 1002

// bigReply is the body of every codeBig answer, shared so that only the
// server's queued frames take memory.
var bigReply = make([]byte, 64<<10)

// pipeliner writes n codeBig requests on one connection and never reads.
func pipeliner(t *testing.T, addr string, n int) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	var frames []byte
	for i := range n {
		frames, err = req(codeBig, int32(i), remoting.SerializeJSON, "").AppendFrame(frames)
		if err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = nc.Write(frames) }() // blocks only if the server stops reading
	return nc
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestPipelinerWithoutReadsIsBounded: a client that pipelines thousands of
// requests with large replies and never reads them must not grow the
// server's memory without bound, and other clients keep being served.
func TestPipelinerWithoutReadsIsBounded(t *testing.T) {
	const n = 3000 // unbounded, the replies alone would be 3000 × 64 KiB = 188 MiB
	var handled atomic.Int64
	s := New(Config{MaxConnPending: 8, MaxConnOutbound: 1 << 20})
	s.Handle(codeEcho, echo)
	s.Handle(codeBig, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		handled.Add(1)
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = bigReply
		return resp
	})
	addr := startServer(t, s)
	before := heapInUse()

	pipeliner(t, addr, n)
	testutil.WaitFor(t, 30*time.Second, "the pipelining connection paused or fully served", func() bool {
		return s.Stats().Paused > 0 || handled.Load() == n
	})
	// Others are served while it is held back.
	cl := rawframe.Dial(t, addr)
	for i := range 100 {
		if resp := cl.Call(req(codeEcho, int32(i), remoting.SerializeJSON, "x")); resp.Code != remoting.Success {
			t.Fatalf("echo %d: code %d", i, resp.Code)
		}
	}
	grown := int64(heapInUse()) - int64(before)
	const bound = 32 << 20
	if grown > bound {
		t.Errorf("heap grew by %d MiB with one connection not reading; want under %d MiB (handled %d of %d)",
			grown>>20, bound>>20, handled.Load(), n)
	}
	if h := handled.Load(); h == n {
		t.Errorf("all %d requests were handled for a connection that reads nothing", n)
	}
	t.Logf("heap grew by %d KiB; %d of %d requests handled; stats %+v", grown>>10, handled.Load(), n, s.Stats())
}

// TestStalledConnectionIsClosed: a paused connection that stays paused
// past MaxConnStall is closed, and only that one.
func TestStalledConnectionIsClosed(t *testing.T) {
	s := New(Config{MaxConnPending: 4, MaxConnOutbound: 256 << 10, MaxConnStall: 300 * time.Millisecond})
	s.Handle(codeEcho, echo)
	s.Handle(codeBig, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = bigReply
		return resp
	})
	addr := startServer(t, s)
	other := rawframe.Dial(t, addr)
	if resp := other.Call(req(codeEcho, 1, remoting.SerializeJSON, "x")); resp.Code != remoting.Success {
		t.Fatalf("echo: code %d", resp.Code)
	}
	// The requests keep coming (a pause re-checks on input or on a
	// timer while input is waiting).
	pipeliner(t, addr, 2000)
	testutil.WaitFor(t, 30*time.Second, "the stalled connection closed", func() bool {
		return s.Stats().Stalled == 1
	})
	testutil.WaitFor(t, 10*time.Second, "one connection left", func() bool { return s.Stats().Conns == 1 })
	if resp := other.Call(req(codeEcho, 2, remoting.SerializeJSON, "y")); resp.Code != remoting.Success {
		t.Fatalf("echo after: code %d", resp.Code)
	}
}

// TestBusyLogIsRateLimited: a burst of SYSTEM_BUSY answers logs one WARN
// line (with the count of the others on the next), not one per request.
func TestBusyLogIsRateLimited(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	logs := &testlog.Buffer{}
	s := New(Config{MaxHandlers: 1, Logger: logs.Logger()})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		entered <- struct{}{}
		<-release
		return echo(ctx, c, r)
	})
	cl := rawframe.Dial(t, startServer(t, s))
	cl.Send(req(codeEcho, 1, remoting.SerializeJSON, "slow"))
	recv(t, entered, "first handler")
	const burst = 200
	for i := range burst {
		if resp := cl.CallNext(req(codeEcho, int32(i+2), remoting.SerializeJSON, "x")); resp.Code != remoting.SystemBusy {
			t.Fatalf("request %d: code %d, want SYSTEM_BUSY", i, resp.Code)
		}
	}
	close(release)
	if n := strings.Count(logs.String(), "SYSTEM_BUSY"); n < 1 || n > 3 {
		t.Errorf("%d SYSTEM_BUSY log lines for %d answers, want one a second", n, burst)
	}
}

// readingPipeliner writes n requests made by mk on one connection while
// it reads the replies; it returns how many replies came back before the
// server closed the connection or all n did.
func readingPipeliner(t *testing.T, addr string, n int, mk func(i int) *remoting.Command) int {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var frames []byte
	for i := range n {
		if frames, err = mk(i).AppendFrame(frames); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = nc.Write(frames) }() // unblocks when nc closes
	r := bufio.NewReaderSize(nc, 64<<10)
	var prefix [4]byte
	got := 0
	for got < n {
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			break
		}
		size := int64(binary.BigEndian.Uint32(prefix[:]))
		if _, err := io.CopyN(io.Discard, r, size); err != nil {
			break
		}
		got++
	}
	return got
}

// TestReadingPipelinerIsServed: a client that pipelines far more requests
// than the server takes at once, and reads every reply, is paused but
// never closed, however much of its input waits: its replies drain.
func TestReadingPipelinerIsServed(t *testing.T) {
	const n = 20000
	// A small frame bound makes the input waiting behind the pause (n
	// frames of about 60 bytes) many times MaxFrameSize.
	s := New(Config{MaxConnPending: 4, MaxConnOutbound: 64 << 10, MaxFrameSize: 16 << 10})
	s.Handle(codeEcho, echo)
	addr := startServer(t, s)
	got := readingPipeliner(t, addr, n, func(i int) *remoting.Command {
		return req(codeEcho, int32(i), remoting.SerializeJSON, "")
	})
	st := s.Stats()
	t.Logf("%d of %d answered; stats %+v", got, n, st)
	if got != n {
		t.Fatalf("%d of %d requests answered to a client that reads its replies", got, n)
	}
	if st.Stalled != 0 {
		t.Errorf("Stalled %d, want 0", st.Stalled)
	}
}

// TestNonReaderIsClosed: a client that pipelines and reads nothing, its
// replies stuck over MaxConnOutbound, is closed once it has sent
// MaxFrameSize more, well before MaxConnStall, and memory stays bounded.
func TestNonReaderIsClosed(t *testing.T) {
	const n = 3000
	s := New(Config{MaxConnPending: 4, MaxConnOutbound: 256 << 10, MaxFrameSize: 16 << 10})
	s.Handle(codeBig, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = bigReply
		return resp
	})
	addr := startServer(t, s)
	before := heapInUse()
	pipeliner(t, addr, n)
	testutil.WaitFor(t, 30*time.Second, "the connection that does not read closed", func() bool {
		return s.Stats().Stalled == 1
	})
	testutil.WaitFor(t, 10*time.Second, "no connection left", func() bool { return s.Stats().Conns == 0 })
	if grown := int64(heapInUse()) - int64(before); grown > 32<<20 {
		t.Errorf("heap grew by %d MiB; want under 32 MiB", grown>>20)
	}
}

// TestInboundBoundClosesFastSender: a paused connection whose replies are
// not the problem (its one handler is stuck) is still closed once more than
// MaxConnInbound of its input waits.
func TestInboundBoundClosesFastSender(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := New(Config{MaxConnPending: 1, MaxFrameSize: 16 << 10, MaxConnInbound: 64 << 10})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return echo(ctx, c, r)
	})
	addr := startServer(t, s)
	nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var frames []byte
	for i := range 4000 { // about 200 KB
		if frames, err = req(codeEcho, int32(i), remoting.SerializeJSON, "").AppendFrame(frames); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = nc.Write(frames) }()
	testutil.WaitFor(t, 30*time.Second, "the connection closed", func() bool { return s.Stats().Stalled == 1 })
	testutil.WaitFor(t, 10*time.Second, "no connection left", func() bool { return s.Stats().Conns == 0 })
}

// TestPushDroppedWhileClientBehind: Push queues at most about
// MaxPushQueued bytes for a client that does not read, then drops; once
// the client has read what was queued, pushes go out again.
func TestPushDroppedWhileClientBehind(t *testing.T) {
	const limit = 64 << 10
	s := New(Config{MaxPushQueued: limit})
	s.Handle(codeEcho, echo)
	cl, c := dialConn(t, s)
	push := remoting.NewRequest(codeEcho, nil, make([]byte, 1000))
	sent := 0
	for sent < 100000 {
		if err := c.Push(push); err != nil {
			if !errors.Is(err, ErrPushDropped) {
				t.Fatalf("push %d: %v", sent, err)
			}
			break
		}
		sent++
	}
	if sent == 100000 {
		t.Fatal("100,000 pushes of 1 KB to a client that does not read were all queued")
	}
	// What was not dropped reaches the client, and then pushes are sent
	// again.
	for i := range sent {
		if cmd := cl.Read(); cmd.Code != codeEcho {
			t.Fatalf("frame %d: code %d", i, cmd.Code)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "a push accepted again", func() bool { return c.Push(push) == nil })
	if cmd := cl.Read(); cmd.Code != codeEcho {
		t.Fatalf("push after draining: code %d", cmd.Code)
	}
	t.Logf("%d pushes of 1 KB queued before the first was dropped", sent)
}
