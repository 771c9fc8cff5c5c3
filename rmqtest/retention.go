package rmqtest

import (
	"errors"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
)

// Retention sets how the brokers delete old store files (docs/DESIGN.md
// "Retention"). Zero fields keep Java's defaults.
type Retention struct {
	// FileReservedTime: commit-log files whose last message is younger
	// are kept (72 h).
	FileReservedTime time.Duration
	// DeleteWhen: the hours at which expired files go, as "04" or "01;04".
	DeleteWhen string
	// DiskMaxUsedSpaceRatio and DiskSpaceCleanForciblyRatio (percent, 75
	// and 85): above the first expired files go at any hour, above the
	// second the oldest go whatever their age.
	DiskMaxUsedSpaceRatio       int
	DiskSpaceCleanForciblyRatio int
	// CleanInterval is the period of the retention pass (10 s); negative
	// runs none, Cluster.CleanStore then runs one.
	CleanInterval time.Duration
	// Clock replaces the stores' clock (their message store times too).
	Clock func() time.Time
	// DiskUsage replaces the reading of the disk's used and total bytes.
	DiskUsage func(dir string) (used, total uint64, err error)
}

// WithRetention sets the brokers' retention.
func WithRetention(r Retention) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(bc *broker.Config) {
			bc.FileReservedTime = r.FileReservedTime
			bc.DeleteWhen = r.DeleteWhen
			bc.DiskMaxUsedSpaceRatio = r.DiskMaxUsedSpaceRatio
			bc.DiskSpaceCleanForciblyRatio = r.DiskSpaceCleanForciblyRatio
			bc.CleanResourceInterval = r.CleanInterval
			bc.RetentionClock = r.Clock
			bc.RetentionDiskUsage = r.DiskUsage
		})
	}
}

// CleanStore runs one retention pass on the named broker now and returns
// how many commit-log files it deleted.
func (c *Cluster) CleanStore(name string) (int, error) {
	c.mu.Lock()
	s, err := c.slot(name)
	var b *broker.Broker
	if err == nil {
		b = s.b
	}
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if b == nil {
		return 0, ErrBrokerStopped
	}
	return b.CleanStore().CommitLogFiles, nil
}

// ErrBrokerStopped is returned for a broker that is not running.
var ErrBrokerStopped = errors.New("rocketmq: rmqtest: broker is not running")
