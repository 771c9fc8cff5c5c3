package broker

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// slaveSyncLoop copies the master's topic configs, consumer offsets, delay
// offsets and subscription groups every SlaveSyncInterval, the first time
// after first (Java's SlaveSynchronize.syncAll, every 10 s after 3 s).
func (b *Broker) slaveSyncLoop(ctx context.Context, first time.Duration) {
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b.slaveSyncOnce(ctx)
		t.Reset(b.cfg.SlaveSyncInterval)
	}
}

// slaveSyncOnce runs the four copies; each failure is logged and the next
// one is still tried, as in Java.
func (b *Broker) slaveSyncOnce(ctx context.Context) {
	addr := b.ha.masterAddr.Load()
	if addr == "" {
		return
	}
	steps := [...]struct {
		code int32
		name string
		take func([]byte) error
	}{
		{remoting.GetAllTopicConfig, "topic configs", b.takeTopics},
		{remoting.GetAllConsumerOffset, "consumer offsets", b.takeOffsets},
		{remoting.GetAllDelayOffset, "delay offsets", b.takeDelayOffsets},
		{remoting.GetAllSubscriptionGroupConfig, "subscription groups", b.takeGroups},
	}
	ok := true
	for _, s := range steps {
		if err := b.fetchFromMaster(ctx, addr, s.code, s.take); err != nil {
			b.log.Warn("slave: copy from master", "what", s.name, "master", addr, "err", err)
			ok = false
		}
	}
	if ok {
		b.ha.syncs.Inc()
	}
}

func (b *Broker) fetchFromMaster(ctx context.Context, addr string, code int32, take func([]byte) error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := b.nsCli.Invoke(ctx, addr, remoting.NewRequest(code, nil, nil))
	if err != nil {
		return err
	}
	if err := remoting.ResponseError(resp); err != nil {
		return err
	}
	return take(resp.Body)
}

// takeTopics replaces the topic table when the master's data version
// differs from the slave's.
func (b *Broker) takeTopics(body []byte) error {
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(body); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	m := b.topics
	if !m.replace(w.TopicConfigTable, w.DataVersion, m.clampLoaded) {
		return nil
	}
	return m.persist()
}

// takeOffsets puts the master's offsets over the slave's, key by key
// (Java's putAll): a queue the master has wins over what clients
// committed to the slave.
func (b *Broker) takeOffsets(body []byte) error {
	var w remoting.ConsumerOffsetSerializeWrapper
	if err := w.DecodeJSON(body); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	m := b.offsets
	m.mu.Lock()
	for k, queues := range w.OffsetTable {
		topic, group, ok := cutOffsetKey(k)
		if !ok {
			continue
		}
		m.table[offsetKey{topic, group}] = maps.Clone(queues)
	}
	m.version++
	m.mu.Unlock()
	return m.persist()
}

func cutOffsetKey(k string) (topic, group string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == '@' {
			return k[:i], k[i+1:], i > 0 && i < len(k)-1
		}
	}
	return "", "", false
}

// takeDelayOffsets takes the master's delay-level offsets and writes
// delayOffset.json.
func (b *Broker) takeDelayOffsets(body []byte) error {
	var w remoting.DelayOffsetSerializeWrapper
	if err := w.DecodeJSON(body); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	s := b.schedule
	s.mu.Lock()
	for level, off := range w.OffsetTable {
		if level >= 1 && int(level) <= len(s.offsets) {
			s.offsets[level-1] = off
		}
	}
	s.version++
	s.mu.Unlock()
	return s.persist()
}

// takeGroups replaces the subscription groups when the master's data
// version differs.
func (b *Broker) takeGroups(body []byte) error {
	var w remoting.SubscriptionGroupWrapper
	if err := w.DecodeJSON(body); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	m := b.groups
	fix := func(name string, g remoting.SubscriptionGroupConfig) remoting.SubscriptionGroupConfig {
		if g.GroupName == "" {
			g.GroupName = name
		}
		return g
	}
	if !m.replace(w.SubscriptionGroupTable, w.DataVersion, fix) {
		return nil
	}
	return m.persist()
}

// replace swaps in a copied table with its version unless the version is
// the table's already; it reports whether it did.
func (t *configTable[V]) replace(table map[string]V, version remoting.DataVersion, fix func(string, V) V) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.version == version {
		return false
	}
	n := make(map[string]V, len(table))
	for k, v := range table {
		n[k] = fix(k, v)
	}
	t.table, t.version = n, version
	return true
}
