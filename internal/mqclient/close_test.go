package mqclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestCloseBoundedByCtx: Close lets a heartbeat in progress finish while
// ctx allows, then cancels it, and always returns.
func TestCloseBoundedByCtx(t *testing.T) {
	tests := []struct {
		name    string
		release time.Duration // when the broker answers the heartbeat
		ctx     time.Duration
		wantErr error
	}{
		{"heartbeat finishes within ctx", 100 * time.Millisecond, 10 * time.Second, nil},
		{"heartbeat cut short", time.Hour, 100 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			broker := fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
				if req.Code == remoting.HeartBeat {
					select {
					case <-time.After(tc.release):
					case <-stop:
					}
				}
				return remoting.NewResponse(remoting.Success, "")
			})
			t.Cleanup(func() { close(stop) })
			routes := map[string]*remoting.TopicRouteData{
				"T": route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}),
			}
			ns := fakepeer.New(t, namesrvHandler(routes))
			cfg := DefaultConfig()
			cfg.NameServers = []string{ns.Addr()}
			cfg.RequestTimeout = time.Hour
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.RegisterProducer("pg", nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.PublishInfo(context.Background(), "T", "", 4); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 5*time.Second, "heartbeat", func() bool { return broker.Count(remoting.HeartBeat) > 0 })
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.Close(ctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
					t.Fatalf("Close = %v, want %v", err, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not return")
			}
			if tc.wantErr == nil {
				if _, ok := c.BrokerVersion(broker.Addr()); !ok {
					t.Fatal("the heartbeat in progress was not let finish")
				}
			}
		})
	}
}
