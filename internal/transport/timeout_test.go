package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// answerAllBut is a peer that answers every request except those whose
// body is "slow", which it never answers.
func answerAllBut(sc *srvConn, req *remoting.Command) {
	if string(req.Body) != "slow" {
		echo(sc, req)
	}
}

// invokeSlow sends a request the peer never answers, with a short timeout,
// sync or async, and returns its error channel.
func invokeSlow(t *testing.T, c *Client, addr string, async bool) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	const timeout = 100 * time.Millisecond
	if async {
		if err := c.InvokeAsyncTimeout(context.Background(), addr, request(remoting.HeartBeat, "slow"), timeout,
			func(_ *remoting.Command, err error) { errc <- err }); err != nil {
			t.Fatal(err)
		}
		return errc
	}
	go func() {
		_, err := c.InvokeTimeout(context.Background(), addr, request(remoting.HeartBeat, "slow"), timeout)
		errc <- err
	}()
	return errc
}

// TestTimeoutClosesSilentConn: a timed-out call closes its connection as
// the mode says; a closed one is dialed again by the next call, a kept one
// is reused.
func TestTimeoutClosesSilentConn(t *testing.T) {
	tests := []struct {
		name       string
		mode       TimeoutClose
		async      bool
		alive      bool // another call is answered while the slow one waits
		wantClosed bool
	}{
		{"silent/sync", CloseSilent, false, false, true},
		{"silent/async", CloseSilent, true, false, true},
		{"alive/sync", CloseSilent, false, true, false},
		{"alive/async", CloseSilent, true, true, false},
		{"java/alive/sync", CloseAlways, false, true, true},
		{"java/alive/async", CloseAlways, true, true, false},
		{"java/silent/async", CloseAlways, true, false, true},
		{"never/silent/sync", CloseNever, false, false, false},
		{"never/silent/async", CloseNever, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, nil, answerAllBut)
			c := newClient(t, WithTimeout(time.Minute), WithTimeoutClose(tt.mode))
			echoCall(t, c, s.addr, "warm")
			errc := invokeSlow(t, c, s.addr, tt.async)
			if tt.alive {
				testutil.WaitFor(t, 0, "the slow call pending", func() bool { return c.pendingLen(s.addr) == 1 })
				echoCall(t, c, s.addr, "fast")
			}
			var err error
			select {
			case err = <-errc:
			case <-time.After(5 * time.Second):
				t.Fatal("the slow call did not time out")
			}
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("slow call: %v, want ErrTimeout", err)
			}
			if got := !c.Connected(s.addr); got != tt.wantClosed {
				t.Fatalf("connection closed = %v, want %v", got, tt.wantClosed)
			}
			echoCall(t, c, s.addr, "next")
			want := int32(1)
			if tt.wantClosed {
				want = 2
			}
			if n := s.accepted.Load(); n != want {
				t.Fatalf("%d connections, want %d", n, want)
			}
		})
	}
}

// TestSilentConnFailsPending: when a timeout closes a silent connection,
// the calls still pending on it fail at once with a retriable
// ErrConnClosed instead of waiting out their own (long-poll) timeouts.
func TestSilentConnFailsPending(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "async"}[async], func(t *testing.T) {
			s := startServer(t, nil, silent)
			c := newClient(t, WithTimeout(time.Minute))
			long := make(chan error, 2)
			go func() {
				_, err := c.InvokeTimeout(context.Background(), s.addr, request(remoting.PullMessage, "hold"), time.Minute)
				long <- err
			}()
			if err := c.InvokeAsyncTimeout(context.Background(), s.addr, request(remoting.PullMessage, "hold"), time.Minute,
				func(_ *remoting.Command, err error) { long <- err }); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 0, "two long calls pending", func() bool { return c.pendingLen(s.addr) == 2 })
			start := time.Now()
			if err := <-invokeSlow(t, c, s.addr, async); !errors.Is(err, ErrTimeout) {
				t.Fatalf("short call: %v, want ErrTimeout", err)
			}
			for range 2 {
				select {
				case err := <-long:
					if !errors.Is(err, ErrConnClosed) || !remoting.IsRetriable(err) || !strings.Contains(err.Error(), "nothing received") {
						t.Fatalf("pending call: %v, want a retriable ErrConnClosed saying nothing was received", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("a pending call of the closed connection did not fail")
				}
			}
			if d := time.Since(start); d > 10*time.Second { // their timeout is a minute
				t.Fatalf("pending calls failed after %v", d)
			}
		})
	}
}

// echoCall makes a call the peer answers and checks the answer.
func echoCall(t *testing.T, c *Client, addr, body string) {
	t.Helper()
	resp, err := c.Invoke(context.Background(), addr, request(remoting.HeartBeat, body))
	if err != nil {
		t.Fatalf("call %q: %v", body, err)
	}
	checkEcho(t, resp, body)
}

// TestCancelKeepsSilentConn: a call given up by its caller (ctx cancelled)
// says nothing about the peer and closes nothing.
func TestCancelKeepsSilentConn(t *testing.T) {
	s := startServer(t, nil, answerAllBut)
	c := newClient(t, WithTimeout(time.Minute))
	echoCall(t, c, s.addr, "warm")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, s.addr, request(remoting.HeartBeat, "slow"))
		errc <- err
	}()
	testutil.WaitFor(t, 0, "the slow call pending", func() bool { return c.pendingLen(s.addr) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v, want context.Canceled", err)
	}
	if !c.Connected(s.addr) {
		t.Fatal("a cancelled call closed its connection")
	}
	echoCall(t, c, s.addr, "next")
	if n := s.accepted.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

// TestReconnectHook: the hook hears a second connection to an address,
// not the first.
func TestReconnectHook(t *testing.T) {
	s := startServer(t, nil, answerAllBut)
	heard := make(chan string, 4)
	c := newClient(t, WithReconnectHook(func(addr string) { heard <- addr }))
	echoCall(t, c, s.addr, "first")
	select {
	case a := <-heard:
		t.Fatalf("hook called for the first connection to %s", a)
	default:
	}
	c.CloseConn(s.addr)
	testutil.WaitFor(t, 0, "the connection closed", func() bool { return !c.Connected(s.addr) })
	echoCall(t, c, s.addr, "again")
	select {
	case a := <-heard:
		if a != s.addr {
			t.Fatalf("hook heard %s, want %s", a, s.addr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hook not called for the second connection")
	}
}
