package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// A failed commit-log sync (fdatasync EIO) may have cost the dirty pages it
// covered: the kernel marks them clean whether or not they reached the
// device, and reports the error once, so a later sync of the same file
// succeeds without writing them. The store therefore stops acknowledging
// at the first failure: the flushed position stays where it was,
// sync-flush waiters are answered FLUSH_DISK_TIMEOUT, appends are refused
// with ErrNotWritable, and WriteStatus.SyncError says why. Every
// WriteRetryInterval the unsynced range is dirtied again through the
// mapping and synced; once that succeeds the position advances and appends
// are accepted again. (Java's MappedFile.flush logs the error and moves
// its flushed position on anyway.)

// errSyncFailed marks the refusal that follows a failed sync.
var errSyncFailed = errors.New("commit-log sync failed")

// syncSegment syncs one commit-log file, asking SyncFault first.
func (s *Store) syncSegment(seg *mappedFile) error {
	if h := s.cfg.SyncFault; h != nil {
		if err := h(seg.path); err != nil {
			return fmt.Errorf("%w: %w: %s: %v", ErrIO, errSyncFailed, seg.path, err)
		}
	}
	if err := seg.sync(); err != nil {
		return fmt.Errorf("%w: %w: %s: %v", ErrIO, errSyncFailed, seg.path, err)
	}
	return nil
}

// noteSyncFailure makes the store stop acknowledging; the first failure's
// error is kept. Caller holds syncMu.
func (s *Store) noteSyncFailure(err error) {
	msg := err.Error()
	if s.guard.syncFail.CompareAndSwap(nil, &msg) {
		s.log.Error("store: commit-log sync failed, appends refused until a retried sync succeeds", "err", err)
	}
}

// SyncFailed reports whether a commit-log sync failed and no retry has
// succeeded yet: nothing appended since the flushed position will become
// durable until then.
func (s *Store) SyncFailed() bool { return s.guard.syncFail.Load() != nil }

// syncFailedLocked is the refusal after a failed sync. Caller holds mu.
func (s *Store) syncFailedLocked() error {
	if m := s.guard.syncFail.Load(); m != nil {
		return fmt.Errorf("%w until a retried sync succeeds: %s", ErrNotWritable, *m)
	}
	return nil
}

// stuckSyncErr is what a sync returns while a failed one is not retried.
func (s *Store) stuckSyncErr() error {
	if m := s.guard.syncFail.Load(); m != nil {
		return fmt.Errorf("%w: %w: not retried yet: %s", ErrIO, errSyncFailed, *m)
	}
	return nil
}

// retrySync dirties the pages between the flushed position and the end
// again and syncs them; on success appends are accepted again.
func (s *Store) retrySync() {
	if s.guard.syncFail.Load() == nil {
		return
	}
	s.mu.Lock() // no append moves the end meanwhile
	defer s.mu.Unlock()
	if s.closed.Load() {
		return
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	from, to := s.flushed.Load(), s.end.Load()
	var hold segHold
	defer hold.release()
	for _, seg := range *s.segs.Load() {
		if seg.end() > from && seg.start < to && hold.hold(seg) {
			lo, hi := max(from, seg.start)-seg.start, min(to, seg.end())-seg.start
			if err := redirty(seg.data, lo, hi); err != nil {
				s.log.Debug("store: sync retry failed", "err", err)
				return
			}
			if err := s.syncSegment(seg); err != nil {
				s.log.Debug("store: sync retry failed", "err", err)
				return
			}
			s.syncs.Inc()
		}
	}
	s.flushed.Store(to)
	s.guard.syncFail.Store(nil)
	s.log.Info("store: commit-log sync retry succeeded, appends accepted again")
}

// redirty write-faults every page of data[lo:hi] (data is page aligned)
// without changing it, by an atomic add of zero to its first word, so the
// next sync writes the pages again.
func redirty(data []byte, lo, hi int64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	for p := lo &^ (pageSize - 1); p < hi && p+4 <= int64(len(data)); p += pageSize {
		atomic.AddUint32((*uint32)(unsafe.Pointer(&data[p])), 0)
	}
	return nil
}
