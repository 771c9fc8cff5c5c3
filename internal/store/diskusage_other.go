//go:build !unix

package store

import "errors"

// statfsUsage is the default DiskUsageFunc where no reading is
// implemented: callers assume room.
func statfsUsage(string) (used, total uint64, err error) {
	return 0, 0, errors.New("rocketmq: disk usage not available on this system")
}
