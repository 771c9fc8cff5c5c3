package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The delay-level service delivers the messages the send path parked in
// SCHEDULE_TOPIC_XXXX (docs/PROTOCOL.md §9.5). Queue L-1 holds level L; each
// entry's tags code is its delivery time, and since every message of a
// level waits equally long the queue is in delivery order. One goroutine
// walks every level from its next offset, re-puts what is due to
// REAL_TOPIC/REAL_QID and advances the offset, which is persisted to
// config/delayOffset.json periodically and on a clean shutdown.
//
// Exactly once across restarts. A clean shutdown persists the exact
// offsets, so nothing is delivered twice or skipped. After a crash the
// file may lag behind what was delivered. The delivered record is itself
// the proof: it sits in REAL_TOPIC's index under the same UNIQ_KEY and
// still carries REAL_TOPIC/REAL_QID. So after a start, each level first
// verifies its overdue entries against the index and skips those already
// delivered; since a level is delivered in order, verification stops at
// the first entry that was not (or that was not due before the start).

// scheduleService is the delay-level delivery loop and its offsets.
type scheduleService struct {
	b      *Broker
	levels []time.Duration

	mu      sync.Mutex
	offsets []int64 // next queue offset of level i+1
	version uint64  // bumped by every offset change

	persistMu sync.Mutex
	persisted uint64 // version last written; 0 = never

	// Owned by the loop goroutine.
	verify    []bool             // level i+1 still checks overdue entries against the index
	retryAt   []int64            // level i+1 waits until then after a failed put (ms)
	startMs   int64              // when the service loaded its offsets
	delivered map[int64]struct{} // commit-log offsets of delivered copies already matched
}

func newScheduleService(b *Broker) *scheduleService {
	n := len(b.delayLevels)
	return &scheduleService{
		b:       b,
		levels:  b.delayLevels,
		offsets: make([]int64, n),
		version: 1,
		verify:  make([]bool, n),
		retryAt: make([]int64, n),
	}
}

// parseDelayLevels parses a messageDelayLevel table. Besides Java's units
// s, m, h and d it takes ms, so tests can use short delays.
func parseDelayLevels(s string) ([]time.Duration, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrInvalidDelayLevels)
	}
	levels := make([]time.Duration, 0, len(fields))
	for i, f := range fields {
		if n, ok := strings.CutSuffix(f, "ms"); ok {
			ms, err := strconv.ParseInt(n, 10, 64)
			if err != nil || ms < 0 {
				return nil, fmt.Errorf("%w: level %d %q: bad count", ErrInvalidDelayLevels, i+1, f)
			}
			levels = append(levels, time.Duration(ms)*time.Millisecond)
			continue
		}
		d, err := ParseDelayLevels(f)
		if err != nil {
			return nil, fmt.Errorf("level %d: %w", i+1, err)
		}
		levels = append(levels, d[0])
	}
	return levels, nil
}

func (s *scheduleService) path() string {
	return filepath.Join(s.b.cfg.StoreDir, "config", "delayOffset.json")
}

// load reads delayOffset.json (strict JSON or Java's bare integer keys) and
// clamps each offset into its queue's range. Levels beyond the table are
// dropped; a missing file starts every level at its queue's minimum.
func (s *scheduleService) load() error {
	var w remoting.DelayOffsetSerializeWrapper
	data, err := store.ReadConfigFile(s.path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("rocketmq: broker: read %s: %w", s.path(), err)
	default:
		if err := w.DecodeJSON(data); err != nil {
			return fmt.Errorf("rocketmq: broker: parse %s: %w", s.path(), err)
		}
	}
	st := s.b.store
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.offsets {
		q := int32(DelayLevelQueueID(i + 1))
		off := w.OffsetTable[int32(i+1)]
		off = max(off, st.MinOffset(rocketmq.TopicSchedule, q))
		off = min(off, st.MaxOffset(rocketmq.TopicSchedule, q))
		s.offsets[i] = off
		s.verify[i] = true
	}
	s.startMs = s.b.now()
	return nil
}

// wrapper is the offset table in delayOffset.json form and its version.
func (s *scheduleService) wrapper() (remoting.DelayOffsetSerializeWrapper, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := make(map[int32]int64, len(s.offsets))
	for i, off := range s.offsets {
		t[int32(i+1)] = off
	}
	return remoting.DelayOffsetSerializeWrapper{OffsetTable: t}, s.version
}

// persist writes delayOffset.json when the offsets changed since the last
// write (strict JSON with quoted keys, which Java reads too).
func (s *scheduleService) persist() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	w, version := s.wrapper()
	if version == s.persisted {
		return nil
	}
	if err := store.WriteConfigFile(s.path(), w.AppendJSON(nil, remoting.JSONStandard)); err != nil {
		return fmt.Errorf("rocketmq: broker: persist delay offsets: %w", err)
	}
	s.persisted = version
	return nil
}

func (s *scheduleService) persistLogged() {
	if err := s.persist(); err != nil {
		s.b.log.Error("persist delay offsets", "err", err)
	}
}

func (s *scheduleService) offset(level int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offsets[level-1]
}

func (s *scheduleService) setOffset(level int, off int64) {
	s.mu.Lock()
	s.offsets[level-1] = off
	s.version++
	s.mu.Unlock()
}

// run delivers due messages until ctx ends. It sleeps until the earliest
// known delivery time, at most DelayCheckInterval (an empty level learns
// about new messages only by looking).
func (s *scheduleService) run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := s.b.cfg.DelayCheckInterval
		if next, ok := s.deliverDue(ctx); ok {
			wait = min(wait, max(time.Duration(next-s.b.now())*time.Millisecond, time.Millisecond))
		}
		t.Reset(wait)
	}
}

// deliverDue delivers every due message of every level and returns the
// earliest delivery time still ahead, if any.
func (s *scheduleService) deliverDue(ctx context.Context) (next int64, ok bool) {
	for i := range s.levels {
		if ctx.Err() != nil {
			return 0, false
		}
		if n, has := s.deliverLevel(ctx, i+1); has && (!ok || n < next) {
			next, ok = n, true
		}
	}
	return next, ok
}

// scheduleRetryDelay is the pause of a level after a failed put (Java
// waits 10 s; a test broker recovers sooner).
const scheduleRetryDelay = time.Second

// deliverLevel delivers the due messages of one level.
func (s *scheduleService) deliverLevel(ctx context.Context, level int) (next int64, ok bool) {
	i := level - 1
	st := s.b.store
	q := int32(DelayLevelQueueID(level))
	now := s.b.now()
	if now < s.retryAt[i] {
		return s.retryAt[i], true
	}
	off := s.offset(level)
	for ctx.Err() == nil {
		if off >= st.MaxOffset(rocketmq.TopicSchedule, q) {
			return 0, false
		}
		e, err := st.ConsumeQueueEntry(rocketmq.TopicSchedule, q, off)
		if err != nil {
			if minOff := st.MinOffset(rocketmq.TopicSchedule, q); off < minOff {
				s.b.log.Warn("delay queue entries gone, skipping", "level", level, "from", off, "to", minOff)
				off = minOff
				s.setOffset(level, off)
				continue
			}
			s.b.log.Error("read delay queue", "level", level, "offset", off, "err", err)
			s.retryAt[i] = now + scheduleRetryDelay.Milliseconds()
			return s.retryAt[i], true
		}
		due := e.TagsCode
		// A clock set back leaves entries due further ahead than their
		// level's delay; like Java, deliver those now.
		if due > now+s.levels[i].Milliseconds() {
			due = now
		}
		if due > now {
			s.verify[i] = false // nothing from here on was due before the start
			return due, true
		}
		if err := s.deliver(ctx, level, e); err != nil {
			s.b.log.Error("deliver delayed message", "level", level, "offset", off, "err", err)
			s.retryAt[i] = now + scheduleRetryDelay.Milliseconds()
			return s.retryAt[i], true
		}
		off++
		s.setOffset(level, off)
		now = s.b.now()
	}
	return 0, false
}

// deliver re-puts the parked message of entry e to its real topic. A record
// that cannot be delivered (gone, malformed, no REAL_TOPIC) is logged and
// skipped, as Java does; only a failed put is an error (retried later).
func (s *scheduleService) deliver(ctx context.Context, level int, e store.QueueEntry) error {
	rec, err := s.b.store.MessageAt(e.PhysicalOffset)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			s.b.log.Warn("delayed message record gone, skipping", "level", level, "commitLogOffset", e.PhysicalOffset)
			return nil
		}
		return err
	}
	m, _, err := message.DecodeOptions{KeepCompressed: true}.DecodeRecord(rec)
	if err != nil {
		s.b.log.Warn("delayed message record unreadable, skipping", "level", level, "commitLogOffset", e.PhysicalOffset, "err", err)
		return nil
	}
	realTopic := m.Properties[rocketmq.PropertyRealTopic]
	qid, qerr := strconv.ParseInt(m.Properties[rocketmq.PropertyRealQueueID], 10, 32)
	if realTopic == "" || qerr != nil || qid < 0 {
		s.b.log.Warn("delayed message without REAL_TOPIC/REAL_QID, skipping", "level", level, "commitLogOffset", e.PhysicalOffset)
		return nil
	}
	if err := s.b.checkDeliveryTarget(realTopic, qid); err != nil {
		if !errors.Is(err, errUndeliverable) {
			return err
		}
		s.b.logUndeliverable("delayed", m, err)
		return nil
	}
	if s.verify[level-1] {
		if s.alreadyDelivered(m, realTopic, int32(qid)) {
			return nil
		}
		s.verify[level-1] = false // in-order delivery: nothing later went out either
	}
	props := m.Properties
	delete(props, rocketmq.PropertyDelayLevel)
	delete(props, rocketmq.PropertyTimerDeliverMS)
	delete(props, rocketmq.PropertyTimerDelaySec)
	delete(props, rocketmq.PropertyTimerDelayMS)
	props[rocketmq.PropertyWaitStoreMsgOK] = "false"
	if err := s.b.reput(ctx, m, realTopic, int32(qid), props); err != nil {
		if !errors.Is(err, errUndeliverable) {
			return err
		}
		s.b.logUndeliverable("delayed", m, err)
	}
	return nil
}

// errUndeliverable marks a parked (delayed or timer) message that is
// dropped instead of retried: its target breaks the send path's rules, or
// the store refuses it for good.
var errUndeliverable = errors.New("rocketmq: broker: undeliverable parked message")

// checkDeliveryTarget applies the send path's rules to the REAL_TOPIC and
// REAL_QID of a parked message: a valid name, not a topic clients may not
// send to, a topic that exists or is auto-created as a send would create
// it, a queue id within its queues. Java's services check none of this
// (they put into any topic and queue); the records can come from a store
// written before sends to rmq_sys_ topics were refused. A refusal wraps
// errUndeliverable; any other error is worth a retry.
func (b *Broker) checkDeliveryTarget(topic string, qid int64) error {
	if err := ValidateTopicBroker(topic); err != nil {
		return fmt.Errorf("%w: REAL_TOPIC %q: %s", errUndeliverable, topic, validationReason(err))
	}
	if sendForbidden(topic) {
		return fmt.Errorf("%w: REAL_TOPIC %s may not be sent to", errUndeliverable, topic)
	}
	if qid < 0 || qid > math.MaxInt32 {
		return fmt.Errorf("%w: REAL_QID %d out of range", errUndeliverable, qid)
	}
	tc, ok := b.topics.get(topic)
	if !ok {
		// Created as the send path creates it, unless the queue id is
		// beyond what creation would give: then nothing is created.
		retry := rocketmq.IsRetryTopic(topic)
		if limit := b.cfg.DefaultTopicQueueNums; (retry && qid >= 1) || (!retry && qid >= int64(limit)) {
			return fmt.Errorf("%w: topic %s does not exist and REAL_QID %d is beyond the queues it would get", errUndeliverable, topic, qid)
		}
		if retry {
			tc, ok = b.topics.ensure(topic, 1, rocketmq.PermRead|rocketmq.PermWrite), true
		} else {
			var err error
			if tc, ok, err = b.topics.createFromTemplate(topic, rocketmq.TopicAutoCreate, b.cfg.DefaultTopicQueueNums, 0); err != nil {
				return err
			}
		}
		if !ok {
			return fmt.Errorf("%w: topic %s does not exist and cannot be created", errUndeliverable, topic)
		}
		b.log.Info("topic auto-created for a parked message", "topic", topic, "queues", tc.WriteQueueNums)
	}
	if n := max(tc.ReadQueueNums, tc.WriteQueueNums); qid >= int64(n) {
		return fmt.Errorf("%w: REAL_QID %d out of range of %s (%d queues)", errUndeliverable, qid, topic, n)
	}
	return nil
}

// logUndeliverable records a dropped parked message, once: Java's services
// log and drop where they check (ScheduleMessageService for a
// RMQ_SYS_TRANS_HALF_TOPIC target, TimerMessageStore PUT_NO_RETRY). The
// record stays in the commit log, found by its message id or keys.
func (b *Broker) logUndeliverable(kind string, m *rocketmq.MessageExt, err error) {
	b.log.Error("parked message undeliverable, dropped", "kind", kind, "msgId", m.MsgID,
		"uniqKey", m.Properties[rocketmq.PropertyUniqKey], "commitLogOffset", m.CommitLogOffset, "err", err)
}

// alreadyDelivered reports whether the index of realTopic holds a copy of
// m delivered by this service (same UNIQ_KEY, REAL_TOPIC, queue and born
// time, stored after m) that no earlier entry claimed.
func (s *scheduleService) alreadyDelivered(m *rocketmq.MessageExt, realTopic string, qid int32) bool {
	uniq := m.Properties[rocketmq.PropertyUniqKey]
	if uniq == "" {
		return false
	}
	if s.delivered == nil {
		s.delivered = make(map[int64]struct{})
	}
	ok := s.b.findDelivered(realTopic, uniq, m.StoreTimestamp, s.delivered, func(d *rocketmq.MessageExt) bool {
		return d.QueueID == qid && d.BornTimestamp == m.BornTimestamp &&
			d.Properties[rocketmq.PropertyRealTopic] == realTopic
	})
	if ok {
		s.b.log.Info("delayed message was delivered before the restart, skipping", "topic", realTopic, "uniqKey", uniq)
	}
	return ok
}

// findDelivered looks through the index of topic for a record with key
// stored at or after since that match accepts and whose commit-log offset
// is not in claimed; it claims and reports the first one.
func (b *Broker) findDelivered(topic, key string, since int64, claimed map[int64]struct{}, match func(*rocketmq.MessageExt) bool) bool {
	// The index keeps store times in whole seconds from its file's start.
	res, err := b.store.QueryByKey(topic, key, 0, since-1000, b.now()+1000)
	if err != nil || res.Messages == 0 {
		return false
	}
	msgs, _ := message.DecodeOptions{KeepCompressed: true}.DecodeRecords(res.Data)
	for _, d := range msgs {
		if _, taken := claimed[d.CommitLogOffset]; taken || d.StoreTimestamp < since ||
			d.Properties[rocketmq.PropertyUniqKey] != key {
			continue
		}
		if match(d) {
			claimed[d.CommitLogOffset] = struct{}{}
			return true
		}
	}
	return false
}

// reput stores a parked message (delayed or timer) as a new message of
// topic/queue with props (a record the store refuses for good wraps
// errUndeliverable), keeping flag, sysFlag, body, born time and host
// and reconsume times. The tags code is recomputed from TAGS.
func (b *Broker) reput(ctx context.Context, m *rocketmq.MessageExt, topic string, queueID int32, props map[string]string) error {
	put := copyOf(m, topic, queueID, props)
	put.StoreHost = b.storeHost
	put.Properties = message.EncodeProperties(props)
	res, err := b.store.PutMessage(ctx, &put)
	if err != nil {
		if errors.Is(err, store.ErrInvalidMessage) || errors.Is(err, store.ErrMessageTooLarge) {
			return fmt.Errorf("%w: %w", errUndeliverable, err)
		}
		return err
	}
	b.stats.addPut(res.MsgCount, res.WroteBytes)
	return nil
}

// copyOf is the put of a stored message m again, to topic/queue with
// props: flag, sysFlag, body, born time and host, store host and reconsume
// times kept, the tags code, UNIQ_KEY and KEYS taken from props. The
// caller encodes props into Properties once it has changed them.
func copyOf(m *rocketmq.MessageExt, topic string, queueID int32, props map[string]string) store.PutRequest {
	return store.PutRequest{
		RecordFields: message.RecordFields{
			QueueID:        queueID,
			Flag:           m.Flag,
			SysFlag:        m.SysFlag,
			BornTimestamp:  m.BornTimestamp,
			BornHost:       m.BornHost,
			StoreHost:      m.StoreHost,
			ReconsumeTimes: m.ReconsumeTimes,
			Body:           m.Body,
			Topic:          topic,
		},
		TagsCode: message.TagHash(props[rocketmq.PropertyTags]),
		UniqKey:  props[rocketmq.PropertyUniqKey],
		Keys:     props[rocketmq.PropertyKeys],
	}
}

// loadDelayed restores the delay-level offsets and the pending timer
// messages (New, before anything is served).
func (b *Broker) loadDelayed() error {
	if err := b.schedule.load(); err != nil {
		return err
	}
	if b.cfg.DisableTimer {
		return nil // parked timer messages wait for a broker with timers on
	}
	// Created here, not in Start: topic changes re-register, which takes
	// the lock Start holds.
	b.topics.ensure(topicTimer, 1, rocketmq.PermRead|rocketmq.PermWrite)
	return b.timers.load()
}

// startDelayed starts the delivery loops and their periodic persistence.
func (b *Broker) startDelayed() {
	b.loop(b.schedule.run)
	if !b.cfg.DisableTimer {
		b.loop(b.timers.run)
	}
	b.every(b.cfg.OffsetFlushInterval, func(context.Context) {
		b.schedule.persistLogged()
		b.timers.persistLogged()
	})
}
