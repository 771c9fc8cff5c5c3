//go:build !linux

package testutil

import "testing"

// SmallFS is Linux only: elsewhere it skips the test.
func SmallFS(t testing.TB, size int64) string {
	t.Helper()
	t.Skip("a small tmpfs is only mounted on Linux")
	return ""
}
