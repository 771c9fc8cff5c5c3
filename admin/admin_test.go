package admin

import (
	"context"
	"errors"
	"testing"
)

// TestLifecycle: calls before Start and after Close fail with the
// sentinels, without dialing anything; Close is idempotent and Start after
// Close fails.
func TestLifecycle(t *testing.T) {
	// Nothing listens on port 1: a call that dialed would fail otherwise.
	a, err := New(WithNameServers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := map[string]func() error{
		"ClusterInfo": func() error { _, err := a.ClusterInfo(ctx); return err },
		"Topics":      func() error { _, err := a.Topics(ctx); return err },
		"TopicRoute":  func() error { _, err := a.TopicRoute(ctx, "T"); return err },
		"CreateTopic": func() error { return a.CreateTopic(ctx, "127.0.0.1:1", TopicConfig{Name: "T"}) },
		"ConsumeStats": func() error {
			_, err := a.ConsumeStats(ctx, "G", "T")
			return err
		},
		"DeleteGroup": func() error { return a.DeleteGroup(ctx, "127.0.0.1:1", "G", false) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrNotStarted) {
			t.Errorf("%s before Start: %v", name, err)
		}
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if err := a.Start(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}
