package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/store"
)

// Placeholder; the pull/offsets helper replaces this file.

type pullHold struct{ b *Broker }

func newPullHold(b *Broker) *pullHold             { return &pullHold{b: b} }
func (h *pullHold) notify(ev store.DispatchEvent) {}
func (h *pullHold) run(ctx context.Context)       {}
func (h *pullHold) close()                        {}
func (b *Broker) registerPullHandlers()           {}
