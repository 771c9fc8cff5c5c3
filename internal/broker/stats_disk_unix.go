//go:build linux || darwin

package broker

import "syscall"

// diskSpace returns the total and free bytes of the file system of dir,
// zeros when unknown.
func diskSpace(dir string) (total, free int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0
	}
	bs := int64(st.Bsize)
	return int64(st.Blocks) * bs, int64(st.Bfree) * bs
}
