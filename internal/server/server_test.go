package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

func TestRoundTrip(t *testing.T) {
	addr := echoServer(t, Config{})
	c := rawframe.Dial(t, addr)
	for i, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		t.Run(strconv.Itoa(int(st)), func(t *testing.T) {
			c.ReportTo(t)
			r := req(codeEcho, int32(100+i), st, "hello "+strconv.Itoa(i))
			resp := c.CallNext(r)
			if resp.Serialize != st {
				t.Errorf("response serialize type %d, want the request's %d", resp.Serialize, st)
			}
			if resp.Code != remoting.Success {
				t.Errorf("code %d, want SUCCESS", resp.Code)
			}
			if resp.IsOneway() {
				t.Errorf("response has the oneway flag: %#x", resp.Flag)
			}
			hexDiff(t, "body", resp.Body, r.Body)
			if v, _ := resp.Ext.Get("k"); v != "v" {
				t.Errorf("ext k = %q, want v", v)
			}
		})
	}
}

func TestFraming(t *testing.T) {
	addr := echoServer(t, Config{})

	t.Run("many frames in one write", func(t *testing.T) {
		c := rawframe.Dial(t, addr)
		const n = 3*maxFramesPerEvent + 7 // more than one event's cap
		var all []byte
		for i := range n {
			st := remoting.SerializeType(i % 2)
			all = append(all, rawframe.Frame(t, req(codeEcho, int32(i+1), st, strconv.Itoa(i)))...)
		}
		c.Write(all)
		seen := make(map[int32]bool)
		for range n {
			resp := c.Read()
			i := resp.Opaque - 1
			if i < 0 || i >= n || seen[resp.Opaque] {
				t.Fatalf("unexpected or repeated opaque %d", resp.Opaque)
			}
			seen[resp.Opaque] = true
			if string(resp.Body) != strconv.Itoa(int(i)) {
				t.Errorf("opaque %d: body %q", resp.Opaque, resp.Body)
			}
			if resp.Serialize != remoting.SerializeType(i%2) {
				t.Errorf("opaque %d: serialize %d", resp.Opaque, resp.Serialize)
			}
		}
	})

	t.Run("frame split byte by byte", func(t *testing.T) {
		c := rawframe.Dial(t, addr)
		for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
			r := req(codeEcho, 7, st, "split me")
			for _, b := range rawframe.Frame(t, r) {
				c.Write([]byte{b})
			}
			resp := c.Read()
			if resp.Opaque != 7 || string(resp.Body) != "split me" {
				t.Fatalf("got opaque %d body %q", resp.Opaque, resp.Body)
			}
		}
	})

	t.Run("every split point as two writes", func(t *testing.T) {
		c := rawframe.Dial(t, addr)
		f := rawframe.Frame(t, req(codeEcho, 9, remoting.SerializeRocketMQ, "two writes"))
		for cut := 1; cut < len(f); cut++ {
			c.Write(f[:cut])
			c.Write(f[cut:])
			if resp := c.Read(); resp.Opaque != 9 {
				t.Fatalf("cut %d: opaque %d", cut, resp.Opaque)
			}
		}
	})

	t.Run("large frame", func(t *testing.T) {
		c := rawframe.Dial(t, addr)
		body := strings.Repeat("x", 3<<20) // spans many reads
		resp := c.CallNext(req(codeEcho, 11, remoting.SerializeJSON, body))
		if len(resp.Body) != len(body) {
			t.Fatalf("body %d bytes, want %d", len(resp.Body), len(body))
		}
	})
}

func TestUnknownCode(t *testing.T) {
	addr := echoServer(t, Config{})
	c := rawframe.Dial(t, addr)
	for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		resp := c.CallNext(req(codeUnknown, 5, st, ""))
		if resp.Code != remoting.RequestCodeNotSupported {
			t.Errorf("code %d, want REQUEST_CODE_NOT_SUPPORTED", resp.Code)
		}
		if want := " request type 9999 not supported"; resp.Remark != want {
			t.Errorf("remark %q, want %q", resp.Remark, want)
		}
		if resp.Serialize != st {
			t.Errorf("serialize %d, want %d", resp.Serialize, st)
		}
		// The connection is still served.
		if resp := c.CallNext(req(codeEcho, 6, st, "after")); string(resp.Body) != "after" {
			t.Errorf("echo after unknown code: %q", resp.Body)
		}
	}
}

func TestHandleDefault(t *testing.T) {
	s := New(Config{})
	s.HandleDefault(func(_ context.Context, _ *Conn, r *remoting.Command) *remoting.Command {
		return remoting.NewResponse(remoting.Success, "default "+strconv.Itoa(int(r.Code)))
	})
	c := rawframe.Dial(t, startServer(t, s))
	if resp := c.CallNext(req(codeUnknown, 1, remoting.SerializeJSON, "")); resp.Remark != "default 9999" {
		t.Errorf("remark %q", resp.Remark)
	}
}

func TestOnewayGetsNoReply(t *testing.T) {
	for _, code := range []int32{codeEcho, codeUnknown} {
		t.Run(strconv.Itoa(int(code)), func(t *testing.T) {
			called := make(chan int32, 1)
			s := New(Config{})
			s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
				if r.IsOneway() {
					called <- r.Opaque
				}
				return echo(ctx, c, r)
			})
			c := rawframe.Dial(t, startServer(t, s))
			ow := req(code, 1, remoting.SerializeJSON, "oneway")
			ow.Flag |= remoting.FlagOneway
			c.Send(ow)
			if code == codeEcho {
				if op := recv(t, called, "oneway handler"); op != 1 {
					t.Fatalf("handler saw opaque %d", op)
				}
			}
			// The next frame must answer the normal request, not the oneway one.
			if resp := c.CallNext(req(codeEcho, 2, remoting.SerializeJSON, "normal")); string(resp.Body) != "normal" {
				t.Errorf("body %q", resp.Body)
			}
		})
	}
}

func TestBadFrameClosesOnlyThatConn(t *testing.T) {
	good := rawframe.Frame(t, req(codeEcho, 1, remoting.SerializeJSON, "x"))
	badType := append([]byte(nil), good...)
	badType[4] = 7 // serialize type byte of the header word
	negative := binary.BigEndian.AppendUint32(nil, 0x80000000)
	oversized := binary.BigEndian.AppendUint32(nil, 1<<20)
	tooShort := binary.BigEndian.AppendUint32(nil, 2)
	headerTooLong := binary.BigEndian.AppendUint32(nil, 8)
	headerTooLong = binary.BigEndian.AppendUint32(headerTooLong, 1<<24|100)
	headerTooLong = append(headerTooLong, 0, 0, 0, 0)

	tests := []struct {
		name string
		raw  []byte
	}{
		{"bad serialize type", badType},
		{"negative length", negative},
		{"oversized length", oversized},
		{"length below 4", tooShort},
		{"header longer than frame", headerTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &testlog.Buffer{}
			addr := echoServer(t, Config{Logger: logs.Logger(), MaxFrameSize: 64 << 10})
			other := rawframe.Dial(t, addr)
			other.CallNext(req(codeEcho, 1, remoting.SerializeRocketMQ, "before"))

			bad := rawframe.Dial(t, addr)
			bad.Write(tt.raw)
			bad.ExpectClosed(5 * time.Second)
			testutil.WaitFor(t, 0, "bad frame log", func() bool { return strings.Contains(logs.String(), "bad frame") })

			if resp := other.CallNext(req(codeEcho, 2, remoting.SerializeRocketMQ, "after")); string(resp.Body) != "after" {
				t.Errorf("other connection: body %q", resp.Body)
			}
			third := rawframe.Dial(t, addr)
			third.CallNext(req(codeEcho, 3, remoting.SerializeJSON, "new"))
		})
	}
}

func TestInvoke(t *testing.T) {
	newServer := func(t *testing.T, cfg Config) (*rawframe.Conn, *Conn) {
		opened := make(chan *Conn, 1)
		s := New(cfg)
		s.OnConnOpen(func(c *Conn) { opened <- c })
		cl := rawframe.Dial(t, startServer(t, s))
		return cl, recv(t, opened, "OnConnOpen")
	}
	type result struct {
		resp *remoting.Command
		err  error
	}
	invoke := func(ctx context.Context, sc *Conn, r *remoting.Command) <-chan result {
		ch := make(chan result, 1)
		go func() {
			resp, err := sc.Invoke(ctx, r)
			ch <- result{resp, err}
		}()
		return ch
	}

	t.Run("answered", func(t *testing.T) {
		cl, sc := newServer(t, Config{})
		for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
			r := remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil)
			r.Serialize = st
			res := invoke(context.Background(), sc, r)
			got := cl.Read()
			if got.IsResponse() || got.IsOneway() || got.Code != remoting.GetConsumerRunningInfo || got.Serialize != st {
				t.Fatalf("client got code %d flag %#x serialize %d", got.Code, got.Flag, got.Serialize)
			}
			resp := remoting.NewResponse(remoting.Success, "info")
			resp.Opaque = got.Opaque
			resp.Serialize = got.Serialize
			cl.Send(resp)
			out := recv(t, res, "Invoke")
			if out.err != nil || out.resp.Remark != "info" || out.resp.Opaque != got.Opaque {
				t.Fatalf("Invoke = %+v, %v", out.resp, out.err)
			}
		}
		if r := remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil); r.Opaque != 0 || r.Flag != 0 {
			t.Fatal("sanity")
		}
	})

	t.Run("times out", func(t *testing.T) {
		cl, sc := newServer(t, Config{InvokeTimeout: 50 * time.Millisecond})
		res := invoke(context.Background(), sc, remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil))
		got := cl.Read()
		out := recv(t, res, "Invoke")
		if !errors.Is(out.err, ErrTimeout) || !errors.Is(out.err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTimeout", out.err)
		}
		// A late answer is dropped and the connection keeps working.
		late := remoting.NewResponse(remoting.Success, "late")
		late.Opaque = got.Opaque
		cl.Send(late)
		res = invoke(context.Background(), sc, remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil))
		got = cl.Read()
		ok := remoting.NewResponse(remoting.Success, "ok")
		ok.Opaque = got.Opaque
		cl.Send(ok)
		if out := recv(t, res, "Invoke"); out.err != nil || out.resp.Remark != "ok" {
			t.Fatalf("second Invoke = %+v, %v", out.resp, out.err)
		}
	})

	t.Run("fails when the client disconnects", func(t *testing.T) {
		cl, sc := newServer(t, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		res := invoke(ctx, sc, remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil))
		cl.Read()
		cl.NetConn().Close()
		out := recv(t, res, "Invoke")
		if !errors.Is(out.err, ErrConnClosed) {
			t.Fatalf("err = %v, want ErrConnClosed", out.err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v", d)
		}
		if _, err := sc.Invoke(ctx, remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil)); !errors.Is(err, ErrConnClosed) {
			t.Errorf("Invoke on closed conn: %v", err)
		}
		if err := sc.InvokeOneway(remoting.NewRequest(remoting.NotifyConsumerIDsChanged, nil, nil)); !errors.Is(err, ErrConnClosed) {
			t.Errorf("InvokeOneway on closed conn: %v", err)
		}
	})

	t.Run("oneway", func(t *testing.T) {
		cl, sc := newServer(t, Config{})
		r := remoting.NewRequest(remoting.NotifyConsumerIDsChanged, remoting.ExtFields{{Key: "consumerGroup", Value: "g"}}, nil)
		if err := sc.InvokeOneway(r); err != nil {
			t.Fatal(err)
		}
		got := cl.Read()
		if !got.IsOneway() || got.IsResponse() || got.Code != remoting.NotifyConsumerIDsChanged {
			t.Fatalf("got code %d flag %#x", got.Code, got.Flag)
		}
		if r.Flag != 0 || r.Opaque != 0 {
			t.Errorf("InvokeOneway modified its request: flag %#x opaque %d", r.Flag, r.Opaque)
		}
	})
}

func TestLongPollReplyLater(t *testing.T) {
	parked := make(chan heldReq, 1)
	s := New(Config{})
	s.Handle(remoting.PullMessage, func(_ context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		parked <- heldReq{c, r}
		return nil
	})
	s.Handle(codeEcho, echo)
	cl := rawframe.Dial(t, startServer(t, s))
	cl.Send(req(remoting.PullMessage, 42, remoting.SerializeRocketMQ, ""))
	h := recv(t, parked, "parked pull")

	// While the pull is parked the connection serves other requests.
	cl.CallNext(req(codeEcho, 43, remoting.SerializeJSON, "meanwhile"))

	if err := h.c.Reply(h.req, remoting.NewResponse(remoting.PullNotFound, "no new message")); err != nil {
		t.Fatal(err)
	}
	resp := cl.Read()
	if resp.Opaque != 42 || resp.Code != remoting.PullNotFound || !resp.IsResponse() || resp.Serialize != remoting.SerializeRocketMQ {
		t.Fatalf("got opaque %d code %d flag %#x serialize %d", resp.Opaque, resp.Code, resp.Flag, resp.Serialize)
	}
}

func TestBusy(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := New(Config{MaxHandlers: 1})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		entered <- struct{}{}
		<-release
		return echo(ctx, c, r)
	})
	cl := rawframe.Dial(t, startServer(t, s))
	cl.Send(req(codeEcho, 1, remoting.SerializeJSON, "slow"))
	recv(t, entered, "first handler")
	resp := cl.CallNext(req(codeEcho, 2, remoting.SerializeJSON, "rejected"))
	if resp.Code != remoting.SystemBusy || !strings.Contains(resp.Remark, "busy") {
		t.Fatalf("code %d remark %q, want SYSTEM_BUSY", resp.Code, resp.Remark)
	}
	close(release)
	if resp := cl.Read(); resp.Opaque != 1 || resp.Code != remoting.Success {
		t.Fatalf("first request: opaque %d code %d", resp.Opaque, resp.Code)
	}
	// Capacity is back.
	go func() { <-entered }()
	if resp := cl.CallNext(req(codeEcho, 3, remoting.SerializeJSON, "ok")); resp.Code != remoting.Success {
		t.Fatalf("after release: code %d", resp.Code)
	}
}

func TestHandlerPanic(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, func(context.Context, *Conn, *remoting.Command) *remoting.Command { panic("boom") })
	cl := rawframe.Dial(t, startServer(t, s))
	resp := cl.CallNext(req(codeEcho, 1, remoting.SerializeJSON, ""))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "boom") {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestConnState(t *testing.T) {
	opened := make(chan *Conn, 1)
	closed := make(chan *Conn, 1)
	s := New(Config{})
	s.OnConnOpen(func(c *Conn) { opened <- c })
	s.OnConnClose(func(c *Conn) { closed <- c })
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		if v := c.Value("clientID"); v != nil {
			return remoting.NewResponse(remoting.Success, v.(string))
		}
		c.SetValue("clientID", string(r.Body))
		return remoting.NewResponse(remoting.Success, "set")
	})
	addr := startServer(t, s)
	_, port, _ := net.SplitHostPort(addr)
	if port == "0" || port == "" {
		t.Fatalf("Addr() = %q, want the real port", addr)
	}
	cl := rawframe.Dial(t, addr)
	sc := recv(t, opened, "OnConnOpen")
	if got, want := sc.RemoteAddrPort().String(), cl.NetConn().LocalAddr().String(); got != want {
		t.Errorf("RemoteAddrPort %s, want %s", got, want)
	}
	if got, want := sc.LocalAddr().String(), cl.NetConn().RemoteAddr().String(); got != want {
		t.Errorf("LocalAddr %s, want %s", got, want)
	}
	cl.CallNext(req(codeEcho, 1, remoting.SerializeJSON, "client-1"))
	if resp := cl.CallNext(req(codeEcho, 2, remoting.SerializeJSON, "")); resp.Remark != "client-1" {
		t.Errorf("value %q", resp.Remark)
	}
	if sc.IsClosed() {
		t.Fatal("closed too early")
	}
	cl.NetConn().Close()
	if c := recv(t, closed, "OnConnClose"); c != sc {
		t.Fatalf("OnConnClose got conn %d, want %d", c.ID(), sc.ID())
	}
	recv(t, sc.Closed(), "Closed()")
	if sc.Context().Err() == nil {
		t.Error("conn context not cancelled")
	}
	if err := sc.Reply(req(codeEcho, 3, 0, ""), remoting.NewResponse(0, "")); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Reply on closed conn: %v", err)
	}

	// Server-initiated close.
	cl2 := rawframe.Dial(t, addr)
	sc2 := recv(t, opened, "OnConnOpen")
	if err := sc2.Close(); err != nil {
		t.Fatal(err)
	}
	cl2.ExpectClosed(5 * time.Second)
	recv(t, closed, "OnConnClose after Conn.Close")
}

func TestStartErrors(t *testing.T) {
	s := New(Config{})
	addr := startServer(t, s)
	if err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrServerStarted) {
		t.Errorf("second Start: %v", err)
	}
	s2 := New(Config{})
	err := s2.Start(addr)
	if err == nil {
		t.Error("Start on a port in use succeeded")
	}
	if err := s2.Close(context.Background()); err != nil {
		t.Errorf("Close after failed Start: %v", err)
	}
	s3 := New(Config{})
	if err := s3.Close(context.Background()); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	if err := s3.Start("127.0.0.1:0"); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}

func TestHandleAfterStartPanics(t *testing.T) {
	s := New(Config{})
	startServer(t, s)
	defer func() {
		if recover() == nil {
			t.Error("Handle after Start did not panic")
		}
	}()
	s.Handle(codeEcho, echo)
}

func TestCloseWaitsAndLeaksNothing(t *testing.T) {
	base := runtime.NumGoroutine()

	parked := make(chan *Conn, 1)
	handlerDone := make(chan struct{})
	closedConns := make(chan struct{}, 4)
	var mu sync.Mutex
	var invokeErr error
	invokeDone := make(chan struct{})

	s := New(Config{Multicore: true})
	s.OnConnClose(func(*Conn) { closedConns <- struct{}{} })
	s.Handle(codeEcho, echo)
	// A long-poll style handler that holds its goroutine until ctx ends.
	s.Handle(remoting.PullMessage, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		parked <- c
		<-ctx.Done()
		close(handlerDone)
		return remoting.NewResponse(remoting.PullNotFound, "server closing")
	})
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	c1 := rawframe.Dial(t, s.Addr())
	c2 := rawframe.Dial(t, s.Addr())
	c1.CallNext(req(codeEcho, 1, remoting.SerializeJSON, "x"))
	c2.Send(req(remoting.PullMessage, 2, remoting.SerializeRocketMQ, ""))
	sc := recv(t, parked, "parked handler")
	go func() {
		_, err := sc.Invoke(context.Background(), remoting.NewRequest(remoting.GetConsumerRunningInfo, nil, nil))
		mu.Lock()
		invokeErr = err
		mu.Unlock()
		close(invokeDone)
	}()
	if got := c2.Read(); got.Code != remoting.GetConsumerRunningInfo {
		t.Fatalf("client got code %d", got.Code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-handlerDone:
	default:
		t.Error("Close returned before the handler finished")
	}
	recv(t, invokeDone, "Invoke to fail")
	mu.Lock()
	if !errors.Is(invokeErr, ErrServerClosed) && !errors.Is(invokeErr, ErrConnClosed) {
		t.Errorf("pending Invoke: %v", invokeErr)
	}
	mu.Unlock()
	for range 2 {
		recv(t, closedConns, "OnConnClose on shutdown")
	}
	// The parked pull's answer was written before the connections closed.
	if resp := c2.Read(); resp.Opaque != 2 || resp.Code != remoting.PullNotFound {
		t.Errorf("parked pull answered with opaque %d code %d", resp.Opaque, resp.Code)
	}
	c1.ExpectClosed(5 * time.Second)
	c2.ExpectClosed(5 * time.Second)
	if err := sc.Reply(req(remoting.PullMessage, 9, 0, ""), remoting.NewResponse(0, "")); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Reply after Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	c1.NetConn().Close()
	c2.NetConn().Close()
	testutil.WaitFor(t, 0, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

func TestUnencodableResponse(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, func(context.Context, *Conn, *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Ext.Set(strings.Repeat("k", 40000), "v") // too long for a ROCKETMQ header
		return resp
	})
	cl := rawframe.Dial(t, startServer(t, s))
	resp := cl.CallNext(req(codeEcho, 1, remoting.SerializeRocketMQ, ""))
	if resp.Code != remoting.SystemError {
		t.Fatalf("code %d remark %q, want SYSTEM_ERROR", resp.Code, resp.Remark)
	}
}

func TestConcurrentClients(t *testing.T) {
	addr := echoServer(t, Config{Multicore: true})
	const clients, callers, calls = 4, 8, 100
	errs := make(chan error, clients*callers)
	var wg sync.WaitGroup
	for ci := range clients {
		p := newPipeClient(t, addr)
		for k := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ch := make(chan *remoting.Command, 1)
				for i := range calls {
					body := strconv.Itoa(ci) + "/" + strconv.Itoa(k) + "/" + strconv.Itoa(i)
					r := &remoting.Command{Code: codeEcho, Serialize: remoting.SerializeType(i % 2), Body: []byte(body)}
					resp, err := p.call(r, ch)
					if err != nil {
						errs <- err
						return
					}
					if string(resp.Body) != body || resp.Serialize != r.Serialize {
						errs <- errors.New("mismatched response " + string(resp.Body) + " for " + body)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// goroutineID parses the running goroutine's id from its stack header.
func goroutineID() string {
	var b [64]byte
	f := strings.Fields(string(b[:runtime.Stack(b[:], false)]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

func TestWorkersAreReused(t *testing.T) {
	var mu sync.Mutex
	ids := map[string]int{}
	s := New(Config{})
	s.Handle(codeEcho, func(ctx context.Context, c *Conn, r *remoting.Command) *remoting.Command {
		mu.Lock()
		ids[goroutineID()]++
		mu.Unlock()
		return echo(ctx, c, r)
	})
	cl := rawframe.Dial(t, startServer(t, s))
	const calls = 40
	for i := range calls {
		if resp := cl.CallNext(req(codeEcho, int32(i+1), remoting.SerializeJSON, "x")); resp.Code != remoting.Success {
			t.Fatalf("call %d: code %d", i, resp.Code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// One at a time, an idle worker is nearly always waiting for the next
	// request; a goroutine per request would give 40 distinct ids.
	if len(ids) > calls/2 {
		t.Errorf("%d sequential requests ran on %d goroutines", calls, len(ids))
	}
}

// TestWritesSurviveAFullSocket fills the socket while the client does not
// read, so writes move from the sending goroutine to gnet's buffer on the
// event loop and back: every frame must arrive whole and in order.
func TestWritesSurviveAFullSocket(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	cl, sc := dialConn(t, s)
	viaLoop := func() bool {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.viaLoop
	}

	const n, size = 200, 64 << 10
	body := make([]byte, size)
	for i := range n {
		r := remoting.NewRequest(codeEcho, nil, body)
		binary.BigEndian.PutUint32(body, uint32(i))
		if err := sc.InvokeOneway(r); err != nil {
			t.Fatalf("InvokeOneway %d: %v", i, err)
		}
	}
	if !viaLoop() {
		t.Fatal("12.8 MB to a client that does not read never filled the socket")
	}
	for i := range n {
		got, err := cl.ReadErr(10 * time.Second)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if len(got.Body) != size {
			t.Fatalf("frame %d: body of %d bytes", i, len(got.Body))
		}
		if seq := binary.BigEndian.Uint32(got.Body); seq != uint32(i) {
			t.Fatalf("frame %d carries sequence %d", i, seq)
		}
	}
	// gnet has drained its buffer: after the next write through the loop,
	// replies are written directly again.
	cl.CallNext(req(codeEcho, 1, remoting.SerializeJSON, "a"))
	testutil.WaitFor(t, 0, "direct writes again", func() bool { return !viaLoop() })
	if resp := cl.CallNext(req(codeEcho, 2, remoting.SerializeJSON, "b")); string(resp.Body) != "b" {
		t.Errorf("body %q after the switch back", resp.Body)
	}
}

// TestConcurrentLargeRepliesWholeAndTrimmed has several goroutines queue
// large frames on one connection while the client does not read, so they
// pile up behind a full socket in the server's big write buffers: every
// frame must arrive whole and each goroutine's in order, and once all is
// written the connection keeps no buffer above maxKeptBuffer.
func TestConcurrentLargeRepliesWholeAndTrimmed(t *testing.T) {
	s := New(Config{})
	s.Handle(codeEcho, echo)
	cl, sc := dialConn(t, s)

	const senders, each, size = 8, 40, 60 << 10
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := bytes.Repeat([]byte{byte(g*31 + i)}, size)
				binary.BigEndian.PutUint32(body, uint32(g))
				binary.BigEndian.PutUint32(body[4:], uint32(i))
				if err := sc.InvokeOneway(remoting.NewRequest(codeEcho, nil, body)); err != nil {
					t.Errorf("sender %d frame %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	next := make([]int, senders)
	for n := range senders * each {
		got, err := cl.ReadErr(10 * time.Second)
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		b := got.Body
		if len(b) != size {
			t.Fatalf("frame %d: body of %d bytes", n, len(b))
		}
		g, i := int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
		if g >= senders || i != next[g] {
			t.Fatalf("frame %d: sender %d frame %d, want that sender's frame %d", n, g, i, next[min(g, senders-1)])
		}
		next[g]++
		for j, c := range b[8:] {
			if c != byte(g*31+i) {
				t.Fatalf("sender %d frame %d: byte %d is %#x, want %#x", g, i, 8+j, c, byte(g*31+i))
			}
		}
	}
	cl.CallNext(req(codeEcho, 1, remoting.SerializeJSON, "a"))
	testutil.WaitFor(t, 0, "buffers trimmed after the burst", func() bool {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return !sc.viaLoop && !sc.writing && cap(sc.out) <= maxKeptBuffer && cap(sc.spare) <= maxKeptBuffer
	})
}
