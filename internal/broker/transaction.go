package broker

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"sync"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Transactional messages (docs/PROTOCOL.md §9.7). A half message is stored
// in RMQ_SYS_TRANS_HALF_TOPIC queue 0 with its destination in REAL_TOPIC
// and REAL_QID. END_TRANSACTION commits it (a copy goes to the real topic)
// or rolls it back; either way an op record in RMQ_SYS_TRANS_OP_HALF_TOPIC
// (tag "d", body the half's queue offset) makes the decision durable. The
// check service (txcheck.go) asks a producer of the group about half
// messages nobody decided.
//
// Decided once. A transaction is its producer group and UNIQ_KEY together
// with its first half record: the check service re-puts an undecided half
// message at the end of the half queue before each check, so one
// transaction may have several half records, and the original producer's
// late END_TRANSACTION and the answer to a check may both arrive. A client
// may also send a later transaction with the same UNIQ_KEY (Java's sets it
// on the caller's Message, so a Message sent again repeats it). pending
// holds the undecided transactions with the queue offsets of their first
// and latest half records; a decision is applied only while its
// transaction is pending and only to a record at or after the first one
// (an earlier record is an earlier transaction's), and removes it, under
// mu, so a second decision changes nothing. pending is rebuilt at start by
// replaying, in commit-log order, the half records after the check
// progress and the op records after the op progress (see txService.load
// and txService.round for why that range suffices).

// Names of the transaction system group and op tag (Java
// TransactionalMessageUtil).
const (
	groupTransCheck = "CID_RMQ_SYS_TRANS"
	opTagRemove     = "d"
)

// txService holds the undecided transactions and the check progress.
type txService struct {
	b *Broker

	// mu orders half puts, decisions and check re-puts, so that pending
	// always agrees with the half and op queues.
	mu      sync.Mutex
	pending map[uint64]txPending // by txKey
	seed    maphash.Seed         // of txKey: random, so nobody can make keys collide

	recs sync.Pool // *[]byte: buffers END_TRANSACTION reads half records into

	// Owned by the check goroutine: the queue ends seen at the start of
	// the previous round (txcheck.go).
	prev    txSnapshot
	hasPrev bool
}

func newTxService(b *Broker) *txService {
	t := &txService{b: b, pending: make(map[uint64]txPending), seed: maphash.MakeSeed()}
	t.recs.New = func() any { return new([]byte) }
	return t
}

// txPending is an undecided transaction: the half queue offsets of its
// first and latest records. Every record of the transaction lies in
// [first, latest]; every record of an earlier one with the key before
// first.
type txPending struct{ first, latest int64 }

// txKey identifies a transaction by a 64-bit hash of producer group and
// UNIQ_KEY: pending costs a few dozen bytes per transaction whatever the
// names' lengths.
func (t *txService) txKey(group, uniq string) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.WriteString(group)
	h.WriteByte(1)
	h.WriteString(uniq)
	return h.Sum64()
}

// halfRecord is one stored record, scanned: the fixed fields in v (over
// a copy of the record) and the properties the transaction code reads.
type halfRecord struct {
	v                                                  message.RecordView
	props                                              string // the stored properties string; the fields below are substrings
	group, uniq, realTopic, realQID, tags, keys, delay string
	checkTimes, prepared, immunity                     string
	hasImmunity                                        bool
}

func (t *txService) key(h *halfRecord) uint64 { return t.txKey(h.group, h.uniq) }

// maxPooledRecord bounds the record buffers kept for reuse.
const maxPooledRecord = 64 << 10

// recordInto reads and scans the record at a commit-log offset into *buf
// (grown as needed): the record's fields, its body included, point into
// *buf, so they are good only until *buf is reused; the properties are a
// string of their own. A nil buf reads into a fresh copy.
func (t *txService) recordInto(buf *[]byte, phys int64) (halfRecord, error) {
	var dst []byte
	if buf != nil {
		dst = (*buf)[:0]
	}
	rec, err := t.b.store.AppendMessageAt(dst, phys)
	if buf != nil && cap(rec) <= maxPooledRecord {
		*buf = rec
	}
	if err != nil {
		return halfRecord{}, err
	}
	v, err := message.ScanRecord(rec)
	if err != nil {
		return halfRecord{}, err
	}
	h := halfRecord{v: v, props: string(v.Properties)}
	for it := message.Properties(h.props); it.Next(); {
		switch val := it.Value(); it.Key() {
		case rocketmq.PropertyProducerGroup:
			h.group = val
		case rocketmq.PropertyUniqKey:
			h.uniq = val
		case rocketmq.PropertyRealTopic:
			h.realTopic = val
		case rocketmq.PropertyRealQueueID:
			h.realQID = val
		case rocketmq.PropertyTags:
			h.tags = val
		case rocketmq.PropertyKeys:
			h.keys = val
		case rocketmq.PropertyDelayLevel:
			h.delay = val
		case rocketmq.PropertyTransactionCheckTimes:
			h.checkTimes = val
		case rocketmq.PropertyTransactionPreparedQueueOffset:
			h.prepared = val
		case rocketmq.PropertyCheckImmunityTimeInSeconds:
			h.immunity, h.hasImmunity = val, true
		}
	}
	return h, nil
}

// queueRecord reads the record at a queue offset of topic's queue 0 into
// buf (see recordInto).
func (t *txService) queueRecord(buf *[]byte, topic string, off int64) (halfRecord, error) {
	e, err := t.b.store.ConsumeQueueEntry(topic, 0, off)
	if err != nil {
		return halfRecord{}, err
	}
	return t.recordInto(buf, e.PhysicalOffset)
}

// progress is the check service's next offset in topic's queue 0.
func (t *txService) progress(topic string) int64 {
	minOff := t.b.store.MinOffset(topic, 0)
	off, ok := t.b.offsets.query(groupTransCheck, topic, 0)
	if !ok || off < minOff {
		return minOff
	}
	return min(off, t.b.store.MaxOffset(topic, 0))
}

// load rebuilds pending (New, before anything is served). Every undecided
// transaction has a half record at or after the check progress, and every
// decision about such a record is at or after the op progress. Half and op
// records are replayed in commit-log order, the order they were written
// in under mu, so an op record removes only what was pending when it was
// written, never a later transaction with the same key. Records that
// cannot be read are skipped (a decision whose half record is gone
// concerns no readable record either).
func (t *txService) load() {
	var buf []byte // one record at a time
	half := t.cursor(rocketmq.TopicTransHalf)
	op := t.cursor(rocketmq.TopicTransOpHalf)
	for half.ok || (op.ok && len(t.pending) > 0) {
		if half.ok && (!op.ok || half.phys < op.phys) {
			t.loadHalf(&buf, half.off, half.phys)
			half.next()
		} else {
			t.loadOp(&buf, op.phys)
			op.next()
		}
	}
	if n := len(t.pending); n > 0 {
		t.b.log.Info("undecided transactions restored", "count", n)
	}
}

// loadHalf replays the half record at queue offset off. The first record
// seen of a transaction may be a copy the check service put again, whose
// original lies before the check progress: then the original's offset is
// its TRAN_PREPARED_QUEUE_OFFSET when it has one (an immunity copy), and
// unknown otherwise, when any earlier record of the key counts as the
// transaction's.
func (t *txService) loadHalf(buf *[]byte, off, phys int64) {
	h, err := t.recordInto(buf, phys)
	if err != nil {
		return
	}
	key := t.key(&h)
	if p, ok := t.pending[key]; ok {
		p.latest = off
		t.pending[key] = p
		return
	}
	first := off
	if prepared, err := strconv.ParseInt(h.prepared, 10, 64); err == nil && prepared >= 0 && prepared < off {
		first = prepared
	} else if h.checkTimes != "" {
		first = 0
	}
	t.pending[key] = txPending{first: first, latest: off}
}

// loadOp replays the op record at commit-log offset phys.
func (t *txService) loadOp(buf *[]byte, phys int64) {
	op, err := t.recordInto(buf, phys)
	if err != nil || op.tags != opTagRemove {
		return
	}
	halfOff, err := strconv.ParseInt(string(op.v.Body), 10, 64)
	if err != nil {
		return
	}
	h, err := t.queueRecord(buf, rocketmq.TopicTransHalf, halfOff)
	if err != nil {
		return
	}
	key := t.key(&h)
	if p, ok := t.pending[key]; ok && halfOff >= p.first {
		delete(t.pending, key)
	}
}

// txCursor walks queue 0 of a transaction topic from the check service's
// progress, with the commit-log offset of each readable entry.
type txCursor struct {
	t        *txService
	topic    string
	off, end int64
	phys     int64
	ok       bool // off is an entry and phys its commit-log offset
}

func (t *txService) cursor(topic string) *txCursor {
	c := &txCursor{t: t, topic: topic, off: t.progress(topic), end: t.b.store.MaxOffset(topic, 0)}
	c.seek()
	return c
}

// seek moves to the first readable entry at or after off.
func (c *txCursor) seek() {
	for ; c.off < c.end; c.off++ {
		if e, err := c.t.b.store.ConsumeQueueEntry(c.topic, 0, c.off); err == nil {
			c.phys, c.ok = e.PhysicalOffset, true
			return
		}
	}
	c.ok = false
}

func (c *txCursor) next() {
	c.off++
	c.seek()
}

// errTxTooMany reports a half message refused because
// Config.TransactionMaxPending transactions are undecided.
var errTxTooMany = errors.New("rocketmq: too many undecided transactions")

// putHalf stores a half message and makes its transaction pending.
func (t *txService) putHalf(ctx context.Context, put *store.PutRequest, group string) (store.PutResult, error) {
	key := t.txKey(group, put.UniqKey)
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.pending[key]
	if !ok && len(t.pending) >= t.b.cfg.TransactionMaxPending {
		return store.PutResult{}, errTxTooMany
	}
	res, err := t.b.store.PutMessage(ctx, put)
	if err != nil {
		return res, err
	}
	// A half message sent again while its key is pending (a send retry)
	// joins that transaction; otherwise a new one starts here.
	if !ok {
		p.first = res.QueueOffset
	}
	p.latest = res.QueueOffset
	t.pending[key] = p
	return res, nil
}

// errTxDecided reports an END_TRANSACTION for a transaction already
// decided (or discarded after too many checks), or for a record of an
// earlier transaction with the same key.
var errTxDecided = errors.New("rocketmq: transaction already decided")

// decide applies commit or rollback to the transaction of half record h,
// once. commit stores the message to its real topic and the op record in
// one store call (both or neither); rollback the op record only. It returns
// errTxDecided when the transaction was not pending, and the store's error
// when the commit could not be stored (the transaction stays pending).
func (t *txService) decide(ctx context.Context, h *halfRecord, commit bool) error {
	key := t.key(h)
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.pending[key]; !ok || h.v.QueueOffset < p.first {
		return errTxDecided
	}
	var pbuf [96]byte
	var bbuf [20]byte
	if commit {
		final, err := t.b.finalMessage(h)
		if err != nil {
			return err
		}
		puts := [2]store.PutRequest{final, t.opRequest(h.v.QueueOffset, pbuf[:0], bbuf[:0])}
		res, err := t.b.store.PutRecords(ctx, puts[:])
		if err != nil {
			return err
		}
		t.b.stats.addPut(res.MsgCount, res.WroteBytes)
	} else {
		op := t.opRequest(h.v.QueueOffset, pbuf[:0], bbuf[:0])
		res, err := t.b.store.PutMessage(ctx, &op)
		if err != nil {
			// The decision holds in memory; after a restart the
			// transaction is checked again.
			t.b.log.Error("write transaction op record", "halfOffset", h.v.QueueOffset, "err", err)
		} else {
			t.b.stats.addPut(res.MsgCount, res.WroteBytes)
		}
	}
	delete(t.pending, key)
	return nil
}

// opRequest is the op record of the half record at halfOffset (Java
// TransactionalMessageBridge.addRemoveTagInTransactionOp): tag d, body the
// offset in decimal, WAIT=false, a fresh UNIQ_KEY. props and body are
// scratch space for the encoded properties and body.
func (t *txService) opRequest(halfOffset int64, props, body []byte) store.PutRequest {
	b := t.b
	uniq := b.ids.NewID()
	props = message.AppendProperty(props, 0, rocketmq.PropertyTags, opTagRemove)
	props = message.AppendProperty(props, 0, rocketmq.PropertyWaitStoreMsgOK, "false")
	props = message.AppendProperty(props, 0, rocketmq.PropertyUniqKey, uniq)
	return store.PutRequest{
		RecordFields: message.RecordFields{
			BornTimestamp: b.now(),
			BornHost:      b.storeHost,
			StoreHost:     b.storeHost,
			Body:          strconv.AppendInt(body, halfOffset, 10),
			Topic:         rocketmq.TopicTransOpHalf,
			Properties:    string(props),
		},
		TagsCode: message.TagHash(opTagRemove),
		UniqKey:  uniq,
	}
}

// finalMessage is the committed copy of half record h (Java
// EndTransactionProcessor.endMessageTransaction): real topic and queue,
// commit type, preparedTransactionOffset the half's offset. Java clears
// REAL_TOPIC, REAL_QID and TRAN_MSG from the message's map only after
// taking its properties string, so a 4.9.8 broker stores them unchanged
// (wire 0178) and consumers learn the transaction id from TRAN_MSG; the
// same string is stored here. A delay level parks the copy as any delayed
// message, with the properties rebuilt as Java's store rebuilds them.
func (b *Broker) finalMessage(h *halfRecord) (store.PutRequest, error) {
	v := &h.v
	qid, err := strconv.ParseInt(h.realQID, 10, 32)
	if h.realTopic == "" || err != nil || qid < 0 {
		return store.PutRequest{}, errTxNoRealTopic
	}
	put := store.PutRequest{
		RecordFields: message.RecordFields{
			QueueID:                   int32(qid),
			Flag:                      v.Flag(),
			SysFlag:                   v.SysFlag&^message.FlagTransactionMask | message.FlagTransactionCommit,
			BornTimestamp:             v.BornTimestamp(),
			BornHost:                  v.BornHost(),
			StoreHost:                 v.StoreHost(),
			ReconsumeTimes:            v.ReconsumeTimes(),
			PreparedTransactionOffset: v.PhysicalOffset,
			Body:                      v.Body,
			Topic:                     h.realTopic,
			Properties:                h.props,
		},
		TagsCode: message.TagHash(h.tags),
		UniqKey:  h.uniq,
		Keys:     h.keys,
	}
	p := sendProps{delay: h.delay}
	if delay := p.delayLevel(); delay > 0 {
		props := message.DecodeProperties(h.props)
		delete(props, rocketmq.PropertyTransactionPrepared)
		b.parkDelayed(&put, props, delay)
		put.Properties = message.EncodeProperties(props)
	}
	return put, nil
}

// errTxNoRealTopic reports a half record without a usable REAL_TOPIC or
// REAL_QID.
var errTxNoRealTopic = errors.New("rocketmq: half message has no real topic")

// withProperty is the properties string s with key set to val (replaced
// in place or appended).
func withProperty(s, key, val string) string {
	buf := make([]byte, 0, len(s)+len(key)+len(val)+2)
	found := false
	for it := message.Properties(s); it.Next(); {
		k, v := it.Key(), it.Value()
		if k == key {
			v, found = val, true
		}
		buf = message.AppendProperty(buf, 0, k, v)
	}
	if !found {
		buf = message.AppendProperty(buf, 0, key, val)
	}
	return string(buf)
}
