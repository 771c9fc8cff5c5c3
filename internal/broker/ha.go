package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/ha"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Replication (docs/DESIGN.md "Replication", docs/PROTOCOL.md §11): the
// classic master/slave model of 4.9.8. A master serves its commit log on
// the HA port (internal/ha); a SYNC_MASTER answers a send once a slave has
// acknowledged it. A slave copies the commit log into a replica store,
// refuses puts, serves reads and copies its master's configs and offsets
// (slavesync.go). Nothing promotes a slave.

// BrokerRole is brokerRole.
type BrokerRole int

const (
	// RoleAsyncMaster replicates behind the answer (the default).
	RoleAsyncMaster BrokerRole = iota
	// RoleSyncMaster answers a send once a slave has it.
	RoleSyncMaster
	// RoleSlave copies a master and refuses puts.
	RoleSlave
)

var roleNames = [...]string{RoleAsyncMaster: "ASYNC_MASTER", RoleSyncMaster: "SYNC_MASTER", RoleSlave: "SLAVE"}

// String is Java's BrokerRole name.
func (r BrokerRole) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "BrokerRole(" + strconv.Itoa(int(r)) + ")"
}

// ParseBrokerRole reads a Java BrokerRole name.
func ParseBrokerRole(s string) (BrokerRole, error) {
	for i, n := range roleNames {
		if n == s {
			return BrokerRole(i), nil
		}
	}
	return 0, errors.New("want ASYNC_MASTER, SYNC_MASTER or SLAVE")
}

// haDefaults fills the replication settings; withDefaults calls it.
func (c *Config) haDefaults() error {
	switch c.Role {
	case RoleAsyncMaster, RoleSyncMaster:
	case RoleSlave:
		if c.BrokerID <= 0 {
			return fmt.Errorf("rocketmq: broker: a SLAVE needs a brokerId above 0, not %d", c.BrokerID)
		}
	default:
		return fmt.Errorf("rocketmq: broker: unknown role %d", c.Role)
	}
	if c.HASendHeartbeatInterval <= 0 {
		c.HASendHeartbeatInterval = 5 * time.Second
	}
	if c.HAHousekeepingInterval <= 0 {
		c.HAHousekeepingInterval = 20 * time.Second
	}
	if c.HATransferBatchSize <= 0 {
		c.HATransferBatchSize = 32 << 10
	}
	if c.HASlaveFallbehindMax <= 0 {
		c.HASlaveFallbehindMax = 256 << 20
	}
	if c.AccessMessageInMemoryMaxRatio == 0 {
		c.AccessMessageInMemoryMaxRatio = 40
	}
	if c.SlaveTimeout <= 0 {
		c.SlaveTimeout = 3 * time.Second
	}
	if c.SlaveSyncInterval <= 0 {
		c.SlaveSyncInterval = 10 * time.Second
	}
	if c.HAConnectRetryInterval <= 0 {
		c.HAConnectRetryInterval = 5 * time.Second
	}
	return nil
}

// haState is the broker's replication side.
type haState struct {
	master *ha.Master   // masters, once started
	slave  *ha.Slave    // slaves, once started
	repl   *syncReplies // SYNC_MASTER: sends waiting for a slave
	addr   string       // the bound HA address (masters)

	masterAddr atomic.String // slaves: the master's remoting address, from registration
	masterHA   atomic.String // slaves: the master's HA address
	memory     int64         // bytes the slave-read rule counts as memory
	syncs      atomic.Int64  // slave: completed config/offset copies
}

func (b *Broker) isSlave() bool { return b.cfg.Role == RoleSlave }

// haInit prepares replication in New.
func (b *Broker) haInit() {
	mem := b.cfg.PhysicalMemory
	if mem <= 0 {
		mem = physicalMemory()
	}
	ratio := max(b.cfg.AccessMessageInMemoryMaxRatio, 0)
	b.ha.memory = int64(float64(mem) * float64(ratio) / 100)
	if b.cfg.HAMasterAddress != "" {
		b.ha.masterHA.Store(b.cfg.HAMasterAddress)
	}
}

// onDispatch is the store's dispatch hook: held pulls and HA writers wake.
func (b *Broker) onDispatch(ev store.DispatchEvent) {
	b.pulls.notify(ev)
	if m := b.ha.master; m != nil {
		m.Notify()
	}
}

// haListenAddr is where a master's HA service listens: HAListenAddr, or
// the listen host with haListenPort (default the bound port + 1; a free
// port when the broker's own port was chosen freely).
func (b *Broker) haListenAddr() string {
	if b.cfg.HAListenAddr != "" {
		return b.cfg.HAListenAddr
	}
	host, port, _ := net.SplitHostPort(b.srv.Addr())
	_, cfgPort, _ := net.SplitHostPort(b.cfg.ListenAddr)
	p, _ := strconv.Atoi(port)
	switch {
	case b.cfg.HAListenPort > 0:
		p = b.cfg.HAListenPort
	case cfgPort == "0":
		p = 0
	default:
		p++
	}
	return net.JoinHostPort(host, strconv.Itoa(p))
}

// startHA starts the HA listener of a master or the replication of a
// slave, in Start.
func (b *Broker) startHA() error {
	if b.isSlave() {
		b.ha.slave = ha.NewSlave(b.store, ha.SlaveConfig{
			MasterAddr:           b.ha.masterHA.Load,
			HeartbeatInterval:    b.cfg.HASendHeartbeatInterval,
			HousekeepingInterval: b.cfg.HAHousekeepingInterval,
			RetryInterval:        b.cfg.HAConnectRetryInterval,
			Logger:               b.log,
		})
		return nil
	}
	addr := b.haListenAddr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("rocketmq: broker %s: HA listen %s: %w", b.cfg.BrokerName, addr, err)
	}
	b.ha.master = ha.NewMaster(b.store, ln, ha.MasterConfig{
		HeartbeatInterval:    b.cfg.HASendHeartbeatInterval,
		HousekeepingInterval: b.cfg.HAHousekeepingInterval,
		BatchSize:            b.cfg.HATransferBatchSize,
		Logger:               b.log,
	})
	b.ha.addr = b.ha.master.Addr()
	if b.cfg.Role == RoleSyncMaster {
		b.ha.repl = newSyncReplies(b.ha.master.Acked, b.cfg.SlaveTimeout)
		b.ha.repl.timeoutCode = remoting.FlushSlaveTimeout
		b.ha.repl.next = b.syncs
	}
	return nil
}

// startHALoops starts the broker-owned loops of replication, once Start
// allows loops.
func (b *Broker) startHALoops() {
	if b.isSlave() {
		first := min(3*time.Second, b.cfg.SlaveSyncInterval)
		b.loop(func(ctx context.Context) { b.slaveSyncLoop(ctx, first) })
	}
	if b.ha.repl != nil {
		b.loop(b.ha.repl.run)
	}
}

// closeHA stops replication; shutdown calls it before closing the store.
func (b *Broker) closeHA(ctx context.Context) error {
	var errs []error
	if b.ha.slave != nil {
		errs = append(errs, b.ha.slave.Close(ctx))
	}
	if b.ha.master != nil {
		errs = append(errs, b.ha.master.Close(ctx))
	}
	return errors.Join(errs...)
}

// HAAddr is the master's bound HA address ("" on a slave or before Start).
func (b *Broker) HAAddr() string { return b.ha.addr }

// Role is the broker's role.
func (b *Broker) Role() BrokerRole { return b.cfg.Role }

// BrokerID is the broker's id (0 for a master).
func (b *Broker) BrokerID() int64 { return b.cfg.BrokerID }

// ReplicationStatus describes replication as one broker sees it.
type ReplicationStatus struct {
	Role BrokerRole
	// CommitLogMaxOffset is the broker's write position.
	CommitLogMaxOffset int64
	// Master side: the offset acknowledged by any slave and each slave.
	Acked  int64
	Slaves []ha.SlaveInfo
	// Slave side: the master's addresses and whether it is connected.
	MasterAddr, MasterHAAddr string
	Connected                bool
	// Syncs counts the completed copies of the master's configs.
	Syncs int64
}

// Replication reports the state of replication.
func (b *Broker) Replication() ReplicationStatus {
	st := ReplicationStatus{Role: b.cfg.Role, CommitLogMaxOffset: b.store.CommitLogMaxOffset(),
		MasterAddr: b.ha.masterAddr.Load(), MasterHAAddr: b.ha.masterHA.Load(), Syncs: b.ha.syncs.Load()}
	if m := b.ha.master; m != nil {
		st.Acked, _ = m.Acked()
		st.Slaves = m.Slaves()
	}
	if s := b.ha.slave; s != nil {
		st.Connected = s.Connected() != ""
	}
	return st
}

// waitForSlave is the SYNC_MASTER part of a send's answer: it returns true
// when resp was handed to the replication waiter (it is answered later),
// and otherwise marks resp SLAVE_NOT_AVAILABLE when no slave is usable.
func (b *Broker) waitForSlave(c *server.Conn, req, resp *remoting.Command, end int64) bool {
	if b.ha.repl == nil {
		return false
	}
	if !b.ha.master.SlaveOK(end, b.cfg.HASlaveFallbehindMax) {
		resp.Code = remoting.SlaveNotAvailable
		return false
	}
	stampResponse(resp)
	b.ha.repl.add(c, req, resp, end)
	return true
}

// onRegistered takes a slave's master addresses from a REGISTER_BROKER
// answer, as BrokerController does: the HA address when the answer has one
// (unless HAMasterAddress fixes it), the master address always, so that a
// slave whose master is gone stops copying from it.
func (b *Broker) onRegistered(resp *remoting.Command) {
	if !b.isSlave() || resp == nil || resp.Code != remoting.Success {
		return
	}
	var h remoting.RegisterBrokerResponseHeader
	if err := h.FromExt(resp.Ext); err != nil {
		return
	}
	b.ha.masterAddr.Store(orZero(h.MasterAddr))
	if ha := orZero(h.HAServerAddr); ha != "" && b.cfg.HAMasterAddress == "" {
		if b.ha.masterHA.Swap(ha) != ha && b.ha.slave != nil {
			b.log.Info("ha: master address", "master", ha)
			b.ha.slave.Wake()
		}
	}
}

// pullSuggestion is the suggestWhichBrokerId of a pull answer
// (PullMessageProcessor): with slaveReadEnable, the group's slow-consumer
// broker when the message read is far behind the commit log's end (not in
// memory), else the group's broker; without, the master.
func (b *Broker) pullSuggestion(gc *remoting.SubscriptionGroupConfig, res *store.GetResult) int64 {
	if !b.cfg.SlaveReadEnable {
		return 0
	}
	examined := res.Messages > 0 || res.Status == store.GetNoMatchedMessage || res.Status == store.GetMessageWasRemoving
	if examined && b.store.CommitLogMaxOffset()-res.LastPhysicalOffset > b.ha.memory {
		return gc.WhichBrokerWhenConsumeSlowly
	}
	return gc.BrokerID
}
