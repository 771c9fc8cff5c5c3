package namesrv

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Route tables, after Java's RouteInfoManager (docs/PROTOCOL.md §9.12). One
// RWMutex guards all of them; reads (route queries) dominate. Nothing does
// I/O while holding it: callers copy out what they need and encode or close
// connections afterwards.

const masterID = 0

// Permission bits (PermName) and topic sysFlag bits used here.
const (
	permWrite = 1 << 1
	permRead  = 1 << 2

	topicFlagUnit    = 0x1
	topicFlagUnitSub = 0x2
)

// topicConfig is the part of a broker's TopicConfig the NameServer keeps.
type topicConfig struct {
	Name           string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
}

// brokerLive is the liveness record of one broker address.
type brokerLive struct {
	lastUpdate   time.Time
	timeout      time.Duration // 0: the server's expiry
	version      remoting.DataVersion
	conn         *server.Conn // the connection it last registered over
	haServerAddr string
}

type routeTable struct {
	mu       sync.RWMutex
	topics   map[string]map[string]remoting.QueueData // topic → broker name → queues
	brokers  map[string]*remoting.BrokerData          // broker name →
	clusters map[string]map[string]struct{}           // cluster → broker names
	live     map[string]*brokerLive                   // broker address →
	filters  map[string][]string                      // broker address → filter servers
}

func newRouteTable() *routeTable {
	return &routeTable{
		topics:   make(map[string]map[string]remoting.QueueData),
		brokers:  make(map[string]*remoting.BrokerData),
		clusters: make(map[string]map[string]struct{}),
		live:     make(map[string]*brokerLive),
		filters:  make(map[string][]string),
	}
}

// registration is one REGISTER_BROKER request, decoded.
type registration struct {
	Cluster      string
	Addr         string
	Name         string
	ID           int64
	HAServerAddr string
	Version      remoting.DataVersion
	Topics       []topicConfig // applied only for a master whose version changed
	Filters      []string      // nil: leave as is; empty: clear
	Conn         *server.Conn
	Now          time.Time
	Timeout      time.Duration // 5.x heartbeatTimeoutMillis; 0: the server's expiry
}

// registerResult is what a slave learns about its master.
type registerResult struct {
	HAServerAddr string
	MasterAddr   string
}

// register records a broker registration. It reports false, changing
// nothing, when the registering connection has already closed: its close
// callback may have run before this handler took the lock, and recording
// the dead connection would keep the broker alive until expiry.
func (t *routeTable) register(r *registration) (registerResult, bool) {
	var res registerResult
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Conn != nil && r.Conn.IsClosed() {
		return res, false
	}

	names := t.clusters[r.Cluster]
	if names == nil {
		names = make(map[string]struct{})
		t.clusters[r.Cluster] = names
	}
	names[r.Name] = struct{}{}

	first := false
	bg := t.brokers[r.Name]
	if bg == nil {
		first = true
		bg = &remoting.BrokerData{Cluster: r.Cluster, BrokerName: r.Name, BrokerAddrs: make(map[int64]string)}
		t.brokers[r.Name] = bg
	}
	// One address has one id: a slave promoted to master re-registers
	// its address under id 0, so drop the old id first.
	for id, addr := range bg.BrokerAddrs {
		if addr == r.Addr && id != r.ID {
			delete(bg.BrokerAddrs, id)
		}
	}
	if _, had := bg.BrokerAddrs[r.ID]; !had {
		first = true
	}
	bg.BrokerAddrs[r.ID] = r.Addr

	if r.ID == masterID && (first || t.versionChanged(r.Addr, r.Version)) {
		for _, tc := range r.Topics {
			qm := t.topics[tc.Name]
			if qm == nil {
				qm = make(map[string]remoting.QueueData)
				t.topics[tc.Name] = qm
			}
			qm[r.Name] = remoting.QueueData{
				BrokerName:     r.Name,
				ReadQueueNums:  tc.ReadQueueNums,
				WriteQueueNums: tc.WriteQueueNums,
				Perm:           tc.Perm,
				TopicSysFlag:   tc.TopicSysFlag,
			}
		}
	}

	t.live[r.Addr] = &brokerLive{
		lastUpdate:   r.Now,
		timeout:      r.Timeout,
		version:      r.Version,
		conn:         r.Conn,
		haServerAddr: r.HAServerAddr,
	}

	if r.Filters != nil {
		if len(r.Filters) == 0 {
			delete(t.filters, r.Addr)
		} else {
			t.filters[r.Addr] = slices.Clone(r.Filters)
		}
	}

	if r.ID != masterID {
		if master, ok := bg.BrokerAddrs[masterID]; ok {
			if ml := t.live[master]; ml != nil {
				res = registerResult{HAServerAddr: ml.haServerAddr, MasterAddr: master}
			}
		}
	}
	return res, true
}

// versionChanged reports whether addr is unknown or registered last with
// another data version. t.mu must be held.
func (t *routeTable) versionChanged(addr string, v remoting.DataVersion) bool {
	l := t.live[addr]
	return l == nil || l.version != v
}

// queryDataVersion answers QUERY_DATA_VERSION: whether v (nil: none sent)
// differs from the registered version, refreshing liveness when it does
// not, and the registered version if any.
func (t *routeTable) queryDataVersion(addr string, v *remoting.DataVersion, now time.Time) (changed bool, registered *remoting.DataVersion) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.live[addr]
	if l == nil {
		return true, nil
	}
	if v == nil || l.version != *v {
		changed = true
	} else {
		l.lastUpdate = now
	}
	rv := l.version
	return changed, &rv
}

// unregister removes brokerID from broker name's addresses, as Java does
// for UNREGISTER_BROKER (by id, whatever address it holds), and the
// liveness of brokerAddr.
func (t *routeTable) unregister(cluster, addr, name string, id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, addr)
	delete(t.filters, addr)
	bg := t.brokers[name]
	if bg == nil {
		return
	}
	delete(bg.BrokerAddrs, id)
	if len(bg.BrokerAddrs) > 0 {
		return
	}
	delete(t.brokers, name)
	if names := t.clusters[cluster]; names != nil {
		delete(names, name)
		if len(names) == 0 {
			delete(t.clusters, cluster)
		}
	}
	t.removeBrokerNameTopics(name)
}

// removeAddrLocked forgets a broker address that closed or expired:
// liveness, its BrokerData entry, and, when its broker name has no address
// left, the broker name with its cluster membership and queue data.
func (t *routeTable) removeAddrLocked(addr string) {
	delete(t.live, addr)
	delete(t.filters, addr)
	for name, bg := range t.brokers {
		found := false
		for id, a := range bg.BrokerAddrs {
			if a == addr {
				delete(bg.BrokerAddrs, id)
				found = true
			}
		}
		if !found {
			continue
		}
		if len(bg.BrokerAddrs) == 0 {
			delete(t.brokers, name)
			for cluster, names := range t.clusters {
				if _, ok := names[name]; ok {
					delete(names, name)
					if len(names) == 0 {
						delete(t.clusters, cluster)
					}
				}
			}
			t.removeBrokerNameTopics(name)
		}
		return
	}
}

// removeBrokerNameTopics drops name's queue data; topics left without
// brokers disappear. t.mu must be held.
func (t *routeTable) removeBrokerNameTopics(name string) {
	for topic, qm := range t.topics {
		delete(qm, name)
		if len(qm) == 0 {
			delete(t.topics, topic)
		}
	}
}

// connClosed forgets every broker address whose last registration came
// over c, and returns them.
func (t *routeTable) connClosed(c *server.Conn) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var gone []string
	for addr, l := range t.live {
		if l.conn == c {
			gone = append(gone, addr)
		}
	}
	for _, addr := range gone {
		t.removeAddrLocked(addr)
	}
	return gone
}

// expired is a broker address removed by the liveness scan.
type expired struct {
	Addr string
	Conn *server.Conn
}

// expire forgets every broker address not refreshed within its timeout
// (def unless it registered with its own) of now.
// The caller closes the returned connections (outside the lock), as Java
// closes the channel of an expired broker.
func (t *routeTable) expire(now time.Time, def time.Duration) []expired {
	t.mu.Lock()
	defer t.mu.Unlock()
	var gone []expired
	for addr, l := range t.live {
		timeout := def
		if l.timeout > 0 {
			timeout = l.timeout
		}
		if l.lastUpdate.Add(timeout).Before(now) {
			gone = append(gone, expired{Addr: addr, Conn: l.conn})
		}
	}
	for _, e := range gone {
		t.removeAddrLocked(e.Addr)
	}
	return gone
}

// route copies the route of topic, queue and broker data sorted by broker
// name. ok is false when the topic has no queue data or none of its broker
// names has addresses (TOPIC_NOT_EXIST).
func (t *routeTable) route(topic string) (remoting.TopicRouteData, bool) {
	var rd remoting.TopicRouteData
	t.mu.RLock()
	defer t.mu.RUnlock()
	qm := t.topics[topic]
	if len(qm) == 0 {
		return rd, false
	}
	rd.QueueDatas = make([]remoting.QueueData, 0, len(qm))
	for _, qd := range qm {
		rd.QueueDatas = append(rd.QueueDatas, qd)
	}
	slices.SortFunc(rd.QueueDatas, func(a, b remoting.QueueData) int { return cmp.Compare(a.BrokerName, b.BrokerName) })
	rd.BrokerDatas = make([]remoting.BrokerData, 0, len(rd.QueueDatas))
	for _, qd := range rd.QueueDatas {
		bg := t.brokers[qd.BrokerName]
		if bg == nil {
			continue
		}
		rd.BrokerDatas = append(rd.BrokerDatas, cloneBrokerData(bg))
		if len(t.filters) == 0 {
			continue // the usual case: no filter servers anywhere
		}
		for _, addr := range bg.BrokerAddrs {
			if fs, ok := t.filters[addr]; ok {
				if rd.FilterServerTable == nil {
					rd.FilterServerTable = make(map[string][]string)
				}
				rd.FilterServerTable[addr] = slices.Clone(fs)
			}
		}
	}
	if len(rd.BrokerDatas) == 0 {
		return remoting.TopicRouteData{}, false
	}
	return rd, true
}

func cloneBrokerData(b *remoting.BrokerData) remoting.BrokerData {
	c := *b
	c.BrokerAddrs = maps.Clone(b.BrokerAddrs)
	return c
}

// clusterInfo copies the broker and cluster tables.
func (t *routeTable) clusterInfo() remoting.ClusterInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ci := remoting.ClusterInfo{
		BrokerAddrTable:  make(map[string]remoting.BrokerData, len(t.brokers)),
		ClusterAddrTable: make(map[string][]string, len(t.clusters)),
	}
	for name, bg := range t.brokers {
		ci.BrokerAddrTable[name] = cloneBrokerData(bg)
	}
	for cluster, names := range t.clusters {
		ci.ClusterAddrTable[cluster] = sortedKeys(names)
	}
	return ci
}

// allTopics lists every topic with queue data, sorted.
func (t *routeTable) allTopics() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return sortedKeys(t.topics)
}

// topicsByCluster lists the topics served by any broker name of cluster.
func (t *routeTable) topicsByCluster(cluster string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := t.clusters[cluster]
	var out []string
	for topic, qm := range t.topics {
		for name := range qm {
			if _, ok := names[name]; ok {
				out = append(out, topic)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// systemTopics is Java's GET_SYSTEM_TOPIC_LIST_FROM_NS: every cluster name
// and broker name (brokers create topics named after both), plus one
// broker address to ask for more.
func (t *routeTable) systemTopics() (topics []string, brokerAddr string) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := make(map[string]struct{})
	for cluster, names := range t.clusters {
		seen[cluster] = struct{}{}
		for name := range names {
			seen[name] = struct{}{}
		}
	}
	for _, name := range sortedKeys(t.brokers) {
		bg := t.brokers[name]
		if len(bg.BrokerAddrs) == 0 {
			continue
		}
		ids := sortedKeys(bg.BrokerAddrs)
		brokerAddr = bg.BrokerAddrs[ids[0]]
		break
	}
	return sortedKeys(seen), brokerAddr
}

// topicsBySysFlag lists topics whose (any one broker's) topicSysFlag
// satisfies pick, like Java which looks at one QueueData per topic.
func (t *routeTable) topicsBySysFlag(pick func(flag int32) bool) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for topic, qm := range t.topics {
		for _, qd := range qm {
			if pick(qd.TopicSysFlag) {
				out = append(out, topic)
			}
			break
		}
	}
	slices.Sort(out)
	return out
}

// setWritePerm clears (add=false) or restores (add=true, perm = read|write)
// the write permission of broker name on every topic it serves, and
// returns how many topics it touched.
func (t *routeTable) setWritePerm(name string, add bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, qm := range t.topics {
		qd, ok := qm[name]
		if !ok {
			continue
		}
		if add {
			qd.Perm = permRead | permWrite
		} else {
			qd.Perm &^= permWrite
		}
		qm[name] = qd
		n++
	}
	return n
}

// deleteTopic removes topic, or only its queue data on the broker names of
// cluster when cluster is not empty.
func (t *routeTable) deleteTopic(topic, cluster string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cluster == "" {
		delete(t.topics, topic)
		return
	}
	qm := t.topics[topic]
	if qm == nil {
		return
	}
	for name := range t.clusters[cluster] {
		delete(qm, name)
	}
	if len(qm) == 0 {
		delete(t.topics, topic)
	}
}

// registerTopic adds queue data for topic (5.x REGISTER_TOPIC_IN_NAMESRV).
// Every broker name must be registered; otherwise nothing changes and it
// reports false.
func (t *routeTable) registerTopic(topic string, qds []remoting.QueueData) bool {
	if len(qds) == 0 {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, qd := range qds {
		if _, ok := t.brokers[qd.BrokerName]; !ok {
			return false
		}
	}
	qm := t.topics[topic]
	if qm == nil {
		qm = make(map[string]remoting.QueueData, len(qds))
		t.topics[topic] = qm
	}
	for _, qd := range qds {
		qm[qd.BrokerName] = qd
	}
	return true
}

func sortedKeys[K interface{ ~string | ~int64 }, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// msDuration converts Java milliseconds, saturating instead of overflowing.
func msDuration(ms int64) time.Duration {
	const max = int64(1<<63-1) / int64(time.Millisecond)
	if ms > max {
		ms = max
	}
	return time.Duration(ms) * time.Millisecond
}
