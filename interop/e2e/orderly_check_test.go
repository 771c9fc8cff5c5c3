package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// propKey carries a message's ordering key (its sharding key too).
const propKey = "e2e_key"

// orderlyCall is one handler call of an orderly consumer.
type orderlyCall struct {
	member     string
	official   bool
	queue      queueKey
	start, end time.Time
	msgs       []keySeq // this run's messages, in delivery order
}

type keySeq struct {
	key string
	seq int
}

// callLog records the handler calls of every member of a group.
type callLog struct {
	run   string
	mu    sync.Mutex
	calls []orderlyCall
	seen  map[keySeq]bool
}

func newCallLog(run string) *callLog { return &callLog{run: run, seen: make(map[keySeq]bool)} }

// add records a call; props gives a message's property.
func (l *callLog) add(c orderlyCall, n int, props func(i int, name string) string) {
	for i := 0; i < n; i++ {
		if props(i, propRun) != l.run {
			continue
		}
		seq, err := strconv.Atoi(props(i, propIdx))
		if err != nil {
			continue
		}
		c.msgs = append(c.msgs, keySeq{props(i, propKey), seq})
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	for _, m := range c.msgs {
		l.seen[m] = true
	}
	l.mu.Unlock()
}

// covered reports whether every message of keys with sequence numbers
// below n has been delivered at least once.
func (l *callLog) covered(keys []string, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if !l.seen[keySeq{k, i}] {
				return false
			}
		}
	}
	return true
}

func (l *callLog) missing(keys []string, n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	miss := 0
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if !l.seen[keySeq{k, i}] {
				miss++
			}
		}
	}
	return miss
}

func (l *callLog) snapshot() []orderlyCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// checkOrderlyCalls checks recorded orderly handler calls: no queue in two
// members' handlers at once (nor in two calls of one of our members);
// per member and key, each message is the one after the member's
// previous one, except at a handover, where the new holder may start
// again at or before where the previous holder got to but never past it
// (and exactly after it when the previous holder was ours, which persists
// its offset before it unlocks); every message 0..n-1 of every key
// delivered. It also wants the queues
// to have changed hands between ours and the official client in both
// directions, so that the checks saw handovers.
func checkOrderlyCalls(t *testing.T, calls []orderlyCall, keys []string, n int, queueOf map[string]int) {
	t.Helper()
	r := reviewOrderlyCalls(calls, keys, n, queueOf)
	for i, p := range r.problems {
		if i == 20 {
			t.Errorf("and %d more", len(r.problems)-i)
			break
		}
		t.Error(p)
	}
	if r.handovers["ours→official"] == 0 || r.handovers["official→ours"] == 0 {
		t.Errorf("handovers %v: want queues changing hands both ways between ours and the official client", r.handovers)
	}
	var hs []string
	for k, v := range r.handovers {
		hs = append(hs, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(hs)
	t.Logf("%d calls; handovers: %s; %d redelivered at a handover %v; %d overlapping calls within the official member", len(calls), strings.Join(hs, ", "), r.redelivered, r.redeliveredBy, r.officialSelf)
}

// orderlyReview is what reviewOrderlyCalls found.
type orderlyReview struct {
	problems      []string
	handovers     map[string]int // "ours→official", "official→ours", "ours→ours" ...: queues changing hands
	redelivered   int            // messages delivered again by a queue's new holder
	redeliveredBy map[string]int // the same by handover kind, as handovers
	officialSelf  int            // calls of an official member overlapping its own on one queue
}

// reviewOrderlyCalls does the checks of checkOrderlyCalls.
func reviewOrderlyCalls(calls []orderlyCall, keys []string, n int, queueOf map[string]int) orderlyReview {
	r := orderlyReview{handovers: make(map[string]int), redeliveredBy: make(map[string]int)}
	fail := func(format string, args ...any) { r.problems = append(r.problems, fmt.Sprintf(format, args...)) }
	byQueue := make(map[queueKey][]orderlyCall)
	official := make(map[string]bool)
	for _, c := range calls {
		byQueue[c.queue] = append(byQueue[c.queue], c)
		official[c.member] = c.official
	}
	type memberKey struct {
		member, key string
	}
	seen := make(map[keySeq]int)
	side := func(m string) string {
		if official[m] {
			return "official"
		}
		return "ours"
	}
	for q, qc := range byQueue {
		slices.SortStableFunc(qc, func(a, b orderlyCall) int { return a.start.Compare(b.start) })
		maxEnd := make(map[string]time.Time) // member → latest end of its calls so far
		last := make(map[memberKey][2]int)   // member, key → stint and sequence number it saw last
		high := make(map[string]int)         // key → highest sequence number delivered so far
		prev := ""                           // member of the previous call on q
		stint := 0                           // calls of one member in a row on q
		handover := false                    // the stint began when q changed hands
		kind := ""                           // the handover's kind: "ours→official" ...
		for _, c := range qc {
			for m, end := range maxEnd {
				if !end.After(c.start) {
					continue
				}
				switch {
				case m != c.member:
					fail("queue %s: %s's call at %s overlaps %s's call that ended at %s",
						q, c.member, c.start.Format("15:04:05.000000"), m, end.Format("15:04:05.000000"))
				case !c.official:
					fail("queue %s: two calls of %s at once (one from %s, one until %s)",
						q, c.member, c.start.Format("15:04:05.000000"), end.Format("15:04:05.000000"))
				default:
					r.officialSelf++
				}
			}
			if c.end.After(maxEnd[c.member]) {
				maxEnd[c.member] = c.end
			}
			if c.member != prev {
				stint++
				handover = prev != ""
				if handover {
					kind = side(prev) + "→" + side(c.member)
					r.handovers[kind]++
				}
				prev = c.member
			}
			for _, m := range c.msgs {
				if qi, ok := queueOf[m.key]; ok && qi != q.id {
					fail("key %s (queue %d) delivered from queue %s", m.key, qi, q)
				}
				seen[m]++
				mk := memberKey{c.member, m.key}
				h, any := high[m.key]
				if !any {
					h = -1
				}
				l, had := last[mk]
				switch {
				case m.seq > h+1:
					fail("queue %s: %s got %s/%d after %d was the highest delivered: a gap", q, c.member, m.key, m.seq, h)
				case had && l[0] == stint && m.seq != l[1]+1:
					fail("queue %s: %s got %s/%d after %d: out of order", q, c.member, m.key, m.seq, l[1])
				case had && l[0] == stint:
				case handover:
					// A new holder starts at the committed offset, which may lie
					// before what the previous holder had consumed.
					if m.seq <= h {
						r.redelivered++
						r.redeliveredBy[kind]++
						if strings.HasPrefix(kind, "ours→") {
							// Ours persists the offset of what it consumed before
							// it unlocks a queue.
							fail("queue %s: %s got %s/%d again after ours handed the queue over at %d", q, c.member, m.key, m.seq, h)
						}
					}
				case m.seq != h+1:
					fail("queue %s: %s got %s/%d first, after %d was the highest delivered", q, c.member, m.key, m.seq, h)
				}
				last[mk] = [2]int{stint, m.seq}
				high[m.key] = max(h, m.seq)
			}
		}
	}
	for _, k := range keys {
		for i := 0; i < n; i++ {
			if seen[keySeq{k, i}] == 0 {
				fail("message %s/%d never delivered", k, i)
			}
		}
	}
	return r
}
