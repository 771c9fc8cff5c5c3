package rmqtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/namesrv"
	"github.com/go-rocketmq/rocketmq/internal/store"
)

// ErrUnknownBroker is returned for a broker name the cluster does not have.
var ErrUnknownBroker = errors.New("rocketmq: rmqtest: unknown broker")

// Option configures a Cluster.
type Option func(*config)

type config struct {
	brokers       int
	cluster       string
	dir           string
	syncFlush     bool
	segmentSize   int64
	cqEntries     int
	indexSlots    int
	indexEntries  int
	noLongPolling bool
	shortPolling  time.Duration
	longPollCheck time.Duration
	brokerExpiry  time.Duration
	register      time.Duration
	logger        *slog.Logger
	conns         connLimits
	noAutoCreate  bool
	nsAddr        string // NameServer listen address
	brokerAddr    string // first broker's listen address
	tweaks        []func(*broker.Config)
	nsPanic       func(code int32, v any)
	// noPropertyFilter turns the brokers' SQL92 filter off (on by default).
	noPropertyFilter bool

	aclYAML   string        // accounts written to <dir>/plain_acl.yml
	aclFile   string        // accounts file; ACL is on when set
	aclReload time.Duration // accounts file poll interval

	tls tlsSetup // WithTLS (tls.go)

	ha haSetup // WithSlaves, WithBrokerRole (slaves.go)
}

func defaultConfig() config {
	return config{
		brokers:      1,
		cluster:      "DefaultCluster",
		segmentSize:  64 << 20,
		cqEntries:    300_000,
		indexSlots:   50_000,
		indexEntries: 200_000,
		nsAddr:       "127.0.0.1:0",
		brokerAddr:   "127.0.0.1:0",
	}
}

// WithNameServerAddr sets the NameServer's listen address. Default
// "127.0.0.1:0" (a free port).
func WithNameServerAddr(addr string) Option { return func(c *config) { c.nsAddr = addr } }

// WithBrokerAddr sets the first broker's listen address; broker i listens
// on port+10*i, or on a free port when the port is 0. Default
// "127.0.0.1:0".
func WithBrokerAddr(addr string) Option { return func(c *config) { c.brokerAddr = addr } }

// brokerListenAddr is the listen address of the i-th broker.
func (c *config) brokerListenAddr(i int) (string, error) {
	host, portStr, err := net.SplitHostPort(c.brokerAddr)
	if err != nil {
		return "", fmt.Errorf("rocketmq: rmqtest: broker address %q: %w", c.brokerAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port+10*i > 65535 {
		return "", fmt.Errorf("rocketmq: rmqtest: broker address %q: bad port for %d brokers", c.brokerAddr, c.brokers)
	}
	if port != 0 {
		port += 10 * i
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// WithBrokers sets the number of brokers, named broker-a, broker-b, ...
// Default 1.
func WithBrokers(n int) Option { return func(c *config) { c.brokers = n } }

// WithClusterName sets the cluster name. Default "DefaultCluster".
func WithClusterName(name string) Option { return func(c *config) { c.cluster = name } }

// WithStoreDir keeps the brokers' stores under dir (one sub-directory per
// broker) instead of a temporary directory, so a later cluster can reopen
// them. StartCluster's default is t.TempDir(); NewCluster's is a directory
// it creates and removes on Close.
func WithStoreDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithSyncFlush makes brokers acknowledge sends only after fdatasync.
// Default: asynchronous flush, like Java's ASYNC_FLUSH.
func WithSyncFlush() Option { return func(c *config) { c.syncFlush = true } }

// WithCommitLogSegmentSize sets the CommitLog file size. Default 64 MiB
// (Java's 1 GiB is needlessly large for tests).
func WithCommitLogSegmentSize(n int64) Option { return func(c *config) { c.segmentSize = n } }

// WithConsumeQueueEntries sets the entries per ConsumeQueue file. Default
// 300000; 0 takes the store's default.
func WithConsumeQueueEntries(n int) Option { return func(c *config) { c.cqEntries = n } }

// WithIndexSize sets the IndexFile hash slots and entries. Default 50000
// and 200000; 0 takes the store's default (Java's).
func WithIndexSize(slots, entries int) Option {
	return func(c *config) { c.indexSlots, c.indexEntries = slots, entries }
}

// WithShortPolling disables long polling: pulls at the end of a queue are
// answered after d instead of being held for their suspend timeout.
func WithShortPolling(d time.Duration) Option {
	return func(c *config) { c.noLongPolling, c.shortPolling = true, d }
}

// WithLongPollCheck sets how often held pulls re-check their queue besides
// being woken by new messages. Default 5 s, as Java.
func WithLongPollCheck(d time.Duration) Option { return func(c *config) { c.longPollCheck = d } }

// WithBrokerExpiry sets how long the NameServer keeps a broker that stopped
// registering. Default 120 s.
func WithBrokerExpiry(d time.Duration) Option { return func(c *config) { c.brokerExpiry = d } }

// WithRegisterInterval sets how often brokers re-register. Default 30 s.
func WithRegisterInterval(d time.Duration) Option { return func(c *config) { c.register = d } }

// WithPropertyFilter turns the brokers' SQL92 property filter
// (enablePropertyFilter) on or off. Default on, unlike a Java broker, so
// that SQL92 subscriptions work in tests; off, SQL92 subscriptions are
// refused as by a default Java broker.
func WithPropertyFilter(on bool) Option { return func(c *config) { c.noPropertyFilter = !on } }

// WithoutAutoCreateTopic turns off topic auto-creation on the brokers.
func WithoutAutoCreateTopic() Option { return func(c *config) { c.noAutoCreate = true } }

// WithDelayLevels sets the brokers' delay level table (messageDelayLevel):
// space-separated delays of levels 1, 2, ... with units s, m, h, d, or ms
// for short test delays, e.g. "100ms 300ms 1s". Default Java's 18 levels
// "1s 5s 10s 30s 1m ... 2h". A bad table makes the cluster fail to start.
func WithDelayLevels(levels string) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) { b.DelayLevels = levels })
	}
}

// WithTimerPrecision sets the precision of 5.x timer messages
// (timerPrecisionMs): a message is delivered within one step after its
// time. Default 1 s.
func WithTimerPrecision(d time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) { b.TimerPrecision = d })
	}
}

// WithTransactionCheck sets how often the brokers look for undecided
// transactional half messages (transactionCheckInterval) and how old one
// must be before its producer group is asked (transactionTimeOut), so that
// tests see check-backs in about a second. Default Java's 60 s and 6 s.
func WithTransactionCheck(interval, timeout time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) {
			b.TransactionCheckInterval, b.TransactionTimeout = interval, timeout
		})
	}
}

// WithTransactionCheckMax sets how often the brokers ask about one
// transaction before discarding it to TRANS_CHECK_MAX_TIME_TOPIC
// (transactionCheckMax). Default Java's 15.
func WithTransactionCheckMax(n int) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) { b.TransactionCheckMax = n })
	}
}

// WithLockMaxLiveTime sets how long a broker keeps an orderly consumer's
// queue lock that is not renewed before another client of the group may
// take it (rocketmq.broker.rebalance.lockMaxLiveTime). Default 60 s, as
// Java.
func WithLockMaxLiveTime(d time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) { b.LockMaxLiveTime = d })
	}
}

// WithConnLimits sets the network limits of the NameServer and the brokers
// (broker.Config.MaxConns and the fields after it); zero keeps a default.
func WithConnLimits(maxConns, maxPending, maxOutbound int, maxStall time.Duration) Option {
	return func(c *config) {
		c.conns = connLimits{maxConns, maxPending, maxOutbound, maxStall}
	}
}

// connLimits are WithConnLimits' values.
type connLimits struct {
	maxConns, maxPending, maxOutbound int
	maxStall                          time.Duration
}

// WithLogger sends the servers' logs to l. Default: discarded.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithACLFile turns ACL on in every broker with the accounts of path, a
// file in Java's plain_acl.yml format, reloaded when it changes (every 5 s
// unless WithACLReloadInterval). The NameServer does not check ACL, as
// Java's does not. Cluster.CreateTopic does not sign its requests: create
// topics with the admin package and an admin account, or list 127.0.0.1
// in globalWhiteRemoteAddresses.
func WithACLFile(path string) Option { return func(c *config) { c.aclFile = path } }

// WithACL is WithACLFile with the file's content: it is written to
// plain_acl.yml in the cluster's directory.
func WithACL(accountsYAML string) Option { return func(c *config) { c.aclYAML = accountsYAML } }

// WithACLReloadInterval sets how often the accounts file is looked at.
func WithACLReloadInterval(d time.Duration) Option { return func(c *config) { c.aclReload = d } }

// Cluster is a running NameServer with its brokers.
type Cluster struct {
	cfg     config
	ns      *namesrv.NameServer
	nsAddr  string
	ownDir  bool // remove cfg.dir on Close
	nsFault broker.FaultTable
	mu      sync.Mutex
	brokers []*brokerSlot
}

type brokerSlot struct {
	name string
	id   int64 // 0: the master; slaves 1, 2, ...
	cfg  broker.Config
	b    *broker.Broker // nil while stopped
}

// StartCluster starts a cluster for t and stops it in t.Cleanup.
func StartCluster(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	opts = append([]Option{WithStoreDir(t.TempDir()), reportPanics(t)}, opts...)
	c, err := NewCluster(opts...)
	if err != nil {
		t.Fatalf("rmqtest: start cluster: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("rmqtest: close cluster: %v", err)
		}
	})
	return c
}

// NewCluster starts a cluster; Close stops it.
func NewCluster(opts ...Option) (*Cluster, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.brokers < 1 || cfg.brokers > 26 {
		return nil, fmt.Errorf("rocketmq: rmqtest: broker count %d out of range 1..26", cfg.brokers)
	}
	addrs := make([]string, cfg.brokers)
	for i := range addrs {
		addr, err := cfg.brokerListenAddr(i)
		if err != nil {
			return nil, err
		}
		addrs[i] = addr
	}
	c := &Cluster{cfg: cfg}
	if cfg.dir == "" {
		dir, err := os.MkdirTemp("", "rmqtest-")
		if err != nil {
			return nil, err
		}
		c.cfg.dir, c.ownDir = dir, true
	}
	if cfg.aclYAML != "" {
		c.cfg.aclFile = filepath.Join(c.cfg.dir, "plain_acl.yml")
		if err := os.MkdirAll(c.cfg.dir, 0o755); err != nil {
			c.cleanupDir()
			return nil, err
		}
		if err := os.WriteFile(c.cfg.aclFile, []byte(cfg.aclYAML), 0o600); err != nil {
			c.cleanupDir()
			return nil, err
		}
	}
	if err := c.cfg.setupTLS(); err != nil {
		c.cleanupDir()
		return nil, err
	}
	nsTLS, nsTLSMode := c.cfg.serverTLS()
	ns, err := namesrv.New(namesrv.Config{Logger: cfg.logger, BrokerExpiry: cfg.brokerExpiry,
		OnPanic: cfg.nsPanic, Intercept: c.interceptNameServer,
		MaxConns: cfg.conns.maxConns, MaxConnPending: cfg.conns.maxPending,
		MaxConnOutbound: cfg.conns.maxOutbound, MaxConnStall: cfg.conns.maxStall,
		TLS: nsTLS, TLSMode: nsTLSMode})
	if err != nil {
		c.cleanupDir()
		return nil, err
	}
	if err := ns.Start(cfg.nsAddr); err != nil {
		c.cleanupDir()
		return nil, err
	}
	c.ns, c.nsAddr = ns, ns.Addr()
	if err := cfg.ha.check(); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	for i := 0; i < cfg.brokers; i++ {
		name := fmt.Sprintf("broker-%c", 'a'+i)
		slot := &brokerSlot{name: name, cfg: c.brokerConfig(name)}
		slot.cfg.ListenAddr = addrs[i]
		c.cfg.ha.master(&slot.cfg)
		c.brokers = append(c.brokers, slot)
		if err := c.startSlot(slot); err != nil {
			c.Close(context.Background())
			return nil, err
		}
		if err := c.startSlaves(slot); err != nil {
			c.Close(context.Background())
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) brokerConfig(name string) broker.Config {
	cfg := c.cfg
	bc := broker.Config{
		ClusterName:            cfg.cluster,
		BrokerName:             name,
		ListenAddr:             "127.0.0.1:0",
		NameServers:            []string{c.nsAddr},
		StoreDir:               filepath.Join(cfg.dir, name),
		CommitLogSegmentSize:   cfg.segmentSize,
		ConsumeQueueEntries:    cfg.cqEntries,
		IndexSlots:             cfg.indexSlots,
		IndexEntries:           cfg.indexEntries,
		DisableLongPolling:     cfg.noLongPolling,
		ShortPollingTime:       cfg.shortPolling,
		LongPollCheck:          cfg.longPollCheck,
		RegisterInterval:       cfg.register,
		DisableAutoCreateTopic: cfg.noAutoCreate,
		Logger:                 cfg.logger,
		EnablePropertyFilter:   !cfg.noPropertyFilter,
		MaxConns:               cfg.conns.maxConns,
		MaxConnPending:         cfg.conns.maxPending,
		MaxConnOutbound:        cfg.conns.maxOutbound,
		MaxConnStall:           cfg.conns.maxStall,
	}
	if cfg.syncFlush {
		bc.FlushMode = store.FlushSync
	}
	if cfg.aclFile != "" {
		bc.AclEnable, bc.AclFile, bc.AclReloadInterval = true, cfg.aclFile, cfg.aclReload
	}
	bc.TLS, bc.TLSMode = cfg.serverTLS()
	if cfg.tls.on {
		bc.NameServerTLS = cfg.tls.client
	}
	for _, tw := range cfg.tweaks {
		tw(&bc)
	}
	return bc
}

func (c *Cluster) startSlot(s *brokerSlot) error {
	b, err := broker.New(s.cfg)
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		b.Close(context.Background())
		return err
	}
	// Restarts keep the ports so clients, routes and slaves stay valid.
	s.cfg.ListenAddr = b.Addr()
	if a := b.HAAddr(); a != "" {
		s.cfg.HAListenAddr = a
	}
	s.b = b
	return nil
}

// NameServerAddr is the NameServer's host:port.
func (c *Cluster) NameServerAddr() string { return c.nsAddr }

// BrokerNames lists the brokers, running or not.
func (c *Cluster) BrokerNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.brokers {
		if s.id == 0 {
			out = append(out, s.name)
		}
	}
	return out
}

// BrokerAddr is the address of the named broker's master ("" if unknown).
func (c *Cluster) BrokerAddr(name string) string { return c.BrokerAddrID(name, 0) }

// StoreDir is the named broker's store directory.
func (c *Cluster) StoreDir(name string) string { return c.storeDirID(name, 0) }

// slot is the named broker's master.
func (c *Cluster) slot(name string) (*brokerSlot, error) { return c.slotID(name, 0) }

func (c *Cluster) slotID(name string, id int64) (*brokerSlot, error) {
	for _, s := range c.brokers {
		if s.name == name && s.id == id {
			return s, nil
		}
	}
	if id != 0 {
		return nil, fmt.Errorf("%w: %q id %d", ErrUnknownBroker, name, id)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownBroker, name)
}

// StopBroker shuts the named broker down cleanly (it unregisters from the
// NameServer). StartBroker brings it back on the same address and store.
func (c *Cluster) StopBroker(ctx context.Context, name string) error {
	return c.StopBrokerID(ctx, name, 0)
}

// CrashBroker stops the named broker as if its process were killed: no
// unregistration, no flush of offsets or checkpoint. StartBroker then runs
// crash recovery on its store.
func (c *Cluster) CrashBroker(name string) error {
	return c.CrashBrokerID(name, 0)
}

// stopBroker stops the named broker with stop unless it is not running.
func (c *Cluster) stopBroker(name string, id int64, stop func(*broker.Broker) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.slotID(name, id)
	if err != nil {
		return err
	}
	if s.b == nil {
		return nil
	}
	err = stop(s.b)
	s.b = nil
	return err
}

// StartBroker starts a stopped or crashed broker again.
func (c *Cluster) StartBroker(name string) error { return c.StartBrokerID(name, 0) }

// StartBrokerID starts the stopped or crashed broker id of name again
// (0: its master).
func (c *Cluster) StartBrokerID(name string, id int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.slotID(name, id)
	if err != nil {
		return err
	}
	if s.b != nil {
		return nil
	}
	return c.startSlot(s)
}

// Close stops every broker and the NameServer, then removes the store
// directory if the cluster created it.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, s := range c.brokers {
		if s.b != nil {
			errs = append(errs, s.b.Close(ctx))
			s.b = nil
		}
	}
	if c.ns != nil {
		errs = append(errs, c.ns.Close(ctx))
		c.ns = nil
	}
	c.cleanupDir()
	return errors.Join(errs...)
}

func (c *Cluster) cleanupDir() {
	if c.ownDir {
		os.RemoveAll(c.cfg.dir)
		c.ownDir = false
	}
}
