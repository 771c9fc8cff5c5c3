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
	r.localMu.Lock()
	r.locals++
	r.localMu.Unlock()
	return &localCtx{Context: ctx, run: r.ctx}
}

// endLocal ends a local transaction once its decision went out.
func (r *runState) endLocal(lc *localCtx) {
	r.localMu.Lock()
	defer r.localMu.Unlock()
	if r.detached == lc {
		r.detached = nil // already not counted
		return
	}
	r.doneLocalLocked()
}

func (r *runState) doneLocalLocked() {
	r.locals--
	if r.locals == 0 && r.localsIdle != nil {
		close(r.localsIdle)
		r.localsIdle = nil
	}
}

// detachLocal stops counting the local transaction whose ExecuteLocal
// gave ctx, when ctx comes from one of this run still running: it is
// calling Shutdown.
func (r *runState) detachLocal(ctx context.Context) {
	lc, _ := ctx.Value(localKey{}).(*localCtx)
	if lc == nil || lc.run != r.ctx {
		return
	}
	lc.mu.Lock()
	returned := lc.released
	lc.mu.Unlock()
	if returned {
		return // a ctx kept past ExecuteLocal: that call is no listener's now
	}
	r.localMu.Lock()
	defer r.localMu.Unlock()
	if r.detached == nil {
		r.detached = lc
		r.doneLocalLocked()
	}
}

// waitLocals waits for the local transactions in progress until ctx ends;
// then it cancels their contexts, waits at most shutdownGrace more and
// returns ctx's error. Calls still running are abandoned: their decisions
// fail on the closed client and the broker checks them later.
func (r *runState) waitLocals(ctx context.Context, log *slog.Logger, group string) error {
	r.localMu.Lock()
	if r.locals == 0 {
		r.localMu.Unlock()
		return nil
	}
	if r.localsIdle == nil {
		r.localsIdle = make(chan struct{})
	}
	idle := r.localsIdle
	r.localMu.Unlock()
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
