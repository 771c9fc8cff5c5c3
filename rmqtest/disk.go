package rmqtest

import (
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
)

// WithDiskUsage makes the brokers read their disk's used and total bytes
// from f instead of the file system, checked every interval (Java checks
// every 10 s) so that a test can fill and free the disk: above 90% used
// sends are refused with SERVICE_NOT_AVAILABLE. dir is a broker's commit
// log directory, under StoreDir(name).
func WithDiskUsage(f func(dir string) (used, total uint64, err error), interval time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(bc *broker.Config) {
			bc.DiskUsage, bc.DiskCheckInterval = f, interval
		})
	}
}

// WithStoreWriteFault makes f decide, before each commit-log write of the
// brokers (and each new commit-log file, with off 0 and n the file size),
// whether it fails: an error fails the write as a full disk would, after
// writing its first written bytes. A broker then refuses sends until a
// write retried every retry interval succeeds. path is the commit-log
// file, under StoreDir(name).
func WithStoreWriteFault(f func(path string, off int64, n int) (written int, err error), retry time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(bc *broker.Config) {
			bc.StoreWriteFault, bc.StoreWriteRetryInterval = f, retry
		})
	}
}
