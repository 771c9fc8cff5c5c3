package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

func TestGoroutinesWaitFromInside(t *testing.T) {
	var g Goroutines
	release := make(chan struct{})
	inner := make(chan struct{})
	g.Go(func() { <-release }) // another goroutine Wait must wait for
	g.Go(func() {
		g.Wait() // from inside: waits for the other one, not for itself
		close(inner)
	})
	select {
	case <-inner:
		t.Fatal("Wait returned before the other goroutine ended")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-inner:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait from inside a counted goroutine did not return")
	}
	g.Wait() // from outside: everything has ended or is ending
}

func TestGoid(t *testing.T) {
	a := goid()
	if a == 0 || goid() != a {
		t.Fatalf("goid %d unstable", a)
	}
	ch := make(chan uint64)
	go func() { ch <- goid() }()
	if b := <-ch; b == a || b == 0 {
		t.Fatalf("goid of another goroutine %d, ours %d", b, a)
	}
}

// TestCloseFromCallback: a callback and a handler may close their client;
// Close returns, and a second call fails with ErrClosed.
func TestCloseFromCallback(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, c *Client, s *fakeServer, closeNow func())
	}{
		{"async callback", func(t *testing.T, c *Client, s *fakeServer, closeNow func()) {
			err := c.InvokeAsync(context.Background(), s.addr, remoting.NewRequest(10, nil, nil), func(*remoting.Command, error) { closeNow() })
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"handler", func(t *testing.T, c *Client, s *fakeServer, closeNow func()) {
			c.RegisterHandler(40, func(context.Context, string, *remoting.Command) *remoting.Command {
				closeNow()
				return nil
			})
			if _, err := c.Invoke(context.Background(), s.addr, remoting.NewRequest(10, nil, nil)); err != nil {
				t.Fatal(err)
			}
			req := remoting.NewRequest(40, nil, nil)
			req.Flag |= remoting.FlagOneway
			if err := s.conn(0).send(req); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, nil, echo)
			c, err := New()
			if err != nil {
				t.Fatal(err)
			}
			closed := make(chan error, 1)
			tc.run(t, c, s, func() { closed <- c.Close() })
			select {
			case err := <-closed:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close called from inside the client did not return")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Invoke(context.Background(), s.addr, remoting.NewRequest(10, nil, nil)); !errors.Is(err, ErrClosed) {
				t.Fatalf("call after Close: %v", err)
			}
		})
	}
}
