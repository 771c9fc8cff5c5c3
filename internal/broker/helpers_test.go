package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/store"
)

// startBroker starts a broker with cfg; it is closed at cleanup (a second
// Close is a no-op, so tests may close or crash it themselves).
func startBroker(t testing.TB, cfg Config) *Broker {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := b.Start(); err != nil {
		b.Close(context.Background())
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("broker Close: %v", err)
		}
	})
	return b
}
