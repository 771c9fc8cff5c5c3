package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// PutRequest is one message to append. QueueOffset, PhysicalOffset and
// StoreTimestamp of the embedded fields are ignored: the store assigns them.
type PutRequest struct {
	message.RecordFields
	// TagsCode goes into the consume-queue entry (see Config.TagsCode).
	TagsCode int64
	// UniqKey (UNIQ_KEY) and Keys (KEYS, space separated) are indexed.
	UniqKey string
	Keys    string
	// WaitFlush (the WAIT property) makes a FlushSync store wait for the
	// device sync before returning.
	WaitFlush bool
}

// PutStatus is the outcome of a stored put (Java PutMessageStatus).
type PutStatus int

const (
	PutOK PutStatus = iota
	// PutFlushDiskTimeout: stored and readable, but the sync did not finish
	// within SyncFlushTimeout (or ctx ended first).
	PutFlushDiskTimeout
)

func (s PutStatus) String() string {
	switch s {
	case PutOK:
		return "PUT_OK"
	case PutFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	}
	return "PutStatus(" + strconv.Itoa(int(s)) + ")"
}

// PutResult describes an appended message or batch.
type PutResult struct {
	Status PutStatus
	// PhysicalOffset and QueueOffset are those of the first record.
	PhysicalOffset int64
	QueueOffset    int64
	StoreTimestamp int64
	// WroteBytes is the total record size; MsgCount the number of records.
	WroteBytes int
	MsgCount   int
	// PhysicalOffsets has each record's offset (batches only).
	PhysicalOffsets []int64
}

// End is the commit-log offset just past the records: they are durable
// once FlushProgress reports at least End.
func (r *PutResult) End() int64 { return r.PhysicalOffset + int64(r.WroteBytes) }

// DispatchEvent tells that a message became readable in its queue.
type DispatchEvent struct {
	Topic          string
	QueueID        int32
	QueueOffset    int64
	TagsCode       int64
	PhysicalOffset int64
	StoreTimestamp int64
}

func isDispatched(sysFlag int32) bool {
	t := sysFlag & message.FlagTransactionMask
	return t != message.FlagTransactionPrep && t != message.FlagTransactionRoll
}

// recMeta is one record of an append: its place in the encode buffer and,
// after the append, its offsets.
type recMeta struct {
	req        *PutRequest
	off, size  int
	sysFlag    int32
	phys, qo   int64
	pinFrom    int64 // PutRecords: first consume-queue entry pinned for the put
	dispatched bool
}

func (s *Store) checkRequest(r *PutRequest) error {
	if !validTopic(r.Topic) {
		return fmt.Errorf("%w: topic %q", ErrInvalidMessage, r.Topic)
	}
	if r.QueueID < 0 {
		return fmt.Errorf("%w: queue id %d", ErrInvalidMessage, r.QueueID)
	}
	if len(r.Body) > s.cfg.MaxMessageSize {
		return fmt.Errorf("%w: body of %d bytes exceeds %d", ErrMessageTooLarge, len(r.Body), s.cfg.MaxMessageSize)
	}
	return nil
}

const maxPooledBuf = 1 << 20

func (s *Store) getBuf() *[]byte {
	if b, ok := s.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

func (s *Store) putBuf(p *[]byte, b []byte) {
	if cap(b) <= maxPooledBuf {
		*p = b[:0]
		s.bufs.Put(p)
	}
}

// PutMessage appends one message, dispatches it to its consume queue and
// the index, and (FlushSync with WaitFlush) waits for the device sync.
// When it returns without error the message is readable.
func (s *Store) PutMessage(ctx context.Context, req *PutRequest) (PutResult, error) {
	if err := s.checkRequest(req); err != nil {
		return PutResult{}, err
	}
	bp := s.getBuf()
	buf, sys, err := req.RecordFields.AppendRecord((*bp)[:0])
	if err != nil {
		s.putBuf(bp, buf)
		return PutResult{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	metas := [1]recMeta{{req: req, size: len(buf), sysFlag: sys}}
	s.mu.Lock()
	res, err := s.appendLocked(buf, metas[:], nil)
	s.mu.Unlock()
	s.putBuf(bp, buf)
	if err != nil {
		return PutResult{}, err
	}
	s.afterPut(ctx, metas[:], &res, req.WaitFlush)
	return res, nil
}

// maxRecords bounds a PutRecords call.
const maxRecords = 8

// PutRecords appends a few records, each to its own queue, as consecutive
// records in one commit-log segment under one lock: all of them or none
// are written. A transaction decision stores its committed message and its
// op record this way. PhysicalOffsets is not filled.
func (s *Store) PutRecords(ctx context.Context, reqs []PutRequest) (PutResult, error) {
	if len(reqs) == 0 || len(reqs) > maxRecords {
		return PutResult{}, fmt.Errorf("%w: %d records in one put (1 to %d)", ErrInvalidMessage, len(reqs), maxRecords)
	}
	var metaBuf [maxRecords]recMeta
	var qBuf [maxRecords]*consumeQueue
	metas := metaBuf[:len(reqs)]
	bp := s.getBuf()
	buf := (*bp)[:0]
	wait := false
	for i := range reqs {
		r := &reqs[i]
		if err := s.checkRequest(r); err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, err
		}
		off := len(buf)
		var sys int32
		var err error
		buf, sys, err = r.RecordFields.AppendRecord(buf)
		if err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
		}
		// Into the array, not through the slice: a store through a slice
		// would make every request escape.
		metaBuf[i] = recMeta{req: r, off: off, size: len(buf) - off, sysFlag: sys}
		wait = wait || r.WaitFlush
	}
	s.mu.Lock()
	res, err := s.appendLocked(buf, metas, qBuf[:len(reqs)])
	s.mu.Unlock()
	s.putBuf(bp, buf)
	if err != nil {
		return PutResult{}, err
	}
	s.afterPut(ctx, metas, &res, wait)
	return res, nil
}

// queuesLocked finds (creating them if needed) the queue qs[i] of each
// record of a PutRecords call that is dispatched (nil for the others), with
// its queue offset, and makes room for the entries. The queues are kept
// apart from metas so that the requests metas points to do not escape with
// them. Caller holds mu.
func (s *Store) queuesLocked(metas []recMeta, qs []*consumeQueue) error {
	for i := range metas {
		m := &metas[i]
		if !isDispatched(m.sysFlag) {
			continue
		}
		q, err := s.queueLocked(m.req.Topic, m.req.QueueID)
		if err != nil {
			return err
		}
		qo := q.max.Load()
		for j := range i {
			if qs[j] == q {
				qo++
			}
		}
		if err := q.ensure(qo, s); err != nil {
			unpinQueues(metas[:i], qs)
			return err
		}
		if err := q.pinRange(q.putFrom(), qo); err != nil {
			unpinQueues(metas[:i], qs)
			return err
		}
		qs[i], m.qo, m.pinFrom = q, qo, q.putFrom()
	}
	return nil
}

// touchEntries writes to the pinned entries from..to of q without changing
// them, so that a full disk (a hole that cannot be allocated) faults here,
// before the commit-log write, and not after it. Entries past the queue's
// end are read by no one.
func touchEntries(q *consumeQueue, from, to int64) {
	for n := from; n <= to; n++ {
		f := q.fileFor(n)
		p := n*cqUnit - f.start
		// The first and last word of the entry: it may span two pages.
		atomic.AddUint32((*uint32)(unsafe.Pointer(&f.data[p])), 0)
		atomic.AddUint32((*uint32)(unsafe.Pointer(&f.data[p+cqUnit-4])), 0)
	}
}

// unpinQueues releases the pins queuesLocked took.
func unpinQueues(metas []recMeta, qs []*consumeQueue) {
	for i := range metas {
		if qs[i] != nil {
			qs[i].unpinRange(metas[i].pinFrom, metas[i].qo)
		}
	}
}

// PutMessages appends a batch to one queue as consecutive records with
// consecutive queue offsets, all in one commit-log segment.
func (s *Store) PutMessages(ctx context.Context, reqs []PutRequest) (PutResult, error) {
	if len(reqs) == 0 {
		return PutResult{}, fmt.Errorf("%w: empty batch", ErrInvalidMessage)
	}
	metas := make([]recMeta, len(reqs))
	bp := s.getBuf()
	buf := (*bp)[:0]
	wait := false
	for i := range reqs {
		r := &reqs[i]
		if err := s.checkRequest(r); err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, err
		}
		if r.Topic != reqs[0].Topic || r.QueueID != reqs[0].QueueID {
			s.putBuf(bp, buf)
			return PutResult{}, fmt.Errorf("%w: batch mixes queues", ErrInvalidMessage)
		}
		off := len(buf)
		var sys int32
		var err error
		buf, sys, err = r.RecordFields.AppendRecord(buf)
		if err != nil {
			s.putBuf(bp, buf)
			return PutResult{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
		}
		metas[i] = recMeta{req: r, off: off, size: len(buf) - off, sysFlag: sys}
		wait = wait || r.WaitFlush
	}
	s.mu.Lock()
	res, err := s.appendLocked(buf, metas, nil)
	s.mu.Unlock()
	s.putBuf(bp, buf)
	if err != nil {
		return PutResult{}, err
	}
	res.PhysicalOffsets = make([]int64, len(metas))
	for i := range metas {
		res.PhysicalOffsets[i] = metas[i].phys
	}
	s.afterPut(ctx, metas, &res, wait)
	return res, nil
}

// appendLocked writes the encoded records in buf at the end of the commit
// log, patching in their offsets and store time, and dispatches them.
// Everything that can fail is done before the first byte is written.
// The records go to the queue of the first, or with qs (PutRecords) each to
// its own.
func (s *Store) appendLocked(buf []byte, metas []recMeta, qs []*consumeQueue) (res PutResult, err error) {
	if s.closed.Load() {
		return res, ErrClosed
	}
	if s.cfg.Replica {
		return res, ErrReplica
	}
	if err := s.writableLocked(); err != nil {
		return res, err
	}
	total := int64(len(buf))
	if total+message.BlankMinSize > s.cfg.CommitLogSegmentSize {
		return res, fmt.Errorf("%w: %d bytes do not fit a %d-byte commit-log segment", ErrMessageTooLarge, total, s.cfg.CommitLogSegmentSize)
	}
	defer s.noteWriteFailure(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	first := metas[0].req
	var q *consumeQueue
	var qo int64
	n := int64(0)
	mixed := qs != nil
	if mixed {
		if err = s.queuesLocked(metas, qs); err != nil {
			return res, err
		}
		defer unpinQueues(metas, qs)
		for i := range metas {
			if qs[i] != nil {
				if err = s.reserveEntries(qs[i], metas[i].pinFrom, metas[i].qo); err != nil {
					return res, err
				}
				touchEntries(qs[i], metas[i].pinFrom, metas[i].qo)
			}
		}
	} else {
		for i := range metas {
			if isDispatched(metas[i].sysFlag) {
				n++
			}
		}
	}
	if n > 0 {
		if q, err = s.queueLocked(first.Topic, first.QueueID); err != nil {
			return res, err
		}
		qo = q.max.Load()
		if err = q.ensure(qo+n-1, s); err != nil {
			return res, err
		}
		// Mapped until the entries are written: nothing can fail
		// after the commit-log copy.
		from := q.putFrom()
		if err = q.pinRange(from, qo+n-1); err != nil {
			return res, err
		}
		defer q.unpinRange(from, qo+n-1)
		if err = s.reserveEntries(q, from, qo+n-1); err != nil {
			return res, err
		}
		touchEntries(q, from, qo+n-1)
	}
	s.guard.at = failedWrite{n: total, create: true}
	seg, err := s.segmentForAppend(total)
	if err != nil {
		return res, err
	}
	phys := s.end.Load()
	// Room for the records and the blank end marker that may follow them.
	if err = s.reserveForAppend(seg, phys-seg.start+total+message.BlankMinSize); err != nil {
		return res, err
	}
	storeTs := s.now()
	be := binary.BigEndian
	for i := range metas {
		m := &metas[i]
		b := buf[m.off : m.off+m.size]
		m.phys = phys + int64(m.off)
		switch {
		case mixed:
			m.dispatched = qs[i] != nil
		case isDispatched(m.sysFlag):
			m.qo, m.dispatched = qo, true
			qo++
		}
		be.PutUint64(b[message.RecordPosQueueOffset:], uint64(m.qo))
		be.PutUint64(b[message.RecordPosPhysicalOffset:], uint64(m.phys))
		be.PutUint64(b[message.StoreTimestampPos(m.sysFlag):], uint64(storeTs))
	}
	// The size field goes last: a process killed mid-copy leaves a record
	// that recovery sees as the end of the log.
	if err = s.writeRecord(seg, phys-seg.start, buf); err != nil {
		return res, err
	}
	// Written: a fault from here on (queue or index files) leaves a whole
	// record behind, not a torn one.
	s.guard.at = failedWrite{}
	s.end.Store(phys + total)
	s.lastStoreTs = storeTs
	if s.prefaults() {
		s.kickPrefault(phys + total)
	}

	for i := range metas {
		m := &metas[i]
		if m.dispatched {
			mq := q
			if mixed {
				mq = qs[i]
			}
			mq.put(m.qo, cqEntry{phys: m.phys, size: int32(m.size), tags: m.req.TagsCode}, s)
		}
	}
	if !s.cfg.DisableIndex {
		s.idx.mu.Lock()
		for i := range metas {
			m := &metas[i]
			if m.sysFlag&message.FlagTransactionMask != message.FlagTransactionRoll {
				s.indexRecordLocked(m.req.Topic, m.req.UniqKey, m.req.Keys, m.phys, storeTs)
			}
		}
		s.idx.mu.Unlock()
	}
	res = PutResult{
		PhysicalOffset: phys,
		QueueOffset:    metas[0].qo,
		StoreTimestamp: storeTs,
		WroteBytes:     int(total),
		MsgCount:       len(metas),
	}
	return res, nil
}

// indexRecordLocked adds the index entries of one message. Index trouble is
// logged, never fatal: the index is derived data. Caller holds mu, idx.mu.
func (s *Store) indexRecordLocked(topic, uniq, keys string, phys, storeTs int64) {
	if uniq != "" {
		s.indexKeyLocked(indexKeyHash(topic, uniq), phys, storeTs)
	}
	for len(keys) > 0 {
		i := 0
		for i < len(keys) && keys[i] != ' ' {
			i++
		}
		if i > 0 {
			s.indexKeyLocked(indexKeyHash(topic, keys[:i]), phys, storeTs)
		}
		if i == len(keys) {
			break
		}
		keys = keys[i+1:]
	}
}

func (s *Store) indexKeyLocked(hash int32, phys, storeTs int64) {
	f, err := s.idx.writable()
	if err != nil {
		s.log.Error("store: cannot create index file", "err", err)
		return
	}
	if err := s.reserveIndexEntry(f); err != nil {
		s.log.Error("store: cannot write index file", "err", err)
		return
	}
	if err := putIndexEntry(f, hash, phys, storeTs); err != nil {
		s.log.Error("store: cannot write index file", "err", err)
		return
	}
	s.markDirty(f.m)
}

// putIndexEntry writes one index entry; a fault (a full disk) is an error
// here, not a failure of the append, whose record is already written.
// Caller has set debug.SetPanicOnFault.
func putIndexEntry(f *indexFile, hash int32, phys, storeTs int64) (err error) {
	defer faultGuard(&err)
	f.put(hash, phys, storeTs)
	return nil
}

// segmentForAppend returns the segment the next total bytes go to, rolling
// to a new one (after writing the blank end marker) when they do not fit.
func (s *Store) segmentForAppend(total int64) (*mappedFile, error) {
	segs := *s.segs.Load()
	end := s.end.Load()
	var next *mappedFile
	if len(segs) > 0 {
		seg := segs[len(segs)-1]
		if end >= seg.start && end < seg.end() && end+total+message.BlankMinSize <= seg.end() {
			return seg, nil
		}
		if end < seg.start {
			// Created before a fault cut the roll short: finish it.
			next, segs = seg, segs[:len(segs)-1]
		}
	}
	if len(segs) > 0 {
		// The blank end marker (below) needs its block too.
		seg := segs[len(segs)-1]
		if err := s.reserveSegment(seg, end-seg.start+message.BlankMinSize); err != nil {
			return nil, err
		}
	}
	if next == nil {
		var err error
		if next, err = s.newSegment(end); err != nil {
			return nil, err
		}
	}
	if len(segs) > 0 {
		seg := segs[len(segs)-1]
		if pos := end - seg.start; pos+message.BlankMinSize <= int64(len(seg.data)) {
			binary.BigEndian.PutUint32(seg.data[pos+4:], uint32(blankMagic))
			binary.BigEndian.PutUint32(seg.data[pos:], uint32(int64(len(seg.data))-pos))
		}
	}
	s.end.Store(next.start)
	return next, nil
}

// newSegment creates the commit-log file starting where the last one ends.
func (s *Store) newSegment(after int64) (*mappedFile, error) {
	segs := *s.segs.Load()
	start := after
	if len(segs) > 0 {
		start = segs[len(segs)-1].end()
	}
	reserve := int64(reserveChunk)
	if s.cfg.Preallocate {
		reserve = s.cfg.CommitLogSegmentSize
	}
	path := s.dirPath("commitlog", offsetName(start))
	if h := s.cfg.WriteFault; h != nil {
		if _, err := h(path, 0, int(s.cfg.CommitLogSegmentSize)); err != nil {
			return nil, fmt.Errorf("%w: %w: commit-log segment %s: %v", ErrIO, errCreate, path, err)
		}
	}
	m, err := s.createSegmentFile(path, start, s.cfg.CommitLogSegmentSize, reserve)
	if err != nil {
		return nil, err
	}
	if len(segs) > 0 {
		segs[len(segs)-1].lastTs = s.lastStoreTs
	}
	grown := append(append(make([]*mappedFile, 0, len(segs)+1), segs...), m)
	s.segs.Store(&grown)
	return m, nil
}

// queueLocked returns the queue, creating its (fileless) object if needed.
// Caller holds mu.
func (s *Store) queueLocked(topic string, id int32) (*consumeQueue, error) {
	k := queueKey{topic, id}
	if q := s.queues[k]; q != nil {
		return q, nil
	}
	if !validTopic(topic) || id < 0 {
		return nil, fmt.Errorf("%w: queue %s/%d", ErrInvalidMessage, topic, id)
	}
	q := newConsumeQueue(s.dirPath("consumequeue"), topic, id, int64(s.cfg.ConsumeQueueEntriesPerFile), s.cqCache)
	s.life.Lock()
	s.queues[k] = q
	s.life.Unlock()
	return q, nil
}

// afterPut runs the dispatch callbacks and the sync wait, outside all locks.
func (s *Store) afterPut(ctx context.Context, metas []recMeta, res *PutResult, wait bool) {
	if cb := s.cfg.OnDispatch; cb != nil {
		for i := range metas {
			m := &metas[i]
			if m.dispatched {
				cb(DispatchEvent{
					Topic:          m.req.Topic,
					QueueID:        m.req.QueueID,
					QueueOffset:    m.qo,
					TagsCode:       m.req.TagsCode,
					PhysicalOffset: m.phys,
					StoreTimestamp: res.StoreTimestamp,
				})
			}
		}
	}
	if s.cfg.FlushMode == FlushSync {
		target := res.End()
		if !wait {
			s.wakeFlusher()
			return
		}
		if !s.waitFlushed(ctx, target) {
			res.Status = PutFlushDiskTimeout
		}
	}
}
