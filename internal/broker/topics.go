package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// topicManager owns the topic table and config/topics.json.
type topicManager struct {
	b *Broker

	mu      sync.RWMutex
	table   map[string]remoting.TopicConfig
	version remoting.DataVersion
}

func newTopicManager(b *Broker) *topicManager {
	return &topicManager{b: b, table: make(map[string]remoting.TopicConfig)}
}

func (m *topicManager) path() string {
	return filepath.Join(m.b.cfg.StoreDir, "config", "topics.json")
}

func (m *topicManager) load() error {
	data, err := store.ReadConfigFile(m.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rocketmq: broker: read %s: %w", m.path(), err)
	}
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(data); err != nil {
		return fmt.Errorf("rocketmq: broker: parse %s: %w", m.path(), err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range w.TopicConfigTable {
		m.table[k] = v
	}
	m.version = w.DataVersion
	return nil
}

func (m *topicManager) persist() error {
	w := m.wrapper()
	return store.WriteConfigFile(m.path(), w.AppendJSON(nil, remoting.JSONStandard))
}

func (m *topicManager) persistLogged() {
	if err := m.persist(); err != nil {
		m.b.log.Error("persist topics", "err", err)
	}
}

// wrapper returns a copy of the table and its data version.
func (m *topicManager) wrapper() remoting.TopicConfigSerializeWrapper {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return remoting.TopicConfigSerializeWrapper{TopicConfigTable: maps.Clone(m.table), DataVersion: m.version}
}

func (m *topicManager) get(topic string) (remoting.TopicConfig, bool) {
	m.mu.RLock()
	tc, ok := m.table[topic]
	m.mu.RUnlock()
	return tc, ok
}

// names returns the sorted topic names.
func (m *topicManager) names() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Sorted(maps.Keys(m.table))
}

func (m *topicManager) bumpLocked() {
	m.version.Counter++
	m.version.Timestamp = time.Now().UnixMilli()
}

// put creates or replaces tc, persists the table and re-registers with
// the NameServers.
func (m *topicManager) put(tc remoting.TopicConfig) {
	m.mu.Lock()
	m.table[tc.TopicName] = tc
	m.bumpLocked()
	m.mu.Unlock()
	m.changed()
}

// remove deletes a topic; it reports whether it existed.
func (m *topicManager) remove(topic string) bool {
	m.mu.Lock()
	_, ok := m.table[topic]
	if ok {
		delete(m.table, topic)
		m.bumpLocked()
	}
	m.mu.Unlock()
	if ok {
		m.changed()
	}
	return ok
}

func (m *topicManager) changed() {
	m.persistLogged()
	m.b.registerAsync()
}

// ensure creates topic with the given queue counts and perm unless it exists.
func (m *topicManager) ensure(topic string, queues int32, perm int32) remoting.TopicConfig {
	if tc, ok := m.get(topic); ok {
		return tc
	}
	m.mu.Lock()
	tc, ok := m.table[topic]
	if !ok {
		tc = remoting.NewTopicConfig(topic)
		tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = queues, queues, perm
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
// Java's createTopicInSendMessageMethod does (PROTOCOL.md §9.1). It returns
// false when the template is missing or cannot be inherited.
func (m *topicManager) createFromTemplate(topic, template string, queueNums int32, topicSysFlag int32) (remoting.TopicConfig, bool) {
	if tc, ok := m.get(topic); ok {
		return tc, true
	}
	m.mu.Lock()
	if tc, ok := m.table[topic]; ok {
		m.mu.Unlock()
		return tc, true
	}
	tpl, ok := m.table[template]
	if ok && template == rocketmq.TopicAutoCreate && m.b.cfg.DisableAutoCreateTopic {
		tpl.Perm = rocketmq.PermRead | rocketmq.PermWrite
	}
	if !ok || tpl.Perm&rocketmq.PermInherit == 0 {
		m.mu.Unlock()
		return remoting.TopicConfig{}, false
	}
	n := queueNums
	if tpl.WriteQueueNums < n {
		n = tpl.WriteQueueNums
	}
	if n < 0 {
		n = 0
	}
	tc := remoting.NewTopicConfig(topic)
	tc.ReadQueueNums, tc.WriteQueueNums = n, n
	tc.Perm = tpl.Perm &^ rocketmq.PermInherit
	tc.TopicFilterType = tpl.TopicFilterType
	tc.TopicSysFlag = topicSysFlag
	m.table[topic] = tc
	m.bumpLocked()
	m.mu.Unlock()
	m.changed()
	return tc, true
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
	add(rocketmq.TopicSchedule, rocketmq.ScheduleQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
	add(cfg.ClusterName+"_"+rocketmq.ReplyTopicPostfix, 1, rocketmq.PermRead|rocketmq.PermWrite)
	m.mu.Unlock()
	m.persistLogged()
}
