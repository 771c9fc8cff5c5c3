package consumer

import (
	"sync"
	"sync/atomic"

	"github.com/go-rocketmq/rocketmq"
)

// processQueue holds the messages of one queue pulled but not yet
// consumed (Java ProcessQueue). Pulls append in increasing offset order,
// so the messages live in a deque ordered by offset: a consumed message is
// marked done and the ends are trimmed past done entries, which keeps
// every operation O(1) amortised (Java keeps a TreeMap).
//
// Each entry has a sequence number, seq = base + index, handed to the
// consume request with the message; removal finds the entry by it and
// checks the offset, so a sequence number reused after a tail trim never
// removes the wrong message.
type processQueue struct {
	mu      sync.Mutex
	ents    []pqEntry
	head    int    // first live index in ents
	base    uint64 // seq of ents[head]
	count   int    // entries not done
	bytes   int64  // memory held: the charges of pulls with a message not done
	highest int64  // largest offset ever added, -1 before the first

	dropped bool
	// Orderly: consuming is set while a consume task of the queue is
	// queued, running or waiting to run again; taken is the seq of the
	// first message not handed to a handler yet.
	consuming bool
	taken     uint64
	// lastPull and lastConsume are unix ms, read by RunningInfo.
	lastPull    int64
	lastConsume int64
}

type pqEntry struct {
	msg   *rocketmq.MessageExt
	start int64 // unix ms the handler started, 0 before
	pull  *pullCharge
	done  bool
	// giveBack says who is giving the message back to the broker, so
	// the expiry sweep and a failed handler never both send it back.
	giveBack uint8
}

// pqEntry.giveBack values.
const (
	giveBackNone          uint8 = iota
	giveBackSweep               // the expiry sweep is sending it back
	giveBackSweepFailed         // ... and its handler failed meanwhile
	giveBackHandlerFailed       // the failed handler's path is sending it back
)

// pullCharge is the memory one pull's messages hold together: their
// bodies alias the pull's response, so the whole response stays alive as
// long as any of them is held. It is charged to the queue until its last
// message is done, so a few slow messages cannot pin many responses
// beyond the size cap.
type pullCharge struct {
	size int64
	live int
}

func newProcessQueue() *processQueue {
	return &processQueue{highest: -1}
}

// add appends msgs (increasing offsets) and returns the seq of the first
// and the messages it took: any at or below an offset already added (a
// broker answering the same range twice) is left out, so that no handler
// sees it twice. charge is the memory the messages hold together (see
// pullCharge).
func (pq *processQueue) add(msgs []*rocketmq.MessageExt, charge int64) (uint64, []*rocketmq.MessageExt) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	first := pq.base + uint64(len(pq.ents)-pq.head)
	out := msgs[:0]
	pc := &pullCharge{size: charge}
	for _, m := range msgs {
		if m.QueueOffset <= pq.highest {
			continue
		}
		pq.ents = append(pq.ents, pqEntry{msg: m, pull: pc})
		pq.count++
		pq.highest = m.QueueOffset
		out = append(out, m)
	}
	clear(msgs[len(out):])
	if pc.live = len(out); pc.live > 0 {
		pq.bytes += pc.size
	}
	return first, out
}

// pullCharge returns what a pull of msgs, from a response of respLen
// bytes, holds: the response, or the bodies when they were inflated.
func pullChargeOf(msgs []*rocketmq.MessageExt, respLen int) int64 {
	n := 0
	for _, m := range msgs {
		n += len(m.Body)
	}
	return int64(max(n, respLen))
}

// seqOf is the seq of the i-th message of a batch: base+i for a batch
// as pulled, seqs[i] for one put together for a local retry.
func seqOf(base uint64, seqs []uint64, i int) uint64 {
	if seqs != nil {
		return seqs[i]
	}
	return base + uint64(i)
}

// begin records the handler start time of a batch and counts it in
// inflight; false when the queue was dropped (the batch is then not
// consumed). Counting under mu orders it before a drop: once a queue is
// dropped, its count only goes down.
func (pq *processQueue) begin(base uint64, seqs []uint64, n int, now int64, inflight *atomic.Int32) bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if pq.dropped {
		return false
	}
	inflight.Add(1)
	for i := 0; i < n; i++ {
		if e := pq.entryLocked(seqOf(base, seqs, i)); e != nil && !e.done {
			e.start = now
		}
	}
	pq.lastConsume = now
	return true
}

func (pq *processQueue) entryLocked(seq uint64) *pqEntry {
	if seq < pq.base {
		return nil
	}
	i := pq.head + int(seq-pq.base)
	if i >= len(pq.ents) {
		return nil
	}
	return &pq.ents[i]
}

// remove marks the messages consumed (at now, unix ms) and returns the
// offset to commit:
// the smallest offset still held, or one past the highest added when
// nothing is held; -1 when nothing was ever added. keep[i] true leaves
// msgs[i] held (its local retry is pending).
func (pq *processQueue) remove(base uint64, seqs []uint64, msgs []*rocketmq.MessageExt, keep []bool, now int64) int64 {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	for i, m := range msgs {
		if keep != nil && keep[i] {
			// Waiting for a local retry, not running: the expiry sweep
			// leaves it alone until its next begin.
			if e := pq.entryLocked(seqOf(base, seqs, i)); e != nil && !e.done && e.msg.QueueOffset == m.QueueOffset {
				e.start = 0
			}
			continue
		}
		pq.removeOneLocked(seqOf(base, seqs, i), m)
	}
	pq.lastConsume = now
	pq.trimLocked()
	return pq.commitOffsetLocked()
}

func (pq *processQueue) removeOneLocked(seq uint64, m *rocketmq.MessageExt) bool {
	e := pq.entryLocked(seq)
	if e == nil || e.done || e.msg.QueueOffset != m.QueueOffset {
		return false
	}
	e.done = true
	e.msg = nil
	pq.count--
	if e.pull.live--; e.pull.live == 0 {
		pq.bytes -= e.pull.size
	}
	e.pull = nil
	return true
}

// trimLocked drops done entries at both ends and compacts the slice when
// the dead prefix is more than half of it.
func (pq *processQueue) trimLocked() {
	for pq.head < len(pq.ents) && pq.ents[pq.head].done {
		pq.ents[pq.head] = pqEntry{}
		pq.head++
		pq.base++
	}
	for n := len(pq.ents); n > pq.head && pq.ents[n-1].done; n-- {
		pq.ents[n-1] = pqEntry{}
		pq.ents = pq.ents[:n-1]
	}
	if pq.head == len(pq.ents) {
		pq.ents = pq.ents[:0]
		pq.head = 0
		return
	}
	if pq.head > 64 && pq.head*2 > len(pq.ents) {
		n := copy(pq.ents, pq.ents[pq.head:])
		clear(pq.ents[n:])
		pq.ents = pq.ents[:n]
		pq.head = 0
	}
}

func (pq *processQueue) commitOffsetLocked() int64 {
	if pq.head < len(pq.ents) {
		return pq.ents[pq.head].msg.QueueOffset
	}
	if pq.highest < 0 {
		return -1
	}
	return pq.highest + 1
}

// stats returns the held count, the memory held and the offset span.
func (pq *processQueue) stats() (count int, bytes int64, span int64) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.count, pq.bytes, pq.spanLocked()
}

func (pq *processQueue) spanLocked() int64 {
	if pq.head >= len(pq.ents) {
		return 0
	}
	return pq.ents[len(pq.ents)-1].msg.QueueOffset - pq.ents[pq.head].msg.QueueOffset
}

func (pq *processQueue) setDropped() {
	pq.mu.Lock()
	pq.dropped = true
	pq.mu.Unlock()
}

func (pq *processQueue) isDropped() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	return pq.dropped
}

func (pq *processQueue) setLastPull(ms int64) {
	pq.mu.Lock()
	pq.lastPull = ms
	pq.mu.Unlock()
}

// expiredRef is a held message whose handler started too long ago.
type expiredRef struct {
	seq uint64
	msg *rocketmq.MessageExt
}

// expired returns up to max messages whose handler started before
// cutoff (unix ms), oldest first (Java cleanExpiredMsg looks at most at
// 16 per round).
func (pq *processQueue) expired(cutoff int64, max int) []expiredRef {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	var out []expiredRef
	for i := pq.head; i < len(pq.ents) && len(out) < max; i++ {
		e := &pq.ents[i]
		if e.done {
			continue
		}
		if e.start == 0 || e.start > cutoff {
			// Java looks at the first message only: later ones started
			// later or not at all.
			break
		}
		if e.giveBack != giveBackNone {
			continue
		}
		e.giveBack = giveBackSweep
		out = append(out, expiredRef{seq: pq.base + uint64(i-pq.head), msg: e.msg})
	}
	return out
}

// claimFailed is called by a failed handler's path for the message at
// seq: held is false when it is no longer held; swept is true when the
// expiry sweep is already sending it back (the sweep then also owns its
// local retry should that fail). Otherwise the caller now owns giving it
// back and must call unclaim if it keeps the message for a local retry.
func (pq *processQueue) claimFailed(seq uint64, m *rocketmq.MessageExt) (held, swept bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	e := pq.entryLocked(seq)
	if e == nil || e.done || e.msg.QueueOffset != m.QueueOffset {
		return false, false
	}
	switch e.giveBack {
	case giveBackSweep, giveBackSweepFailed:
		e.giveBack = giveBackSweepFailed
		return true, true
	}
	e.giveBack = giveBackHandlerFailed
	return true, false
}

// unclaim ends a give-back that failed and reports whether the message is
// still held and its handler failed while the sweep had it.
func (pq *processQueue) unclaim(seq uint64, m *rocketmq.MessageExt) (handlerFailed bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	e := pq.entryLocked(seq)
	if e == nil || e.done || e.msg.QueueOffset != m.QueueOffset {
		return false
	}
	handlerFailed = e.giveBack == giveBackSweepFailed
	e.giveBack = giveBackNone
	return handlerFailed
}

// removeOne takes one message out (an expired one sent back) and returns
// the offset to commit and whether it was still held.
func (pq *processQueue) removeOne(seq uint64, m *rocketmq.MessageExt) (int64, bool) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	ok := pq.removeOneLocked(seq, m)
	pq.trimLocked()
	return pq.commitOffsetLocked(), ok
}

// info fills Java's ProcessQueueInfo fields this queue has.
func (pq *processQueue) info() (minOff, maxOff int64, count int, bytes int64, dropped bool, lastPull, lastConsume int64) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if pq.head < len(pq.ents) {
		minOff = pq.ents[pq.head].msg.QueueOffset
		maxOff = pq.ents[len(pq.ents)-1].msg.QueueOffset
	}
	return minOff, maxOff, pq.count, pq.bytes, pq.dropped, pq.lastPull, pq.lastConsume
}

// Orderly consumption (Java ProcessQueue.takeMessages / commit /
// makeMessageToConsumeAgain): batches are taken from the head in offset
// order and stay held (count, bytes, flow control) until committed; a
// suspended batch is put back by moving the take cursor back.

// schedule marks an orderly consume task as scheduled for the queue;
// false when one is already (then that task takes what was just added).
func (pq *processQueue) schedule() bool {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if pq.consuming || pq.dropped {
		return false
	}
	pq.consuming = true
	return true
}

// take returns the seq and messages of the next batch of at most n
// messages after the ones taken, counting it in inflight; none when the
// queue is dropped or has nothing more, the task then ends (the
// scheduled mark is cleared under the same lock a pull's schedule takes,
// so no added message is left without a task).
func (pq *processQueue) take(n int, now int64, inflight *atomic.Int32) (uint64, []*rocketmq.MessageExt) {
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if pq.dropped {
		pq.consuming = false
		return 0, nil
	}
	if pq.taken < pq.base {
		pq.taken = pq.base
	}
	i := pq.head + int(pq.taken-pq.base)
	if i >= len(pq.ents) {
		pq.consuming = false
		return 0, nil
	}
	seq := pq.taken
	end := min(len(pq.ents), i+n)
	msgs := make([]*rocketmq.MessageExt, 0, end-i)
	for ; i < end; i++ {
		e := &pq.ents[i]
		e.start = now
		msgs = append(msgs, e.msg)
	}
	pq.taken = seq + uint64(len(msgs))
	pq.lastConsume = now
	inflight.Add(1)
	return seq, msgs
}

// putBack makes the batch taken at seq the next one taken again.
func (pq *processQueue) putBack(seq uint64) {
	pq.mu.Lock()
	if seq < pq.taken {
		pq.taken = seq
	}
	pq.mu.Unlock()
}

// unschedule clears the scheduled mark of a task that ends without
// looking for more (the queue was dropped).
func (pq *processQueue) unschedule() {
	pq.mu.Lock()
	pq.consuming = false
	pq.mu.Unlock()
}
