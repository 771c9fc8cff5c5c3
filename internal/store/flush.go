package store

import (
	"context"
	"errors"
	"time"
)

// flushLoop syncs the commit log every FlushInterval and, in FlushSync
// mode, whenever a waiter kicks it: one sync covers every record written
// before it started (group commit), then all waiters are woken.
func (s *Store) flushLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-s.kick:
		case <-t.C:
		}
		if err := s.syncCommitLog(s.end.Load()); err != nil && !s.SyncFailed() {
			s.log.Error("store: commit-log sync failed", "err", err)
		}
		s.genMu.Lock()
		close(s.gen)
		s.gen = make(chan struct{})
		s.genMu.Unlock()
	}
}

func (s *Store) wakeFlusher() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// RequestFlush asks for a commit-log sync round now (FlushSync mode; in
// FlushAsync mode the round comes at the next FlushInterval anyway). It
// never blocks.
func (s *Store) RequestFlush() { s.wakeFlusher() }

// FlushProgress tells how far the commit log is on the device and returns
// a channel that is closed when the next sync round ends (rounds also end
// every FlushInterval, and at Close). Callers that must not block wait on
// the channel instead of in PutMessage: see PutResult.End.
func (s *Store) FlushProgress() (int64, <-chan struct{}) {
	s.genMu.Lock()
	g := s.gen
	s.genMu.Unlock()
	// Read after taking gen: a round finishing in between closes g.
	return s.flushed.Load(), g
}

// SyncFlushTimeout is how long a sync-flush put waits for the device
// before it is answered FLUSH_DISK_TIMEOUT.
func (s *Store) SyncFlushTimeout() time.Duration { return s.cfg.SyncFlushTimeout }

// waitFlushed waits until the commit log is synced up to target; false on
// timeout, ctx end or close.
func (s *Store) waitFlushed(ctx context.Context, target int64) bool {
	if s.flushed.Load() >= target {
		return true
	}
	timer := time.NewTimer(s.cfg.SyncFlushTimeout)
	defer timer.Stop()
	for {
		s.genMu.Lock()
		g := s.gen
		s.genMu.Unlock()
		// Checked after taking gen: a round finishing in between closes g.
		if s.flushed.Load() >= target {
			return true
		}
		if s.closed.Load() || s.SyncFailed() {
			return false
		}
		s.wakeFlusher()
		select {
		case <-g:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// syncCommitLog makes the commit log durable up to target.
func (s *Store) syncCommitLog(target int64) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if err := s.stuckSyncErr(); err != nil {
		return err // only retrySync may move the flushed position now
	}
	from := s.flushed.Load()
	if target <= from {
		return nil
	}
	var hold segHold // retention may be deleting an old segment
	defer hold.release()
	for _, seg := range *s.segs.Load() {
		if seg.end() > from && seg.start < target && hold.hold(seg) {
			if err := s.syncSegment(seg); err != nil {
				s.noteSyncFailure(err)
				return err
			}
			s.syncs.Inc()
		}
	}
	s.flushed.Store(target)
	return nil
}

// checkpointLoop periodically syncs consume-queue and index files and then
// records the checkpoint.
func (s *Store) checkpointLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		snap := s.snapshotLocked()
		s.mu.Unlock()
		if err := s.persist(snap); err != nil && !errors.Is(err, errSyncFailed) {
			s.log.Error("store: checkpoint failed", "err", err)
		}
	}
}

type ckptSnapshot struct {
	end     int64
	storeTs int64
	dirty   []*mappedFile
}

// snapshotLocked takes what the next checkpoint must cover. Caller holds mu.
func (s *Store) snapshotLocked() ckptSnapshot {
	snap := ckptSnapshot{end: s.end.Load(), storeTs: s.lastStoreTs, dirty: s.dirty}
	for _, f := range s.dirty {
		f.dirty = false
	}
	s.dirty = nil
	return snap
}

// persist syncs the commit log and the files in snap, then writes the
// checkpoint: everything up to snap.storeTs is then on the device.
func (s *Store) persist(snap ckptSnapshot) error {
	if err := s.syncCommitLog(snap.end); err != nil {
		return err
	}
	for _, f := range snap.dirty {
		if err := f.sync(); err != nil && !f.closed.Load() {
			return err
		}
	}
	if snap.storeTs <= 0 {
		return nil
	}
	err := writeCheckpoint(s.ckptFile, checkpoint{
		physicMsgTimestamp: snap.storeTs,
		logicsMsgTimestamp: snap.storeTs,
		indexMsgTimestamp:  snap.storeTs,
	})
	if err == nil {
		s.checkpoints.Inc()
	}
	return err
}

// checkpointNow is the final checkpoint of Close. Caller holds mu.
func (s *Store) checkpointNow() error {
	return s.persist(s.snapshotLocked())
}
