package producer

import (
	"context"
	"log/slog"
	"time"
)

// localKey makes a ctx derived from ExecuteLocal's find its local
// transaction, so that a Shutdown called with it does not wait for that
// call.
type localKey struct{}

// beginLocal counts a local transaction; the caller holds a send slot, so
// that Shutdown's wait for the slots orders it before waitLocals.
func (r *runState) beginLocal(ctx context.Context) *localCtx {
	r.locals.Inc()
	return &localCtx{Context: ctx, run: r.ctx}
}

// endLocal ends a local transaction once its decision went out.
func (r *runState) endLocal(lc *localCtx) {
	if r.detached.Load() == lc {
		return // no longer counted
	}
	r.doneLocal()
}

func (r *runState) doneLocal() {
	if r.locals.Dec() == 0 && r.waiting.Load() {
		r.localMu.Lock()
		if r.localsIdle != nil {
			close(r.localsIdle)
			r.localsIdle = nil
		}
		r.localMu.Unlock()
	}
}

// detachLocal stops counting the local transaction whose ExecuteLocal
// gave ctx, when ctx comes from one of this run still running: it is
// calling Shutdown. lc.mu orders this before release, and release comes
// before endLocal.
func (r *runState) detachLocal(ctx context.Context) {
	lc, _ := ctx.Value(localKey{}).(*localCtx)
	if lc == nil || lc.run != r.ctx {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.released {
		return // a ctx kept past ExecuteLocal: that call is no listener's now
	}
	if r.detached.CompareAndSwap(nil, lc) {
		r.doneLocal()
	}
}

// waitLocals waits for the local transactions in progress until ctx ends;
// then it cancels their contexts, waits at most shutdownGrace more and
// returns ctx's error. Calls still running are abandoned: their decisions
// fail on the closed client and the broker checks them later.
func (r *runState) waitLocals(ctx context.Context, log *slog.Logger, group string) error {
	idle := make(chan struct{})
	r.localMu.Lock()
	r.localsIdle = idle
	r.waiting.Store(true)
	r.localMu.Unlock()
	// A count reaching 0 before waiting was set is seen here; after, by
	// doneLocal.
	if r.locals.Load() == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
	}
	r.cancel()
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
		log.Warn("rocketmq: shutdown: a local transaction ignores its cancelled ctx; its outcome is dropped and the broker checks it", "group", group)
	}
	return ctx.Err()
}
