package store

import (
	"errors"
	"os"
	"syscall"
)

// allocateRange reserves the blocks of [off, off+n) without changing the
// data or the size (fallocate mode 0 on a range inside the file);
// errUnsupported when the file system cannot.
func allocateRange(f *os.File, off, n int64) error {
	var ferr error
	err := rawControl(f, func(fd uintptr) {
		for {
			ferr = syscall.Fallocate(int(fd), 0, off, n)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if errors.Is(ferr, syscall.EOPNOTSUPP) {
		return errUnsupported
	}
	return ferr
}

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
