package broker

import (
	"container/heap"
	"context"
	"math"
	"runtime"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// pullHold parks pulls that found nothing (Java PullRequestHoldService,
// docs/PROTOCOL.md §9.3 step 6) under topic@queueId until a matching message
// arrives (notify, called by the store's dispatch), the periodic check finds
// the queue grown, or the hold time ends. A woken pull is re-executed
// without suspension and answered on its connection with its opaque.
//
// notify runs on the appending goroutine of the store, so it only moves
// held pulls to the ready list under mu and signals; the re-execution runs
// on the workers started by run. mu is never held while calling the store,
// a connection or another manager.
type pullHold struct {
	b    *Broker
	bufs sync.Pool // *[]byte scratch for pull bodies

	held atomic.Int64 // pulls parked, for notify's lock-free fast path

	mu      sync.Mutex
	byQueue map[holdKey][]*heldPull
	byTime  heldHeap
	ready   []*heldPull
	closed  bool

	wake   chan struct{} // ready has work
	retime chan struct{} // the earliest deadline moved earlier
}

type holdKey struct {
	topic   string
	queueID int32
}

type heldPull struct {
	c        *server.Conn
	req      *remoting.Command
	key      holdKey
	offset   int64 // the requested queue offset
	filter   tagFilter
	deadline time.Time
	idx      int // position in byTime
}

// Buffers above this size are not kept for reuse.
const (
	pullBufSize    = 64 << 10
	pullBufKeepMax = 1 << 20
)

func newPullHold(b *Broker) *pullHold {
	h := &pullHold{
		b:       b,
		byQueue: make(map[holdKey][]*heldPull),
		wake:    make(chan struct{}, 1),
		retime:  make(chan struct{}, 1),
	}
	h.bufs.New = func() any {
		buf := make([]byte, 0, pullBufSize)
		return &buf
	}
	return h
}

func (h *pullHold) getBuf() *[]byte { return h.bufs.Get().(*[]byte) }

// putBuf returns the scratch buffer; data is what the store appended to it
// (possibly a grown copy), kept instead when larger but not too large.
func (h *pullHold) putBuf(buf *[]byte, data []byte) {
	if cap(data) > cap(*buf) && cap(data) <= pullBufKeepMax {
		*buf = data[:0]
	}
	h.bufs.Put(buf)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// checkInterval is how often held pulls are compared with their queue's max
// offset: Java's 5 s with long polling, the short-polling time without.
func (h *pullHold) checkInterval() time.Duration {
	if h.b.cfg.DisableLongPolling {
		return h.b.cfg.ShortPollingTime
	}
	return h.b.cfg.LongPollCheck
}

// holdTime is how long a pull that found nothing is held for a client's
// suspendTimeoutMillis. Java's PullRequestHoldService answers a held pull
// once suspendTimestamp+timeout has passed at one of its checks
// (docs/PROTOCOL.md §9.3), so a timeout ≤ 0, or one whose sum overflows, is
// answered at the next check: it is held one check interval here. Anything
// longer than MaxPullSuspend is held MaxPullSuspend, so a client cannot
// park a pull for ever.
func (h *pullHold) holdTime(ms int64) time.Duration {
	max := h.b.cfg.MaxPullSuspend
	if ms <= 0 || ms > math.MaxInt64-time.Now().UnixMilli() {
		return min(h.checkInterval(), max)
	}
	if ms >= int64(max/time.Millisecond) {
		return max
	}
	return time.Duration(ms) * time.Millisecond
}

// suspend parks a pull that found nothing. It returns false when the hold is
// closed; the caller then answers at once. With recheck it looks at the
// queue once more after parking, so a message stored between the read and
// the parking does not wait for the periodic check.
func (h *pullHold) suspend(c *server.Conn, req *remoting.Command, key holdKey, offset int64, f tagFilter, timeout time.Duration, recheck bool) bool {
	p := &heldPull{c: c, req: req, key: key, offset: offset, filter: f, deadline: time.Now().Add(timeout)}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.byQueue[key] = append(h.byQueue[key], p)
	heap.Push(&h.byTime, p)
	first := p.idx == 0
	h.held.Inc()
	h.mu.Unlock()
	if first {
		signal(h.retime)
	}
	if recheck && !h.b.cfg.DisableLongPolling {
		if max := h.b.store.MaxOffset(key.topic, key.queueID); max > offset {
			h.wakeQueue(key, max)
		}
	}
	return true
}

// notify wakes the pulls held on the event's queue that wait for an offset
// below the new max and whose filter takes the message's tags code. With
// long polling off, arrivals wake nothing (as in Java); the check does.
func (h *pullHold) notify(ev store.DispatchEvent) {
	if h.held.Load() == 0 || h.b.cfg.DisableLongPolling {
		return
	}
	key := holdKey{ev.Topic, ev.QueueID}
	newMax := ev.QueueOffset + 1
	h.mu.Lock()
	moved := h.moveLocked(key, func(p *heldPull) bool {
		return newMax > p.offset && p.filter.match(ev.TagsCode)
	})
	h.mu.Unlock()
	if moved {
		signal(h.wake)
	}
}

// wakeQueue wakes every pull on key waiting below max, whatever its filter
// (the re-execution filters).
func (h *pullHold) wakeQueue(key holdKey, max int64) {
	h.mu.Lock()
	moved := h.moveLocked(key, func(p *heldPull) bool { return max > p.offset })
	h.mu.Unlock()
	if moved {
		signal(h.wake)
	}
}

// moveLocked moves the pulls on key that wake says to the ready list.
func (h *pullHold) moveLocked(key holdKey, wake func(*heldPull) bool) bool {
	list := h.byQueue[key]
	if len(list) == 0 {
		return false
	}
	keep := list[:0]
	moved := false
	for _, p := range list {
		if wake(p) {
			heap.Remove(&h.byTime, p.idx)
			h.ready = append(h.ready, p)
			h.held.Dec()
			moved = true
		} else {
			keep = append(keep, p)
		}
	}
	clear(list[len(keep):])
	if len(keep) == 0 {
		delete(h.byQueue, key)
	} else {
		h.byQueue[key] = keep
	}
	return moved
}

// unlinkLocked removes p from its queue list (p already left byTime).
func (h *pullHold) unlinkLocked(p *heldPull) {
	list := h.byQueue[p.key]
	for i, q := range list {
		if q == p {
			last := len(list) - 1
			list[i] = list[last]
			list[last] = nil
			list = list[:last]
			break
		}
	}
	if len(list) == 0 {
		delete(h.byQueue, p.key)
	} else {
		h.byQueue[p.key] = list
	}
	h.held.Dec()
}

// expire moves the pulls whose hold time is over to the ready list and
// returns the next deadline (zero when nothing is held).
func (h *pullHold) expire(now time.Time) time.Time {
	h.mu.Lock()
	moved := false
	for len(h.byTime) > 0 && !h.byTime[0].deadline.After(now) {
		p := heap.Pop(&h.byTime).(*heldPull)
		h.unlinkLocked(p)
		h.ready = append(h.ready, p)
		moved = true
	}
	var next time.Time
	if len(h.byTime) > 0 {
		next = h.byTime[0].deadline
	}
	h.mu.Unlock()
	if moved {
		signal(h.wake)
	}
	return next
}

// check is the periodic pass: it drops pulls whose connection closed and
// wakes those whose queue grew (Java checkHoldRequest).
func (h *pullHold) check() {
	h.mu.Lock()
	keys := make([]holdKey, 0, len(h.byQueue))
	for k, list := range h.byQueue {
		keep := list[:0]
		for _, p := range list {
			if p.c.IsClosed() {
				heap.Remove(&h.byTime, p.idx)
				h.held.Dec()
				continue
			}
			keep = append(keep, p)
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(h.byQueue, k)
			continue
		}
		h.byQueue[k] = keep
		keys = append(keys, k)
	}
	h.mu.Unlock()
	for _, k := range keys {
		h.wakeQueue(k, h.b.store.MaxOffset(k.topic, k.queueID))
	}
}

// take pops one ready pull, signalling again when more remain so another
// worker helps.
func (h *pullHold) take() *heldPull {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.ready)
	if n == 0 {
		return nil
	}
	p := h.ready[0]
	h.ready[0] = nil
	h.ready = h.ready[1:]
	if n > 1 {
		signal(h.wake)
	} else {
		h.ready = h.ready[:0:0]
	}
	return p
}

// answer re-executes a woken pull and replies on its connection; a pull
// whose connection closed meanwhile is dropped.
func (h *pullHold) answer(p *heldPull) {
	if p.c.IsClosed() {
		return
	}
	if resp := h.b.reply(p.c, p.req, false); resp != nil {
		if err := p.c.Reply(p.req, resp); err != nil {
			h.b.log.Debug("pull: reply to held pull failed", "remote", p.c.String(), "err", err)
		}
	}
}

// run drives the hold until ctx is done: timeouts, the periodic check and a
// few workers that re-execute woken pulls.
func (h *pullHold) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range min(max(runtime.GOMAXPROCS(0), 2), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.work(ctx)
		}()
	}
	defer wg.Wait()

	tick := time.NewTicker(h.checkInterval())
	defer tick.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		next := h.expire(now)
		wait := time.Hour
		if !next.IsZero() {
			wait = next.Sub(now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-h.retime:
		case <-tick.C:
			h.check()
		}
	}
}

func (h *pullHold) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		for p := h.take(); p != nil; p = h.take() {
			h.answer(p)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// close stops holding: later pulls are answered at once, and every pull
// still held or ready is re-executed and answered now. The broker calls it
// after run returned.
func (h *pullHold) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	all := h.ready
	for _, p := range h.byTime {
		all = append(all, p)
	}
	h.ready, h.byTime = nil, nil
	clear(h.byQueue)
	h.held.Store(0)
	h.mu.Unlock()
	for _, p := range all {
		h.answer(p)
	}
}

// heldHeap orders held pulls by deadline (container/heap).
type heldHeap []*heldPull

func (q heldHeap) Len() int           { return len(q) }
func (q heldHeap) Less(i, j int) bool { return q[i].deadline.Before(q[j].deadline) }
func (q heldHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].idx = i
	q[j].idx = j
}

func (q *heldHeap) Push(x any) {
	p := x.(*heldPull)
	p.idx = len(*q)
	*q = append(*q, p)
}

func (q *heldHeap) Pop() any {
	old := *q
	n := len(old) - 1
	p := old[n]
	old[n] = nil
	p.idx = -1
	*q = old[:n]
	return p
}
