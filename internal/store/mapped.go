package store

import (
	"fmt"
	"os"
	"syscall"

	"go.uber.org/atomic"
)

// mappedFile is one fixed-size file mapped read-write and shared, so that a
// copy into data is in the page cache (and survives the death of the process)
// the moment it completes. start is the file's logical start offset: a
// commit-log byte offset, a consume-queue byte offset, or 0 for index files.
type mappedFile struct {
	path  string
	start int64
	f     *os.File
	raw   syscall.RawConn
	data  []byte

	size int64 // mapped length, kept while a cached file is unmapped

	// reserved: the blocks of [0, reserved) exist (reserve.go); below it
	// the mapping may be written, past it only after a reservation.
	reserved atomic.Int64

	dirty  bool        // written since the last checkpoint; guarded by Store.mu
	closed atomic.Bool // a checkpoint may still hold it after DeleteTopic

	// Consume-queue files are mapped on demand by a fileCache
	// (filecache.go); data, f and raw are then only valid while pinned.
	cache *fileCache
	refs  atomic.Int32 // -1: not mapped; else the pins
	used  atomic.Bool  // used since the clock hand passed

	// Commit-log segments: readers pin them through refs too (segHold);
	// retention unmaps a retired segment once refs drops to 0.
	lastTs  int64           // store time of the last record, 0 if unknown; under Store.mu
	retired atomic.Bool     // left the segment list; destroyed when released
	kick    chan<- struct{} // wakes retention when the last reader leaves; set before retired
}

// Options of openMapped.
const (
	mapCreate    = 1 << iota // create a missing file
	mapExclusive             // the file must not exist yet
	mapGrow                  // extend a shorter file with zeros (a torn tail)
)

// openMapped maps path with exactly size bytes. An empty file is sized;
// a file of another size is ErrCorrupt unless mapGrow allows extending it.
func openMapped(path string, start, size int64, opts int) (*mappedFile, error) {
	flag := os.O_RDWR
	if opts&mapCreate != 0 {
		flag |= os.O_CREATE
	}
	if opts&mapExclusive != 0 {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	m, err := mapOpened(f, path, start, size, opts)
	if err != nil {
		f.Close()
		if opts&mapExclusive != 0 {
			// Created here: a half-made file (a full disk) must not block
			// the next attempt.
			os.Remove(path)
		}
		return nil, err
	}
	return m, nil
}

func mapOpened(f *os.File, path string, start, size int64, opts int) (*mappedFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case st.Size() == size:
	case st.Size() == 0 || (opts&mapGrow != 0 && st.Size() < size):
		if err := f.Truncate(size); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: %s has %d bytes, want %d", ErrCorrupt, path, st.Size(), size)
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	data, merr := mmap(f, size)
	if merr != nil {
		return nil, fmt.Errorf("%w: mmap %s: %v", ErrIO, path, merr)
	}
	return &mappedFile{path: path, start: start, size: size, f: f, raw: raw, data: data}, nil
}

func (m *mappedFile) end() int64 { return m.start + m.size }

// sync writes the file's dirty pages, those written through the mapping
// included, to the device.
func (m *mappedFile) sync() error {
	if m.cache != nil {
		return m.syncCached()
	}
	return syncMapped(m)
}

// writeAt writes b at file offset off with pwrite (the page cache the
// mapping shows). An error may leave part of b written.
func (m *mappedFile) writeAt(b []byte, off int64) error {
	if _, err := m.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("%w: %w: %s at %d: %v", ErrIO, errWrite, m.path, off, err)
	}
	return nil
}

// close unmaps and closes the file without syncing.
func (m *mappedFile) close() error {
	if m.cache != nil {
		m.cache.drop(m)
		return nil
	}
	m.closed.Store(true)
	var err error
	if m.data != nil {
		err = munmap(m.data)
		m.data = nil
	}
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// zeroFrom clears data[from:]: whole pages are returned to the file system
// with a hole punch when it is supported, the rest is cleared in place.
// Already-zero chunks are skipped so a sparse tail is not materialised.
func (m *mappedFile) zeroFrom(from int) {
	const page = 4096
	n := len(m.data)
	if from >= n {
		return
	}
	alignedFrom := (from + page - 1) / page * page
	if alignedFrom < n && punchHole(m.f, int64(alignedFrom), int64(n-alignedFrom)) == nil {
		clear(m.data[from:alignedFrom])
		return
	}
	for p := from; p < n; p += 64 << 10 {
		e := min(p+64<<10, n)
		if !allZero(m.data[p:e]) {
			clear(m.data[p:e])
		}
	}
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// faultGuard turns a memory fault inside a mapping (SIGBUS after a full disk
// or a file truncated behind our back) into an error instead of a crash.
// Use as:
//
//	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
//	defer faultGuard(&err)
func faultGuard(err *error) {
	if r := recover(); r != nil {
		if f, ok := r.(interface{ Addr() uintptr }); ok {
			*err = fmt.Errorf("%w: %w at %#x in a mapped store file", ErrIO, errFault, f.Addr())
			return
		}
		panic(r)
	}
}

func rawControl(f *os.File, fn func(fd uintptr)) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return raw.Control(fn)
}
