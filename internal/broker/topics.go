package broker

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// defaultMaxQueueNums is Config.MaxQueueNums' default.
const defaultMaxQueueNums = 1024

// topicManager owns the topic table and config/topics.json.
type topicManager struct {
	b *Broker
	configTable[remoting.TopicConfig]

	// persistMu makes persist the only writer of topics.json; the table
	// is copied under it, so a later write never holds an older table.
	persistMu sync.Mutex
	persisted remoting.DataVersion // version of the last complete write
	// writeFile is store.WriteConfigFile; tests replace it to stop a
	// write midway as a crash would.
	writeFile func(path string, data []byte) error
}

func newTopicManager(b *Broker) *topicManager {
	m := &topicManager{b: b, writeFile: store.WriteConfigFile}
	m.table = make(map[string]remoting.TopicConfig)
	return m
}

func (m *topicManager) path() string {
	return filepath.Join(m.b.cfg.StoreDir, "config", "topics.json")
}

func (m *topicManager) load() error {
	var w remoting.TopicConfigSerializeWrapper
	if found, err := readConfig(m.path(), w.DecodeJSON); !found {
		return err
	}
	m.merge(w.TopicConfigTable, w.DataVersion, m.clampLoaded)
	return nil
}

// clampLoaded bounds the queue counts of a loaded topic to
// 0..Config.MaxQueueNums: a file written by an older broker may hold any
// count, and every per-queue loop (stats, registration) runs to it.
func (m *topicManager) clampLoaded(name string, tc remoting.TopicConfig) remoting.TopicConfig {
	r, w := clampQueueNums(tc.ReadQueueNums, m.b.cfg.MaxQueueNums), clampQueueNums(tc.WriteQueueNums, m.b.cfg.MaxQueueNums)
	if r != tc.ReadQueueNums || w != tc.WriteQueueNums {
		m.b.log.Warn("topics.json: queue counts clamped", "topic", name,
			"read", tc.ReadQueueNums, "write", tc.WriteQueueNums, "max", m.b.cfg.MaxQueueNums)
		tc.ReadQueueNums, tc.WriteQueueNums = r, w
	}
	return tc
}

// clampQueueNums bounds n to 0..limit.
func clampQueueNums(n, limit int32) int32 { return min(max(n, 0), limit) }

// persist writes topics.json unless the file already holds the current
// version. Concurrent callers queue on persistMu; one that waited usually
// finds its change written by the one before it and returns at once.
func (m *topicManager) persist() error {
	m.persistMu.Lock()
	defer m.persistMu.Unlock()
	w := m.wrapper()
	if w.DataVersion == m.persisted {
		return nil
	}
	if err := m.writeFile(m.path(), w.AppendJSON(nil, remoting.JSONStandard)); err != nil {
		return fmt.Errorf("rocketmq: broker: persist topics: %w", err)
	}
	m.persisted = w.DataVersion
	return nil
}

func (m *topicManager) persistLogged() {
	if err := m.persist(); err != nil {
		m.b.log.Error("persist topics", "err", err)
	}
}

// wrapper returns a copy of the table and its data version.
func (m *topicManager) wrapper() remoting.TopicConfigSerializeWrapper {
	t, v := m.snapshot()
	return remoting.TopicConfigSerializeWrapper{TopicConfigTable: t, DataVersion: v}
}

// put creates or replaces tc, persists the table and re-registers with
// the NameServers. The error says the change is not on disk (it is in the
// table, and the next write carries it).
func (m *topicManager) put(tc remoting.TopicConfig) error {
	m.set(tc.TopicName, tc)
	return m.changed()
}

// remove deletes a topic; it reports whether it existed, and an error
// when the table is not on disk. The table is persisted even for an
// unknown topic: a retried delete whose first write failed finds nothing
// to delete but must still write the deletion.
func (m *topicManager) remove(topic string) (bool, error) {
	if m.del(topic) {
		return true, m.changed()
	}
	err := m.persist()
	if err != nil {
		m.b.log.Error("persist topics", "err", err)
	}
	return false, err
}

// changed persists the table and re-registers with the NameServers.
func (m *topicManager) changed() error {
	err := m.persist()
	if err != nil {
		m.b.log.Error("persist topics", "err", err)
	}
	m.b.registerAsync()
	return err
}

// ensure creates topic with the given queue counts and perm unless it exists.
func (m *topicManager) ensure(topic string, queues int32, perm int32) remoting.TopicConfig {
	return m.ensureSys(topic, queues, perm, 0)
}

// ensureSys is ensure with a topic sys flag for a new topic (Java
// createTopicInSendMessageBackMethod): an existing topic is returned as is.
// The count is bounded by Config.MaxQueueNums (a group's retryQueueNums
// comes from an admin request).
func (m *topicManager) ensureSys(topic string, queues, perm, sysFlag int32) remoting.TopicConfig {
	if tc, ok := m.get(topic); ok {
		return tc
	}
	queues = clampQueueNums(queues, m.b.cfg.MaxQueueNums)
	m.mu.Lock()
	tc, ok := m.table[topic]
	if !ok {
		tc = remoting.NewTopicConfig(topic)
		tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = queues, queues, perm
		tc.TopicSysFlag = sysFlag
		m.table[topic] = tc
		m.bumpLocked()
	}
	m.mu.Unlock()
	if !ok {
		m.changed()
	}
	return tc
}

// createFromTemplate auto-creates topic from template (normally TBW102) as
// Java's createTopicInSendMessageMethod does (docs/PROTOCOL.md §9.1), with at
// most Config.MaxQueueNums queues. It returns false when the template is
// missing or cannot be inherited, and an error when the new topic could
// not be persisted.
func (m *topicManager) createFromTemplate(topic, template string, queueNums int32, topicSysFlag int32) (remoting.TopicConfig, bool, error) {
	if tc, ok := m.get(topic); ok {
		return tc, true, nil
	}
	m.mu.Lock()
	if tc, ok := m.table[topic]; ok {
		m.mu.Unlock()
		return tc, true, nil
	}
	tpl, ok := m.table[template]
	if ok && template == rocketmq.TopicAutoCreate && m.b.autoCreateTopicOff() {
		tpl.Perm = rocketmq.PermRead | rocketmq.PermWrite
	}
	if !ok || tpl.Perm&rocketmq.PermInherit == 0 {
		m.mu.Unlock()
		return remoting.TopicConfig{}, false, nil
	}
	n := clampQueueNums(min(queueNums, tpl.WriteQueueNums), m.b.cfg.MaxQueueNums)
	tc := remoting.NewTopicConfig(topic)
	tc.ReadQueueNums, tc.WriteQueueNums = n, n
	tc.Perm = tpl.Perm &^ rocketmq.PermInherit
	tc.TopicFilterType = tpl.TopicFilterType
	tc.TopicSysFlag = topicSysFlag
	m.table[topic] = tc
	m.bumpLocked()
	m.mu.Unlock()
	return tc, true, m.changed()
}

// ensureSystemTopics creates the topics a 4.9 broker creates at start.
func (m *topicManager) ensureSystemTopics() {
	cfg := m.b.cfg
	m.mu.Lock()
	add := func(name string, queues, perm int32) {
		if _, ok := m.table[name]; ok {
			return
		}
		tc := remoting.NewTopicConfig(name)
		tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = queues, queues, perm
		m.table[name] = tc
		m.bumpLocked()
	}
	add(rocketmq.TopicSelfTest, 1, rocketmq.PermRead|rocketmq.PermWrite)
	if !cfg.DisableAutoCreateTopic {
		add(rocketmq.TopicAutoCreate, cfg.DefaultTopicQueueNums, rocketmq.PermRead|rocketmq.PermWrite|rocketmq.PermInherit)
	}
	add(rocketmq.TopicBenchmark, 1024, rocketmq.PermRead|rocketmq.PermWrite)
	add(cfg.ClusterName, 16, rocketmq.PermRead|rocketmq.PermWrite|rocketmq.PermInherit)
	add(cfg.BrokerName, 1, rocketmq.PermRead|rocketmq.PermWrite|rocketmq.PermInherit)
	add(rocketmq.TopicOffsetMovedEvent, 1, rocketmq.PermRead|rocketmq.PermWrite)
	add(rocketmq.TopicSchedule, ScheduleQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
	if cfg.TraceTopicEnable {
		add(cfg.MsgTraceTopicName, 1, rocketmq.PermRead|rocketmq.PermWrite)
	}
	add(cfg.ClusterName+"_"+rocketmq.ReplyTopicPostfix, 1, rocketmq.PermRead|rocketmq.PermWrite)
	m.mu.Unlock()
	m.persistLogged()
}
