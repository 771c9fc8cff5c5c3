package broker

import (
	"fmt"
	"path/filepath"
	"sync"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// groupManager owns the subscription group table (Java
// SubscriptionGroupManager) and config/subscriptionGroup.json (docs/PROTOCOL.md
// §10.6). Reads take the read lock only: the send path looks up %RETRY%
// groups for every retried message and the pull path for every pull.
type groupManager struct {
	b *Broker
	configTable[remoting.SubscriptionGroupConfig]

	// persistMu orders snapshot+write pairs so that the last file written
	// holds the newest snapshot.
	persistMu sync.Mutex
	persists  atomic.Int64 // files written
}

// newGroupManager starts with the groups a 4.9.8 broker creates at start,
// all with the defaults.
func newGroupManager(b *Broker) *groupManager {
	builtin := [...]string{
		GroupToolsConsumer,
		GroupFilterSrvConsumer,
		GroupSelfTestConsumer,
		GroupONSHTTPProxy,
		GroupONSAPIPull,
		GroupONSAPIPermission,
		GroupONSAPIOwner,
	}
	m := &groupManager{b: b}
	m.table = make(map[string]remoting.SubscriptionGroupConfig, len(builtin))
	for _, g := range builtin {
		m.table[g] = remoting.NewSubscriptionGroupConfig(g)
	}
	return m
}

func (m *groupManager) path() string {
	return filepath.Join(m.b.cfg.StoreDir, "config", "subscriptionGroup.json")
}

// load merges subscriptionGroup.json (strict JSON or Java's fastjson form)
// over the built-in groups; a missing file leaves just those.
func (m *groupManager) load() error {
	var w remoting.SubscriptionGroupWrapper
	if found, err := readConfig(m.path(), w.DecodeJSON); !found {
		return err
	}
	m.merge(w.SubscriptionGroupTable, w.DataVersion, func(name string, g remoting.SubscriptionGroupConfig) remoting.SubscriptionGroupConfig {
		if g.GroupName == "" {
			g.GroupName = name
		}
		return g
	})
	return nil
}

// persist writes the table as strict JSON, which Java brokers read too.
func (m *groupManager) persist() error {
	m.persistMu.Lock()
	defer m.persistMu.Unlock()
	w := m.wrapper()
	m.persists.Inc()
	if err := store.WriteConfigFile(m.path(), w.AppendJSON(nil, remoting.JSONStandard)); err != nil {
		return fmt.Errorf("rocketmq: broker: persist subscription groups: %w", err)
	}
	return nil
}

func (m *groupManager) persistLogged() {
	if err := m.persist(); err != nil {
		m.b.log.Error("persist subscription groups", "err", err)
	}
}

// wrapper returns a copy of the table and its data version.
func (m *groupManager) wrapper() remoting.SubscriptionGroupWrapper {
	t, v := m.snapshot()
	return remoting.SubscriptionGroupWrapper{SubscriptionGroupTable: t, DataVersion: v}
}

// findOrCreate returns a group's config, creating it with Java's defaults
// when autoCreateSubscriptionGroup is on or the group is a CID_RMQ_SYS_
// group. It reports false when the group neither exists nor may be created.
func (m *groupManager) findOrCreate(group string) (remoting.SubscriptionGroupConfig, bool) {
	g, ok, created := m.lookupOrCreate(group)
	if created {
		m.persistLogged()
	}
	return g, ok
}

// lookupOrCreate is findOrCreate without persisting: created says the
// group is new and the table must be written. A heartbeat naming thousands
// of new groups writes the file once, not once per group.
func (m *groupManager) lookupOrCreate(group string) (g remoting.SubscriptionGroupConfig, ok, created bool) {
	if g, ok := m.get(group); ok {
		return g, true, false
	}
	if group == "" || (m.b.autoCreateGroupOff() && !rocketmq.IsSysConsumerGroup(group)) {
		return remoting.SubscriptionGroupConfig{}, false, false
	}
	m.mu.Lock()
	g, ok = m.table[group]
	if !ok {
		g = remoting.NewSubscriptionGroupConfig(group)
		m.table[group] = g
		m.bumpLocked()
	}
	m.mu.Unlock()
	if !ok {
		m.b.log.Debug("subscription group auto-created", "group", group)
	}
	return g, true, !ok
}

// put creates or replaces a group's config (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP);
// the error says the change is not on disk.
func (m *groupManager) put(g remoting.SubscriptionGroupConfig) error {
	m.set(g.GroupName, g)
	err := m.persist()
	if err != nil {
		m.b.log.Error("persist subscription groups", "err", err)
	}
	return err
}

// remove deletes a group's config; it reports whether it existed, and an
// error when the table is not on disk. It writes even for an unknown
// group: a retried delete whose first write failed must still write it.
func (m *groupManager) remove(group string) (bool, error) {
	ok := m.del(group)
	err := m.persist()
	if err != nil {
		m.b.log.Error("persist subscription groups", "err", err)
	}
	return ok, err
}
