//go:build unix && !linux

package store

import (
	"errors"
	"os"
	"syscall"
)

var errUnsupported = errors.New("not supported on this platform")

func fdatasync(fd uintptr) error { return syscall.Fsync(int(fd)) }

func fallocate(*os.File, int64) error { return nil }

func punchHole(*os.File, int64, int64) error { return errUnsupported }
