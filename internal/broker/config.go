package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
)

// Config configures a Broker. Zero fields take Java's defaults
// (docs/PROTOCOL.md §9.14) through withDefaults.
type Config struct {
	ClusterName string // DefaultCluster
	BrokerName  string // broker-a
	BrokerID    int64  // 0 = master

	// ListenAddr is where the broker listens ("127.0.0.1:0" picks a port).
	ListenAddr string
	// AdvertiseAddr is the ip:port published to NameServers and written as
	// store host; empty means the bound address.
	AdvertiseAddr string
	// NameServers receive REGISTER_BROKER at start, every RegisterInterval
	// and after topic changes.
	NameServers []string

	// StoreDir is the store root (commitlog/, consumequeue/, index/, config/).
	StoreDir             string
	FlushMode            store.FlushMode
	FlushInterval        time.Duration // async flush period; store default
	CommitLogSegmentSize int64         // store default (1 GiB)
	ConsumeQueueEntries  int           // entries per consume queue file; store default
	IndexSlots           int           // store default
	IndexEntries         int           // store default
	MaxMessageSize       int           // 4 MiB

	// Retention of commit-log, consume-queue and index files (Java
	// MessageStoreConfig names and defaults; docs/DESIGN.md "Retention").
	FileReservedTime                  time.Duration // fileReservedTime: 72 h
	DeleteWhen                        string        // deleteWhen: "04"; several hours as "01;04"
	DiskMaxUsedSpaceRatio             int           // diskMaxUsedSpaceRatio: 75 (percent)
	DiskSpaceCleanForciblyRatio       int           // diskSpaceCleanForciblyRatio: 85 (percent)
	DeleteCommitLogFilesInterval      time.Duration // deleteCommitLogFilesInterval: 100 ms; negative: none
	DestroyMappedFileIntervalForcibly time.Duration // destroyMapedFileIntervalForcibly: 120 s
	CleanResourceInterval             time.Duration // cleanResourceInterval: 10 s; negative: no pass
	// RetentionClock and RetentionDiskUsage replace the store's clock and
	// disk reading (tests); nil keeps time.Now and statfs.
	RetentionClock     func() time.Time
	RetentionDiskUsage store.DiskUsageFunc

	// DisableAutoCreateTopic turns autoCreateTopicEnable off.
	DisableAutoCreateTopic bool
	// DisableAutoCreateGroup turns autoCreateSubscriptionGroup off.
	DisableAutoCreateGroup bool
	// DefaultTopicQueueNums is the queue count of TBW102 (8).
	DefaultTopicQueueNums int32
	BrokerPermission      int32 // 6 (read + write)

	// DisableLongPolling answers pulls after ShortPollingTime instead of
	// holding them for the request's suspend timeout.
	DisableLongPolling bool
	ShortPollingTime   time.Duration // 1 s
	LongPollCheck      time.Duration // 5 s: periodic re-check of held pulls

	RegisterInterval    time.Duration // 30 s
	ChannelExpiry       time.Duration // 120 s without heartbeat
	ClientScanInterval  time.Duration // 10 s
	OffsetFlushInterval time.Duration // 5 s

	// DelayLevels is messageDelayLevel: space-separated delays of levels
	// 1, 2, ... with units s, m, h, d (and ms, an extension for tests).
	// Default Java's 18 levels "1s 5s ... 2h".
	DelayLevels string
	// DelayCheckInterval bounds how long the delay-level service sleeps
	// between looks at the SCHEDULE_TOPIC_XXXX queues (100 ms).
	DelayCheckInterval time.Duration
	// TimerPrecision is timerPrecisionMs of 5.x timer messages (1 s): a
	// delivery time is aligned down to it and delivered one step later.
	TimerPrecision time.Duration
	// TimerMaxDelay is timerMaxDelaySec (3 days): timer messages due
	// further ahead are MESSAGE_ILLEGAL.
	TimerMaxDelay time.Duration
	// DisableTimer turns timerWheelEnable off: timer messages are refused
	// with SYSTEM_ERROR.
	DisableTimer bool

	RegionID string // DefaultRegion
	TraceOff bool   // TRACE_ON=false in send responses

	// TraceTopicEnable is traceTopicEnable (false): the broker creates the
	// message trace topic at start, one queue, as Java's TopicConfigManager.
	TraceTopicEnable bool
	// MsgTraceTopicName is msgTraceTopicName (RMQ_SYS_TRACE_TOPIC).
	MsgTraceTopicName string

	// ClientCallTimeout bounds the wait for a consumer's answer when the
	// broker asks it on an admin's behalf (5 s; broker2client.go).
	ClientCallTimeout time.Duration

	// LockMaxLiveTime is rocketmq.broker.rebalance.lockMaxLiveTime (60 s):
	// a queue lock not renewed for this long may be taken by another
	// client.
	LockMaxLiveTime time.Duration
	// LockTableMax bounds the queue locks held over all groups (65536).
	LockTableMax int

	// TransactionCheckInterval is transactionCheckInterval (60 s): how
	// often half messages without a decision are looked at.
	TransactionCheckInterval time.Duration
	// TransactionTimeout is transactionTimeOut (6 s): a half message
	// younger than this (or than its CHECK_IMMUNITY_TIME_IN_SECONDS) is
	// not checked yet.
	TransactionTimeout time.Duration
	// TransactionCheckMax is transactionCheckMax (15): a half message
	// checked this often without an answer is discarded to
	// TRANS_CHECK_MAX_TIME_TOPIC.
	TransactionCheckMax int
	// TransactionMaxPending bounds the undecided transactions the broker
	// tracks (1,000,000; a few dozen bytes each); beyond it half messages
	// are refused with SYSTEM_BUSY. Java tracks none in memory.
	TransactionMaxPending int

	// EnablePropertyFilter is enablePropertyFilter (false): SQL92
	// subscriptions are checked, accepted and filtered by the messages'
	// properties (docs/PROTOCOL.md §9.16) instead of refused with
	// SYSTEM_ERROR.
	EnablePropertyFilter bool

	// MaxQueueNums bounds a topic's read and write queue counts (1024):
	// UPDATE_AND_CREATE_TOPIC outside 1..MaxQueueNums is refused, an
	// auto-created topic gets at most this many and a loaded topics.json is
	// clamped to it. Java checks no bound; 1024 is the largest count it
	// creates itself (BenchmarkTest).
	MaxQueueNums int32

	// Broker under load (docs/DESIGN.md "Broker under load").
	//
	// MaxPullSuspend bounds how long a pull that found nothing is held
	// (20 s, DefaultLitePullConsumer's brokerSuspendMaxTimeMillis, the
	// largest a Java client asks for by default); a suspend timeout ≤ 0 is
	// held one LongPollCheck, as Java answers it at its next check.
	MaxPullSuspend time.Duration
	// MaxHeartbeatGroups refuses a heartbeat carrying more consumer
	// groups than this; 0, the default, sets no limit (Java has none).
	MaxHeartbeatGroups int
	// CompressedRegister is compressedRegister (false): REGISTER_BROKER
	// bodies are deflated, which NameServers since 4.8 accept.
	CompressedRegister bool
	// MaxOpenQueueFiles caps the consume-queue files kept open and mapped
	// at once (store default 1024; Java keeps all of them open).
	MaxOpenQueueFiles int

	// AclEnable is aclEnable (false): every request is checked against the
	// accounts of AclFile as Java's PlainAccessValidator does.
	AclEnable bool
	// AclFile is the accounts file in plain_acl.yml format; required with
	// AclEnable (Java reads conf/plain_acl.yml under ROCKETMQ_HOME).
	AclFile string
	// AclReloadInterval is how often AclFile is looked at for changes
	// (5 s, Java's AclFileWatchService).
	AclReloadInterval time.Duration

	// Java configuration files (docs/DESIGN.md "Java configuration files").
	//
	// ConfigPath is brokerConfigPath: the file UPDATE_BROKER_CONFIG
	// rewrites with the whole effective configuration, as Java's
	// Configuration.persist does (StoreDir/config/broker.properties; a
	// broker started from a broker.conf uses that file).
	ConfigPath string
	// JavaProperties holds broker.conf keys that are read, checked and
	// shown by GET_BROKER_CONFIG but carried by no other field
	// (SetProperty fills it).
	JavaProperties map[string]string

	// MaxHandlers bounds concurrent request handlers (server default).
	MaxHandlers int

	// Network limits of the broker's server, each zero for the server's
	// default (Java has none of them): MaxConns caps open connections
	// (negative: no cap; default three quarters of the open-files limit);
	// MaxConnPending (64) and MaxConnOutbound (16 MiB) bound one
	// connection's running requests and queued reply bytes before its
	// input is paused; MaxConnStall (60 s) closes a paused connection
	// whose replies have not drained that long; MaxConnInbound (64 MiB)
	// closes a paused connection that reads its replies but has that much
	// input waiting.
	MaxConns        int
	MaxConnPending  int
	MaxConnOutbound int
	MaxConnStall    time.Duration
	MaxConnInbound  int

	// TLS of the broker's port (Java's TlsSystemConfig): TLS holds the
	// server certificate; TLSMode defaults to server.TLSPermissive when TLS
	// is set (Java's tls.server.mode default) and to disabled otherwise.
	// NameServerTLS, when set, is the client TLS configuration of the
	// broker's NameServer connections (Java's tls.enable on the broker).
	TLS           *tls.Config
	TLSMode       server.TLSMode
	NameServerTLS *tls.Config

	Logger *slog.Logger

	// OnPanic is server.Config.OnPanic, for tests.
	OnPanic func(code int32, v any)

	// A full disk (Java MessageStoreConfig, CleanCommitLogService).

	// DiskSpaceWarningLevelRatio: above this percentage of the store's disk
	// used, sends are refused with SERVICE_NOT_AVAILABLE (90).
	DiskSpaceWarningLevelRatio int
	// DiskCheckInterval is how often the disk use is read
	// (cleanResourceInterval, 10 s).
	DiskCheckInterval time.Duration
	// StoreWriteRetryInterval is how often a failed commit-log write is
	// retried; sends are refused until a retry succeeds (1 s).
	StoreWriteRetryInterval time.Duration
	// DiskUsage reads the disk's used and total bytes (store.Config.DiskUsage;
	// default statfs), for tests.
	DiskUsage store.DiskUsageFunc
	// StoreWriteFault is store.Config.WriteFault, for tests.
	StoreWriteFault func(path string, off int64, n int) (written int, err error)
	// StoreReserveFault is store.Config.ReserveFault, for tests.
	StoreReserveFault func(path string, off, n int64) error
	// StoreSyncFault is store.Config.SyncFault, for tests.
	StoreSyncFault func(path string) error

	// Replication (Java MessageStoreConfig and BrokerConfig names;
	// docs/DESIGN.md "Replication", docs/PROTOCOL.md §11).

	// Role is brokerRole (ASYNC_MASTER). A SLAVE needs BrokerID > 0.
	Role BrokerRole
	// HAListenAddr is where a master's HA service listens; empty: the
	// listen host with HAListenPort.
	HAListenAddr string
	// HAListenPort is haListenPort; 0: the listen port + 1 (a free port
	// when the listen port is 0).
	HAListenPort int
	// BrokerIP2 is brokerIP2, the host of the published HA address
	// (default the published address's host).
	BrokerIP2 string
	// HAMasterAddress is haMasterAddress: a slave's master HA address;
	// empty: the one REGISTER_BROKER answers carry.
	HAMasterAddress string
	// HASendHeartbeatInterval is haSendHeartbeatInterval (5 s).
	HASendHeartbeatInterval time.Duration
	// HAHousekeepingInterval is haHousekeepingInterval (20 s).
	HAHousekeepingInterval time.Duration
	// HATransferBatchSize is haTransferBatchSize (32 KiB).
	HATransferBatchSize int
	// HASlaveFallbehindMax is haSlaveFallbehindMax (256 MiB): a slave
	// further behind is not waited for by a SYNC_MASTER.
	HASlaveFallbehindMax int64
	// SlaveReadEnable is slaveReadEnable (false): pulls may be sent to a
	// slave, and a master suggests it for messages not in memory.
	SlaveReadEnable bool
	// AccessMessageInMemoryMaxRatio is accessMessageInMemoryMaxRatio (40,
	// percent of PhysicalMemory); negative means 0.
	AccessMessageInMemoryMaxRatio int
	// PhysicalMemory replaces the machine's memory size in the slave-read
	// rule (tests); 0: the machine's.
	PhysicalMemory int64
	// SlaveTimeout is slaveTimeout (3 s): how long a SYNC_MASTER send
	// waits for a slave before FLUSH_SLAVE_TIMEOUT.
	SlaveTimeout time.Duration
	// SlaveSyncInterval is how often a slave copies its master's topics,
	// groups and offsets (10 s, first after at most 3 s, as Java).
	SlaveSyncInterval time.Duration
	// HAConnectRetryInterval separates a slave's connection attempts (5 s).
	HAConnectRetryInterval time.Duration
	// VIPChannel opens the VIP port (fastListenPort) too, as Java brokers
	// always do; Java slaves copy their master's topics through it.
	// FastListenPort is that port; 0: the listen port - 2. Default off.
	VIPChannel     bool
	FastListenPort int
}

func (c Config) withDefaults() (Config, error) {
	if c.ClusterName == "" {
		c.ClusterName = "DefaultCluster"
	}
	if c.BrokerName == "" {
		c.BrokerName = "broker-a"
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:10911"
	}
	if c.StoreDir == "" {
		return c, errors.New("rocketmq: broker: StoreDir is required")
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = 4 << 20
	}
	if c.DefaultTopicQueueNums == 0 {
		c.DefaultTopicQueueNums = 8
	}
	if c.BrokerPermission == 0 {
		c.BrokerPermission = 6
	}
	if c.ShortPollingTime == 0 {
		c.ShortPollingTime = time.Second
	}
	if c.LongPollCheck == 0 {
		c.LongPollCheck = 5 * time.Second
	}
	if c.RegisterInterval == 0 {
		c.RegisterInterval = 30 * time.Second
	}
	if c.ChannelExpiry == 0 {
		c.ChannelExpiry = 120 * time.Second
	}
	if c.ClientScanInterval == 0 {
		c.ClientScanInterval = 10 * time.Second
	}
	if c.OffsetFlushInterval == 0 {
		c.OffsetFlushInterval = 5 * time.Second
	}
	if c.DelayLevels == "" {
		c.DelayLevels = DefaultDelayLevelString
	}
	if c.DelayCheckInterval <= 0 {
		c.DelayCheckInterval = 100 * time.Millisecond
	}
	if c.TimerPrecision <= 0 {
		c.TimerPrecision = time.Second
	}
	if c.DiskSpaceWarningLevelRatio <= 0 {
		c.DiskSpaceWarningLevelRatio = 90
	}
	if c.DiskCheckInterval <= 0 {
		c.DiskCheckInterval = 10 * time.Second
	}
	if c.StoreWriteRetryInterval <= 0 {
		c.StoreWriteRetryInterval = time.Second
	}
	if c.TimerPrecision < time.Millisecond {
		c.TimerPrecision = time.Millisecond
	}
	if c.TimerMaxDelay <= 0 {
		c.TimerMaxDelay = 3 * 24 * time.Hour
	}
	if c.ClientCallTimeout <= 0 {
		c.ClientCallTimeout = defaultClientCallTimeout
	}
	if c.LockMaxLiveTime <= 0 {
		c.LockMaxLiveTime = defaultLockMaxLiveTime
	}
	if c.LockTableMax <= 0 {
		c.LockTableMax = defaultLockTableMax
	}
	if c.TransactionCheckInterval <= 0 {
		c.TransactionCheckInterval = 60 * time.Second
	}
	if c.TransactionTimeout <= 0 {
		c.TransactionTimeout = 6 * time.Second
	}
	if c.TransactionCheckMax <= 0 {
		c.TransactionCheckMax = 15
	}
	if c.TransactionMaxPending <= 0 {
		c.TransactionMaxPending = 1_000_000
	}
	if c.MaxQueueNums <= 0 {
		c.MaxQueueNums = defaultMaxQueueNums
	}
	if c.MaxPullSuspend <= 0 {
		c.MaxPullSuspend = 20 * time.Second
	}
	if c.MaxHeartbeatGroups < 0 {
		c.MaxHeartbeatGroups = 0
	}
	if c.RegionID == "" {
		c.RegionID = "DefaultRegion"
	}
	if c.MsgTraceTopicName == "" {
		c.MsgTraceTopicName = rocketmq.TopicTrace
	}
	if c.FileReservedTime <= 0 {
		c.FileReservedTime = 72 * time.Hour
	}
	if c.DeleteWhen == "" {
		c.DeleteWhen = "04"
	}
	if c.DiskMaxUsedSpaceRatio <= 0 {
		c.DiskMaxUsedSpaceRatio = 75
	}
	if c.DiskSpaceCleanForciblyRatio <= 0 {
		c.DiskSpaceCleanForciblyRatio = 85
	}
	if c.DeleteCommitLogFilesInterval == 0 {
		c.DeleteCommitLogFilesInterval = 100 * time.Millisecond
	}
	if c.DestroyMappedFileIntervalForcibly <= 0 {
		c.DestroyMappedFileIntervalForcibly = 120 * time.Second
	}
	if c.CleanResourceInterval == 0 {
		c.CleanResourceInterval = 10 * time.Second
	}
	if c.BrokerID < 0 {
		return c, fmt.Errorf("rocketmq: broker: invalid BrokerID %d", c.BrokerID)
	}
	if c.AclEnable && c.AclFile == "" {
		return c, errors.New("rocketmq: broker: AclEnable needs AclFile")
	}
	if err := c.haDefaults(); err != nil {
		return c, err
	}
	if c.ConfigPath == "" {
		c.ConfigPath = filepath.Join(c.StoreDir, "config", "broker.properties")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
