package producer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestFaultTable(t *testing.T) {
	cfg := defaultConfig()
	f := newFaultStrategy(true, cfg.latencyMax, cfg.notAvailable, nil)
	ms := time.Millisecond
	for _, tc := range []struct{ latency, want time.Duration }{
		{0, 0}, {49 * ms, 0}, {100 * ms, 0}, {549 * ms, 0}, {550 * ms, 2000 * ms}, {1799 * ms, 2000 * ms},
		{1800 * ms, 5000 * ms}, {3000 * ms, 6000 * ms}, {5000 * ms, 10000 * ms}, {isolationLatency, 10000 * ms},
		{15000 * ms, 30000 * ms}, {time.Minute, 30000 * ms},
	} {
		if got := f.notAvailableFor(tc.latency); got != tc.want {
			t.Errorf("latency %v: %v, want %v", tc.latency, got, tc.want)
		}
	}
}

func TestFaultStrategyWindow(t *testing.T) {
	cfg := defaultConfig()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	f := newFaultStrategy(true, cfg.latencyMax, cfg.notAvailable, clk.now)
	queues := fakeRoute("T", 4, "broker-a", "broker-b").Queues
	idx := atomic.NewUint32(0)

	f.update("broker-a", 20*time.Millisecond, true, false) // timed out
	for i := 0; i < 40; i++ {
		if q := f.selectQueue(queues, idx, ""); q.BrokerName != "broker-b" {
			t.Fatalf("picked %v inside the window", q)
		}
	}
	// The window keeps the later deadline: a short slow call does not shorten it.
	f.update("broker-a", 600*time.Millisecond, false, true)
	clk.add(9 * time.Second)
	if f.available("broker-a") {
		t.Fatal("available before the 10 s window ended")
	}
	clk.add(time.Second)
	seen := map[string]bool{}
	for i := 0; i < 8; i++ {
		seen[f.selectQueue(queues, idx, "").BrokerName] = true
	}
	if !seen["broker-a"] || !seen["broker-b"] {
		t.Fatalf("after the window: %v", seen)
	}
	// Everything unavailable: prefer reachable brokers, else anything.
	f.update("broker-a", 0, true, false)
	f.update("broker-b", 0, true, true)
	for i := 0; i < 8; i++ {
		if q := f.selectQueue(queues, idx, ""); q.BrokerName != "broker-b" {
			t.Fatalf("picked unreachable %v", q)
		}
	}
	f.update("broker-b", 0, true, false)
	if q := f.selectQueue(queues, idx, ""); q.BrokerName == "" {
		t.Fatal("no queue when every broker is down")
	}
	// Disabled: updates are ignored.
	off := newFaultStrategy(false, cfg.latencyMax, cfg.notAvailable, clk.now)
	off.update("broker-a", 0, true, false)
	if !off.available("broker-a") {
		t.Fatal("disabled strategy recorded a fault")
	}
}

// TestFaultStrategyThroughSends drives the producer: a broker that times
// out is avoided by later sends for the window, then used again.
func TestFaultStrategyThroughSends(t *testing.T) {
	env := newMockProducer(t, nil)
	clk := &fakeClock{t: time.Unix(1000, 0)}
	env.p.fault.now = clk.now
	var mu sync.Mutex
	var used []string
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, addr string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			mu.Lock()
			defer mu.Unlock()
			used = append(used, addr)
			if addr == "addr-broker-a" && clk.now().Before(time.Unix(1005, 0)) {
				return nil, timeoutErr{}
			}
			return okResp(remoting.Success, 0, 0), nil
		}).AnyTimes()
	ctx := context.Background()
	send := func() {
		if _, err := env.p.Send(ctx, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	for len(used) == 0 || used[0] != "addr-broker-a" {
		used = nil
		send() // until a send hits broker-a first and fails over
	}
	if len(used) != 2 || used[1] != "addr-broker-b" {
		t.Fatalf("failover %v", used)
	}
	used = nil
	for i := 0; i < 20; i++ {
		send()
	}
	for _, a := range used {
		if a == "addr-broker-a" {
			t.Fatalf("broker-a used inside its window: %v", used)
		}
	}
	clk.add(10 * time.Second)
	used = nil
	for i := 0; i < 8; i++ {
		send()
	}
	n := 0
	for _, a := range used {
		if a == "addr-broker-a" {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("broker-a not tried again after the window: %v", used)
	}
}
