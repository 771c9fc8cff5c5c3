package transport

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// withIdleRead changes idleReadDelay, so that tests can keep the read
// side free for as long as they need.
func withIdleRead(d time.Duration) Option { return func(c *config) { c.idleRead = d } }

// interruptRead ends a blocked Read the way an expired deadline left by an
// earlier call does.
func (cn *conn) interruptRead() { _ = cn.nc.SetReadDeadline(time.Unix(1, 0)) }

// slowEcho answers after d, from its own goroutine.
func slowEcho(d time.Duration) func(*srvConn, *remoting.Command) {
	return func(sc *srvConn, req *remoting.Command) {
		if req.IsResponse() || req.IsOneway() {
			return
		}
		time.AfterFunc(d, func() { sc.send(echoResponse(req)) })
	}
}

// TestCallerReads: a call on a connection nobody reads reads its response
// itself; once the connection is idle the read loop takes over again.
func TestCallerReads(t *testing.T) {
	s := startServer(t, nil, slowEcho(100*time.Millisecond))
	c := newClient(t, withIdleRead(300*time.Millisecond))
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "dial")); err != nil {
		t.Fatal(err)
	}
	cn := c.readyConn(s.addr)
	testutil.WaitFor(t, 0, "read loop on the idle connection", func() bool { return cn.reader.Load() == readerLoop })
	// A server request on the idle connection is read by the loop.
	got := make(chan struct{}, 1)
	c.RegisterHandler(remoting.GetConsumerRunningInfo, func(context.Context, string, *remoting.Command) *remoting.Command {
		got <- struct{}{}
		return nil
	})
	if err := s.conn(0).send(&remoting.Command{Code: remoting.GetConsumerRunningInfo, Opaque: 5, Flag: remoting.FlagOneway}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("server request on an idle connection not handled")
	}
	// The loop lets go after that frame (nothing pending); the next call
	// leads.
	testutil.WaitFor(t, 0, "read side free", func() bool { return cn.reader.Load() == readerNone })
	done := make(chan error, 1)
	go func() {
		resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "lead"))
		if err == nil && string(resp.Body) != "lead" {
			err = errors.New("wrong body " + string(resp.Body))
		}
		done <- err
	}()
	testutil.WaitFor(t, 0, "caller reading", func() bool { return cn.reader.Load() == readerCall })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStrayInterrupt: the read-deadline interrupt of a caller that has
// gone must not fail whoever reads next, caller or read loop.
func TestStrayInterrupt(t *testing.T) {
	s := startServer(t, nil, slowEcho(100*time.Millisecond))
	c := newClient(t, withIdleRead(time.Hour)) // the read loop only takes over when asked
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "dial")); err != nil {
		t.Fatal(err)
	}
	cn := c.readyConn(s.addr)
	for _, who := range []int32{readerCall, readerLoop} {
		t.Run(map[int32]string{readerCall: "caller", readerLoop: "loop"}[who], func(t *testing.T) {
			testutil.WaitFor(t, 0, "read side free", func() bool { return cn.reader.Load() == readerNone })
			if who == readerLoop {
				// Hold the read side for the loop: pretend to lead, and let
				// go with a call pending, which hands it to the loop.
				if !cn.takeRead(readerCall) {
					t.Fatal("read side taken")
				}
			}
			done := make(chan error, 1)
			go func() {
				resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x"))
				if err == nil && string(resp.Body) != "x" {
					err = errors.New("wrong body")
				}
				done <- err
			}()
			if who == readerLoop {
				testutil.WaitFor(t, 0, "call pending", func() bool { return cn.pendingLen() == 1 })
				cn.releaseRead()
			}
			testutil.WaitFor(t, 0, "reader", func() bool { return cn.reader.Load() == who })
			cn.interruptRead()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if cn.closed.Load() {
				t.Fatal("connection closed by a stray interrupt")
			}
		})
	}
}

// TestDirectWriteFullSocket: frames written by callers themselves never
// block on a peer that does not read; what does not fit goes to the
// writer, and everything arrives whole and in order.
func TestDirectWriteFullSocket(t *testing.T) {
	hold := make(chan struct{})
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		if string(req.Body) == "first" {
			<-hold // stop reading the socket
		}
	})
	c := newClient(t)
	if err := c.InvokeOneway(context.Background(), s.addr, request(remoting.HeartBeat, "first")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "first frame read", func() bool { sc := s.conn(0); return sc != nil && len(sc.received()) == 1 })
	const n = 12
	body := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 1<<20) }
	start := time.Now()
	for i := range n {
		req := remoting.NewRequest(remoting.SendMessageV2, nil, body(i))
		if err := c.InvokeOneway(context.Background(), s.addr, req); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 10*time.Second { // blocked, they would wait for hold
		t.Fatalf("%d oneway sends to a stalled peer took %v", n, took)
	}
	cn := c.readyConn(s.addr)
	if cn == nil {
		t.Fatal("connection gone")
	}
	close(hold)
	testutil.WaitFor(t, 0, "every frame", func() bool { return len(s.conn(0).received()) == n+1 })
	for i, f := range s.conn(0).received()[1:] {
		if !bytes.Equal(f.Body, body(i)) {
			t.Fatalf("frame %d: body of %d bytes starting %q", i, len(f.Body), f.Body[:min(8, len(f.Body))])
		}
	}
	if cn.closed.Load() {
		t.Fatal("connection closed")
	}
}

// TestLeaderDeadlines: a reading caller keeps an earlier deadline left by
// a previous call and must still time out on its own deadline, and not
// before it.
func TestLeaderDeadlines(t *testing.T) {
	const slow = time.Second // the slow answer's delay
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		if string(req.Body) == "slow" {
			slowEcho(slow)(sc, req)
			return
		}
		echo(sc, req)
	})
	// The timed-out call's connection must stay: the deadline it leaves on
	// the socket is what the next calls meet.
	c := newClient(t, withIdleRead(time.Hour), WithTimeoutClose(CloseNever))
	ctx := context.Background()
	call := func(body string, timeout time.Duration) (time.Duration, error) {
		start := time.Now()
		resp, err := c.InvokeTimeout(ctx, s.addr, request(remoting.HeartBeat, body), timeout)
		if err == nil && string(resp.Body) != body {
			err = errors.New("wrong body " + string(resp.Body))
		}
		return time.Since(start), err
	}
	if _, err := call("fast", time.Minute); err != nil {
		t.Fatal(err)
	}
	cn := c.readyConn(s.addr)
	took, err := call("slow", 50*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || took < 50*time.Millisecond || took >= slow {
		t.Fatalf("short call: %v after %v, want ErrTimeout at its 50 ms deadline, before the answer", err, took)
	}
	// The 50 ms deadline is still on the socket and has passed.
	if _, err := call("slow", time.Minute); err != nil {
		t.Fatalf("call after an expired deadline: %v", err)
	}
	for range 3 {
		if _, err := call("fast", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if cn.closed.Load() {
		t.Fatal("connection closed")
	}
}

// TestReadSoon: on a connection nobody reads, a server request waits for
// the read loop's idle timer unless ReadSoon has the loop read at once.
func TestReadSoon(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t, withIdleRead(time.Hour))
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "dial")); err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 1)
	c.RegisterHandler(remoting.PushReplyMessageToClient, func(context.Context, string, *remoting.Command) *remoting.Command {
		got <- struct{}{}
		return nil
	})
	if err := s.conn(0).send(&remoting.Command{Code: remoting.PushReplyMessageToClient, Opaque: 9, Flag: remoting.FlagOneway}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
		t.Fatal("read without a reader: the test's premise is wrong")
	case <-time.After(50 * time.Millisecond):
	}
	c.ReadSoon(s.addr)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("ReadSoon did not get the connection read")
	}
}
