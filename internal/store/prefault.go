package store

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Faulting fresh page-cache pages in is the largest cost of an append into
// a mapping (a sparse file gets its blocks reserved and pages zeroed on
// first write). The prefaulter does it ahead of the write position on its
// own goroutine, so appends under the writer lock mostly copy into pages
// that are already there. In FlushAsync mode it write-faults them. In
// FlushSync mode a write-faulted page is dirty, and a group-commit sync
// before the data arrives would write it once as zeros, so there it only
// read-faults: the page is in the page cache, zeroed and mapped, still
// clean, and the append's fault is the cheap write-permission one.

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

// populate faults in the pages of b without changing their contents:
// MADV_POPULATE_WRITE, or MADV_POPULATE_READ in FlushSync mode (Linux
// 5.14+), else per page an atomic add of zero (which cannot lose a
// concurrent append's bytes) or an atomic load.
func (s *Store) populate(b []byte) {
	const madvPopulateRead, madvPopulateWrite = 22, 23
	readOnly := s.cfg.FlushMode == FlushSync
	if !s.noPopulate.Load() {
		advice := uintptr(madvPopulateWrite)
		if readOnly {
			advice = madvPopulateRead
		}
		_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), advice)
		if e == 0 {
			return
		}
		s.noPopulate.Store(true)
	}
	for p := 0; p+4 <= len(b); p += pageSize {
		w := (*uint32)(unsafe.Pointer(&b[p]))
		if readOnly {
			atomic.LoadUint32(w)
		} else {
			atomic.AddUint32(w, 0)
		}
	}
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
