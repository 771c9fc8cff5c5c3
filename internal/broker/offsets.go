package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// offsetManager owns the committed consumer offsets (Java
// ConsumerOffsetManager) and config/consumerOffset.json (docs/PROTOCOL.md §9.8,
// §10.6), plus the per group/topic get rates GET_CONSUME_STATS reports.
//
// The table is keyed by (topic, group) rather than Java's "topic@group"
// string so the pull path commits without building a key; the file and the
// GET_ALL_CONSUMER_OFFSET body use Java's form.
//
// The file is written every OffsetFlushInterval and at Close, not at Crash:
// as with Java, offsets committed since the last write are lost by a crash
// and their messages are consumed again.
//
// Locks: persistMu is taken before mu; getRates' locks are never held with
// mu.
type offsetManager struct {
	b *Broker

	mu      sync.Mutex
	table   map[offsetKey]map[int32]int64
	version uint64 // bumped by every change; persist skips an unchanged table

	persistMu sync.Mutex // one writer of the file at a time
	persisted uint64     // version last written (or loaded)

	gets getRates

	memOnce sync.Once
	memHot  atomic.Int64 // bytes behind the commit-log tip still taken as cached
}

type offsetKey struct{ topic, group string }

func newOffsetManager(b *Broker) *offsetManager {
	return &offsetManager{b: b, table: make(map[offsetKey]map[int32]int64), gets: getRates{m: make(map[offsetKey]*getRate)}}
}

func (m *offsetManager) path() string {
	return filepath.Join(m.b.cfg.StoreDir, "config", "consumerOffset.json")
}

// load reads consumerOffset.json (strict JSON or Java's bare integer keys);
// a missing file is an empty table.
func (m *offsetManager) load() error {
	data, err := store.ReadConfigFile(m.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rocketmq: broker: read %s: %w", m.path(), err)
	}
	var w remoting.ConsumerOffsetSerializeWrapper
	if err := w.DecodeJSON(data); err != nil {
		return fmt.Errorf("rocketmq: broker: parse %s: %w", m.path(), err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, queues := range w.OffsetTable {
		topic, group, ok := strings.Cut(k, "@")
		if !ok || topic == "" || group == "" {
			m.b.log.Warn("consumerOffset.json: ignoring malformed key", "key", k)
			continue
		}
		q := make(map[int32]int64, len(queues))
		for id, off := range queues {
			q[id] = off
		}
		m.table[offsetKey{topic, group}] = q
	}
	m.persisted = m.version
	return nil
}

// persist writes the table when it changed since the last write. The file
// is strict JSON with quoted keys, which Java brokers read too.
func (m *offsetManager) persist() error {
	m.persistMu.Lock()
	defer m.persistMu.Unlock()
	w, version := m.wrapper()
	if version == m.persisted {
		return nil
	}
	if err := store.WriteConfigFile(m.path(), w.AppendJSON(nil, remoting.JSONStandard)); err != nil {
		return fmt.Errorf("rocketmq: broker: persist consumer offsets: %w", err)
	}
	m.persisted = version
	return nil
}

func (m *offsetManager) persistLogged() {
	if err := m.persist(); err != nil {
		m.b.log.Error("persist consumer offsets", "err", err)
	}
}

// wrapper copies the table in Java's "topic@group" form.
func (m *offsetManager) wrapper() (remoting.ConsumerOffsetSerializeWrapper, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := make(map[string]map[int32]int64, len(m.table))
	for k, q := range m.table {
		c := make(map[int32]int64, len(q))
		for id, off := range q {
			c[id] = off
		}
		t[k.topic+"@"+k.group] = c
	}
	return remoting.ConsumerOffsetSerializeWrapper{OffsetTable: t}, m.version
}

// commit stores the next offset to consume. Like Java it accepts any value,
// a smaller one included.
func (m *offsetManager) commit(group, topic string, queueID int32, offset int64) {
	k := offsetKey{topic, group}
	m.mu.Lock()
	q := m.table[k]
	if q == nil {
		q = make(map[int32]int64, 8)
		m.table[k] = q
	}
	old, had := q[queueID]
	q[queueID] = offset
	if !had || old != offset {
		m.version++
	}
	m.mu.Unlock()
	if had && offset < old {
		m.b.log.Debug("consumer offset moved back", "group", group, "topic", topic, "queue", queueID, "old", old, "new", offset)
	}
}

// query returns the committed offset, if any.
func (m *offsetManager) query(group, topic string, queueID int32) (int64, bool) {
	m.mu.Lock()
	off, ok := m.table[offsetKey{topic, group}][queueID]
	m.mu.Unlock()
	return off, ok
}

// firstMessageOnDisk is Java's checkInDiskByConsumeOffset(topic, queue, 0):
// whether the message at queue offset 0 lies further behind the commit-log
// tip than 40% of physical memory (accessMessageInMemoryMaxRatio), so is
// probably no longer in the page cache. Java then lets a new group start
// at the end instead of replaying the whole queue.
func (m *offsetManager) firstMessageOnDisk(topic string, queueID int32) bool {
	e, err := m.b.store.ConsumeQueueEntry(topic, queueID, 0)
	if err != nil {
		return false
	}
	m.memOnce.Do(func() { m.memHot.Store(physicalMemory() * 40 / 100) })
	return m.b.store.CommitLogMaxOffset()-e.PhysicalOffset > m.memHot.Load()
}

// physicalMemory is MemTotal from /proc/meminfo, or 16 GiB where that
// cannot be read.
func physicalMemory() int64 {
	const fallback = 16 << 30
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			break
		}
		return kb << 10
	}
	return fallback
}

// topicsOf lists the topics group has offsets for, sorted (Java
// whichTopicByConsumer).
func (m *offsetManager) topicsOf(group string) []string {
	m.mu.Lock()
	var out []string
	for k := range m.table {
		if k.group == group {
			out = append(out, k.topic)
		}
	}
	m.mu.Unlock()
	sort.Strings(out)
	return out
}

// groupsOf lists the groups with an offset of topic, sorted (Java
// whichGroupByTopic).
func (m *offsetManager) groupsOf(topic string) []string {
	m.mu.Lock()
	var out []string
	for k := range m.table {
		if k.topic == topic {
			out = append(out, k.group)
		}
	}
	m.mu.Unlock()
	sort.Strings(out)
	return out
}

// removeTopic drops every group's offsets of topic (delete topic).
func (m *offsetManager) removeTopic(topic string) {
	m.remove(func(k offsetKey) bool { return k.topic == topic })
}

// removeGroup drops every offset of group (delete group with cleanOffset).
func (m *offsetManager) removeGroup(group string) {
	m.remove(func(k offsetKey) bool { return k.group == group })
}

func (m *offsetManager) remove(match func(offsetKey) bool) {
	m.mu.Lock()
	for k := range m.table {
		if match(k) {
			delete(m.table, k)
			m.version++
		}
	}
	m.mu.Unlock()
	m.gets.remove(match)
}

// getRates counts messages handed out per (topic, group) for the consumeTps
// of GET_CONSUME_STATS: Java reports the rate over the last minute from
// samples taken every 10 s; here the samples are taken lazily by the pulls.
type getRates struct {
	mu sync.RWMutex
	m  map[offsetKey]*getRate
}

type getRate struct {
	mu      sync.Mutex
	total   int64
	samples [getRateSamples]rateSample // ring, oldest overwritten
	next    int
	filled  int
}

type rateSample struct {
	at    time.Time
	total int64
}

const (
	getRateSamples = 7
	getRateStep    = 10 * time.Second
	getRateWindow  = time.Minute
)

func (g *getRates) add(group, topic string, n int, now time.Time) {
	k := offsetKey{topic, group}
	g.mu.RLock()
	r := g.m[k]
	g.mu.RUnlock()
	if r == nil {
		g.mu.Lock()
		if r = g.m[k]; r == nil {
			r = &getRate{}
			r.push(now, 0)
			g.m[k] = r
		}
		g.mu.Unlock()
	}
	r.mu.Lock()
	last := r.samples[(r.next+getRateSamples-1)%getRateSamples]
	if now.Sub(last.at) >= getRateStep {
		r.push(now, r.total)
	}
	r.total += int64(n)
	r.mu.Unlock()
}

func (r *getRate) push(at time.Time, total int64) {
	r.samples[r.next] = rateSample{at, total}
	r.next = (r.next + 1) % getRateSamples
	if r.filled < getRateSamples {
		r.filled++
	}
}

// tps is the rate since the oldest sample within the window.
func (g *getRates) tps(group, topic string, now time.Time) float64 {
	g.mu.RLock()
	r := g.m[offsetKey{topic, group}]
	g.mu.RUnlock()
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var base rateSample
	found := false
	for i := 1; i <= r.filled; i++ {
		s := r.samples[(r.next-i+getRateSamples)%getRateSamples]
		if now.Sub(s.at) > getRateWindow+getRateStep {
			break
		}
		base, found = s, true
	}
	if !found {
		return 0
	}
	secs := now.Sub(base.at).Seconds()
	if secs < 1 {
		secs = 1
	}
	return float64(r.total-base.total) / secs
}

func (g *getRates) remove(match func(offsetKey) bool) {
	g.mu.Lock()
	for k := range g.m {
		if match(k) {
			delete(g.m, k)
		}
	}
	g.mu.Unlock()
}

// offsetResponse is SUCCESS with the single `offset` header field.
func offsetResponse(off int64) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	h := remoting.OffsetResponseHeader{Offset: off}
	resp.Ext = h.AppendExt(make(remoting.ExtFields, 0, 1))
	return resp
}
