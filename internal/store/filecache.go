package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"go.uber.org/atomic"
)

// fileCache keeps at most limit consume-queue files open and mapped. A
// broker with one message in each of tens of thousands of queues would
// otherwise hold a descriptor and a mapping per queue file and run out of
// descriptors (Java maps every file and relies on a huge ulimit). Files are
// mapped on demand and the least recently used unpinned one is unmapped
// and closed when the cap is reached (a clock sweep approximates LRU
// without a shared write on every access).
//
// A cached file's refs is -1 while it is not mapped, otherwise the number
// of readers and writers using its data. Pinning a mapped file is one CAS;
// only mapping takes mu. A file is only unmapped by a CAS of refs from 0 to
// -1 under mu, so a pinned file's data stays valid until it is unpinned.
type fileCache struct {
	limit int

	mu    sync.Mutex
	ring  []*mappedFile // the mapped files
	hand  int
	opens atomic.Int64 // files mapped again after an eviction
}

func newFileCache(limit int) *fileCache { return &fileCache{limit: max(limit, 1)} }

// add puts a freshly mapped file under the cache, making room first.
func (c *fileCache) add(f *mappedFile) {
	f.cache = c
	c.mu.Lock()
	c.evictLocked(c.limit - 1)
	f.refs.Store(0)
	f.used.Store(true)
	c.ring = append(c.ring, f)
	c.mu.Unlock()
}

// pin makes f's data usable until unpin, mapping it again if it was
// evicted. An error (the file vanished, no descriptor left) fails only the
// request that needed the file.
func (f *mappedFile) pin() error {
	if f.cache == nil {
		return nil
	}
	if f.tryPin() {
		if !f.used.Load() {
			f.used.Store(true)
		}
		return nil
	}
	return f.cache.mapAgain(f)
}

// tryPin pins f if it is mapped.
func (f *mappedFile) tryPin() bool {
	for {
		r := f.refs.Load()
		if r < 0 {
			return false
		}
		if f.refs.CAS(r, r+1) {
			return true
		}
	}
}

func (f *mappedFile) unpin() {
	if f.cache != nil {
		f.refs.Dec()
	}
}

func (c *fileCache) mapAgain(f *mappedFile) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.closed.Load() {
		return fmt.Errorf("%w: %s was closed", ErrIO, f.path)
	}
	if f.refs.Load() >= 0 { // mapped meanwhile; only mu maps
		f.refs.Inc()
		return nil
	}
	c.evictLocked(c.limit - 1)
	fh, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: open consume queue file: %v", ErrIO, err)
	}
	m, err := mapOpened(fh, f.path, f.start, f.size, 0)
	if err != nil {
		fh.Close()
		return fmt.Errorf("%w: map consume queue file: %v", ErrIO, err)
	}
	f.f, f.raw, f.data = m.f, m.raw, m.data
	c.opens.Inc()
	f.used.Store(true)
	c.ring = append(c.ring, f)
	f.refs.Store(1)
	return nil
}

// evictLocked unmaps unpinned files until at most keep are mapped (or all
// the rest are pinned). Caller holds mu.
func (c *fileCache) evictLocked(keep int) {
	for sweep := 2 * len(c.ring); len(c.ring) > keep && sweep > 0; sweep-- {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		f := c.ring[c.hand]
		if f.used.Load() {
			f.used.Store(false)
			c.hand++
			continue
		}
		if !f.refs.CAS(0, -1) {
			c.hand++
			continue
		}
		f.unmap()
		c.removeLocked(c.hand)
	}
}

func (c *fileCache) removeLocked(i int) {
	last := len(c.ring) - 1
	c.ring[i] = c.ring[last]
	c.ring[last] = nil
	c.ring = c.ring[:last]
}

// drop closes f for good (its queue is truncated, deleted or closed),
// waiting for a checkpoint sync that still has it pinned.
func (c *fileCache) drop(f *mappedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.closed.Store(true)
	for {
		r := f.refs.Load()
		if r < 0 {
			return // not mapped: nothing is open
		}
		if f.refs.CAS(0, -1) {
			break
		}
		runtime.Gosched()
	}
	for i, g := range c.ring {
		if g == f {
			c.removeLocked(i)
			break
		}
	}
	f.unmap()
}

// mapped is the number of files mapped now.
func (c *fileCache) mapped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ring)
}

// unmap releases the mapping and the descriptor of a file nobody uses.
func (f *mappedFile) unmap() {
	if f.data != nil {
		munmap(f.data)
		f.data = nil
	}
	if f.f != nil {
		f.f.Close()
		f.f, f.raw = nil, nil
	}
}

// syncCached makes a cached file's written pages durable. An unmapped
// file's pages are still in the page cache: they are synced through a new
// descriptor.
func (f *mappedFile) syncCached() error {
	if f.tryPin() {
		defer f.unpin()
		return syncMapped(f)
	}
	if f.closed.Load() {
		return nil
	}
	fh, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed behind the store's back: consume queues are derived
		// data, recovery rebuilds them from the commit log.
		return nil
	}
	if err != nil {
		return err
	}
	err = fh.Sync()
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}
