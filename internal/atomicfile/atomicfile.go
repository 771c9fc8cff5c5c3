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

// step names the points Write goes through, so a test can fail it midway.
type step int

const (
	stepWritten  step = iota // the temporary file is written and synced
	stepBackedUp             // the previous file has become path.bak
)

// Write replaces path with data atomically and durably, creating the
// directory if needed. Its errors name the path, for the caller to wrap. The temporary file is path.tmp; one writer per path
// at a time.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, nil, nil)
}

// WriteKeepingBackup is Write that first renames the current file to
// path.bak when keep accepts its content (a well-formed document), so a
// reader has a fallback while the new file is not yet in place.
func WriteKeepingBackup(path string, data []byte, perm os.FileMode, keep func(old []byte) bool) error {
	return write(path, data, perm, keep, nil)
}

func write(path string, data []byte, perm os.FileMode, keep func([]byte) bool, fail func(step) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + TempSuffix
	err := writeSynced(tmp, data, perm)
	if err == nil && fail != nil {
		err = fail(stepWritten)
	}
	if err == nil && keep != nil {
		if cur, rerr := os.ReadFile(path); rerr == nil && keep(cur) {
			err = os.Rename(path, path+BackupSuffix)
			if err == nil && fail != nil {
				err = fail(stepBackedUp)
			}
		}
	}
	if err == nil {
		err = os.Rename(tmp, path)
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
