package broker

import "github.com/go-rocketmq/rocketmq/internal/store"

// applyRetention copies the retention settings into the store's config
// (Java DefaultMessageStore schedules CleanCommitLogService and
// CleanConsumeQueueService every cleanResourceInterval; the store runs
// that pass itself).
func (c Config) applyRetention(sc *store.Config) {
	sc.FileReservedTime = c.FileReservedTime
	sc.DeleteWhen = c.DeleteWhen
	sc.DiskMaxUsedSpaceRatio = c.DiskMaxUsedSpaceRatio
	sc.DiskSpaceCleanForciblyRatio = c.DiskSpaceCleanForciblyRatio
	sc.DeleteCommitLogFilesInterval = c.DeleteCommitLogFilesInterval
	sc.DestroyMappedFileIntervalForcibly = c.DestroyMappedFileIntervalForcibly
	sc.CleanResourceInterval = max(c.CleanResourceInterval, 0)
	if c.RetentionClock != nil {
		sc.Clock = c.RetentionClock
	}
	if c.RetentionDiskUsage != nil && sc.DiskUsage == nil {
		sc.DiskUsage = c.RetentionDiskUsage
	}
}

// CleanStore runs one retention pass now, as the periodic one does.
func (b *Broker) CleanStore() store.RetentionResult { return b.store.Clean() }
