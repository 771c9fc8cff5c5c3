package store

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// FlushMode selects when appended data is forced to the device.
type FlushMode int

const (
	// FlushAsync syncs in the background every FlushInterval (Java
	// ASYNC_FLUSH). An acknowledged message is in the page cache: it
	// survives the death of the process, not of the machine.
	FlushAsync FlushMode = iota
	// FlushSync makes PutMessage with WaitFlush wait until a device sync
	// covers the record (Java SYNC_FLUSH, group commit).
	FlushSync
)

// Config configures a Store. Zero fields take the documented defaults.
type Config struct {
	// Dir is the store root (storePathRootDir). Required.
	Dir string
	// CommitLogSegmentSize is the size of each commit-log file. Default 1 GiB.
	CommitLogSegmentSize int64
	// ConsumeQueueEntriesPerFile is the number of 20-byte entries per
	// consume-queue file. Default 300000.
	ConsumeQueueEntriesPerFile int
	// IndexSlots and IndexEntries size each index file. Defaults 5000000
	// and 20000000 (420 MB files, created sparse).
	IndexSlots   int
	IndexEntries int
	// DisableIndex turns off the key index (messageIndexEnable=false).
	DisableIndex bool
	// FlushMode: FlushAsync (default) or FlushSync.
	FlushMode FlushMode
	// FlushInterval is the background commit-log sync period. Default 500 ms.
	FlushInterval time.Duration
	// SyncFlushTimeout bounds a FlushSync wait. Default 5 s.
	SyncFlushTimeout time.Duration
	// CheckpointInterval is the period of consume-queue/index syncs and
	// checkpoint writes. Default 1 s.
	CheckpointInterval time.Duration
	// MaxMessageSize is the largest body accepted. Default 4 MiB.
	MaxMessageSize int
	// MaxTransferBytes and MaxTransferCount cap one GetMessages call
	// (maxTransferBytesOnMessageInMemory/CountOnMessageInMemory). Defaults
	// 256 KiB and 32.
	MaxTransferBytes int
	MaxTransferCount int
	// MaxOpenQueueFiles caps the consume-queue files kept open and mapped
	// at once; others are mapped again when read or written. Java maps
	// them all. Default 1024.
	MaxOpenQueueFiles int
	// MaxQueryNum caps QueryByKey results (maxMsgsNumBatch). Default 64.
	MaxQueryNum int
	// PrefaultBytes is how far ahead of the write position a background
	// goroutine faults in commit-log pages (FlushAsync only: FlushSync
	// appends use pwrite, see appendLocked). Default 1 MiB; negative
	// disables.
	PrefaultBytes int64
	// Preallocate reserves all the blocks of each new commit-log segment
	// when it is created. Default off: blocks are reserved a few MiB ahead
	// of the write position (reserve.go), so a full disk fails an append
	// either way, and a segment larger than the free space still fills it.
	Preallocate bool
	// DiskUsage reads the used and total bytes of the disk holding Dir.
	// Default: statfs (unknown on systems without it, which counts as room).
	DiskUsage DiskUsageFunc

	// A full disk and failed writes (diskguard.go; Java DefaultMessageStore
	// CleanCommitLogService and RunningFlags).

	// DiskSpaceWarningLevelRatio: while more than this percentage of the
	// disk holding Dir is used, appends are refused with ErrDiskFull
	// (Java diskSpaceWarningLevelRatio). Default 90.
	DiskSpaceWarningLevelRatio int
	// DiskCheckInterval is how often the disk use is read (Java
	// cleanResourceInterval). Default 10 s.
	DiskCheckInterval time.Duration
	// WriteRetryInterval is how often, after a failed commit-log write or
	// segment creation, the store retries the failed step; appends are
	// refused until a retry succeeds. Default 1 s.
	WriteRetryInterval time.Duration
	// WriteFault, if set, is asked before each commit-log write (and each
	// new segment, with off 0 and n the segment size); an error fails the
	// write as an I/O error would, after writing the first written bytes
	// of it. For fault-injection tests.
	WriteFault func(path string, off int64, n int) (written int, err error)
	// ReserveFault, if set, is asked before each reservation of the blocks
	// of a commit-log or consume-queue file; an error fails it as fallocate
	// would (ENOSPC: a full disk). For fault-injection tests.
	ReserveFault func(path string, off, n int64) error
	// SyncFault, if set, is asked before each device sync of a commit-log
	// file; an error fails it as fdatasync would (EIO). For fault-injection
	// tests.
	SyncFault func(path string) error

	// Replica makes the store a slave's copy of a master's commit log: puts
	// are refused with ErrReplica and AppendReplica writes (ha.go).
	Replica bool

	// Logger receives store events. Default: discard.
	Logger *slog.Logger
	// Clock gives store timestamps. Default time.Now.
	Clock func() time.Time
	// OnDispatch, if set, is called after each message becomes readable
	// (outside every store lock, on the appending goroutine), so the broker
	// can wake long-polling pulls. Not called during recovery.
	OnDispatch func(DispatchEvent)
	// TagsCode computes a record's consume-queue tags code when recovery
	// rebuilds consume queues; it must agree with PutRequest.TagsCode.
	// Default: Java hashCode of the TAGS property, 0 without tags. The
	// broker overrides it for SCHEDULE_TOPIC_XXXX (delivery time).
	TagsCode func(topic string, properties []byte, storeTimestamp int64) int64

	// Retention (Java MessageStoreConfig; docs/DESIGN.md "Retention").
	// FileReservedTime keeps commit-log files whose last message is
	// younger. Default 72 h (fileReservedTime).
	FileReservedTime time.Duration
	// DeleteWhen lists the hours of the day (Clock's zone) at which expired
	// files are deleted, as "04" or "01;04". Default "04".
	DeleteWhen string
	// DiskMaxUsedSpaceRatio (percent): above it expired files are deleted
	// at any hour. Default 75.
	DiskMaxUsedSpaceRatio int
	// DiskSpaceCleanForciblyRatio (percent): above it the oldest files are
	// deleted whatever their age. Default 85.
	DiskSpaceCleanForciblyRatio int
	// DeleteCommitLogFilesInterval separates two deletions of one pass.
	// Default 100 ms; negative: no pause.
	DeleteCommitLogFilesInterval time.Duration
	// DestroyMappedFileIntervalForcibly bounds how long a reader can keep a
	// deleted commit-log file mapped. Default 120 s.
	DestroyMappedFileIntervalForcibly time.Duration
	// CleanResourceInterval is the period of the background retention
	// pass; 0 runs none (Clean can still be called). Java's is 10 s.
	CleanResourceInterval time.Duration
}

func (c Config) normalize() (Config, error) {
	if c.Dir == "" {
		return c, errors.New("rocketmq: store: Config.Dir is required")
	}
	setDefault(&c.CommitLogSegmentSize, 1<<30)
	setDefault(&c.ConsumeQueueEntriesPerFile, 300000)
	setDefault(&c.IndexSlots, 5000000)
	setDefault(&c.IndexEntries, 20000000)
	setDefault(&c.FlushInterval, 500*time.Millisecond)
	setDefault(&c.SyncFlushTimeout, 5*time.Second)
	setDefault(&c.CheckpointInterval, time.Second)
	setDefault(&c.MaxMessageSize, 4<<20)
	setDefault(&c.MaxTransferBytes, 256<<10)
	setDefault(&c.MaxTransferCount, 32)
	setDefault(&c.MaxQueryNum, 64)
	setDefault(&c.MaxOpenQueueFiles, 1024)
	setDefault(&c.FileReservedTime, 72*time.Hour)
	if c.DeleteWhen == "" {
		c.DeleteWhen = "04"
	}
	setDefault(&c.DiskMaxUsedSpaceRatio, 75)
	setDefault(&c.DiskSpaceCleanForciblyRatio, 85)
	if c.DeleteCommitLogFilesInterval == 0 {
		c.DeleteCommitLogFilesInterval = 100 * time.Millisecond
	}
	setDefault(&c.DestroyMappedFileIntervalForcibly, 120*time.Second)
	setDefault(&c.DiskSpaceWarningLevelRatio, 90)
	setDefault(&c.DiskCheckInterval, 10*time.Second)
	setDefault(&c.WriteRetryInterval, time.Second)
	if c.PrefaultBytes == 0 {
		c.PrefaultBytes = 1 << 20
	}
	if c.DiskUsage == nil {
		c.DiskUsage = statfsUsage
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.TagsCode == nil {
		c.TagsCode = defaultTagsCode
	}
	switch {
	case c.CommitLogSegmentSize < 1024:
		return c, fmt.Errorf("rocketmq: store: CommitLogSegmentSize %d is below 1024", c.CommitLogSegmentSize)
	case c.IndexEntries < 2:
		return c, fmt.Errorf("rocketmq: store: IndexEntries %d is below 2", c.IndexEntries)
	case c.DiskSpaceWarningLevelRatio > 100:
		return c, fmt.Errorf("rocketmq: store: DiskSpaceWarningLevelRatio %d is above 100", c.DiskSpaceWarningLevelRatio)
	case c.FlushMode != FlushAsync && c.FlushMode != FlushSync:
		return c, fmt.Errorf("rocketmq: store: unknown FlushMode %d", c.FlushMode)
	}
	return c, nil
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
