package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallFS mounts a tmpfs of size bytes on a new directory, unmounted at
// cleanup (register cleanups that use it, such as closing a store, after
// calling it), so that a test can fill a real file system. It skips the
// test where mounting is not allowed (not root, or no mount permission in a
// container).
func SmallFS(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
