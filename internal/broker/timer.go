package broker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Timer messages (5.x, docs/PROTOCOL.md §9.6): a message with TIMER_DELAY_SEC,
// TIMER_DELAY_MS or TIMER_DELIVER_MS (and no DELAY) is parked in queue 0
// of rmq_sys_wheel_timer with TIMER_OUT_MS, REAL_TOPIC and REAL_QID, and
// re-put to its real queue once due.
//
// Instead of Java's time wheel and timer log, the timer topic's consume
// queue is the on-disk log: every parked message has an entry there and
// its record holds its time. In memory each pending message costs one
// 16-byte heap element (due time, queue offset). Which queue offsets are
// finished (delivered or cancelled) is kept as a set of ranges, persisted
// to config/timerProgress.json; at start the queue is scanned from the
// first unfinished offset to rebuild the heap (timerlog.go).
//
// After a crash the progress file may lag: entries that were due before
// the start are verified against the index of their real topic before
// delivery (the delivered copy carries the same UNIQ_KEY and, as
// TIMER_ENQUEUE_MS, the parked record's store time), so a crash neither
// loses nor duplicates a timer message.

// topicTimer is TimerMessageStore.TIMER_TOPIC.
const topicTimer = rocketmq.SystemTopicPrefix + "wheel_timer"

// timerCancelGrace is how long after its own time a TIMER_DEL_UNIQKEY
// message keeps cancelling: the target normally has the same time, this
// leaves room for targets a little later.
const timerCancelGrace = time.Minute

// Remarks of a 5.x broker.
const (
	remarkTimerDisabled = "accurate timer message is not enabled, timerWheelEnable is false"
	remarkTimerIllegal  = "timer message illegal, the delay time should not be bigger than the max delay %dms; " +
		"or if set del msg, the delay time should be bigger than the current time"
)

// timerSpec is what the send path learned from a timer message's
// properties: the aligned time (0: store as a normal message) and the
// TIMER_DEL_UNIQKEY it cancels, if any.
type timerSpec struct {
	outMs  int64
	delKey string
}

// timerPrepare applies 5.x's transformTimerMessage checks to the raw
// properties of a message that has a timer property and no delay level.
func (b *Broker) timerPrepare(raw string) (timerSpec, *remoting.Command) {
	if b.cfg.DisableTimer {
		return timerSpec{}, b.sendResponse(remoting.SystemError, remarkTimerDisabled)
	}
	// A message that already went through a timer is stored as it is.
	if propValue(raw, rocketmq.PropertyTimerOutMS) != "" {
		return timerSpec{}, nil
	}
	illegal := func() (timerSpec, *remoting.Command) {
		return timerSpec{}, b.sendResponse(remoting.MessageIllegal, fmt.Sprintf(remarkTimerIllegal, b.cfg.TimerMaxDelay.Milliseconds()))
	}
	now := b.now()
	var deliver int64
	if v := propValue(raw, rocketmq.PropertyTimerDelaySec); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > (math.MaxInt64-now)/1000 || n < (math.MinInt64+now)/1000 {
			return illegal()
		}
		deliver = now + n*1000
	} else if v := propValue(raw, rocketmq.PropertyTimerDelayMS); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > math.MaxInt64-now || n < math.MinInt64+now {
			return illegal()
		}
		deliver = now + n
	} else {
		n, err := strconv.ParseInt(propValue(raw, rocketmq.PropertyTimerDeliverMS), 10, 64)
		if err != nil {
			return illegal()
		}
		deliver = n
	}
	delKey := propValue(raw, rocketmq.PropertyTimerDelUniqKey)
	if deliver <= now {
		if delKey != "" {
			return illegal()
		}
		return timerSpec{}, nil // due already: a normal message
	}
	if deliver-now > b.cfg.TimerMaxDelay.Milliseconds() {
		return illegal()
	}
	p := b.cfg.TimerPrecision.Milliseconds()
	if deliver%p == 0 {
		deliver -= p
	} else {
		deliver = deliver / p * p
	}
	return timerSpec{outMs: deliver, delKey: delKey}, nil
}

// timerPark appends TIMER_OUT_MS, REAL_TOPIC and REAL_QID to the stored
// properties of a timer message bound for topic/queueID.
func timerPark(buf []byte, ts *timerSpec, topic string, queueID int32) []byte {
	buf = message.AppendProperty(buf, 0, rocketmq.PropertyTimerOutMS, strconv.FormatInt(ts.outMs, 10))
	buf = message.AppendProperty(buf, 0, rocketmq.PropertyRealTopic, topic)
	return message.AppendProperty(buf, 0, rocketmq.PropertyRealQueueID, strconv.Itoa(int(queueID)))
}

// timerEntry is one pending timer message: when it is due and its offset
// in the timer queue; timerDeleteBit marks a TIMER_DEL_UNIQKEY message.
type timerEntry struct {
	due int64
	off int64
}

const timerDeleteBit = int64(1) << 62

// timerHeap is a min-heap by due time (no container/heap: no boxing).
type timerHeap []timerEntry

func (h *timerHeap) push(e timerEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].due <= s[i].due {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].due < s[m].due {
			m = l
		}
		if r := l + 1; r < n && s[r].due < s[m].due {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// timerService owns the pending timer messages.
type timerService struct {
	b         *Broker
	precision int64 // ms
	wake      chan struct{}

	mu      sync.Mutex
	pending timerHeap
	done    offsetRanges     // finished timer queue offsets
	cancels map[string]int   // TIMER_DEL_UNIQKEY values in force (count of delete messages)
	delKeys map[int64]string // queue offset of a pending delete message → its key
	version uint64           // bumped when done changes

	persistMu sync.Mutex
	persisted uint64

	// Owned by the loop (set up by load before it starts).
	unsure  map[int64]struct{} // offsets due before the start, maybe delivered before a crash
	claimed map[int64]struct{} // delivered copies matched by unsure entries
}

func newTimerService(b *Broker) *timerService {
	return &timerService{
		b:         b,
		precision: b.cfg.TimerPrecision.Milliseconds(),
		wake:      make(chan struct{}, 1),
		cancels:   make(map[string]int),
		delKeys:   make(map[int64]string),
		version:   1,
		unsure:    make(map[int64]struct{}),
		claimed:   make(map[int64]struct{}),
	}
}

// added registers a timer message the send path stored at queue offset off.
func (t *timerService) added(ts *timerSpec, off int64) {
	t.mu.Lock()
	t.addLocked(ts.outMs, off, ts.delKey)
	top := t.pending[0].off == off || t.pending[0].off == off|timerDeleteBit
	t.mu.Unlock()
	if top {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

func (t *timerService) addLocked(outMs, off int64, delKey string) {
	due := outMs + t.precision
	if delKey != "" {
		t.cancels[delKey]++
		t.delKeys[off] = delKey
		t.pending.push(timerEntry{due: due + timerCancelGrace.Milliseconds(), off: off | timerDeleteBit})
		return
	}
	t.pending.push(timerEntry{due: due, off: off})
}

// pendingCount is the number of timer messages not yet due (tests).
func (t *timerService) pendingCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// run delivers due timer messages until ctx ends, sleeping until the
// earliest due time or until the send path adds an earlier one.
func (t *timerService) run(ctx context.Context) {
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	for {
		wait, ok := t.deliverDue(ctx)
		if !ok {
			wait = time.Hour
		}
		tm.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-tm.C:
		}
	}
}

// timerRetryDelay is the pause before retrying a failed re-put.
const timerRetryDelay = time.Second

// deliverDue delivers everything due and returns the time until the next
// pending message, if any.
func (t *timerService) deliverDue(ctx context.Context) (time.Duration, bool) {
	var batch []timerEntry
	for ctx.Err() == nil {
		now := t.b.now()
		batch = batch[:0]
		t.mu.Lock()
		for len(t.pending) > 0 && t.pending[0].due <= now && len(batch) < 256 {
			batch = append(batch, t.pending.pop())
		}
		var next int64 = -1
		if len(batch) == 0 && len(t.pending) > 0 {
			next = t.pending[0].due
		}
		t.mu.Unlock()
		if len(batch) == 0 {
			if next < 0 {
				return 0, false
			}
			return time.Duration(next-now) * time.Millisecond, true
		}
		for _, e := range batch {
			if err := t.fire(ctx, e, now); err != nil {
				t.b.log.Error("deliver timer message", "offset", e.off&^timerDeleteBit, "err", err)
				e.due = now + timerRetryDelay.Milliseconds()
				t.mu.Lock()
				t.pending.push(e)
				t.mu.Unlock()
			}
		}
	}
	return 0, false
}

// fire handles one due entry: a delete message ends its cancellation, a
// cancelled or undeliverable message is dropped, anything else is re-put
// to its real queue. An error means "retry later".
func (t *timerService) fire(ctx context.Context, e timerEntry, now int64) error {
	off := e.off &^ timerDeleteBit
	if e.off&timerDeleteBit != 0 {
		t.mu.Lock()
		if k, ok := t.delKeys[off]; ok {
			delete(t.delKeys, off)
			if t.cancels[k]--; t.cancels[k] <= 0 {
				delete(t.cancels, k)
			}
		}
		t.finishLocked(off)
		t.mu.Unlock()
		return nil
	}
	m, err := t.b.timerRecord(off)
	if err != nil {
		if errors.Is(err, errTimerRecordGone) {
			t.b.log.Warn("timer message unreadable, dropping", "offset", off, "err", err)
			t.finish(off)
			return nil
		}
		return err
	}
	realTopic := m.Properties[rocketmq.PropertyRealTopic]
	qid, qerr := strconv.ParseInt(m.Properties[rocketmq.PropertyRealQueueID], 10, 32)
	if realTopic == "" || qerr != nil || qid < 0 {
		t.b.log.Warn("timer message without REAL_TOPIC/REAL_QID, dropping", "offset", off)
		t.finish(off)
		return nil
	}
	if err := t.b.checkDeliveryTarget(realTopic, qid); err != nil {
		if !errors.Is(err, errUndeliverable) {
			return err
		}
		t.b.logUndeliverable("timer", m, err)
		t.finish(off)
		return nil
	}
	uniq := m.Properties[rocketmq.PropertyUniqKey]
	if t.cancelled(realTopic, uniq) {
		t.b.log.Debug("timer message cancelled", "topic", realTopic, "uniqKey", uniq)
		t.finish(off)
		return nil
	}
	enqueue := strconv.FormatInt(m.StoreTimestamp, 10)
	if _, ok := t.unsure[off]; ok {
		delete(t.unsure, off)
		out := m.Properties[rocketmq.PropertyTimerOutMS]
		if uniq != "" && t.b.findDelivered(realTopic, uniq, m.StoreTimestamp, t.claimed, func(d *rocketmq.MessageExt) bool {
			return d.QueueID == int32(qid) && d.Properties[rocketmq.PropertyTimerEnqueueMS] == enqueue &&
				d.Properties[rocketmq.PropertyTimerOutMS] == out
		}) {
			t.b.log.Info("timer message was delivered before the restart, skipping", "topic", realTopic, "uniqKey", uniq)
			t.finish(off)
			return nil
		}
	}
	props := m.Properties
	delete(props, rocketmq.PropertyRealTopic)
	delete(props, rocketmq.PropertyRealQueueID)
	props[rocketmq.PropertyTimerEnqueueMS] = enqueue
	props[rocketmq.PropertyTimerDequeueMS] = strconv.FormatInt(now, 10)
	props[rocketmq.PropertyWaitStoreMsgOK] = "false"
	if err := t.b.reput(ctx, m, realTopic, int32(qid), props); err != nil {
		if !errors.Is(err, errUndeliverable) {
			return err
		}
		t.b.logUndeliverable("timer", m, err)
	}
	t.finish(off)
	return nil
}

// cancelled reports whether a delete message names the target, by its
// UNIQ_KEY alone or as topic+"+"+UNIQ_KEY (5.x's buildDeleteKey).
func (t *timerService) cancelled(topic, uniq string) bool {
	if uniq == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.cancels) == 0 {
		return false
	}
	return t.cancels[uniq] > 0 || t.cancels[topic+"+"+uniq] > 0
}

func (t *timerService) finish(off int64) {
	t.mu.Lock()
	t.finishLocked(off)
	t.mu.Unlock()
}

func (t *timerService) finishLocked(off int64) {
	t.done.add(off)
	t.version++
}

var errTimerRecordGone = errors.New("rocketmq: timer record gone")

// timerRecord loads and decodes the parked record at a timer queue offset.
// A missing or malformed record wraps errTimerRecordGone.
func (b *Broker) timerRecord(off int64) (*rocketmq.MessageExt, error) {
	e, err := b.store.ConsumeQueueEntry(topicTimer, 0, off)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", errTimerRecordGone, err)
		}
		return nil, err
	}
	rec, err := b.store.MessageAt(e.PhysicalOffset)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", errTimerRecordGone, err)
		}
		return nil, err
	}
	m, _, err := message.DecodeOptions{KeepCompressed: true}.DecodeRecord(rec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTimerRecordGone, err)
	}
	if m.Properties == nil {
		m.Properties = map[string]string{}
	}
	return m, nil
}
