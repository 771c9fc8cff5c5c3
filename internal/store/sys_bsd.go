//go:build unix && !linux && !darwin

package store

import (
	"os"
	"syscall"
)

func fdatasync(fd uintptr) error { return syscall.Fsync(int(fd)) }

func punchHole(*os.File, int64, int64) error { return errUnsupported }

// populateWrite is not available; the prefaulter touches each page.
func populateWrite([]byte) error { return errUnsupported }
