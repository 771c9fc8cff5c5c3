//go:build unix && !linux

package store

import (
	"errors"
	"os"
	"syscall"
)

// allocateRange is not available: the caller writes zeros.
func allocateRange(*os.File, int64, int64) error { return errUnsupported }

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
