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

// WithStoreReserveFault makes f decide, before the brokers reserve the disk
// blocks of a commit-log or consume-queue file (a few MiB ahead of the
// writes), whether the reservation fails: syscall.ENOSPC fails it as a full
// disk does, and sends are then refused with SERVICE_NOT_AVAILABLE until a
// reservation retried every retry interval succeeds.
func WithStoreReserveFault(f func(path string, off, n int64) error, retry time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(bc *broker.Config) {
			bc.StoreReserveFault, bc.StoreWriteRetryInterval = f, retry
		})
	}
}

// WithStoreSyncFault makes f decide, before each device sync of a broker's
// commit-log file, whether it fails as fdatasync does on an I/O error. After
// a failed sync a broker acknowledges nothing more: sync-flush sends are
// answered FLUSH_DISK_TIMEOUT, later sends are refused with
// SERVICE_NOT_AVAILABLE, and the runtime info's storeNotWritableReason says
// why, until a sync retried every retry interval succeeds.
func WithStoreSyncFault(f func(path string) error, retry time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(bc *broker.Config) {
			bc.StoreSyncFault, bc.StoreWriteRetryInterval = f, retry
		})
	}
}
