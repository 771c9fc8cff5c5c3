package broker

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/promtext"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// brokerMetrics are the counters CollectMetrics exports: messages and
// bytes in (client sends stored) and out (pulls answered) per topic, sends
// refused and pulls answered per response code, long-poll holds and
// connections. Per-topic entries are made for topics that stored or
// served a message, so their number follows the topic table; a deleted
// topic's counters stay until the broker restarts.
type brokerMetrics struct {
	mu      sync.RWMutex
	topics  map[string]*topicMetrics
	refused codeCounters // send responses other than SUCCESS, by code
	pulls   codeCounters // pull responses, by code

	holds       atomic.Int64 // pulls parked for long polling
	connsOpened atomic.Int64
	connsClosed atomic.Int64
}

type topicMetrics struct {
	inMsgs, inBytes, outMsgs, outBytes atomic.Int64
}

func newBrokerMetrics() *brokerMetrics {
	return &brokerMetrics{topics: make(map[string]*topicMetrics)}
}

func (m *brokerMetrics) topic(t string) *topicMetrics {
	m.mu.RLock()
	tm := m.topics[t]
	m.mu.RUnlock()
	if tm != nil {
		return tm
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tm = m.topics[t]; tm == nil {
		tm = &topicMetrics{}
		m.topics[t] = tm
	}
	return tm
}

// in counts messages a client send stored.
func (m *brokerMetrics) in(topic string, msgs, bytes int) {
	tm := m.topic(topic)
	tm.inMsgs.Add(int64(msgs))
	tm.inBytes.Add(int64(bytes))
}

// out counts messages a pull returned.
func (m *brokerMetrics) out(topic string, msgs, bytes int) {
	tm := m.topic(topic)
	tm.outMsgs.Add(int64(msgs))
	tm.outBytes.Add(int64(bytes))
}

// codeCounters counts by response code; codes are the broker's own, so the
// map stays small.
type codeCounters struct {
	mu sync.Mutex
	n  map[int32]int64
}

func (c *codeCounters) inc(code int32) {
	c.mu.Lock()
	if c.n == nil {
		c.n = make(map[int32]int64)
	}
	c.n[code]++
	c.mu.Unlock()
}

// collect adds one sample per code seen, labelled with the code's name.
func (c *codeCounters) collect(s *promtext.Set, name, help, broker string) {
	c.mu.Lock()
	codes := make([]int32, 0, len(c.n))
	for code := range c.n {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	vals := make([]int64, len(codes))
	for i, code := range codes {
		vals[i] = c.n[code]
	}
	c.mu.Unlock()
	for i, code := range codes {
		s.Add(name, help, promtext.Counter, float64(vals[i]), "broker", broker, "code", remoting.ResponseCodeName(code))
	}
}

// CollectMetrics adds the broker's metrics to s, each labelled with the
// broker name: per-topic traffic, refused sends, pulls, long-poll holds,
// connections, the store's size and the disk's use.
func (b *Broker) CollectMetrics(s *promtext.Set) {
	m, name := b.metrics, b.cfg.BrokerName
	add := func(metric, help string, kind promtext.Kind, v float64, labels ...string) {
		s.Add(metric, help, kind, v, append([]string{"broker", name}, labels...)...)
	}
	m.mu.RLock()
	topics := make([]string, 0, len(m.topics))
	for t := range m.topics {
		topics = append(topics, t)
	}
	m.mu.RUnlock()
	slices.Sort(topics)
	for _, t := range topics {
		tm := m.topic(t)
		add("rocketmq_broker_messages_in_total", "Messages stored by client sends.", promtext.Counter, float64(tm.inMsgs.Load()), "topic", t)
		add("rocketmq_broker_bytes_in_total", "Bytes written to the CommitLog by client sends.", promtext.Counter, float64(tm.inBytes.Load()), "topic", t)
		add("rocketmq_broker_messages_out_total", "Messages returned by pulls.", promtext.Counter, float64(tm.outMsgs.Load()), "topic", t)
		add("rocketmq_broker_bytes_out_total", "Bytes of messages returned by pulls.", promtext.Counter, float64(tm.outBytes.Load()), "topic", t)
	}
	m.refused.collect(s, "rocketmq_broker_sends_refused_total", "Sends answered with a code other than SUCCESS, by code.", name)
	m.pulls.collect(s, "rocketmq_broker_pulls_total", "Pulls answered, by response code.", name)
	add("rocketmq_broker_long_poll_holds_total", "Pulls held for long polling.", promtext.Counter, float64(m.holds.Load()))
	add("rocketmq_broker_long_poll_held", "Pulls held now.", promtext.Gauge, float64(b.pulls.held.Load()))
	opened, closed := m.connsOpened.Load(), m.connsClosed.Load()
	add("rocketmq_broker_connections_opened_total", "Client connections accepted.", promtext.Counter, float64(opened))
	add("rocketmq_broker_connections_closed_total", "Client connections closed.", promtext.Counter, float64(closed))
	add("rocketmq_broker_connections", "Client connections open now.", promtext.Gauge, float64(opened-closed))
	add("rocketmq_broker_messages_stored_total", "Messages stored, client sends and the broker's own writes (retry, delay, transactions).",
		promtext.Counter, float64(b.stats.put.Load()))
	add("rocketmq_broker_topics", "Topics in the topic table.", promtext.Gauge, float64(len(b.topics.names())))
	if b.store != nil {
		minOff, maxOff := b.store.CommitLogMinOffset(), b.store.CommitLogMaxOffset()
		add("rocketmq_broker_commitlog_bytes", "Bytes of messages the CommitLog holds (max offset minus min offset).", promtext.Gauge, float64(max(maxOff-minOff, 0)))
		add("rocketmq_broker_commitlog_max_offset", "The CommitLog's max physical offset.", promtext.Gauge, float64(maxOff))
	}
	if b.store != nil {
		if r := b.store.DiskRatio(); r >= 0 {
			add("rocketmq_broker_disk_used_ratio", "Used fraction of the file system holding the store.", promtext.Gauge, r)
		}
	}
	add("rocketmq_broker_uptime_seconds", "Seconds since the broker was created.", promtext.Gauge, time.Since(b.stats.boot).Seconds())
}
