package producer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestShutdownFromCallback: a SendAsync callback that shuts the producer
// down gets its answer, and the producer is left stopped, not blocked: a
// later Send fails with ErrNotStarted at once.
func TestShutdownFromCallback(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
	}{
		{"transport callback", nil},
		{"with interceptors", []Option{WithInterceptors(func(ctx context.Context, _ *SendInfo, next Invoker) (*rocketmq.SendResult, error) {
			return next(ctx)
		})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			p := c.producer(t, tc.opts...)
			shut := make(chan error, 1)
			err := p.SendAsync(context.Background(), func(_ *rocketmq.SendResult, err error) {
				if err != nil {
					shut <- err
					return
				}
				shut <- p.Shutdown(context.Background())
			}, &rocketmq.Message{Topic: "T", Body: []byte("x")})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-shut:
				if err != nil {
					t.Fatalf("Shutdown from the callback: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Shutdown called from a SendAsync callback did not return")
			}
			sent := make(chan error, 1)
			go func() {
				_, err := p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("y")})
				sent <- err
			}()
			select {
			case err := <-sent:
				if !errors.Is(err, ErrNotStarted) {
					t.Fatalf("Send after Shutdown: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Send after a Shutdown from a callback blocked")
			}
			if err := p.Shutdown(context.Background()); !errors.Is(err, ErrNotStarted) {
				t.Fatalf("second Shutdown: %v", err)
			}
		})
	}
}

// TestSendFromCallbackDuringShutdown: a callback that sends while another
// goroutine shuts the producer down gets ErrNotStarted, and Shutdown
// returns.
func TestSendFromCallbackDuringShutdown(t *testing.T) {
	c := newCluster(t)
	hold := make(chan struct{})
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
	p := c.producer(t)
	inCb := make(chan error, 1)
	err := p.SendAsync(context.Background(), func(_ *rocketmq.SendResult, err error) {
		_, err2 := p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("y")})
		inCb <- err2
	}, &rocketmq.Message{Topic: "T", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "send held", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.sends) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want the ctx error (the send was cut short)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	close(hold)
	select {
	case err := <-inCb:
		if !errors.Is(err, ErrNotStarted) {
			t.Fatalf("Send from the callback during Shutdown: %v", err)
		}
	default:
		t.Fatal("the callback had not run when Shutdown returned")
	}
}
