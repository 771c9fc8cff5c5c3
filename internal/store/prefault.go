package store

import (
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
// time the writer kicks it.
func (s *Store) prefaultLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-s.prefaultKick:
		}
		s.prefaultOnce()
	}
}

func (s *Store) prefaultOnce() {
	end := s.end.Load()
	from := max(s.prefaulted.Load(), end)
	target := end + s.cfg.PrefaultBytes
	for _, seg := range *s.segs.Load() {
		lo, hi := max(from, seg.start), min(target, seg.end())
		if lo >= hi {
			continue
		}
		// Whole pages only; the page holding the write position is in use.
		lo = (lo-seg.start+pageSize-1)/pageSize*pageSize + seg.start
		if lo < hi {
			s.populate(seg.data[lo-seg.start : hi-seg.start])
		}
	}
	s.prefaulted.Store(target)
}

// populate write-faults the pages of b without changing their contents:
// MADV_POPULATE_WRITE (Linux 5.14+), else per page an atomic add of zero,
// which cannot lose a concurrent append's bytes.
func (s *Store) populate(b []byte) {
	if !s.noPopulate.Load() {
		if populateWrite(b) {
			return
		}
		s.noPopulate.Store(true)
	}
	for p := 0; p+4 <= len(b); p += pageSize {
		atomic.AddUint32((*uint32)(unsafe.Pointer(&b[p])), 0)
	}
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
