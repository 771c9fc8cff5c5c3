package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync asks the drive itself to flush (F_FULLFSYNC): fsync on macOS
// stops at the drive's cache. File systems without it get fsync.
func fdatasync(fd uintptr) error {
	if _, err := unix.FcntlInt(fd, unix.F_FULLFSYNC, 0); err == nil {
		return nil
	}
	return unix.Fsync(int(fd))
}

func punchHole(*os.File, int64, int64) error { return errUnsupported }

// populateWrite is not available; the prefaulter touches each page.
func populateWrite([]byte) error { return errUnsupported }
