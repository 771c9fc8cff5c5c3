package transport

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestAsyncExpiry: an async call that gets no answer is completed once by
// its timeout or its ctx, with the same errors as a sync call, its slot is
// freed, and a late answer is dropped.
func TestAsyncExpiry(t *testing.T) {
	var held atomic.Pointer[remoting.Command]
	var conn atomic.Pointer[srvConn]
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		if string(req.Body) == "hold" {
			held.Store(req)
			conn.Store(sc)
			return
		}
		echo(sc, req)
	})
	tests := []struct {
		name      string
		timeout   time.Duration
		ctx       func() (context.Context, context.CancelFunc)
		cancelNow bool
		want      []error
	}{
		{"client-timeout", 30 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, false, []error{ErrTimeout}},
		{"ctx-deadline", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond)
		}, false, []error{ErrTimeout, context.DeadlineExceeded}},
		{"ctx-cancel", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true, []error{context.Canceled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, WithTimeout(tt.timeout), WithMaxAsyncInflight(1, true))
			// Only the held call meets the short timeout: the others get a
			// minute, however loaded the machine.
			if _, err := c.InvokeTimeout(context.Background(), s.addr, request(remoting.HeartBeat, "dial"), time.Minute); err != nil {
				t.Fatal(err)
			}
			held.Store(nil)
			ctx, cancel := tt.ctx()
			defer cancel()
			var calls atomic.Int32
			done := make(chan error, 2)
			err := c.InvokeAsync(ctx, s.addr, request(remoting.HeartBeat, "hold"), func(resp *remoting.Command, err error) {
				calls.Add(1)
				done <- err
			})
			if err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 0, "request at the server", func() bool { return held.Load() != nil })
			if tt.cancelNow {
				cancel()
			}
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("callback not called")
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Fatalf("error %v is not %v", err, w)
				}
			}
			if n := c.pendingLen(s.addr); n != 0 {
				t.Fatalf("%d calls left pending", n)
			}
			// A late answer is dropped; the slot is free for the next call.
			conn.Load().send(echoResponse(held.Load()))
			if err := c.InvokeAsyncTimeout(context.Background(), s.addr, request(remoting.HeartBeat, "next"), time.Minute, func(resp *remoting.Command, err error) {
				done <- err
			}); err != nil {
				t.Fatalf("slot not freed: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("callback called %d times", n)
			}
		})
	}
}

// TestAsyncDialFailure: a call to an address that cannot be dialed is
// accepted and fails through its callback.
func TestAsyncDialFailure(t *testing.T) {
	c := newClient(t, WithDialTimeout(time.Second))
	done := make(chan error, 1)
	if err := c.InvokeAsync(context.Background(), "127.0.0.1:1", request(remoting.HeartBeat, "x"), func(_ *remoting.Command, err error) {
		done <- err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrDial) {
			t.Fatalf("error %v, want ErrDial", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("callback not called")
	}
}

// TestAsyncBlockedCallback: a callback that blocks does not hold up the
// callbacks of other calls (a worker is added when callbacks stall).
func TestAsyncBlockedCallback(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	if _, err := c.Invoke(context.Background(), s.addr, request(remoting.HeartBeat, "dial")); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	inFirst := make(chan struct{})
	if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "1"), func(*remoting.Command, error) {
		close(inFirst)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-inFirst
	second := make(chan error, 1)
	if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "2"), func(_ *remoting.Command, err error) {
		second <- err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second callback held up by the first")
	}
}

// TestAsyncWorkersShrinkAfterStalls: the workers added while callbacks
// stalled leave once the stall is over.
func TestAsyncWorkersShrinkAfterStalls(t *testing.T) {
	s := startServer(t, nil, echo)
	c := newClient(t)
	for i := range 5 {
		release, inFirst, second := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "1"), func(*remoting.Command, error) {
			close(inFirst)
			<-release
		}); err != nil {
			t.Fatal(err)
		}
		<-inFirst
		if err := c.InvokeAsync(context.Background(), s.addr, request(remoting.HeartBeat, "2"), func(_ *remoting.Command, err error) {
			second <- err
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-second:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("stall %d: second callback held up by the first", i)
		}
		close(release)
	}
	workers := func() int {
		c.async.mu.Lock()
		defer c.async.mu.Unlock()
		return c.async.workers
	}
	if !testutil.Poll(5*time.Second, func() bool { return workers() <= 1 }) {
		t.Fatalf("%d workers left after the stalls ended, want at most 1", workers())
	}
}

// TestAsyncSweeperRestarts: the sweeper stops when no async call is in
// flight and starts again with the next one, whose timeout still works.
func TestAsyncSweeperRestarts(t *testing.T) {
	s := startServer(t, nil, func(sc *srvConn, req *remoting.Command) {
		if string(req.Body) != "hold" {
			echo(sc, req)
		}
	})
	c := newClient(t, WithTimeout(50*time.Millisecond))
	done := make(chan error, 1)
	cb := func(_ *remoting.Command, err error) { done <- err }
	for _, body := range []string{"a", "hold"} {
		testutil.WaitFor(t, 0, "sweeper to stop", func() bool { return !c.async.sweeping.Load() })
		// The answered call gets a minute, however loaded the machine; the
		// held one meets the client's 50 ms.
		invoke := func(ctx context.Context, addr string, req *remoting.Command, cb func(*remoting.Command, error)) error {
			return c.InvokeAsyncTimeout(ctx, addr, req, time.Minute, cb)
		}
		if body == "hold" {
			invoke = c.InvokeAsync
		}
		if err := invoke(context.Background(), s.addr, request(remoting.HeartBeat, body), cb); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: callback not called", body)
		}
		if body == "hold" && !errors.Is(err, ErrTimeout) {
			t.Fatalf("held call: %v, want ErrTimeout", err)
		} else if body != "hold" && err != nil {
			t.Fatal(err)
		}
	}
}
