package rmqtest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
)

// haSetup is what the replication options set.
type haSetup struct {
	slaves      int
	role        string // Java brokerRole of the masters; "" is ASYNC_MASTER
	slaveRead   *bool
	slaveSync   time.Duration
	slaveTime   time.Duration
	retry       time.Duration
	memory      int64
	memoryRatio *int
	vip         bool
}

// WithSlaves gives every broker n slaves (brokerId 1..n, role SLAVE) that
// replicate its commit log over the HA port and copy its topics, groups
// and offsets. Default 0. Slaves listen on free ports, or with
// WithBrokerAddr's fixed port on the master's port + 2*id.
func WithSlaves(n int) Option { return func(c *config) { c.ha.slaves = n } }

// WithBrokerRole sets the masters' brokerRole: "ASYNC_MASTER" (the
// default) or "SYNC_MASTER", which answers a send only once a slave has it
// (SLAVE_NOT_AVAILABLE without a slave, FLUSH_SLAVE_TIMEOUT after the
// slave timeout).
func WithBrokerRole(role string) Option { return func(c *config) { c.ha.role = role } }

// WithVIPChannel makes the masters open the VIP port (their port - 2) as
// Java brokers do, for a Java slave: it copies its master's topics
// through it.
func WithVIPChannel() Option { return func(c *config) { c.ha.vip = true } }

// WithSlaveRead sets slaveReadEnable on every broker. Default: on for
// slaves, so that consumers read from a slave while its master is away
// (a slave without it answers every pull PULL_RETRY_IMMEDIATELY, as
// Java's), and off for masters, so that they never suggest a slave.
func WithSlaveRead(on bool) Option { return func(c *config) { c.ha.slaveRead = &on } }

// WithSlaveSyncInterval sets how often slaves copy their master's topics,
// groups and offsets. Default 10 s (the first copy after 3 s), as Java.
func WithSlaveSyncInterval(d time.Duration) Option { return func(c *config) { c.ha.slaveSync = d } }

// WithSlaveTimeout sets how long a SYNC_MASTER send waits for a slave
// (slaveTimeout). Default 3 s.
func WithSlaveTimeout(d time.Duration) Option { return func(c *config) { c.ha.slaveTime = d } }

// WithSlaveReadMemory sets the memory size and accessMessageInMemoryMaxRatio
// (percent) of the masters' slave-read rule: a pull whose message is more
// than bytes*ratio/100 behind the commit log's end suggests the slave.
// Default the machine's memory and 40.
func WithSlaveReadMemory(bytes int64, ratio int) Option {
	return func(c *config) { c.ha.memory, c.ha.memoryRatio = bytes, &ratio }
}

func (h *haSetup) check() error {
	if h.slaves < 0 || h.slaves > 4 {
		return fmt.Errorf("rocketmq: rmqtest: slave count %d out of range 0..4", h.slaves)
	}
	if h.role != "" {
		r, err := broker.ParseBrokerRole(h.role)
		if err != nil || r == broker.RoleSlave {
			return fmt.Errorf("rocketmq: rmqtest: master role %q: want ASYNC_MASTER or SYNC_MASTER", h.role)
		}
	}
	return nil
}

// common applies the settings every broker shares.
func (h *haSetup) common(bc *broker.Config) {
	if h.slaveSync > 0 {
		bc.SlaveSyncInterval = h.slaveSync
	}
	if h.slaveTime > 0 {
		bc.SlaveTimeout = h.slaveTime
	}
	bc.HAConnectRetryInterval = 200 * time.Millisecond
	if h.retry > 0 {
		bc.HAConnectRetryInterval = h.retry
	}
	bc.PhysicalMemory = h.memory
	if h.memoryRatio != nil {
		bc.AccessMessageInMemoryMaxRatio = *h.memoryRatio
		if *h.memoryRatio == 0 {
			bc.AccessMessageInMemoryMaxRatio = -1
		}
	}
	bc.HAListenAddr = "127.0.0.1:0"
}

// master applies the settings to a master's config.
func (h *haSetup) master(bc *broker.Config) {
	h.common(bc)
	bc.VIPChannel = h.vip
	if h.role != "" {
		bc.Role, _ = broker.ParseBrokerRole(h.role)
	}
	if h.slaveRead != nil {
		bc.SlaveReadEnable = *h.slaveRead
	}
	if _, port, err := net.SplitHostPort(bc.ListenAddr); err == nil && port != "0" {
		p, _ := strconv.Atoi(port)
		bc.HAListenAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1))
	}
}

// startSlaves starts the slaves of master m.
func (c *Cluster) startSlaves(m *brokerSlot) error {
	h := &c.cfg.ha
	for id := int64(1); id <= int64(h.slaves); id++ {
		bc := c.brokerConfig(m.name)
		h.common(&bc)
		bc.Role, bc.BrokerID = broker.RoleSlave, id
		bc.StoreDir = c.storeDirID(m.name, id)
		bc.SlaveReadEnable = true
		if h.slaveRead != nil {
			bc.SlaveReadEnable = *h.slaveRead
		}
		bc.ListenAddr = "127.0.0.1:0"
		if host, port, err := net.SplitHostPort(m.cfg.ListenAddr); err == nil && c.cfg.brokerAddr != "127.0.0.1:0" {
			if p, _ := strconv.Atoi(port); p > 0 && p+2*int(id) <= 65535 {
				bc.ListenAddr = net.JoinHostPort(host, strconv.Itoa(p+2*int(id)))
			}
		}
		s := &brokerSlot{name: m.name, id: id, cfg: bc}
		c.brokers = append(c.brokers, s)
		if err := c.startSlot(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) storeDirID(name string, id int64) string {
	if id == 0 {
		return filepath.Join(c.cfg.dir, name)
	}
	return filepath.Join(c.cfg.dir, name+"-s"+strconv.FormatInt(id, 10))
}

// StoreDirID is the store directory of broker id of name (0: its master).
func (c *Cluster) StoreDirID(name string, id int64) string { return c.storeDirID(name, id) }

// BrokerAddrID is the address of broker id of name ("" if unknown).
func (c *Cluster) BrokerAddrID(name string, id int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, err := c.slotID(name, id); err == nil {
		return s.cfg.ListenAddr
	}
	return ""
}

// StopBrokerID shuts broker id of name down cleanly (0: its master).
func (c *Cluster) StopBrokerID(ctx context.Context, name string, id int64) error {
	return c.stopBroker(name, id, func(b *broker.Broker) error { return b.Close(ctx) })
}

// CrashBrokerID stops broker id of name as if its process were killed.
func (c *Cluster) CrashBrokerID(name string, id int64) error {
	return c.stopBroker(name, id, (*broker.Broker).Crash)
}

// Replication describes the replication of one broker name.
type Replication struct {
	// MasterOffset is the master's commit-log write position (-1 while
	// the master is stopped).
	MasterOffset int64
	// Acked is the highest offset a slave acknowledged to the master.
	Acked int64
	// SlaveOffsets are the slaves' write positions by id (-1 when
	// stopped), and Connected whether each has its master's HA
	// connection.
	SlaveOffsets map[int64]int64
	Connected    map[int64]bool
	// SlaveSyncs counts each slave's completed copies of its master's
	// configs and offsets.
	SlaveSyncs map[int64]int64
}

// Replication reports the replication state of broker name.
func (c *Cluster) Replication(name string) (Replication, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.slot(name); err != nil {
		return Replication{}, err
	}
	r := Replication{MasterOffset: -1, SlaveOffsets: map[int64]int64{}, Connected: map[int64]bool{}, SlaveSyncs: map[int64]int64{}}
	for _, s := range c.brokers {
		if s.name != name {
			continue
		}
		if s.b == nil {
			if s.id != 0 {
				r.SlaveOffsets[s.id] = -1
			}
			continue
		}
		st := s.b.Replication()
		if s.id == 0 {
			r.MasterOffset, r.Acked = st.CommitLogMaxOffset, st.Acked
			continue
		}
		r.SlaveOffsets[s.id] = st.CommitLogMaxOffset
		r.Connected[s.id] = st.Connected
		r.SlaveSyncs[s.id] = st.Syncs
	}
	return r, nil
}
