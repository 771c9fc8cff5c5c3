package store

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"go.uber.org/atomic"
)

// Errors of a store that refuses appends. Match them with errors.Is.
var (
	// ErrNotWritable: the store refuses appends for now, because the disk
	// is nearly full (ErrDiskFull too) or a write failed and no retry has
	// succeeded yet (Java RunningFlags not writeable). Reads keep working;
	// appends are accepted again by themselves.
	ErrNotWritable = errors.New("rocketmq: store is not writable")
	// ErrDiskFull: more of the disk is used than
	// Config.DiskSpaceWarningLevelRatio allows.
	ErrDiskFull = errors.New("rocketmq: store disk is full")

	errCreate = errors.New("create failed")
)

// writeGuard holds why appends are refused.
//
// The disk check (every DiskCheckInterval, as Java's CleanCommitLogService
// marks RunningFlags DISK_FULL) sets diskFull. A failed append records what
// it may have left behind in fail; every WriteRetryInterval the store redoes
// that step (zeroing the bytes the failed write may have touched, or
// creating the segment that could not be created) and accepts appends again
// once it succeeds.
type writeGuard struct {
	diskFull  atomic.Bool
	ratioBits atomic.Uint64 // math.Float64bits of the last reading, -1 unknown

	fail    *failedWrite           // under Store.mu
	failMsg atomic.Pointer[string] // fail's error for lock-free status reads
	noSpace atomic.Bool            // fail is an ENOSPC

	at failedWrite // under Store.mu: the write in progress

	syncFail atomic.Pointer[string] // a failed commit-log sync not yet retried (syncfail.go)
}

// failedWrite is a commit-log write (seg, pos, n), with create a segment
// creation for an append of n bytes, or with reserve > 0 a reservation of
// seg's blocks up to reserve, that failed. None: a fault after the
// commit-log write (a queue or index file), with nothing to redo.
type failedWrite struct {
	seg     *mappedFile
	pos, n  int64
	create  bool
	reserve int64
	err     error
}

// WriteStatus tells whether the store accepts appends.
type WriteStatus struct {
	// Writable is false while appends are refused.
	Writable bool
	// DiskFull: the last disk reading was above DiskSpaceWarningLevelRatio.
	DiskFull bool
	// DiskRatio is the used fraction (0 to 1) of the disk at the last
	// reading, -1 when unknown.
	DiskRatio float64
	// WriteError is the failed write appends wait on, "" if none.
	WriteError string
	// NoSpace: that failure is the file system's ENOSPC (a block
	// reservation), whatever the last disk reading said.
	NoSpace bool
	// SyncError is the failed commit-log sync appends wait on, "" if none.
	SyncError string
}

// WriteStatus reports whether appends are accepted and why not.
func (s *Store) WriteStatus() WriteStatus {
	st := WriteStatus{
		DiskFull:  s.guard.diskFull.Load(),
		DiskRatio: math.Float64frombits(s.guard.ratioBits.Load()),
	}
	if m := s.guard.failMsg.Load(); m != nil {
		st.WriteError = *m
		st.NoSpace = s.guard.noSpace.Load()
	}
	if m := s.guard.syncFail.Load(); m != nil {
		st.SyncError = *m
	}
	st.Writable = !st.DiskFull && st.WriteError == "" && st.SyncError == ""
	return st
}

// DiskRatio reads the used fraction (0 to 1) of the disk holding the
// commit log now, -1 when unknown (Java
// UtilAll.getDiskPartitionSpaceUsedPercent).
func (s *Store) DiskRatio() float64 {
	if r, ok := usedRatio(s.cfg.DiskUsage, s.dirPath("commitlog")); ok {
		return r
	}
	return -1
}

// DiskSpaceWarningLevelRatio is the configured percentage above which
// appends are refused.
func (s *Store) DiskSpaceWarningLevelRatio() int { return s.cfg.DiskSpaceWarningLevelRatio }

// writableLocked is the refusal check of every append. Caller holds mu.
func (s *Store) writableLocked() error {
	if s.guard.diskFull.Load() {
		return fmt.Errorf("%w: %w: %.1f%% used, above %d%%", ErrNotWritable, ErrDiskFull,
			math.Float64frombits(s.guard.ratioBits.Load())*100, s.cfg.DiskSpaceWarningLevelRatio)
	}
	if f := s.guard.fail; f != nil {
		if errors.Is(f.err, ErrDiskFull) {
			return fmt.Errorf("%w: %w until a retried reservation succeeds: %v", ErrNotWritable, ErrDiskFull, f.err)
		}
		return fmt.Errorf("%w until a retried write succeeds: %v", ErrNotWritable, f.err)
	}
	return s.syncFailedLocked()
}

// checkDisk reads the disk use and sets or clears the full mark.
func (s *Store) checkDisk() {
	ratio, ok := usedRatio(s.cfg.DiskUsage, s.dirPath("commitlog"))
	if !ok {
		ratio = -1
	}
	s.guard.ratioBits.Store(math.Float64bits(ratio))
	full := ok && ratio*100 > float64(s.cfg.DiskSpaceWarningLevelRatio)
	if was := s.guard.diskFull.Swap(full); was != full {
		if full {
			s.log.Error("store: disk nearly full, appends refused", "usedRatio", ratio,
				"diskSpaceWarningLevelRatio", s.cfg.DiskSpaceWarningLevelRatio)
		} else {
			s.log.Info("store: disk space OK again, appends accepted", "usedRatio", ratio)
		}
	}
}

// guardLoop reads the disk and retries a failed write until Close.
func (s *Store) guardLoop() {
	defer s.wg.Done()
	disk := time.NewTicker(s.cfg.DiskCheckInterval)
	defer disk.Stop()
	retry := time.NewTicker(s.cfg.WriteRetryInterval)
	defer retry.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-disk.C:
			s.checkDisk()
		case <-retry.C:
			s.retryWrite()
			s.retrySync()
		}
	}
}

// noteWriteFailure makes the store refuse appends after a failed write or
// segment creation, and clears at once the size field the failed write may
// have reached: a record whose size field is zero is, for recovery, the
// end of the log. Caller holds mu; runs after faultGuard.
func (s *Store) noteWriteFailure(err *error) {
	at := s.guard.at
	s.guard.at = failedWrite{}
	if *err == nil || s.guard.fail != nil {
		return
	}
	switch {
	case errors.Is(*err, errCreate):
		at = failedWrite{n: at.n, create: true}
	case errors.Is(*err, errReserve):
		// Nothing was written; at says what to reserve again.
	case errors.Is(*err, errFault), errors.Is(*err, errWrite):
	default:
		return
	}
	at.err = *err
	if at.seg != nil && at.reserve == 0 {
		_ = s.clearRange(at.seg, at.pos, 4)
	}
	if errors.Is(*err, ErrDiskFull) {
		s.checkDisk() // the full mark now, not at the next reading
	}
	f := new(failedWrite) // not &at: that would allocate on every append
	*f = at
	s.guard.fail = f
	msg := (*err).Error()
	s.guard.noSpace.Store(errors.Is(*err, ErrDiskFull))
	s.guard.failMsg.Store(&msg)
	s.log.Error("store: write failed, appends refused until a retry succeeds", "err", *err)
}

// retryWrite redoes the step that failed; on success appends are accepted
// again.
func (s *Store) retryWrite() {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.guard.fail
	if f == nil || s.closed.Load() {
		return
	}
	err := s.redoLocked(f)
	if err != nil {
		s.log.Debug("store: write retry failed", "err", err)
		return
	}
	s.guard.fail = nil
	s.guard.failMsg.Store(nil)
	s.log.Info("store: write retry succeeded, appends accepted again")
}

func (s *Store) redoLocked(f *failedWrite) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	if f.create {
		_, err = s.segmentForAppend(f.n)
		return err
	}
	if f.reserve > 0 {
		if f.seg.closed.Load() {
			return nil
		}
		return s.reserveSegment(f.seg, f.reserve)
	}
	if f.seg == nil || f.seg.closed.Load() || f.seg.data == nil {
		return nil // nothing left to clean
	}
	return s.clearRange(f.seg, f.pos, f.n)
}

// clearRange zeroes what a failed write of n bytes at pos may have left,
// through the same path appends write by (so it fails while they would),
// and syncs it.
func (s *Store) clearRange(seg *mappedFile, pos, n int64) error {
	n = min(n, int64(len(seg.data))-pos)
	if n <= 0 {
		return nil
	}
	if h := s.cfg.WriteFault; h != nil {
		if _, err := h(seg.path, pos, int(n)); err != nil {
			return fmt.Errorf("%w: %w: %s at %d: %v", ErrIO, errWrite, seg.path, pos, err)
		}
	}
	if pwriteSeenByMapping {
		if err := seg.writeAt(make([]byte, n), pos); err != nil {
			return err
		}
	} else {
		clear(seg.data[pos : pos+n])
	}
	return seg.sync()
}

// writeRecord puts the encoded records at pos of seg: everything but the
// size field first, the size field last, so that a write cut short leaves
// a zero size behind.
func (s *Store) writeRecord(seg *mappedFile, pos int64, buf []byte) error {
	s.guard.at = failedWrite{seg: seg, pos: pos, n: int64(len(buf))}
	if h := s.cfg.WriteFault; h != nil {
		if n, err := h(seg.path, pos, len(buf)); err != nil {
			// A short write: part of the body, never the size field.
			n = max(0, min(n, len(buf)-4))
			copy(seg.data[pos+4:pos+4+int64(n)], buf[4:4+n])
			return fmt.Errorf("%w: %w: %s at %d: %v", ErrIO, errWrite, seg.path, pos, err)
		}
	}
	if s.cfg.FlushMode == FlushSync && pwriteSeenByMapping {
		// With pwrite, not through the mapping: the group commit's
		// fdatasync then takes about a fifth of the time, and a sync-flush
		// send waits for it (BenchmarkSyncAfterWrite32KiB; pages faulted
		// into the mapping beforehand made the broker slower again, so
		// nothing is prefaulted). Readers still see the bytes through the
		// mapping.
		if err := seg.writeAt(buf[4:], pos+4); err != nil {
			return err
		}
		return seg.writeAt(buf[:4], pos)
	}
	// Through the mapping: a full disk faults here (faultGuard).
	copy(seg.data[pos+4:], buf[4:])
	copy(seg.data[pos:pos+4], buf[:4])
	return nil
}
