package store

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// Faulting fresh page-cache pages in is the largest cost of an append into
// a mapping (a sparse file gets its blocks reserved and pages zeroed on
// first write). In FlushAsync mode the prefaulter does it ahead of the
// write position on its own goroutine, so appends under the writer lock
// mostly copy into pages that are already there. FlushSync appends use
// pwrite and are not prefaulted (appendLocked says why).

const pageSize = 4096

// prefaultLoop populates up to PrefaultBytes past the write position each
// time the writer kicks it. A fault inside the mapping is an error here as
// in the writer (faultGuard), never a crash.
func (s *Store) prefaultLoop() {
	defer s.wg.Done()
	debug.SetPanicOnFault(true)
	for {
		select {
		case <-s.done:
			return
		case <-s.prefaultKick:
		}
		if err := s.prefaultOnce(); err != nil {
			s.log.Debug("store: prefault stopped", "err", err)
		}
	}
}

// prefaultOnce reserves the blocks ahead of the write position, then
// populates the reserved pages only: a page without a block behind it
// would fault. On a full disk it stops where the reservation stopped.
func (s *Store) prefaultOnce() (err error) {
	defer faultGuard(&err)
	end := s.end.Load()
	from := max(s.prefaulted.Load(), end)
	target := end + s.cfg.PrefaultBytes
	for _, seg := range *s.segs.Load() {
		lo, hi := max(from, seg.start), min(target, seg.end())
		if lo >= hi {
			continue
		}
		if err := s.reserveSegment(seg, hi-seg.start); err != nil {
			hi = min(hi, seg.start+seg.reserved.Load())
			if lo < hi {
				s.populate(seg.data[alignUp(lo-seg.start) : hi-seg.start])
			}
			return err
		}
		// Whole pages only; the page holding the write position is in use.
		if l := alignUp(lo - seg.start); l < hi-seg.start {
			if err := s.populate(seg.data[l : hi-seg.start]); err != nil {
				return err
			}
		}
	}
	s.prefaulted.Store(target)
	return nil
}

func alignUp(off int64) int64 { return (off + pageSize - 1) / pageSize * pageSize }

// populate write-faults the pages of b without changing their contents:
// MADV_POPULATE_WRITE (Linux 5.14+), else per page an atomic add of zero,
// which cannot lose a concurrent append's bytes. An error from madvise
// other than "not supported" (a page it could not fault in) stops it.
func (s *Store) populate(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if !s.noPopulate.Load() {
		err := populateWrite(b)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errUnsupported) {
			return fmt.Errorf("%w: populate: %v", ErrIO, err)
		}
		s.noPopulate.Store(true)
	}
	for p := 0; p+4 <= len(b); p += pageSize {
		atomic.AddUint32((*uint32)(unsafe.Pointer(&b[p])), 0)
	}
	return nil
}

// prefaults says whether the prefaulter runs.
func (s *Store) prefaults() bool {
	return s.cfg.PrefaultBytes > 0 && s.cfg.FlushMode == FlushAsync
}

// kickPrefault is called by the writer (holding mu) after an append.
func (s *Store) kickPrefault(end int64) {
	if end+s.cfg.PrefaultBytes/2 > s.prefaulted.Load() {
		select {
		case s.prefaultKick <- struct{}{}:
		default:
		}
	}
}
