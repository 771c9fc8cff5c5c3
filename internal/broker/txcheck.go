package broker

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The check service (Java TransactionalMessageCheckService and
// TransactionalMessageServiceImpl.check, docs/PROTOCOL.md §9.7): every
// TransactionCheckInterval it walks the half queue from the
// CID_RMQ_SYS_TRANS progress, one record at a time, and for each record
// that is the latest of a pending transaction:
//   - younger than its immunity: stop (more recent records are younger
//     still), unless the immunity is the message's own
//     CHECK_IMMUNITY_TIME_IN_SECONDS: then re-put it with
//     TRAN_PREPARED_QUEUE_OFFSET, as Java does, so it holds up nothing;
//   - checked TransactionCheckMax times: move it to
//     TRANS_CHECK_MAX_TIME_TOPIC and forget the transaction;
//   - otherwise re-put it with TRANSACTION_CHECK_TIMES + 1 and send
//     CHECK_TRANSACTION_STATE about the new record to one live producer of
//     its group; with none, the new record is checked next round.
// The walk ends at the queue's end as seen when the round started, so the
// records it re-puts wait for the next round.
//
// Op progress. An op record matters at start only while a record of its
// transaction lies at or after the half progress. Records of a
// transaction are put only while it is pending, and its op record is
// written when it stops being so, both under txService.mu; so every op
// record written before a moment T concerns transactions whose records all
// lie before the half queue's end at T. Each round notes both queue ends
// (under mu); once the half progress has passed the half end noted by the
// previous round, the op progress moves to the op end noted with it.

// txSnapshot is the half and op queue ends at one moment.
type txSnapshot struct{ half, op int64 }

// txStep is what the walk does after one record.
type txStep int

const (
	txNext txStep = iota // go on with the next record
	txStop               // end the round here
)

// round is one check pass.
func (t *txService) round(ctx context.Context) {
	b := t.b
	// Java creates the half topic's config on its first check pass.
	b.topics.ensure(rocketmq.TopicTransHalf, 1, rocketmq.PermRead|rocketmq.PermWrite)
	st := b.store
	t.mu.Lock()
	snap := txSnapshot{st.MaxOffset(rocketmq.TopicTransHalf, 0), st.MaxOffset(rocketmq.TopicTransOpHalf, 0)}
	t.mu.Unlock()
	start := t.progress(rocketmq.TopicTransHalf)
	off := start
	var buf []byte // the record in hand; nothing keeps it past checkOne
	for off < snap.half && ctx.Err() == nil {
		if minOff := st.MinOffset(rocketmq.TopicTransHalf, 0); off < minOff {
			off = minOff
			continue
		}
		if t.checkOne(ctx, &buf, off) == txStop {
			break
		}
		off++
	}
	if off != start {
		b.offsets.commit(groupTransCheck, rocketmq.TopicTransHalf, 0, off)
	}
	if t.hasPrev && off >= t.prev.half && t.prev.op > t.progress(rocketmq.TopicTransOpHalf) {
		b.offsets.commit(groupTransCheck, rocketmq.TopicTransOpHalf, 0, t.prev.op)
	}
	t.prev, t.hasPrev = snap, true
}

// checkOne handles the half record at queue offset off, read into buf.
func (t *txService) checkOne(ctx context.Context, buf *[]byte, off int64) txStep {
	b := t.b
	h, err := t.queueRecord(buf, rocketmq.TopicTransHalf, off)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, message.ErrCorruptRecord) {
			b.log.Warn("half message unreadable, skipping", "offset", off, "err", err)
			return txNext
		}
		b.log.Error("read half message", "offset", off, "err", err)
		return txStop
	}
	key := t.key(&h)
	times, _ := strconv.Atoi(h.checkTimes)
	if times >= b.transactionCheckMax() {
		// Java creates the topic's config with the first discard.
		b.topics.ensure(rocketmq.TopicTransCheckMaxTime, 1, rocketmq.PermRead|rocketmq.PermWrite)
	}
	t.mu.Lock()
	if p, ok := t.pending[key]; !ok || p.latest != off {
		t.mu.Unlock()
		return txNext // decided, discarded, or a later record stands for it
	}
	age := b.now() - h.v.BornTimestamp()
	immunity, own := t.immunity(&h)
	if age >= 0 && age < immunity {
		if !own {
			t.mu.Unlock()
			return txStop
		}
		prepared := h.prepared
		if prepared == "" {
			prepared = strconv.FormatInt(off, 10)
		}
		_, err := t.reputLocked(ctx, &h, key, withProperty(h.props, rocketmq.PropertyTransactionPreparedQueueOffset, prepared))
		t.mu.Unlock()
		if err != nil {
			b.log.Error("re-put half message", "offset", off, "err", err)
			return txStop
		}
		return txNext
	}
	if times >= b.transactionCheckMax() {
		err := t.discardLocked(ctx, &h, key)
		t.mu.Unlock()
		if err != nil {
			b.log.Error("discard half message", "offset", off, "err", err)
			return txStop
		}
		return txNext
	}
	props := withProperty(h.props, rocketmq.PropertyTransactionCheckTimes, strconv.Itoa(times+1))
	res, err := t.reputLocked(ctx, &h, key, props)
	t.mu.Unlock()
	if err != nil {
		b.log.Error("re-put half message", "offset", off, "err", err)
		return txStop
	}
	t.sendCheck(&h, props, &res)
	return txNext
}

// immunity is how long after its birth a half message is left alone, and
// whether that is its own CHECK_IMMUNITY_TIME_IN_SECONDS (Java
// getImmunityTime: a value that is no number means the default).
func (t *txService) immunity(h *halfRecord) (int64, bool) {
	def := t.b.transactionTimeout().Milliseconds()
	if !h.hasImmunity {
		return def, false
	}
	sec, err := strconv.ParseInt(h.immunity, 10, 64)
	if err != nil || sec == -1 || sec > 1<<40 {
		return def, true
	}
	return sec * 1000, true
}

// reputLocked stores half record h again at the end of the half queue
// with props and makes the copy its transaction's latest record.
func (t *txService) reputLocked(ctx context.Context, h *halfRecord, key uint64, props string) (store.PutResult, error) {
	put := t.halfCopy(h, rocketmq.TopicTransHalf, props)
	res, err := t.b.store.PutMessage(ctx, &put)
	if err != nil {
		return res, err
	}
	t.b.stats.addPut(res.MsgCount, res.WroteBytes)
	p := t.pending[key]
	p.latest = res.QueueOffset
	t.pending[key] = p
	return res, nil
}

// discardLocked moves half record h to TRANS_CHECK_MAX_TIME_TOPIC (Java
// DefaultTransactionalMessageCheckListener.resolveDiscardMsg) and forgets
// its transaction.
func (t *txService) discardLocked(ctx context.Context, h *halfRecord, key uint64) error {
	b := t.b
	put := t.halfCopy(h, rocketmq.TopicTransCheckMaxTime, h.props)
	res, err := b.store.PutMessage(ctx, &put)
	if err != nil {
		return err
	}
	b.stats.addPut(res.MsgCount, res.WroteBytes)
	delete(t.pending, key)
	b.log.Warn("half message checked too often, discarded to "+rocketmq.TopicTransCheckMaxTime,
		"topic", h.realTopic, "uniqKey", h.uniq)
	return nil
}

// halfCopy is the put of half record h to topic's queue 0 with props. The
// flag and reconsume times are kept (Java's re-put drops them, so a
// message committed after a check loses its flag there).
func (t *txService) halfCopy(h *halfRecord, topic, props string) store.PutRequest {
	v := &h.v
	return store.PutRequest{
		RecordFields: message.RecordFields{
			Flag:           v.Flag(),
			SysFlag:        v.SysFlag,
			BornTimestamp:  v.BornTimestamp(),
			BornHost:       v.BornHost(),
			StoreHost:      v.StoreHost(),
			ReconsumeTimes: v.ReconsumeTimes(),
			Body:           v.Body,
			Topic:          topic,
			Properties:     props,
		},
		TagsCode: message.TagHash(h.tags),
		UniqKey:  h.uniq,
		Keys:     h.keys,
	}
}

// sendCheck sends CHECK_TRANSACTION_STATE about the re-put record res of
// half record h to one live producer of its group (Java
// AbstractTransactionalMessageCheckListener.sendCheckMessage). The body is
// the record as the producer should see it: real topic and queue, the
// re-put record's offsets, the original's store time, and WAIT=false (Java
// sets it on the message after storing the copy).
func (t *txService) sendCheck(h *halfRecord, props string, res *store.PutResult) {
	b := t.b
	v := &h.v
	conn := b.clients.producerConn(h.group)
	if conn == nil {
		b.log.Warn("no producer to check a transaction with", "group", h.group, "uniqKey", h.uniq)
		return
	}
	qid, _ := strconv.ParseInt(h.realQID, 10, 32)
	rec := message.RecordFields{
		QueueID:        int32(qid),
		Flag:           v.Flag(),
		QueueOffset:    res.QueueOffset,
		PhysicalOffset: res.PhysicalOffset,
		SysFlag:        v.SysFlag,
		BornTimestamp:  v.BornTimestamp(),
		BornHost:       v.BornHost(),
		StoreTimestamp: v.StoreTimestamp,
		StoreHost:      v.StoreHost(),
		ReconsumeTimes: v.ReconsumeTimes(),
		Body:           v.Body,
		Topic:          h.realTopic,
		Properties:     withProperty(props, rocketmq.PropertyWaitStoreMsgOK, "false"),
	}
	body, _, err := rec.AppendRecord(nil)
	if err != nil {
		b.log.Warn("encode transaction check", "err", err)
		return
	}
	uniq := h.uniq
	offsetID := rocketmq.EncodeOffsetMsgID(b.storeHost, res.PhysicalOffset)
	hdr := remoting.CheckTransactionStateRequestHeader{
		TranStateTableOffset: res.QueueOffset,
		CommitLogOffset:      res.PhysicalOffset,
		MsgID:                &uniq,
		TransactionID:        &uniq,
		OffsetMsgID:          &offsetID,
	}
	req := clientRequest(remoting.CheckTransactionState, hdr.AppendExt(nil), body)
	if err := conn.InvokeOneway(req); err != nil {
		b.log.Warn("send transaction check", "group", h.group, "remote", conn.String(), "err", err)
	}
}
