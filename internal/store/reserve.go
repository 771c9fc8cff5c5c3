package store

import (
	"errors"
	"fmt"
	"os"
)

// Blocks are reserved before any page of a mapping is written: a store into
// a page of a sparse file whose block the file system cannot allocate is a
// SIGBUS, which would kill the process. A reservation that fails is an
// error returned to the append instead (ErrDiskFull when the file system is
// full). Commit-log segments are reserved a chunk at a time ahead of the
// write position, by the writer and the prefaulter, so that a segment far
// larger than the free space still takes what fits; consume-queue files
// likewise ahead of their last entry.
//
// Where the file system cannot allocate blocks without writing them
// (allocateRange returns errUnsupported), zeros are written with pwrite.
// That is only safe beyond everything ever written, which is why a
// reservation starts at the larger of the file's watermark and the write
// position, and why nothing is written past the watermark.

const (
	reserveChunk   = 4 << 20  // commit-log bytes reserved at a time
	cqReserveChunk = 64 << 10 // consume-queue bytes reserved at a time
)

// errReserve marks a failed block reservation.
var errReserve = errors.New("block reservation failed")

// createSegmentFile creates a commit-log file of size bytes with its first
// reserve bytes reserved, then maps it. A full disk fails here, before
// anything is mapped, and leaves no file behind.
func (s *Store) createSegmentFile(path string, start, size, reserve int64) (*mappedFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: commit-log segment %s: %v", ErrIO, errCreate, path, err)
	}
	fail := func(err error) (*mappedFile, error) {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		return fail(fmt.Errorf("%w: %w: commit-log segment %s: %v", ErrIO, errCreate, path, err))
	}
	reserve = min(reserve, size)
	if err := s.allocate(f, path, 0, reserve); err != nil {
		return fail(fmt.Errorf("%w: %w", errCreate, err))
	}
	m, err := mapOpened(f, path, start, size, 0)
	if err != nil {
		return fail(fmt.Errorf("%w: %w: commit-log segment %s: %v", ErrIO, errCreate, path, err))
	}
	m.reserved.Store(reserve)
	return m, nil
}

// reserveSegment makes sure the blocks of seg exist up to file offset upto
// (rounded up to a chunk, at most the segment end). Safe from any
// goroutine; callers holding mu take reserveMu after it.
func (s *Store) reserveSegment(seg *mappedFile, upto int64) error {
	upto = min(upto, seg.size)
	if seg.reserved.Load() >= upto {
		return nil
	}
	s.reserveMu.Lock()
	defer s.reserveMu.Unlock()
	if seg.closed.Load() {
		return nil
	}
	// Past the write position nothing was ever written (recovery cleared
	// it): zeros may go there.
	from := max(seg.reserved.Load(), min(max(s.end.Load()-seg.start, 0), seg.size))
	if from >= upto {
		return nil
	}
	to := min((upto+reserveChunk-1)/reserveChunk*reserveChunk, seg.size)
	err := s.allocate(seg.f, seg.path, from, to-from)
	if err != nil && errors.Is(err, ErrDiskFull) && to > upto {
		// Less than a chunk left: take what this append needs.
		to = min(alignUp(upto), seg.size)
		err = s.allocate(seg.f, seg.path, from, to-from)
	}
	if err != nil {
		return err
	}
	seg.reserved.Store(to)
	return nil
}

// reserveForAppend reserves seg up to file offset upto for an append. A
// failure refuses appends until a retried reservation succeeds. Caller
// holds mu.
func (s *Store) reserveForAppend(seg *mappedFile, upto int64) error {
	if seg.reserved.Load() >= min(upto, seg.size) {
		return nil
	}
	s.guard.at = failedWrite{seg: seg, reserve: upto}
	return s.reserveSegment(seg, upto)
}

// reserveEntries makes sure the blocks of q's pinned entries from..to
// exist; entries from on are unwritten (or stale, to be overwritten).
// Caller holds mu.
func (s *Store) reserveEntries(q *consumeQueue, from, to int64) error {
	for n := from; n <= to; {
		f := q.fileFor(n)
		lo := n*cqUnit - f.start
		need := min(to, f.end()/cqUnit-1)*cqUnit - f.start + cqUnit
		if f.reserved.Load() < need {
			lo = max(lo, f.reserved.Load())
			hi := min((need+cqReserveChunk-1)/cqReserveChunk*cqReserveChunk, f.size)
			if err := s.allocate(f.f, f.path, lo, hi-lo); err != nil {
				return err
			}
			f.reserved.Store(hi)
		}
		n = f.end() / cqUnit
	}
	return nil
}

// reserveIndexEntry makes sure the pages the next entry of f writes have
// blocks: the header and every hash slot (written at random) with the
// first entry of a new file, the entries a chunk ahead. Caller holds
// idx.mu.
func (s *Store) reserveIndexEntry(f *indexFile) error {
	m := f.m
	need := f.entryPos(f.count + 1)
	if m.reserved.Load() >= need {
		return nil
	}
	lo := m.reserved.Load()
	hi := min((need+cqReserveChunk-1)/cqReserveChunk*cqReserveChunk, m.size)
	if err := s.allocate(m.f, m.path, lo, hi-lo); err != nil {
		return err
	}
	m.reserved.Store(hi)
	return nil
}

// allocate reserves [off, off+n) of f: allocateRange, else zeros written.
func (s *Store) allocate(f *os.File, path string, off, n int64) error {
	if n <= 0 {
		return nil
	}
	var err error
	if h := s.cfg.ReserveFault; h != nil {
		err = h(path, off, n)
	}
	if err == nil {
		err = allocateRange(f, off, n)
		if errors.Is(err, errUnsupported) {
			err = writeZeros(f, off, n)
		}
	}
	if err == nil {
		return nil
	}
	if isNoSpace(err) {
		return fmt.Errorf("%w: %w: %w: %d bytes at %d of %s: %v", ErrNotWritable, ErrDiskFull, errReserve, n, off, path, err)
	}
	return fmt.Errorf("%w: %w: %d bytes at %d of %s: %v", ErrIO, errReserve, n, off, path, err)
}

// writeZeros writes n zero bytes at off, 64 KiB at a time.
func writeZeros(f *os.File, off, n int64) error {
	zeros := make([]byte, min(n, 64<<10))
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := f.WriteAt(zeros[:k], off); err != nil {
			return err
		}
		off += k
		n -= k
	}
	return nil
}
