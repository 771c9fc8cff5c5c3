package broker

import (
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// defaultLockMaxLiveTime is Java's REBALANCE_LOCK_MAX_LIVE_TIME
// (rocketmq.broker.rebalance.lockMaxLiveTime): a queue lock not renewed
// for this long may be taken by another client (docs/PROTOCOL.md §9.9).
const defaultLockMaxLiveTime = 60 * time.Second

// defaultLockTableMax bounds the entries of the lock table over all
// groups; Java has no bound, but any client may send any queue set.
const defaultLockTableMax = 1 << 16

// lockEntry is the holder of one queue's lock and its last renewal.
type lockEntry struct {
	clientID string
	last     time.Time
}

// lockTable is Java's RebalanceLockManager: per consumer group, which
// client holds each queue. All work is done under one mutex in time
// linear in the request, on a handler worker, never an event loop.
type lockTable struct {
	maxLive time.Duration
	max     int
	now     func() time.Time

	mu     sync.Mutex
	groups map[string]map[rocketmq.MessageQueue]*lockEntry
	size   int
}

func newLockTable(maxLive time.Duration, max int) *lockTable {
	return &lockTable{
		maxLive: maxLive,
		max:     max,
		now:     time.Now,
		groups:  make(map[string]map[rocketmq.MessageQueue]*lockEntry),
	}
}

func (t *lockTable) expired(e *lockEntry, now time.Time) bool {
	return now.Sub(e.last) > t.maxLive
}

// tryLock grants clientID every queue of mqs that is free, already its
// own (renewed) or whose holder's lock expired, and returns the granted
// queues once each in request order. A new entry that would grow the
// table past its bound is not granted, after expired entries are dropped.
func (t *lockTable) tryLock(group, clientID string, mqs []rocketmq.MessageQueue) []rocketmq.MessageQueue {
	granted := make([]rocketmq.MessageQueue, 0, len(mqs))
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	g := t.groups[group]
	seen := make(map[rocketmq.MessageQueue]struct{}, len(mqs))
	swept := false
	for _, mq := range mqs {
		if _, dup := seen[mq]; dup {
			continue
		}
		seen[mq] = struct{}{}
		if e := g[mq]; e != nil {
			if e.clientID == clientID || t.expired(e, now) {
				e.clientID, e.last = clientID, now
				granted = append(granted, mq)
			}
			continue
		}
		if t.size >= t.max && !swept {
			t.sweepLocked(now)
			swept = true
			g = t.groups[group]
		}
		if t.size >= t.max {
			continue
		}
		if g == nil {
			g = make(map[rocketmq.MessageQueue]*lockEntry)
			t.groups[group] = g
		}
		g[mq] = &lockEntry{clientID: clientID, last: now}
		t.size++
		granted = append(granted, mq)
	}
	return granted
}

// unlock releases the queues of mqs that clientID holds in group; other
// holders' locks stay.
func (t *lockTable) unlock(group, clientID string, mqs []rocketmq.MessageQueue) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[group]
	for _, mq := range mqs {
		if e := g[mq]; e != nil && e.clientID == clientID {
			delete(g, mq)
			t.size--
		}
	}
	if g != nil && len(g) == 0 {
		delete(t.groups, group)
	}
}

// unlockClient releases every queue clientID holds in group.
func (t *lockTable) unlockClient(group, clientID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[group]
	for mq, e := range g {
		if e.clientID == clientID {
			delete(g, mq)
			t.size--
		}
	}
	if g != nil && len(g) == 0 {
		delete(t.groups, group)
	}
}

// sweepLocked drops expired entries; t.mu is held.
func (t *lockTable) sweepLocked(now time.Time) {
	for group, g := range t.groups {
		for mq, e := range g {
			if t.expired(e, now) {
				delete(g, mq)
				t.size--
			}
		}
		if len(g) == 0 {
			delete(t.groups, group)
		}
	}
}

// holder returns the client holding mq in group unexpired, or "".
func (t *lockTable) holder(group string, mq rocketmq.MessageQueue) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.groups[group][mq]; e != nil && !t.expired(e, t.now()) {
		return e.clientID
	}
	return ""
}
