package broker

import (
	"container/list"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/filter/sql92"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// clientManager is the broker's client registry (Java ConsumerManager and
// ProducerManager, docs/PROTOCOL.md §9.2): the channels of every consumer and
// producer group, keyed by connection, with the consumer groups'
// subscriptions. One RWMutex guards it; the pull path only reads.
// Connection methods (InvokeOneway, Close) are never called with the lock
// held: the functions that change membership return the connections to
// notify or close, and the caller acts on them after unlocking.
type clientManager struct {
	b *Broker

	mu        sync.RWMutex
	consumers map[string]*consumerGroupInfo
	producers map[string]map[*server.Conn]*clientChannel

	rr atomic.Uint32 // producerConn round robin

	filters *filterCache // compiled SQL92 subscriptions (Java ConsumerFilterManager)
}

// clientChannel is one client connection's registration in a group.
type clientChannel struct {
	conn       *server.Conn
	clientID   string
	language   remoting.LanguageCode
	version    int32
	lastUpdate time.Time
}

// consumerGroupInfo is one consumer group's live state. The last
// heartbeat of any member sets consumeType, messageModel and
// consumeFromWhere, as in Java.
type consumerGroupInfo struct {
	channels         map[*server.Conn]*clientChannel
	consumeType      string
	messageModel     string
	consumeFromWhere string
	// subs maps topic to subscription. Entries are replaced, never
	// modified, so a copy handed out keeps valid slices.
	subs map[string]remoting.SubscriptionData
}

func newClientManager(b *Broker) *clientManager {
	return &clientManager{
		b:         b,
		consumers: make(map[string]*consumerGroupInfo),
		producers: make(map[string]map[*server.Conn]*clientChannel),
		filters:   newFilterCache(filterCacheBytes),
	}
}

// registerConsumer registers or refreshes ch in group with the heartbeat's
// consumer data (Java registerConsumer). The group changed when ch is new
// or a topic was added or dropped; a newer subVersion of an existing topic
// replaces it without counting as a change, as in Java. It returns the
// channels to send NOTIFY_CONSUMER_IDS_CHANGED to: all of the group's when
// it changed, notify is set and the group consumes in CLUSTERING mode.
func (m *clientManager) registerConsumer(ch clientChannel, cd *remoting.ConsumerData, notify bool) []*server.Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch.conn.IsClosed() {
		// onConnClose has run (or is about to, and will find nothing): a
		// late heartbeat must not leave a dead channel behind.
		return nil
	}
	g := m.consumers[cd.GroupName]
	if g == nil {
		g = &consumerGroupInfo{
			channels: make(map[*server.Conn]*clientChannel, 1),
			subs:     make(map[string]remoting.SubscriptionData, len(cd.SubscriptionDataSet)),
		}
		m.consumers[cd.GroupName] = g
	}
	g.consumeType, g.messageModel, g.consumeFromWhere = cd.ConsumeType, cd.MessageModel, cd.ConsumeFromWhere

	changed := false
	if old := g.channels[ch.conn]; old == nil || old.clientID != ch.clientID {
		// A different client id on a known connection replaces the entry
		// without counting as a change (Java logs it as a bug).
		changed = old == nil
		c := ch
		g.channels[ch.conn] = &c
	} else {
		old.lastUpdate = ch.lastUpdate
	}

	for i := range cd.SubscriptionDataSet {
		sd := &cd.SubscriptionDataSet[i]
		old, ok := g.subs[sd.Topic]
		switch {
		case !ok:
			g.subs[sd.Topic] = normalizeSubscription(*sd)
			changed = true
		case sd.SubVersion > old.SubVersion:
			g.subs[sd.Topic] = normalizeSubscription(*sd)
		}
	}
	for topic := range g.subs {
		if !hasTopic(cd.SubscriptionDataSet, topic) {
			delete(g.subs, topic)
			changed = true
		}
	}
	if !changed || !notify || g.messageModel == remoting.MessageModelBroadcasting {
		return nil
	}
	return g.conns()
}

func hasTopic(subs []remoting.SubscriptionData, topic string) bool {
	for i := range subs {
		if subs[i].Topic == topic {
			return true
		}
	}
	return false
}

// normalizeSubscription recomputes the tag codes of a TAG subscription
// from its tags with Java's String.hashCode. Clients send them too, but the
// official Go client hashes UTF-8 bytes rather than UTF-16 units (and sends
// the codes as strings), so for non-ASCII tags its codes would not match
// the tagsCode the store computed for the messages.
func normalizeSubscription(sd remoting.SubscriptionData) remoting.SubscriptionData {
	if sd.ExpressionType != "" && sd.ExpressionType != remoting.ExpressionTypeTag {
		return sd
	}
	var codes []int32
	if len(sd.TagsSet) > 0 {
		codes = make([]int32, len(sd.TagsSet))
		for i, tag := range sd.TagsSet {
			codes[i] = int32(message.TagHash(tag))
		}
	}
	sd.CodeSet = codes
	return sd
}

// conns returns the group's connections.
func (g *consumerGroupInfo) conns() []*server.Conn {
	out := make([]*server.Conn, 0, len(g.channels))
	for c := range g.channels {
		out = append(out, c)
	}
	return out
}

// unregisterConsumer removes c from group (UNREGISTER_CLIENT). Like Java it
// returns the remaining members to notify whenever the group is known,
// notify is set and the group is not BROADCASTING.
func (m *clientManager) unregisterConsumer(group string, c *server.Conn, notify bool) []*server.Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.consumers[group]
	if g == nil {
		return nil
	}
	delete(g.channels, c)
	if len(g.channels) == 0 {
		delete(m.consumers, group)
		return nil
	}
	if !notify || g.messageModel == remoting.MessageModelBroadcasting {
		return nil
	}
	return g.conns()
}

// registerProducer registers or refreshes ch in a producer group.
func (m *clientManager) registerProducer(group string, ch clientChannel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch.conn.IsClosed() {
		return
	}
	t := m.producers[group]
	if t == nil {
		t = make(map[*server.Conn]*clientChannel, 1)
		m.producers[group] = t
	}
	if old := t[ch.conn]; old != nil {
		old.lastUpdate = ch.lastUpdate
		return
	}
	c := ch
	t[ch.conn] = &c
}

// unregisterProducer removes c from a producer group.
func (m *clientManager) unregisterProducer(group string, c *server.Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.producers[group]; t != nil {
		delete(t, c)
		if len(t) == 0 {
			delete(m.producers, group)
		}
	}
}

// groupNotice is a pending NOTIFY_CONSUMER_IDS_CHANGED for one group.
type groupNotice struct {
	group string
	conns []*server.Conn
}

// onConnClose drops a closed connection from every group; the remaining
// members of CLUSTERING consumer groups it belonged to are notified (Java
// doChannelCloseEvent, which ignores the group's notify flag). It runs on
// the server's event loop: InvokeOneway only queues the frame and wakes the
// loop, so it does not block there.
func (m *clientManager) onConnClose(c *server.Conn) {
	var notices []groupNotice
	m.mu.Lock()
	for name, g := range m.consumers {
		if _, ok := g.channels[c]; !ok {
			continue
		}
		delete(g.channels, c)
		if len(g.channels) == 0 {
			delete(m.consumers, name)
			continue
		}
		if g.messageModel != remoting.MessageModelBroadcasting {
			notices = append(notices, groupNotice{group: name, conns: g.conns()})
		}
	}
	for name, t := range m.producers {
		if _, ok := t[c]; ok {
			delete(t, c)
			if len(t) == 0 {
				delete(m.producers, name)
			}
		}
	}
	m.mu.Unlock()
	for _, n := range notices {
		m.notifyIDsChanged(n.group, n.conns)
	}
}

// scanExpired drops channels whose last heartbeat is older than
// ChannelExpiry and closes their connections. Like Java it sends no
// notification; the closes then find nothing left to remove.
func (m *clientManager) scanExpired() {
	deadline := time.Now().Add(-m.b.cfg.ChannelExpiry)
	var expired []*clientChannel
	m.mu.Lock()
	for name, g := range m.consumers {
		for c, ch := range g.channels {
			if ch.lastUpdate.Before(deadline) {
				delete(g.channels, c)
				expired = append(expired, ch)
			}
		}
		if len(g.channels) == 0 {
			delete(m.consumers, name)
		}
	}
	for name, t := range m.producers {
		for c, ch := range t {
			if ch.lastUpdate.Before(deadline) {
				delete(t, c)
				expired = append(expired, ch)
			}
		}
		if len(t) == 0 {
			delete(m.producers, name)
		}
	}
	m.mu.Unlock()
	for _, ch := range expired {
		m.b.log.Info("client channel expired", "client", ch.clientID, "remote", ch.conn.String())
		ch.conn.Close()
	}
}

// notifyIDsChanged sends NOTIFY_CONSUMER_IDS_CHANGED (oneway) to conns.
func (m *clientManager) notifyIDsChanged(group string, conns []*server.Conn) {
	if len(conns) == 0 {
		return
	}
	h := remoting.NotifyConsumerIdsChangedRequestHeader{ConsumerGroup: group}
	req := remoting.NewRequest(remoting.NotifyConsumerIDsChanged, h.AppendExt(nil), nil)
	for _, c := range conns {
		if err := c.InvokeOneway(req); err != nil {
			m.b.log.Debug("notify consumer ids changed", "group", group, "remote", c.String(), "err", err)
		}
	}
}

// subscription returns group's subscription of topic. groupKnown is false
// when no member of the group is registered (the pull path answers
// SUBSCRIPTION_NOT_EXIST either way, with different remarks).
func (m *clientManager) subscription(group, topic string) (sd remoting.SubscriptionData, ok bool, groupKnown bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return remoting.SubscriptionData{}, false, false
	}
	sd, ok = g.subs[topic]
	return sd, ok, true
}

// consumeType returns the message model (CLUSTERING or BROADCASTING) the
// group's members last reported.
func (m *clientManager) consumeType(group string) (messageModel string, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if g := m.consumers[group]; g != nil {
		return g.messageModel, true
	}
	return "", false
}

// producerConn returns a live connection of a producer group, rotating
// among them (Java getAvailableChannel), or nil.
func (m *clientManager) producerConn(group string) *server.Conn {
	m.mu.RLock()
	t := m.producers[group]
	live := make([]*server.Conn, 0, len(t))
	for c := range t {
		if !c.IsClosed() {
			live = append(live, c)
		}
	}
	m.mu.RUnlock()
	if len(live) == 0 {
		return nil
	}
	// Map order is random; sort so that the rotation is a rotation.
	sort.Slice(live, func(i, j int) bool { return live[i].ID() < live[j].ID() })
	return live[int(m.rr.Add(1)-1)%len(live)]
}

// consumerConn returns the connection of clientID in group, or nil.
func (m *clientManager) consumerConn(group, clientID string) *server.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if g := m.consumers[group]; g != nil {
		for c, ch := range g.channels {
			if ch.clientID == clientID {
				return c
			}
		}
	}
	return nil
}

// consumerIDs returns the sorted client ids of group's members.
func (m *clientManager) consumerIDs(group string) []string {
	m.mu.RLock()
	g := m.consumers[group]
	var ids []string
	if g != nil {
		ids = make([]string, 0, len(g.channels))
		for _, ch := range g.channels {
			ids = append(ids, ch.clientID)
		}
	}
	m.mu.RUnlock()
	sort.Strings(ids)
	return ids
}

// consumerConnection describes a consumer group for
// GET_CONSUMER_CONNECTION_LIST; false when the group has no member.
func (m *clientManager) consumerConnection(group string) (remoting.ConsumerConnection, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return remoting.ConsumerConnection{}, false
	}
	cc := remoting.ConsumerConnection{
		ConnectionSet:     connections(g.channels),
		SubscriptionTable: make(map[string]remoting.SubscriptionData, len(g.subs)),
		ConsumeType:       g.consumeType,
		MessageModel:      g.messageModel,
		ConsumeFromWhere:  g.consumeFromWhere,
	}
	for k, v := range g.subs {
		cc.SubscriptionTable[k] = v
	}
	return cc, true
}

// producerConnection describes a producer group for
// GET_PRODUCER_CONNECTION_LIST; false when the group has no member.
func (m *clientManager) producerConnection(group string) (remoting.ProducerConnection, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.producers[group]
	if !ok {
		return remoting.ProducerConnection{}, false
	}
	return remoting.ProducerConnection{ConnectionSet: connections(t)}, true
}

// connections lists channels ordered by client id, then address.
func connections(t map[*server.Conn]*clientChannel) []remoting.Connection {
	out := make([]remoting.Connection, 0, len(t))
	for c, ch := range t {
		out = append(out, remoting.Connection{
			ClientID:   ch.clientID,
			ClientAddr: remoteAddrString(c),
			Language:   ch.language.String(),
			Version:    ch.version,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ClientID != out[j].ClientID {
			return out[i].ClientID < out[j].ClientID
		}
		return out[i].ClientAddr < out[j].ClientAddr
	})
	return out
}

// groupsSubscribedTo lists the groups with a live member subscribed to
// topic (Java ConsumerManager.queryTopicConsumeByWho).
func (m *clientManager) groupsSubscribedTo(topic string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for group, g := range m.consumers {
		if _, ok := g.subs[topic]; ok {
			out = append(out, group)
		}
	}
	return out
}

// subscribesOrAll reports whether group's consumers subscribe to topic,
// counting a group without any subscription (unknown, or only assigned
// lite-pull members) as subscribing to all (Java getConsumeStats:
// findSubscriptionData, findSubscriptionDataCount).
func (m *clientManager) subscribesOrAll(group, topic string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil || len(g.subs) == 0 {
		return true
	}
	_, ok := g.subs[topic]
	return ok
}

// filterCacheBytes bounds the compiled SQL92 subscriptions the broker
// keeps, counted by the length of their group, topic and expression; a
// compiled tree is a small multiple of its text.
const filterCacheBytes = 1 << 20

type filterKey struct{ group, topic, expr string }

// filterCache holds the SQL92 expressions compiled for (group, topic,
// expression), and the compile errors, least recently used first out.
type filterCache struct {
	mu      sync.Mutex
	max     int
	size    int
	entries map[filterKey]*list.Element
	lru     list.List // of *filterEntry, most recent at the front
}

type filterEntry struct {
	key  filterKey
	expr *sql92.Expr
	err  error
}

func newFilterCache(maxBytes int) *filterCache {
	return &filterCache{max: maxBytes, entries: make(map[filterKey]*list.Element)}
}

func (k filterKey) size() int { return len(k.group) + len(k.topic) + len(k.expr) + 64 }

// compile returns the compiled SQL92 expression of group's subscription
// to topic, compiling it on first use.
func (c *filterCache) compile(group, topic, expr string) (*sql92.Expr, error) {
	k := filterKey{group, topic, expr}
	c.mu.Lock()
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*filterEntry)
		c.mu.Unlock()
		return e.expr, e.err
	}
	c.mu.Unlock()
	x, err := sql92.Compile(expr)
	if k.size() > c.max {
		return x, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok {
		c.entries[k] = c.lru.PushFront(&filterEntry{key: k, expr: x, err: err})
		c.size += k.size()
		for c.size > c.max {
			el := c.lru.Back()
			old := el.Value.(*filterEntry)
			c.lru.Remove(el)
			delete(c.entries, old.key)
			c.size -= old.key.size()
		}
	}
	return x, err
}

// len returns the number of cached expressions.
func (c *filterCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
