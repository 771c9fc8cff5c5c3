//go:build unix

package store

import "syscall"

// statfsUsage is the default DiskUsageFunc: blocks in use (total minus
// free, as df counts them) over total blocks.
func statfsUsage(dir string) (used, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bs := uint64(st.Bsize)
	total = uint64(st.Blocks) * bs
	return total - uint64(st.Bfree)*bs, total, nil
}
