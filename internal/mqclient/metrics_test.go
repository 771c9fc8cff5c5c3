package mqclient

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/metrics"
)

type connHook struct {
	metrics.Nop
	mu     sync.Mutex
	events []string
}

func (h *connHook) Conn(addr string, e metrics.ConnEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, addr+" "+e.String())
}

// The wrapped dialer reports a dial that failed, one that worked, and the
// connection's close once however often Close is called.
func TestMeasuredDialer(t *testing.T) {
	refused := errors.New("refused")
	var peers []net.Conn
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		if addr == "bad:1" {
			return nil, refused
		}
		a, b := net.Pipe()
		peers = append(peers, b)
		return a, nil
	}
	t.Cleanup(func() {
		for _, p := range peers {
			p.Close()
		}
	})
	h := &connHook{}
	d := measuredDialer(dial, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := d(ctx, "tcp", "bad:1"); !errors.Is(err, refused) {
		t.Fatalf("dial bad: %v", err)
	}
	c, err := d(ctx, "tcp", "good:1")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	want := []string{"bad:1 dial_failed", "good:1 connected", "good:1 closed"}
	if len(h.events) != len(want) {
		t.Fatalf("events %q, want %q", h.events, want)
	}
	for i := range want {
		if h.events[i] != want[i] {
			t.Fatalf("events %q, want %q", h.events, want)
		}
	}
	// Without a hook the dialer is the one given.
	if c, err := measuredDialer(dial, nil)(ctx, "tcp", "x:1"); err != nil {
		t.Fatal(err)
	} else if _, wrapped := c.(*measuredConn); wrapped {
		t.Fatal("a dialer without a hook wraps its connections")
	}
}
