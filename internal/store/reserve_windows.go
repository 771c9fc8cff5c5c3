package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// allocateRange does nothing: NTFS allocates a file's clusters when it is
// extended (files are not sparse unless marked so), which the mapping
// does for the whole file.
func allocateRange(*os.File, int64, int64) error { return nil }

func isNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL)
}
