package store

import "syscall"

// dropPages releases the page-table entries of a mapping about to be
// unmapped, 1 MiB at a time. munmap holds the address-space lock
// exclusively while it tears down the entries, which stalls every page
// fault of the process (appends fault the commit log's next pages);
// MADV_DONTNEED holds it shared, so the final munmap is short. Dirty pages
// stay in the page cache: nothing is lost by it.
func dropPages(b []byte) {
	const chunk = 1 << 20
	for off := 0; off < len(b); off += chunk {
		_ = syscall.Madvise(b[off:min(off+chunk, len(b))], syscall.MADV_DONTNEED)
	}
}
