package broker

import (
	"path/filepath"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// topicManager owns the topic table and config/topics.json.
type topicManager struct {
	b *Broker
	configTable[remoting.TopicConfig]
}

func newTopicManager(b *Broker) *topicManager {
	m := &topicManager{b: b}
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
	m.merge(w.TopicConfigTable, w.DataVersion, nil)
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
	t, v := m.snapshot()
	return remoting.TopicConfigSerializeWrapper{TopicConfigTable: t, DataVersion: v}
}

// put creates or replaces tc, persists the table and re-registers with
// the NameServers.
func (m *topicManager) put(tc remoting.TopicConfig) {
	m.set(tc.TopicName, tc)
	m.changed()
}

// remove deletes a topic; it reports whether it existed.
func (m *topicManager) remove(topic string) bool {
	ok := m.del(topic)
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
	return m.ensureSys(topic, queues, perm, 0)
}

// ensureSys is ensure with a topic sys flag for a new topic (Java
// createTopicInSendMessageBackMethod): an existing topic is returned as is.
func (m *topicManager) ensureSys(topic string, queues, perm, sysFlag int32) remoting.TopicConfig {
	if tc, ok := m.get(topic); ok {
		return tc
	}
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
// Java's createTopicInSendMessageMethod does (docs/PROTOCOL.md §9.1). It returns
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
	add(rocketmq.TopicSchedule, ScheduleQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
	if cfg.TraceTopicEnable {
		add(cfg.MsgTraceTopicName, 1, rocketmq.PermRead|rocketmq.PermWrite)
	}
	add(cfg.ClusterName+"_"+rocketmq.ReplyTopicPostfix, 1, rocketmq.PermRead|rocketmq.PermWrite)
	m.mu.Unlock()
	m.persistLogged()
}
