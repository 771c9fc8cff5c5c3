package store

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// deleteFileBatchMax caps the commit-log files one pass deletes (Java
// MappedFileQueue DELETE_FILES_BATCH_MAX).
const deleteFileBatchMax = 10

// segHold keeps one commit-log segment pinned for a reader, so retention
// does not unmap it while its bytes are in use (Java MappedFile.hold and
// release).
type segHold struct{ seg *mappedFile }

// hold pins seg instead of the segment held so far; false when seg is being
// destroyed.
func (h *segHold) hold(seg *mappedFile) bool {
	if h.seg == seg {
		return true
	}
	h.release()
	if !seg.tryPin() {
		return false
	}
	h.seg = seg
	return true
}

func (h *segHold) release() {
	if h.seg != nil {
		if h.seg.refs.Dec() == 0 && h.seg.retired.Load() {
			select { // the last reader of a retired segment: destroy it now
			case h.seg.kick <- struct{}{}:
			default:
			}
		}
		h.seg = nil
	}
}

// retiredSeg is a segment out of the list that a reader still pins.
type retiredSeg struct {
	seg *mappedFile
	at  time.Time
}

// RetentionResult counts what one retention pass removed.
type RetentionResult struct {
	// CommitLogFiles were removed from the commit log; Pending of them (and
	// of earlier passes) wait for a reader to release them.
	CommitLogFiles int
	Pending        int
	// QueueFiles and IndexFiles are consume-queue and index files deleted.
	QueueFiles int
	IndexFiles int
	// CommitLogMinOffset is the commit log's minimum after the pass.
	CommitLogMinOffset int64
}

// parseDeleteWhen reads Java's deleteWhen: hours of the day separated by ';'.
func parseDeleteWhen(s string) ([]int, error) {
	var hours []int
	for _, p := range strings.Split(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		h, err := strconv.Atoi(p)
		if err != nil || h < 0 || h > 23 {
			return nil, fmt.Errorf("rocketmq: store: DeleteWhen %q: %q is not an hour of the day", s, p)
		}
		hours = append(hours, h)
	}
	return hours, nil
}

// timeToDelete is Java's UtilAll.isItTimeToDo: now's hour is one of them.
func timeToDelete(hours []int, now time.Time) bool {
	for _, h := range hours {
		if h == now.Hour() {
			return true
		}
	}
	return false
}

func (s *Store) retentionLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.CleanResourceInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.Clean()
		case <-s.releaseKick:
			s.cleanMu.Lock()
			if !s.closed.Load() {
				s.destroyRetired(s.cfg.Clock())
			}
			s.cleanMu.Unlock()
		}
	}
}

// Clean runs one retention pass (Java CleanCommitLogService and
// CleanConsumeQueueService): at a DeleteWhen hour, or while the disk is
// fuller than DiskMaxUsedSpaceRatio, it deletes the oldest commit-log
// files whose last message is older than FileReservedTime; above
// DiskSpaceCleanForciblyRatio it deletes them whatever their age. Never the
// file being written, at most deleteFileBatchMax files per pass with
// DeleteCommitLogFilesInterval between them. Consume-queue and index files
// that only point below the new minimum go too, and every queue's minimum
// offset advances. Files are unmapped and unlinked outside the append lock.
func (s *Store) Clean() RetentionResult {
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()
	var res RetentionResult
	if s.closed.Load() {
		return res
	}
	now := s.cfg.Clock()
	res.Pending = s.destroyRetired(now)
	timeUp := timeToDelete(s.deleteHours, now)
	ratio, ok := usedRatio(s.cfg.DiskUsage, s.cfg.Dir)
	spaceFull := ok && ratio > float64(s.cfg.DiskMaxUsedSpaceRatio)/100
	atOnce := ok && ratio > float64(s.cfg.DiskSpaceCleanForciblyRatio)/100
	if timeUp || spaceFull {
		if spaceFull {
			s.log.Warn("store: disk above the retention ratio, deleting commit-log files",
				"ratio", ratio, "forcibly", atOnce)
		}
		res.CommitLogFiles = s.deleteExpiredSegments(now, atOnce)
		res.Pending = len(s.retired)
	}
	clMin := s.CommitLogMinOffset()
	if clMin > s.cleanedMin {
		res.QueueFiles = s.cleanQueues(clMin)
		res.IndexFiles = s.cleanIndex(clMin)
		s.cleanedMin = clMin
	}
	res.CommitLogMinOffset = clMin
	return res
}

// deleteExpiredSegments is Java MappedFileQueue.deleteExpiredFileByTime:
// oldest first, stopping at the first file to keep. Caller holds cleanMu.
func (s *Store) deleteExpiredSegments(now time.Time, atOnce bool) int {
	reserve := s.cfg.FileReservedTime
	deleted := 0
	for deleted < deleteFileBatchMax {
		if deleted > 0 && s.cfg.DeleteCommitLogFilesInterval > 0 {
			t := time.NewTimer(s.cfg.DeleteCommitLogFilesInterval)
			select {
			case <-s.done:
				t.Stop()
				return deleted
			case <-t.C:
			}
		}
		s.mu.Lock()
		if s.closed.Load() {
			s.mu.Unlock()
			return deleted
		}
		segs := *s.segs.Load()
		// Never the file being written. The flusher pins what it syncs.
		if len(segs) < 2 {
			s.mu.Unlock()
			return deleted
		}
		seg := segs[0]
		last := s.segmentLastTs(segs, 0)
		if !atOnce && now.UnixMilli() < last+reserve.Milliseconds() {
			s.mu.Unlock()
			return deleted
		}
		rest := append([]*mappedFile(nil), segs[1:]...)
		s.segs.Store(&rest)
		seg.kick = s.releaseKick
		seg.retired.Store(true)
		s.mu.Unlock()
		s.log.Info("store: deleting expired commit-log file", "file", seg.path,
			"lastMessage", time.UnixMilli(last), "forcibly", atOnce)
		s.retired = append(s.retired, retiredSeg{seg: seg, at: now})
		s.destroyRetired(now)
		deleted++
	}
	return deleted
}

// segmentLastTs is the store time of the last record of segs[i] (not the
// last segment): recorded when the log rolled over or during recovery,
// else the store time of the next segment's first record (an upper bound),
// else the file's modification time. Caller holds mu.
func (s *Store) segmentLastTs(segs []*mappedFile, i int) int64 {
	if ts := segs[i].lastTs; ts > 0 {
		return ts
	}
	next := segs[i+1]
	if next.tryPin() {
		h, err := parseRecord(next.data, false)
		next.refs.Dec()
		if err == nil && h.PhysicalOffset == next.start && h.StoreTimestamp > 0 {
			return h.StoreTimestamp
		}
	}
	if st, err := os.Stat(segs[i].path); err == nil {
		return st.ModTime().UnixMilli()
	}
	return 0
}

// destroyRetired unmaps and unlinks the retired segments no reader pins,
// and those pinned for longer than DestroyMappedFileIntervalForcibly (Java
// MappedFile.destroy: the reference is then released by force). It returns
// how many still wait. Caller holds cleanMu.
func (s *Store) destroyRetired(now time.Time) int {
	keep := s.retired[:0]
	for _, r := range s.retired {
		if !r.seg.refs.CAS(0, -1) {
			if now.Sub(r.at) < s.cfg.DestroyMappedFileIntervalForcibly {
				keep = append(keep, r)
				continue
			}
			s.log.Warn("store: commit-log file still in use, destroying it by force",
				"file", r.seg.path, "readers", r.seg.refs.Load())
			r.seg.refs.Store(-1 << 20)
		}
		s.destroySegment(r.seg)
	}
	clear(s.retired[len(keep):])
	s.retired = keep
	return len(keep)
}

func (s *Store) destroySegment(seg *mappedFile) {
	if seg.data != nil {
		dropPages(seg.data)
	}
	if err := seg.close(); err != nil {
		s.log.Warn("store: close deleted commit-log file", "file", seg.path, "err", err)
	}
	shrink(seg.path, seg.size)
	if err := os.Remove(seg.path); err != nil && !os.IsNotExist(err) {
		s.log.Error("store: delete commit-log file", "file", seg.path, "err", err)
	}
}

// shrink truncates a file about to be unlinked 1 MiB at a time. Unlinking
// a large written file frees all its blocks in one journal transaction
// (15-130 ms for 16 MiB on ext4 here), and appends that allocate blocks in
// the current segment wait for it; small steps keep every transaction
// short (BenchmarkSendDuringRetention).
func shrink(path string, size int64) {
	const step = 1 << 20
	for size -= step; size >= 0; size -= step {
		if os.Truncate(path, size) != nil {
			return
		}
	}
}

// cleanQueues deletes the consume-queue files whose entries all point
// below clMin (never a queue's last file) and advances the queues' minimum
// offsets (Java ConsumeQueue.deleteExpiredFile and correctMinOffset).
// Lists change under mu; files are unmapped and removed after it.
func (s *Store) cleanQueues(clMin int64) int {
	var drop []*mappedFile
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return 0
	}
	for _, q := range s.queues {
		files := *q.files.Load()
		n := 0
		for n < len(files)-1 {
			e, ok := q.entry(files[n].end()/cqUnit - 1)
			if !ok || e.phys+int64(e.size) > clMin {
				break
			}
			n++
		}
		if n > 0 {
			drop = append(drop, files[:n]...)
			rest := append([]*mappedFile(nil), files[n:]...)
			q.files.Store(&rest)
		}
	}
	s.correctMinOffsetsLocked(clMin)
	s.mu.Unlock()
	for _, f := range drop {
		f.close()
		shrink(f.path, f.size)
		if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
			s.log.Error("store: delete consume-queue file", "file", f.path, "err", err)
		}
	}
	return len(drop)
}

// correctMinOffsetsLocked sets each queue's minimum to its first entry
// whose record starts at or after clMin (its maximum when there is none).
// Entries ascend by commit-log offset and fillers (offset 0) lead, so a
// binary search finds it. Caller holds mu, or is recovery.
func (s *Store) correctMinOffsetsLocked(clMin int64) {
	for _, q := range s.queues {
		files := *q.files.Load()
		lo, hi := q.min.Load(), q.max.Load()
		if len(files) == 0 || lo >= hi {
			continue
		}
		lo = max(lo, files[0].start/cqUnit)
		if e, ok := q.entry(lo); ok && !e.filler() && e.phys >= clMin {
			if lo > q.min.Load() {
				q.min.Store(lo)
			}
			continue
		}
		for lo < hi {
			mid := lo + (hi-lo)/2
			if e, ok := q.entry(mid); ok && !e.filler() && e.phys >= clMin {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if lo > q.min.Load() {
			q.min.Store(lo)
		}
	}
}

// cleanIndex deletes the index files whose newest entry points below
// clMin, never the last one (Java IndexService.deleteExpiredFile).
func (s *Store) cleanIndex(clMin int64) int {
	if s.cfg.DisableIndex {
		return 0
	}
	s.idx.mu.Lock()
	n := 0
	for n < len(s.idx.files)-1 && s.idx.files[n].endPhy < clMin {
		n++
	}
	drop := append([]*indexFile(nil), s.idx.files[:n]...)
	s.idx.files = append([]*indexFile(nil), s.idx.files[n:]...)
	s.idx.removed += n
	s.idx.mu.Unlock()
	// Queries walk the files under idx.mu, so nobody uses these now; a
	// checkpoint still syncing one ignores the failure of a closed file.
	for _, f := range drop {
		f.m.close()
		shrink(f.m.path, f.m.size)
		if err := os.Remove(f.m.path); err != nil && !os.IsNotExist(err) {
			s.log.Error("store: delete index file", "file", f.m.path, "err", err)
		}
	}
	return n
}

// releaseRetired closes the retired segments at shutdown (readers are
// excluded by life).
func (s *Store) releaseRetired() {
	for _, r := range s.retired {
		r.seg.close()
		os.Remove(r.seg.path)
	}
	s.retired = nil
}
