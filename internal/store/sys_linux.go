package store

import (
	"os"
	"syscall"
	"unsafe"
)

func fdatasync(fd uintptr) error { return syscall.Fdatasync(int(fd)) }

// punchHole frees [off, off+n) while keeping the file size
// (FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE); the range then reads as zeros.
func punchHole(f *os.File, off, n int64) error {
	const mode = 0x02 | 0x01
	var ferr error
	err := rawControl(f, func(fd uintptr) { ferr = syscall.Fallocate(int(fd), mode, off, n) })
	if err != nil {
		return err
	}
	return ferr
}

// populateWrite write-faults the pages of b with MADV_POPULATE_WRITE
// (Linux 5.14+); errUnsupported when the kernel does not have it.
func populateWrite(b []byte) error {
	const madvPopulateWrite = 23
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), madvPopulateWrite)
	switch e {
	case 0:
		return nil
	case syscall.EINVAL:
		return errUnsupported
	}
	return e
}
