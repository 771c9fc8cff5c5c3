// Package atomicfile replaces small files so that a crash leaves either the
// old content or the new, never a mix: the data goes to a temporary file
// next to the target, which is synced and renamed over it, and then the
// directory is synced so the rename itself survives a power loss. Java
// writes its config files the same way (MixAll.string2File).
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Suffixes of the files Write and WriteKeepingBackup use beside path.
const (
	TempSuffix   = ".tmp"
	BackupSuffix = ".bak"
)

// Step names a point a write has passed; a Hook sees them in this order.
type Step int

const (
	StepTempWritten Step = iota // the new content is synced in path.tmp
	StepBackedUp                // the previous content is synced in path.bak
	StepRenamed                 // path.tmp has replaced path; the directory is not synced yet
)

// Hook is called at each Step of a write; an error stops the write there,
// as a crash would. Tests use it to look at the files at every point.
type Hook func(Step) error

// Write replaces path with data atomically and durably, creating the
// directory if needed. Its errors name the path, for the caller to wrap.
// The temporary file is path.tmp: one writer per path at a time (the
// caller serializes).
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteHooked(path, data, perm, nil, nil)
}

// WriteKeepingBackup is Write that first copies the current file to
// path.bak when keep accepts its content (a well-formed document). path
// itself is never missing: it is replaced by one rename, so a reader finds
// the old or the new content there, and the backup only serves when path
// is damaged.
func WriteKeepingBackup(path string, data []byte, perm os.FileMode, keep func(old []byte) bool) error {
	return WriteHooked(path, data, perm, keep, nil)
}

// WriteHooked is WriteKeepingBackup (Write when keep is nil) calling hook,
// if not nil, at each Step.
func WriteHooked(path string, data []byte, perm os.FileMode, keep func(old []byte) bool, hook Hook) error {
	at := func(s Step) error {
		if hook == nil {
			return nil
		}
		return hook(s)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + TempSuffix
	err := writeSynced(tmp, data, perm)
	if err == nil {
		err = at(StepTempWritten)
	}
	if err == nil && keep != nil {
		// Java's MixAll.string2File copies the old content to .bak too, but
		// then deletes the file before the rename; here the rename replaces
		// it, so no crash leaves only the backup.
		if cur, rerr := os.ReadFile(path); rerr == nil && keep(cur) {
			err = writeSynced(path+BackupSuffix, cur, perm)
			if err == nil {
				err = at(StepBackedUp)
			}
		}
	}
	if err == nil {
		if err = os.Rename(tmp, path); err == nil {
			err = at(StepRenamed)
		}
	}
	if err != nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return nil
}

// writeSynced writes data to path and syncs it to the device.
func writeSynced(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteSynced writes data to path in place and syncs it: for files whose
// presence matters more than their content (a lock or abort marker).
func WriteSynced(path string, data []byte, perm os.FileMode) error {
	return writeSynced(path, data, perm)
}
