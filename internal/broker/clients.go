package broker

import (
	"container/list"
	"context"
	"runtime/debug"
	"slices"
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
// Connection methods (Push, Close) are never called with the lock held:
// the functions that change membership return the connections to notify
// or close, and the caller acts on them after unlocking.
//
// Memory is per membership: a client in 50,000 groups is one clientRecord
// and 50,000 members of 16 bytes each, and the names a heartbeat repeats
// for every group (consume type, message model, where to start) are
// interned, so a refreshing heartbeat keeps nothing of its own.
type clientManager struct {
	b *Broker

	mu        sync.RWMutex
	consumers map[string]*consumerGroupInfo
	records   map[*server.Conn]*clientRecord // consumer connections
	producers map[string]map[*server.Conn]*clientChannel
	names     map[string]string // interned heartbeat names

	rr atomic.Uint32 // producerConn round robin

	filters  *filterCache // compiled SQL92 subscriptions (Java ConsumerFilterManager)
	notifier *groupNotifier
}

// maxInterned bounds the interned names: the few values of consume type,
// message model and consume-from-where, whatever a client sends.
const maxInterned = 256

// clientChannel is one client connection's registration in a group.
type clientChannel struct {
	conn       *server.Conn
	clientID   string
	language   remoting.LanguageCode
	version    int32
	lastUpdate time.Time
}

// clientRecord is what a consumer connection's heartbeats say of the
// client, shared by all its memberships.
type clientRecord struct {
	conn     *server.Conn
	clientID string
	language remoting.LanguageCode
	version  int32
}

// member is one connection's membership of a consumer group.
type member struct {
	rec  *clientRecord
	last int64 // unix nanoseconds of the last heartbeat naming the group
}

func (mb member) channel() clientChannel {
	return clientChannel{conn: mb.rec.conn, clientID: mb.rec.clientID, language: mb.rec.language,
		version: mb.rec.version, lastUpdate: time.Unix(0, mb.last)}
}

// consumerGroupInfo is one consumer group's live state. The last
// heartbeat of any member sets consumeType, messageModel and
// consumeFromWhere, as in Java.
type consumerGroupInfo struct {
	members          []member
	consumeType      string
	messageModel     string
	consumeFromWhere string
	// subs holds one subscription per topic, a handful at most. Entries
	// are replaced, never modified, so a copy handed out keeps valid
	// slices.
	subs []remoting.SubscriptionData
}

// find returns the index of c's membership, or -1.
func (g *consumerGroupInfo) find(c *server.Conn) int {
	for i := range g.members {
		if g.members[i].rec.conn == c {
			return i
		}
	}
	return -1
}

// remove drops the membership at i; the slice shrinks once it is mostly
// empty, so that departed members' room is given back.
func (g *consumerGroupInfo) remove(i int) {
	last := len(g.members) - 1
	g.members[i] = g.members[last]
	g.members[last] = member{}
	g.members = g.members[:last]
	if c := cap(g.members); c > 8 && len(g.members) < c/4 {
		g.members = slices.Clip(slices.Clone(g.members))
	}
}

// sub returns the group's subscription of topic.
func (g *consumerGroupInfo) sub(topic string) (remoting.SubscriptionData, bool) {
	for i := range g.subs {
		if g.subs[i].Topic == topic {
			return g.subs[i], true
		}
	}
	return remoting.SubscriptionData{}, false
}

func newClientManager(b *Broker) *clientManager {
	return &clientManager{
		b:         b,
		consumers: make(map[string]*consumerGroupInfo),
		records:   make(map[*server.Conn]*clientRecord),
		producers: make(map[string]map[*server.Conn]*clientChannel),
		names:     make(map[string]string),
		filters:   newFilterCache(filterCacheBytes),
		notifier:  newGroupNotifier(),
	}
}

// intern returns the kept copy of s (m.mu held).
func (m *clientManager) intern(s string) string {
	if v, ok := m.names[s]; ok {
		return v
	}
	if len(m.names) < maxInterned && len(s) <= 64 {
		m.names[s] = s
	}
	return s
}

// record returns the connection's client record for ch (m.mu held),
// replacing it when the heartbeat names another client.
func (m *clientManager) record(ch clientChannel) *clientRecord {
	r := m.records[ch.conn]
	if r == nil || r.clientID != ch.clientID || r.language != ch.language || r.version != ch.version {
		r = &clientRecord{conn: ch.conn, clientID: ch.clientID, language: ch.language, version: ch.version}
		m.records[ch.conn] = r
	}
	return r
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
	rec := m.record(ch)
	g := m.consumers[cd.GroupName]
	if g == nil {
		g = &consumerGroupInfo{}
		m.consumers[cd.GroupName] = g
	}
	g.consumeType = m.intern(cd.ConsumeType)
	g.messageModel = m.intern(cd.MessageModel)
	g.consumeFromWhere = m.intern(cd.ConsumeFromWhere)

	changed := false
	now := ch.lastUpdate.UnixNano()
	if i := g.find(ch.conn); i < 0 {
		changed = true
		g.members = append(g.members, member{rec: rec, last: now})
	} else {
		// A different client id on a known connection replaces the
		// entry without counting as a change (Java logs it as a bug).
		g.members[i] = member{rec: rec, last: now}
	}

	for i := range cd.SubscriptionDataSet {
		sd := &cd.SubscriptionDataSet[i]
		j := slices.IndexFunc(g.subs, func(o remoting.SubscriptionData) bool { return o.Topic == sd.Topic })
		switch {
		case j < 0:
			g.subs = append(g.subs, normalizeSubscription(*sd))
			changed = true
		case sd.SubVersion > g.subs[j].SubVersion:
			g.subs[j] = normalizeSubscription(*sd)
		}
	}
	if len(g.subs) > len(cd.SubscriptionDataSet) || !allListed(g.subs, cd.SubscriptionDataSet) {
		kept := make([]remoting.SubscriptionData, 0, len(g.subs))
		for _, sd := range g.subs {
			if hasTopic(cd.SubscriptionDataSet, sd.Topic) {
				kept = append(kept, sd)
			}
		}
		if len(kept) != len(g.subs) {
			g.subs = kept
			changed = true
		}
	}
	if !changed || !notify || g.messageModel == remoting.MessageModelBroadcasting {
		return nil
	}
	return g.conns()
}

// allListed reports whether every topic of subs is in the heartbeat's set.
func allListed(subs, set []remoting.SubscriptionData) bool {
	for i := range subs {
		if !hasTopic(set, subs[i].Topic) {
			return false
		}
	}
	return true
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
	out := make([]*server.Conn, 0, len(g.members))
	for _, mb := range g.members {
		out = append(out, mb.rec.conn)
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
	if i := g.find(c); i >= 0 {
		g.remove(i)
	}
	if len(g.members) == 0 {
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

// onConnClose drops a closed connection from every group; the remaining
// members of CLUSTERING consumer groups it belonged to are notified (Java
// doChannelCloseEvent, which ignores the group's notify flag). It runs on
// the server's event loop, so it only marks the groups: the notifier
// sends the notifications, to the members the groups have by then.
func (m *clientManager) onConnClose(c *server.Conn) {
	var changed []string
	dropped := 0
	m.mu.Lock()
	if _, ok := m.records[c]; ok {
		delete(m.records, c)
		for name, g := range m.consumers {
			i := g.find(c)
			if i < 0 {
				continue
			}
			g.remove(i)
			dropped++
			if len(g.members) == 0 {
				delete(m.consumers, name)
				continue
			}
			if g.messageModel != remoting.MessageModelBroadcasting {
				changed = append(changed, name)
			}
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
	m.notifier.mark(changed, dropped)
}

// scanExpired drops channels whose last heartbeat is older than
// ChannelExpiry and closes their connections. Like Java it sends no
// notification; the closes then find nothing left to remove.
func (m *clientManager) scanExpired() {
	deadline := time.Now().Add(-m.b.cfg.ChannelExpiry)
	cut := deadline.UnixNano()
	expired := make(map[*server.Conn]clientChannel)
	m.mu.Lock()
	for name, g := range m.consumers {
		for i := 0; i < len(g.members); {
			if mb := g.members[i]; mb.last < cut {
				expired[mb.rec.conn] = mb.channel()
				g.remove(i)
				continue
			}
			i++
		}
		if len(g.members) == 0 {
			delete(m.consumers, name)
		}
	}
	for name, t := range m.producers {
		for c, ch := range t {
			if ch.lastUpdate.Before(deadline) {
				delete(t, c)
				expired[c] = *ch
			}
		}
		if len(t) == 0 {
			delete(m.producers, name)
		}
	}
	m.mu.Unlock()
	for c, ch := range expired {
		m.b.log.Info("client channel expired", "client", ch.clientID, "remote", c.String())
		c.Close()
	}
}

// notifyIDsChanged sends NOTIFY_CONSUMER_IDS_CHANGED (oneway) to conns. A
// connection that is behind reading gets none: the notification only
// hastens the rebalance its client runs every 20 s anyway.
func (m *clientManager) notifyIDsChanged(group string, conns []*server.Conn) {
	if len(conns) == 0 {
		return
	}
	h := remoting.NotifyConsumerIdsChangedRequestHeader{ConsumerGroup: group}
	req := remoting.NewRequest(remoting.NotifyConsumerIDsChanged, h.AppendExt(nil), nil)
	for _, c := range conns {
		if err := c.Push(req); err != nil {
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
	sd, ok = g.sub(topic)
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
		for _, mb := range g.members {
			if mb.rec.clientID == clientID {
				return mb.rec.conn
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
		ids = make([]string, 0, len(g.members))
		for _, mb := range g.members {
			ids = append(ids, mb.rec.clientID)
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
	chans := make([]clientChannel, len(g.members))
	for i, mb := range g.members {
		chans[i] = mb.channel()
	}
	cc := remoting.ConsumerConnection{
		ConnectionSet:     connections(chans),
		SubscriptionTable: make(map[string]remoting.SubscriptionData, len(g.subs)),
		ConsumeType:       g.consumeType,
		MessageModel:      g.messageModel,
		ConsumeFromWhere:  g.consumeFromWhere,
	}
	for _, sd := range g.subs {
		cc.SubscriptionTable[sd.Topic] = sd
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
	chans := make([]clientChannel, 0, len(t))
	for _, ch := range t {
		chans = append(chans, *ch)
	}
	return remoting.ProducerConnection{ConnectionSet: connections(chans)}, true
}

// connections lists channels ordered by client id, then address.
func connections(chans []clientChannel) []remoting.Connection {
	out := make([]remoting.Connection, 0, len(chans))
	for _, ch := range chans {
		out = append(out, remoting.Connection{
			ClientID:   ch.clientID,
			ClientAddr: remoteAddrString(ch.conn),
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
		if _, ok := g.sub(topic); ok {
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
	_, ok := g.sub(topic)
	return ok
}

// groupNotifier sends the NOTIFY_CONSUMER_IDS_CHANGED that closed
// connections call for, off the event loop. Groups are marked, not
// queued: however many members of a group leave before it runs, the group
// is notified once, to the members it has then.
type groupNotifier struct {
	mu      sync.Mutex
	pending map[string]struct{}
	dropped int // memberships dropped since memory was last given back
	wake    chan struct{}
}

func newGroupNotifier() *groupNotifier {
	return &groupNotifier{pending: make(map[string]struct{}), wake: make(chan struct{}, 1)}
}

// mark asks for the groups to be notified; dropped counts the
// memberships the close removed.
func (n *groupNotifier) mark(groups []string, dropped int) {
	if len(groups) == 0 && dropped == 0 {
		return
	}
	n.mu.Lock()
	for _, g := range groups {
		n.pending[g] = struct{}{}
	}
	n.dropped += dropped
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take returns up to max marked groups and unmarks them.
func (n *groupNotifier) take(max int) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, min(max, len(n.pending)))
	for g := range n.pending {
		if len(out) == max {
			break
		}
		out = append(out, g)
		delete(n.pending, g)
	}
	if len(n.pending) == 0 {
		// A map keeps its room after deletes: start afresh once empty.
		n.pending = make(map[string]struct{})
	}
	return out
}

// takeDropped returns and resets the count of dropped memberships.
func (n *groupNotifier) takeDropped() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.dropped
	n.dropped = 0
	return d
}

// notifyBatch is how many groups the notifier handles per lock of the
// client table.
const notifyBatch = 256

// Memory given back after connections leave: once releaseAfter
// memberships have gone and no more went for releaseQuiet, the runtime is
// asked to return free memory to the system. Clients in tens of thousands
// of groups leave hundreds of megabytes of heap behind, which the Go
// runtime would otherwise keep for minutes when the broker goes idle.
const (
	releaseAfter = 10000
	releaseQuiet = 2 * time.Second
)

// runNotifier sends the marked groups' notifications until ctx ends.
func (m *clientManager) runNotifier(ctx context.Context) {
	release := time.NewTimer(time.Hour)
	release.Stop()
	counted, armed := 0, false // memberships dropped; release armed
	for {
		select {
		case <-ctx.Done():
			release.Stop()
			return
		case <-release.C:
			if d := m.notifier.takeDropped(); d > 0 {
				// More left meanwhile: wait for quiet again.
				counted += d
				release.Reset(releaseQuiet)
				continue
			}
			m.b.log.Debug("returning memory after clients left", "memberships", counted)
			counted, armed = 0, false
			debug.FreeOSMemory()
			continue
		case <-m.notifier.wake:
		}
		counted += m.notifier.takeDropped()
		if counted >= releaseAfter && !armed {
			armed = true
			release.Reset(releaseQuiet)
		}
		for {
			groups := m.notifier.take(notifyBatch)
			if len(groups) == 0 {
				break
			}
			conns := make([][]*server.Conn, len(groups))
			m.mu.RLock()
			for i, name := range groups {
				if g := m.consumers[name]; g != nil && g.messageModel != remoting.MessageModelBroadcasting {
					conns[i] = g.conns()
				}
			}
			m.mu.RUnlock()
			for i, name := range groups {
				m.notifyIDsChanged(name, conns[i])
			}
			if ctx.Err() != nil {
				return
			}
		}
	}
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
