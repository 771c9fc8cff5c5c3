package transport

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func newClient(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func request(code int32, body string) *remoting.Command {
	var ext remoting.ExtFields
	ext.Add("k", body)
	return remoting.NewRequest(code, ext, []byte(body))
}

func checkEcho(t *testing.T, resp *remoting.Command, body string) {
	t.Helper()
	if resp == nil {
		t.Fatal("nil response")
	}
	if !resp.IsResponse() || resp.Code != remoting.Success {
		t.Fatalf("response flag %#x code %d", resp.Flag, resp.Code)
	}
	if !bytes.Equal(resp.Body, []byte(body)) {
		t.Fatalf("body mismatch:\n got %s\nwant %s", hex.Dump(resp.Body), hex.Dump([]byte(body)))
	}
	if v, _ := resp.Ext.Get("k"); v != body {
		t.Fatalf("ext k = %q, want %q", v, body)
	}
}

func TestInvokeSync(t *testing.T) {
	for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		t.Run(fmt.Sprintf("serialize-%d", st), func(t *testing.T) {
			s := startServer(t, nil, echo)
			c := newClient(t, WithSerializeType(st), WithLanguage(remoting.LanguageJava), WithVersion(401))
			for i := range 3 {
				body := "hello-" + strconv.Itoa(i)
				resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, body))
				if err != nil {
					t.Fatal(err)
				}
				checkEcho(t, resp, body)
			}
			got := s.conn(0).received()
			if len(got) != 3 {
				t.Fatalf("server got %d frames, want 3", len(got))
			}
			seen := map[int32]bool{}
			for _, f := range got {
				if f.Serialize != st || f.Language != remoting.LanguageJava || f.Version != 401 || f.Flag != 0 || f.Code != remoting.HeartBeat {
					t.Fatalf("request header %+v", f)
				}
				if seen[f.Opaque] {
					t.Fatalf("opaque %d reused", f.Opaque)
				}
				seen[f.Opaque] = true
			}
			if s.accepted.Load() != 1 {
				t.Fatalf("%d connections, want 1", s.accepted.Load())
			}
			if !c.Connected(s.addr) {
				t.Fatal("not connected")
			}
		})
	}
}

func TestInvokeOverPipeWithSplitWrites(t *testing.T) {
	// The peer writes each response one byte at a time and the request body
	// is bigger than the read buffer, so the reader sees every split point
	// and the large-frame path.
	var peers sync.WaitGroup
	t.Cleanup(peers.Wait)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		a, b := net.Pipe()
		peers.Add(1)
		go func() {
			defer peers.Done()
			defer b.Close()
			serveFrames(&srvConn{nc: b}, func(sc *srvConn, req *remoting.Command) {
				f, _ := echoResponse(req).AppendFrame(nil)
				for len(f) > 0 {
					n := 1 // byte by byte through the header, then big odd chunks
					if len(f) > 4093 && len(f) < 60000 {
						n = 4093
					}
					if _, err := sc.nc.Write(f[:n]); err != nil {
						return
					}
					f = f[n:]
				}
			})
		}()
		return a, nil
	}
	c := newClient(t, WithDialer(dial), WithTimeout(time.Minute))
	// Echoed frames carry the body twice (extField and body): 3000 and
	// 4200 make frames either side of ownMin, 30000 one of several reads.
	for _, n := range []int{0, 10, 3000, 4200, 30000, readBufSize + 100} {
		body := strings.Repeat("x", n)
		resp, err := c.Invoke(context.Background(), "pipe:1", request(remoting.HeartBeat, body))
		if err != nil {
			t.Fatal(err)
		}
		checkEcho(t, resp, body)
	}
}

func TestInvokeAsync(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "connect")); err != nil {
		t.Fatal(err)
	}
	const n = 50
	type res struct {
		i    int
		resp *remoting.Command
		err  error
	}
	ch := make(chan res, n)
	for i := range n {
		err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, strconv.Itoa(i)),
			func(resp *remoting.Command, err error) { ch <- res{i, resp, err} })
		if err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		checkEcho(t, r.resp, strconv.Itoa(r.i))
	}
	// Calls issued one after another on a live connection go out in order.
	got := s.conn(0).received()[1:]
	for i := range got {
		if string(got[i].Body) != strconv.Itoa(i) {
			t.Fatalf("frame %d has body %q: async calls reordered", i, got[i].Body)
		}
	}
}

func TestInvokeOneway(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	req := request(remoting.HeartBeat, "ow")
	if err := c.InvokeOneway(context.Background(), s.addr, req); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "oneway frame", func() bool { sc := s.conn(0); return sc != nil && len(sc.received()) == 1 })
	f := s.conn(0).received()[0]
	if f.Flag != remoting.FlagOneway || string(f.Body) != "ow" {
		t.Fatalf("oneway frame flag %#x body %q", f.Flag, f.Body)
	}
	// A later sync call on the same connection still works (and clears the bit).
	resp, err := c.Invoke(context.Background(), s.addr, req)
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "ow")
}

func TestConcurrentCallers(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	const callers, calls = 64, 100
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				body := fmt.Sprintf("%d/%d", g, i)
				resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, body))
				if err != nil {
					errs <- err
					return
				}
				if string(resp.Body) != body {
					errs <- fmt.Errorf("got body %q, want %q", resp.Body, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := c.pendingLen(s.addr); n != 0 {
		t.Fatalf("%d calls still pending", n)
	}
}

// TestLargeFramesKeepTheirBodies: responses small and large, arriving
// back to back from concurrent calls, keep their bodies intact while the
// connection goes on reading into its buffers.
func TestLargeFramesKeepTheirBodies(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	sizes := []int{0, 10, ownMin - 200, ownMin, 3*ownMin + 7, readBufSize + 1}
	const callers, calls = 8, 24
	type kept struct {
		resp *remoting.Command
		want []byte
	}
	got := make([][]kept, callers)
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				body := bytes.Repeat([]byte{byte(g*calls + i)}, sizes[(g+i)%len(sizes)])
				resp, err := c.Invoke(context.Background(), s.addr, remoting.NewRequest(remoting.HeartBeat, nil, body))
				if err != nil {
					errs <- err
					return
				}
				got[g] = append(got[g], kept{resp, body})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for g := range got {
		for i, k := range got[g] {
			if !bytes.Equal(k.resp.Body, k.want) {
				t.Fatalf("caller %d call %d: body of %d bytes changed after later reads (want %d bytes of %#x)", g, i, len(k.resp.Body), len(k.want), byte(g*calls+i))
			}
		}
	}
}

func TestResponsesOutOfOrder(t *testing.T) {
	const n = 8
	var mu sync.Mutex
	var held []*remoting.Command
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		mu.Lock()
		defer mu.Unlock()
		held = append(held, req)
		if len(held) == n {
			for i := n - 1; i >= 0; i-- {
				sc.send(echoResponse(held[i]))
			}
		}
	})
	c := newClient(t)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			body := strconv.Itoa(i)
			resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, body))
			if err == nil && string(resp.Body) != body {
				err = fmt.Errorf("caller %d got body %q", i, resp.Body)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnknownOpaqueDropped(t *testing.T) {
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		stray := remoting.NewResponse(remoting.Success, "stray")
		stray.Opaque = req.Opaque + 1000
		sc.send(stray)
		sc.send(echoResponse(req))
	})
	c := newClient(t)
	resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "a"))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "a")
}

// silent accepts requests and never answers.
func silent(*srvConn, *remoting.Command) {}

func TestCancelAndTimeout(t *testing.T) {
	s := startServer(t, nil, silent)
	tests := []struct {
		name      string
		timeout   time.Duration // client option
		ctx       func() (context.Context, context.CancelFunc)
		cancelNow bool
		want      []error
		retriable bool
	}{
		{"ctx-cancel", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true, []error{context.Canceled}, false},
		{"ctx-deadline", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond)
		}, false, []error{ErrTimeout, context.DeadlineExceeded}, false},
		{"client-timeout", 30 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}, false, []error{ErrTimeout}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, WithTimeout(tt.timeout))
			ctx, cancel := tt.ctx()
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := c.Invoke(ctx, s.addr, request(remoting.HeartBeat, "x"))
				errc <- err
			}()
			testutil.WaitFor(t, 0, "pending call", func() bool { return c.pendingLen(s.addr) == 1 })
			if tt.cancelNow {
				cancel()
			}
			var err error
			select {
			case err = <-errc:
			case <-time.After(5 * time.Second):
				t.Fatal("call did not return")
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Fatalf("error %v is not %v", err, w)
				}
			}
			if got := remoting.IsRetriable(err); got != tt.retriable {
				t.Fatalf("IsRetriable(%v) = %v", err, got)
			}
			if !strings.Contains(err.Error(), s.addr) {
				t.Fatalf("error %q lacks the address", err)
			}
			if n := c.pendingLen(s.addr); n != 0 {
				t.Fatalf("%d calls left pending", n)
			}
		})
	}
}

func TestInvokeTimeoutOverridesClientTimeout(t *testing.T) {
	// A long poll: the client timeout is short, the call's own is longer.
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		go func() {
			time.Sleep(100 * time.Millisecond)
			sc.send(echoResponse(req))
		}()
	})
	c := newClient(t, WithTimeout(20*time.Millisecond))
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.PullMessage, "p")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Invoke: %v, want ErrTimeout", err)
	}
	resp, err := c.InvokeTimeout(context.Background(), s.addr, request(remoting.PullMessage, "p"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "p")
}

func TestConnDropFailsPending(t *testing.T) {
	const n = 10
	var got atomic.Int32
	var answer atomic.Bool
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		if answer.Load() {
			echo(sc, req)
		} else if got.Add(1) == n {
			sc.nc.Close()
		}
	})
	c := newClient(t, WithTimeout(time.Minute))
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		go func() {
			_, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x"))
			errs <- err
		}()
	}
	for range n {
		err := <-errs
		if !errors.Is(err, ErrConnClosed) || !strings.Contains(err.Error(), s.addr) || !remoting.IsRetriable(err) {
			t.Fatalf("error %v: want retriable ErrConnClosed naming %s", err, s.addr)
		}
	}
	if d := time.Since(start); d > 10*time.Second { // the calls' timeout is a minute
		t.Fatalf("pending calls failed after %v", d)
	}
	testutil.WaitFor(t, 0, "disconnect", func() bool { return !c.Connected(s.addr) })
	// The next call dials again.
	answer.Store(true)
	resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "again"))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "again")
	if s.accepted.Load() != 2 {
		t.Fatalf("%d connections, want 2", s.accepted.Load())
	}
}

func TestCloseConn(t *testing.T) {
	s := startServer(t, nil, silent)
	c := newClient(t, WithTimeout(time.Minute))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x"))
		errc <- err
	}()
	testutil.WaitFor(t, 0, "pending call", func() bool { return c.pendingLen(s.addr) == 1 })
	c.CloseConn(s.addr)
	if err := <-errc; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("error %v, want ErrConnClosed", err)
	}
	if c.Connected(s.addr) {
		t.Fatal("still connected")
	}
	if err := c.InvokeOneway(context.Background(), s.addr, request(remoting.HeartBeat, "y")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "second connection", func() bool { return s.accepted.Load() == 2 })
}

func TestServerRequests(t *testing.T) {
	for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		t.Run(fmt.Sprintf("serialize-%d", st), func(t *testing.T) {
			s := startServer(t, nil, echo)
			// The client speaks JSON; server requests come in st and must be
			// answered in st.
			c := newClient(t)
			called := make(chan *remoting.Command, 4)
			c.RegisterHandler(remoting.GetConsumerRunningInfo, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
				if addr != s.addr {
					t.Errorf("handler addr %q", addr)
				}
				called <- req
				resp := remoting.NewResponse(remoting.Success, "")
				resp.Body = []byte("info")
				return resp
			})
			c.RegisterInlineHandler(remoting.CheckTransactionState, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
				called <- req
				return remoting.NewResponse(remoting.Success, "must not be sent")
			})
			if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "hb")); err != nil {
				t.Fatal(err)
			}
			sc := s.conn(0)
			send := func(code, opaque, flag int32) {
				t.Helper()
				if err := sc.send(&remoting.Command{Code: code, Opaque: opaque, Flag: flag, Serialize: st}); err != nil {
					t.Fatal(err)
				}
			}
			send(remoting.CheckTransactionState, 776, remoting.FlagOneway)    // handled, never answered
			send(remoting.NotifyConsumerIDsChanged, 777, remoting.FlagOneway) // no handler, oneway: nothing
			send(999, 778, 0)                                                 // no handler: NOT_SUPPORTED
			send(remoting.GetConsumerRunningInfo, 779, 0)                     // handled and answered
			for range 2 {
				select {
				case <-called:
				case <-time.After(5 * time.Second):
					t.Fatal("handler not called")
				}
			}
			// Wait until the handlers have finished (their replies, if any,
			// are queued by then), then a client request marks the end of
			// what the client wrote.
			testutil.WaitFor(t, 0, "handlers done", func() bool { return len(c.handlerSem) == 0 })
			if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "end")); err != nil {
				t.Fatal(err)
			}
			var replies []*remoting.Command
			for _, f := range sc.received() {
				if f.IsResponse() {
					replies = append(replies, f)
				}
			}
			if len(replies) != 2 {
				t.Fatalf("client sent %d replies, want 2: %+v", len(replies), replies)
			}
			byOpaque := map[int32]*remoting.Command{}
			for _, r := range replies {
				if r.Serialize != st || r.Flag != remoting.FlagResponse || r.Language != remoting.LanguageGo {
					t.Fatalf("reply header %+v", r)
				}
				byOpaque[r.Opaque] = r
			}
			if r := byOpaque[778]; r == nil || r.Code != remoting.RequestCodeNotSupported || r.Remark != " request type 999 not supported" {
				t.Fatalf("unknown code reply %+v", r)
			}
			if r := byOpaque[779]; r == nil || r.Code != remoting.Success || string(r.Body) != "info" {
				t.Fatalf("running info reply %+v", r)
			}
		})
	}
}

func TestHandlerBound(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t, WithMaxHandlers(1))
	release := make(chan struct{})
	c.RegisterHandler(remoting.ConsumeMessageDirectly, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
		<-release
		return remoting.NewResponse(remoting.Success, "")
	})
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "hb")); err != nil {
		t.Fatal(err)
	}
	sc := s.conn(0)
	sc.send(&remoting.Command{Code: remoting.ConsumeMessageDirectly, Opaque: 1})
	testutil.WaitFor(t, 0, "handler busy", func() bool { return len(c.handlerSem) == 1 })
	sc.send(&remoting.Command{Code: remoting.ConsumeMessageDirectly, Opaque: 2})
	testutil.WaitFor(t, 0, "busy reply", func() bool {
		for _, f := range sc.received() {
			if f.IsResponse() && f.Opaque == 2 {
				return f.Code == remoting.SystemBusy
			}
		}
		return false
	})
	close(release)
	testutil.WaitFor(t, 0, "handled reply", func() bool {
		for _, f := range sc.received() {
			if f.IsResponse() && f.Opaque == 1 {
				return f.Code == remoting.Success
			}
		}
		return false
	})
}

// An inline handler takes a burst of oneway requests while the handler
// goroutines are all busy: none is refused.
func TestInlineHandlerBurst(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t, WithMaxHandlers(1))
	release := make(chan struct{})
	defer close(release)
	c.RegisterHandler(remoting.ConsumeMessageDirectly, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
		<-release
		return nil
	})
	var got atomic.Int32
	c.RegisterInlineHandler(remoting.CheckTransactionState, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
		got.Add(1)
		return nil
	})
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "hb")); err != nil {
		t.Fatal(err)
	}
	sc := s.conn(0)
	sc.send(&remoting.Command{Code: remoting.ConsumeMessageDirectly, Opaque: 1})
	testutil.WaitFor(t, 0, "handler busy", func() bool { return len(c.handlerSem) == 1 })
	const n = 500
	for i := range n {
		sc.send(&remoting.Command{Code: remoting.CheckTransactionState, Opaque: int32(2 + i), Flag: remoting.FlagOneway})
	}
	testutil.WaitFor(t, 0, "every check handled", func() bool { return got.Load() == n })
}

func TestDeadAddressDoesNotStallOthers(t *testing.T) {
	live := startServer(t, nil, echo)
	// A listener that never accepts: connect succeeds (backlog), nothing
	// answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	entered := make(chan struct{}, 16)
	base := defaultConfig().dial
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "hang:1" {
			entered <- struct{}{}
			<-ctx.Done() // a dial that hangs until aborted
			return nil, ctx.Err()
		}
		return base(ctx, network, addr)
	}
	c := newClient(t, WithDialer(dial), WithDialTimeout(time.Minute), WithTimeout(time.Minute))
	errs := make(chan error, 4)
	for _, addr := range []string{"hang:1", "hang:1", mute.Addr().String()} {
		go func() {
			_, err := c.Invoke(context.Background(), addr, request(remoting.HeartBeat, "x"))
			errs <- err
		}()
	}
	<-entered
	testutil.WaitFor(t, 0, "call to the mute address pending", func() bool { return c.pendingLen(mute.Addr().String()) == 1 })
	start := time.Now()
	resp, err := c.Invoke(context.Background(), live.addr, request(remoting.HeartBeat, "live"))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "live")
	if d := time.Since(start); d > 10*time.Second { // the hanging dial lasts a minute
		t.Fatalf("live call took %v", d)
	}
	if len(entered) != 0 {
		t.Fatal("two callers of one address dialed twice")
	}
	// Close aborts the hanging dial and fails everything.
	c.Close()
	for range 3 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v, want ErrClosed", err)
		}
	}
}

func TestDialFailureSharedAndRetried(t *testing.T) {
	s := startServer(t, nil, echo)
	var dials atomic.Int32
	gate := make(chan struct{})
	base := defaultConfig().dial
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			<-gate
			return nil, errors.New("connection refused (scripted)")
		}
		return base(ctx, network, addr)
	}
	c := newClient(t, WithDialer(dial))
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x"))
			errs <- err
		}()
	}
	testutil.WaitFor(t, 0, "all callers waiting on one dial", func() bool {
		e := (*c.conns.Load())[s.addr]
		return e != nil && e.waiters.Load() == n
	})
	close(gate)
	for range n {
		err := <-errs
		if !errors.Is(err, ErrDial) || !remoting.IsRetriable(err) || !strings.Contains(err.Error(), s.addr) || !strings.Contains(err.Error(), "scripted") {
			t.Fatalf("error %v: want retriable ErrDial with addr and cause", err)
		}
	}
	resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, resp, "ok")
	if d := dials.Load(); d != 2 {
		t.Fatalf("%d dials, want 2", d)
	}
}

func TestDialTimeoutRetriable(t *testing.T) {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c := newClient(t, WithDialer(dial), WithDialTimeout(20*time.Millisecond))
	_, err := c.Invoke(context.Background(), "nowhere:1", request(remoting.HeartBeat, "x"))
	if !errors.Is(err, ErrDial) || !remoting.IsRetriable(err) {
		t.Fatalf("error %v: want retriable ErrDial", err)
	}
}

func TestAsyncInflightBound(t *testing.T) {
	var mu sync.Mutex
	var held []*remoting.Command
	var heldConn *srvConn
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		mu.Lock()
		held = append(held, req)
		heldConn = sc
		mu.Unlock()
	})
	answerOne := func() {
		mu.Lock()
		defer mu.Unlock()
		heldConn.send(echoResponse(held[0]))
		held = held[1:]
	}
	heldLen := func() int { mu.Lock(); defer mu.Unlock(); return len(held) }
	done := make(chan error, 8)
	cb := func(resp *remoting.Command, err error) { done <- err }

	t.Run("fail-fast", func(t *testing.T) {
		c := newClient(t, WithMaxAsyncInflight(2, true))
		for range 2 {
			if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "x"), cb); err != nil {
				t.Fatal(err)
			}
		}
		err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "x"), cb)
		if !errors.Is(err, ErrTooManyInflight) {
			t.Fatalf("third call: %v, want ErrTooManyInflight", err)
		}
		testutil.WaitFor(t, 0, "two held", func() bool { return heldLen() == 2 })
		answerOne()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// The slot is free again.
		if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "x"), cb); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 0, "two held", func() bool { return heldLen() == 2 })
		answerOne()
		answerOne()
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("wait", func(t *testing.T) {
		c := newClient(t, WithMaxAsyncInflight(1, false))
		if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "x"), cb); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.InvokeAsync(ctx, s.addr, request(remoting.HeartBeat, "x"), cb); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrTooManyInflight) {
			t.Fatalf("cancelled wait: %v", err)
		}
		accepted := make(chan error, 1)
		go func() {
			accepted <- c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "x"), cb)
		}()
		testutil.WaitFor(t, 0, "one held", func() bool { return heldLen() == 1 })
		select {
		case err := <-accepted:
			t.Fatalf("second call accepted while the first is in flight: %v", err)
		case <-time.After(30 * time.Millisecond):
		}
		answerOne()
		if err := <-accepted; err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 0, "one held", func() bool { return heldLen() == 1 })
		answerOne()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestFrameLimits(t *testing.T) {
	t.Run("outgoing", func(t *testing.T) {
		s := startServer(t, nil, echo)
		c := newClient(t, WithMaxFrameSize(1024))
		_, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, strings.Repeat("x", 2000)))
		if !errors.Is(err, remoting.ErrFrameTooLarge) {
			t.Fatalf("error %v, want ErrFrameTooLarge", err)
		}
		if n := c.pendingLen(s.addr); n != 0 {
			t.Fatalf("%d pending after a refused frame", n)
		}
		resp, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "small"))
		if err != nil {
			t.Fatal(err)
		}
		checkEcho(t, resp, "small")
	})
	t.Run("incoming", func(t *testing.T) {
		s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
			resp := echoResponse(req)
			resp.Body = make([]byte, 4096)
			sc.send(resp)
		})
		c := newClient(t, WithMaxFrameSize(1024))
		_, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x"))
		if !errors.Is(err, ErrConnClosed) || !errors.Is(err, remoting.ErrFrameTooLarge) {
			t.Fatalf("error %v, want ErrConnClosed caused by ErrFrameTooLarge", err)
		}
	})
}

func TestIdleTimeout(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t, WithIdleTimeout(40*time.Millisecond))
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "idle close", func() bool { return !c.Connected(s.addr) })
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "x")); err != nil {
		t.Fatal(err)
	}
	if s.accepted.Load() != 2 {
		t.Fatalf("%d connections, want 2", s.accepted.Load())
	}
}

func TestCloseWaitsForGoroutines(t *testing.T) {
	s1 := startServer(t, nil, echo)
	s2 := startServer(t, nil, silent)
	base := runtime.NumGoroutine()

	c, err := New(WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	handlerIn := make(chan struct{})
	c.RegisterHandler(remoting.GetConsumerRunningInfo, func(ctx context.Context, addr string, req *remoting.Command) *remoting.Command {
		close(handlerIn)
		<-ctx.Done() // ends only when the client closes
		return nil
	})
	if _, err := c.Invoke(context.Background(), s1.addr, request(remoting.HeartBeat, "x")); err != nil {
		t.Fatal(err)
	}
	s1.conn(0).send(&remoting.Command{Code: remoting.GetConsumerRunningInfo, Opaque: 5})
	<-handlerIn
	release := make(chan struct{})
	cbErr := make(chan error, 1)
	if err := c.InvokeAsync(context.Background(), s2.addr, request(remoting.HeartBeat, "x"), func(_ *remoting.Command, err error) {
		cbErr <- err
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "async pending", func() bool { return c.pendingLen(s2.addr) == 1 })
	if runtime.NumGoroutine() <= base {
		t.Fatal("client started no goroutines?")
	}

	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	if err := <-cbErr; !errors.Is(err, ErrClosed) {
		t.Fatalf("pending async call: %v, want ErrClosed", err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a callback was still running")
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	// Close waited for its own goroutines; the servers' connection
	// goroutines end when they see EOF.
	testutil.WaitFor(t, 0, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
	if _, err := c.Invoke(context.Background(), s1.addr, request(remoting.HeartBeat, "x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Invoke after Close: %v", err)
	}
	if err := c.InvokeAsync(context.Background(), s1.addr, request(remoting.HeartBeat, "x"), func(*remoting.Command, error) {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("InvokeAsync after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		opt  Option
	}{
		{"timeout", WithTimeout(0)},
		{"dial-timeout", WithDialTimeout(-1)},
		{"frame", WithMaxFrameSize(10)},
		{"serialize", WithSerializeType(7)},
		{"async", WithMaxAsyncInflight(0, false)},
		{"handlers", WithMaxHandlers(0)},
		{"idle", WithIdleTimeout(-time.Second)},
		{"dialer", WithDialer(nil)},
		{"timeout-close", WithTimeoutClose(CloseNever + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opt); err == nil {
				t.Fatal("New accepted an invalid option")
			}
		})
	}
}
