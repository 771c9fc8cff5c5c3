package store

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// pwriteSeenByMapping: Windows does not promise that WriteFile and a
// mapped view of the same file are coherent, so every append is copied
// through the view.
const pwriteSeenByMapping = false

// mmap maps size bytes of f read-write and shared with a file mapping
// object; the view keeps the object alive, so its handle is closed here.
func mmap(f *os.File, size int64) ([]byte, error) {
	var data []byte
	var merr error
	if err := rawControl(f, func(fd uintptr) {
		mh, err := windows.CreateFileMapping(windows.Handle(fd), nil, windows.PAGE_READWRITE,
			uint32(uint64(size)>>32), uint32(size), nil)
		if err != nil {
			merr = err
			return
		}
		defer windows.CloseHandle(mh)
		addr, err := windows.MapViewOfFile(mh, windows.FILE_MAP_WRITE, 0, 0, uintptr(size))
		if err != nil {
			merr = err
			return
		}
		data = unsafe.Slice(*(**byte)(unsafe.Pointer(&addr)), int(size))
	}); err != nil {
		return nil, err
	}
	return data, merr
}

func munmap(data []byte) error {
	return windows.UnmapViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(data))))
}

// syncMapped writes the view's dirty pages, then the file's buffers, to
// the device.
func syncMapped(m *mappedFile) error {
	if len(m.data) > 0 {
		if err := windows.FlushViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(m.data))), uintptr(len(m.data))); err != nil {
			return err
		}
	}
	var serr error
	if err := m.raw.Control(func(fd uintptr) { serr = fdatasync(fd) }); err != nil {
		return err
	}
	return serr
}

func fdatasync(fd uintptr) error { return windows.FlushFileBuffers(windows.Handle(fd)) }

func punchHole(*os.File, int64, int64) error { return errUnsupported }

// populateWrite is not available; the prefaulter touches each page.
func populateWrite([]byte) error { return errUnsupported }

// tryLock takes an exclusive lock on the first byte of f without waiting;
// locked is false when another process (or Store) holds it.
func tryLock(f *os.File) (locked bool, err error) {
	var lerr error
	if err := rawControl(f, func(fd uintptr) {
		lerr = windows.LockFileEx(windows.Handle(fd), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
			0, 1, 0, new(windows.Overlapped))
	}); err != nil {
		return false, err
	}
	if errors.Is(lerr, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return lerr == nil, lerr
}
