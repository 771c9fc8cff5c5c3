package store

// DiskUsageFunc reports the used and total bytes of the file system that
// holds dir. Retention and the full-disk guard read the disk through it, so
// tests can inject a reading instead of filling a real disk.
type DiskUsageFunc func(dir string) (used, total uint64, err error)

// usedRatio is used/total from f for dir; ok is false when the reading
// failed or the total is unknown, in which case callers assume room.
func usedRatio(f DiskUsageFunc, dir string) (ratio float64, ok bool) {
	used, total, err := f(dir)
	if err != nil || total == 0 {
		return 0, false
	}
	return float64(used) / float64(total), true
}
