//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// pwriteSeenByMapping: a pwrite lands in the page cache the shared
// mapping shows, so FlushSync appends may bypass the mapping.
const pwriteSeenByMapping = true

// mmap maps size bytes of f read-write and shared.
func mmap(f *os.File, size int64) ([]byte, error) {
	var data []byte
	var merr error
	if err := rawControl(f, func(fd uintptr) {
		data, merr = syscall.Mmap(int(fd), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	}); err != nil {
		return nil, err
	}
	return data, merr
}

func munmap(data []byte) error { return syscall.Munmap(data) }

// syncMapped writes the file's dirty pages to the device; fdatasync (or
// its platform equivalent) also covers pages dirtied through a shared
// mapping.
func syncMapped(m *mappedFile) error {
	var serr error
	if err := m.raw.Control(func(fd uintptr) { serr = fdatasync(fd) }); err != nil {
		return err
	}
	return serr
}

// tryLock takes an exclusive lock on f without waiting; locked is false
// when another process (or Store) holds it.
func tryLock(f *os.File) (locked bool, err error) {
	var lerr error
	if err := rawControl(f, func(fd uintptr) { lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB) }); err != nil {
		return false, err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return lerr == nil, lerr
}
