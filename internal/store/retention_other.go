//go:build !linux

package store

// dropPages is a no-op where MADV_DONTNEED is not used.
func dropPages([]byte) {}
