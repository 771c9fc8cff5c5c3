package store

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// GetStatus is the outcome of GetMessages (Java GetMessageStatus; the
// broker maps it to a pull response code, docs/PROTOCOL.md §9.3).
type GetStatus int

const (
	GetFound GetStatus = iota
	GetNoMatchedMessage
	GetMessageWasRemoving
	GetOffsetFoundNull
	GetOffsetOverflowBadly
	GetOffsetOverflowOne
	GetOffsetTooSmall
	GetNoMatchedLogicQueue
	GetNoMessageInQueue
)

var getStatusNames = [...]string{
	GetFound:               "FOUND",
	GetNoMatchedMessage:    "NO_MATCHED_MESSAGE",
	GetMessageWasRemoving:  "MESSAGE_WAS_REMOVING",
	GetOffsetFoundNull:     "OFFSET_FOUND_NULL",
	GetOffsetOverflowBadly: "OFFSET_OVERFLOW_BADLY",
	GetOffsetOverflowOne:   "OFFSET_OVERFLOW_ONE",
	GetOffsetTooSmall:      "OFFSET_TOO_SMALL",
	GetNoMatchedLogicQueue: "NO_MATCHED_LOGIC_QUEUE",
	GetNoMessageInQueue:    "NO_MESSAGE_IN_QUEUE",
}

// String returns the Java enum name (used as the pull response remark).
func (s GetStatus) String() string {
	if s >= 0 && int(s) < len(getStatusNames) {
		return getStatusNames[s]
	}
	return "GetStatus(" + strconv.Itoa(int(s)) + ")"
}

// GetRequest selects messages of one queue.
type GetRequest struct {
	Topic   string
	QueueID int32
	Offset  int64
	// MaxMessages and MaxBytes cap the result; values ≤ 0 or above
	// Config.MaxTransferCount/MaxTransferBytes take the config values. The
	// first message is returned whatever its size.
	MaxMessages int
	MaxBytes    int
	// Filter, if set, is asked for each entry's tags code (broker-side tag
	// filtering by hash); false skips the entry.
	Filter func(tagsCode int64) bool
	// RecordFilter, if set, is asked for each record (e.g. SQL92 on
	// properties); false skips it. The slice is only valid during the call.
	// Both filters run under the store's shared read lock: they must be
	// pure predicates and must not call the Store.
	RecordFilter func(record []byte) bool
}

// GetResult is the answer of GetMessages.
type GetResult struct {
	Status          GetStatus
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// Messages is the number of records appended to Data.
	Messages int
	// Data is dst with the records appended back to back (pull body layout).
	Data []byte
	// LastPhysicalOffset is the commit-log offset of the last entry looked
	// at (Java maxPhyOffsetPulling), for the slave-read hint.
	LastPhysicalOffset int64
}

// GetMessages appends to dst the records of queue (Topic, QueueID) from
// Offset on, with Java's status and nextBeginOffset rules (docs/PROTOCOL.md §9.3).
// An unknown queue answers NO_MESSAGE_IN_QUEUE like Java (which creates the
// queue on lookup); NO_MATCHED_LOGIC_QUEUE is kept for an unusable topic or
// a negative queue id.
func (s *Store) GetMessages(dst []byte, req *GetRequest) (res GetResult, err error) {
	res.Data = dst
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return res, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)

	q := s.queues[queueKey{req.Topic, req.QueueID}]
	if q == nil {
		res.Status = GetNoMessageInQueue
		if req.QueueID < 0 || !validTopic(req.Topic) {
			res.Status = GetNoMatchedLogicQueue
		}
		return res, nil
	}
	minOff, maxOff := q.min.Load(), q.max.Load()
	res.MinOffset, res.MaxOffset = minOff, maxOff
	off := req.Offset
	switch {
	case maxOff == 0:
		res.Status, res.NextBeginOffset = GetNoMessageInQueue, 0
		return res, nil
	case off < minOff:
		res.Status, res.NextBeginOffset = GetOffsetTooSmall, minOff
		return res, nil
	case off == maxOff:
		res.Status, res.NextBeginOffset = GetOffsetOverflowOne, off
		return res, nil
	case off > maxOff:
		res.Status, res.NextBeginOffset = GetOffsetOverflowBadly, maxOff
		return res, nil
	}
	maxMsgs := req.MaxMessages
	if maxMsgs <= 0 || maxMsgs > s.cfg.MaxTransferCount {
		maxMsgs = s.cfg.MaxTransferCount
	}
	maxBytes := req.MaxBytes
	if maxBytes <= 0 || maxBytes > s.cfg.MaxTransferBytes {
		maxBytes = s.cfg.MaxTransferBytes
	}
	// Java examines at most max(16000 bytes of entries, maxMsgNums entries).
	scanEnd := min(maxOff, off+int64(max(16000/cqUnit, maxMsgs)))
	status := GetNoMatchedMessage
	count, size := 0, 0
	n := off
	var pinned *mappedFile // the file of entry n, mapped while in use
	var hold segHold       // the commit-log segment last read
	defer func() {
		if pinned != nil {
			pinned.unpin()
		}
		hold.release()
	}()
	for ; n < scanEnd; n++ {
		f := q.fileFor(n)
		if f == nil {
			if n == off {
				fb := q.perFile
				res.Status, res.NextBeginOffset = GetOffsetFoundNull, off+fb-off%fb
				return res, nil
			}
			break
		}
		if f != pinned {
			if pinned != nil {
				pinned.unpin()
				pinned = nil
			}
			if err := f.pin(); err != nil {
				if n == off {
					if nm := q.min.Load(); f.closed.Load() && off < nm {
						// Retention removed the file meanwhile.
						res.Status, res.NextBeginOffset, res.MinOffset = GetOffsetTooSmall, nm, nm
						return res, nil
					}
					return res, err
				}
				break
			}
			pinned = f
		}
		e := entryIn(f, n)
		if !e.filler() {
			res.LastPhysicalOffset = e.phys
		}
		if count > 0 && (count >= maxMsgs || size+int(e.size) > maxBytes) {
			break
		}
		if req.Filter != nil && !e.filler() && !req.Filter(e.tags) {
			if count == 0 {
				status = GetNoMatchedMessage
			}
			continue
		}
		rec := s.queueRecord(&hold, q, n, e)
		if rec == nil {
			if count == 0 {
				status = GetMessageWasRemoving
			}
			continue
		}
		if req.RecordFilter != nil && !req.RecordFilter(rec) {
			if count == 0 {
				status = GetNoMatchedMessage
			}
			continue
		}
		res.Data = append(res.Data, rec...)
		count++
		size += len(rec)
		status = GetFound
	}
	res.Status, res.NextBeginOffset, res.Messages = status, n, count
	return res, nil
}

// recordAt returns the mapped bytes [phys, phys+size) if they lie inside the
// written commit log, else nil. Caller holds life; the bytes stay valid
// until h is released or moved to another segment.
func (s *Store) recordAt(h *segHold, phys int64, size int32) []byte {
	end := s.end.Load() // before segs: a new end implies its segment is listed
	segs := *s.segs.Load()
	if len(segs) == 0 || size < message.RecordMinSize || phys < segs[0].start || phys+int64(size) > end {
		return nil
	}
	i := (phys - segs[0].start) / s.cfg.CommitLogSegmentSize
	if i >= int64(len(segs)) {
		return nil
	}
	seg := segs[i]
	if !h.hold(seg) {
		return nil
	}
	p := phys - seg.start
	if p+int64(size) > int64(len(seg.data)) {
		return nil
	}
	return seg.data[p : p+int64(size)]
}

// queueRecord returns the record entry n of q points to, after checking that
// the record agrees with the entry (a damaged queue never leaks a wrong
// message), or nil.
func (s *Store) queueRecord(h *segHold, q *consumeQueue, n int64, e cqEntry) []byte {
	if e.filler() {
		return nil
	}
	rec := s.recordAt(h, e.phys, e.size)
	if rec == nil {
		return nil
	}
	be := binary.BigEndian
	if int32(be.Uint32(rec)) != e.size ||
		int32(be.Uint32(rec[message.RecordPosQueueID:])) != q.queueID ||
		int64(be.Uint64(rec[message.RecordPosQueueOffset:])) != n ||
		int64(be.Uint64(rec[message.RecordPosPhysicalOffset:])) != e.phys {
		s.log.Warn("store: consume queue entry does not match its record",
			"topic", q.topic, "queue", q.queueID, "offset", n, "commitLogOffset", e.phys)
		return nil
	}
	return rec
}

// storeTimestampOf reads the store time of the record entry n points to.
func (s *Store) storeTimestampOf(q *consumeQueue, n int64) (int64, bool) {
	e, ok := q.entry(n)
	if !ok {
		return 0, false
	}
	var h segHold
	defer h.release()
	rec := s.queueRecord(&h, q, n, e)
	if rec == nil {
		return 0, false
	}
	sys := int32(binary.BigEndian.Uint32(rec[message.RecordPosSysFlag:]))
	return int64(binary.BigEndian.Uint64(rec[message.StoreTimestampPos(sys):])), true
}

func (s *Store) lookupQueue(topic string, id int32) *consumeQueue {
	return s.queues[queueKey{topic, id}]
}

// MaxOffset is the queue's next offset (entries ever written); 0 for an
// unknown queue.
func (s *Store) MaxOffset(topic string, queueID int32) int64 {
	s.life.RLock()
	defer s.life.RUnlock()
	if q := s.lookupQueue(topic, queueID); q != nil {
		return q.max.Load()
	}
	return 0
}

// MinOffset is the queue's smallest available offset; 0 for an unknown queue.
func (s *Store) MinOffset(topic string, queueID int32) int64 {
	s.life.RLock()
	defer s.life.RUnlock()
	if q := s.lookupQueue(topic, queueID); q != nil {
		return q.min.Load()
	}
	return 0
}

// Boundary selects the side of SEARCH_OFFSET_BY_TIMESTAMP.
type Boundary int

const (
	// BoundaryLower: the smallest offset stored at or after the time.
	BoundaryLower Boundary = iota
	// BoundaryUpper: the largest offset stored at or before the time.
	BoundaryUpper
)

// OffsetByTimestamp binary-searches the queue by store time (docs/PROTOCOL.md
// §9.11). Lower: the smallest offset with store time ≥ ts (maxOffset if all
// are older). Upper: the largest offset with store time ≤ ts (minOffset if
// all are newer). An unknown or empty queue gives 0.
func (s *Store) OffsetByTimestamp(topic string, queueID int32, ts int64, b Boundary) (off int64, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	q := s.lookupQueue(topic, queueID)
	if q == nil {
		return 0, nil
	}
	lo, hi := q.min.Load(), q.max.Load()
	if lo >= hi {
		return 0, nil
	}
	minOff, maxOff := lo, hi
	// Unreadable entries count as older so the search still converges.
	older := func(n int64, than int64, orEqual bool) bool {
		t, ok := s.storeTimestampOf(q, n)
		if !ok {
			return true
		}
		if orEqual {
			return t <= than
		}
		return t < than
	}
	if b == BoundaryUpper {
		// First offset with time > ts, minus one.
		for lo < hi {
			mid := lo + (hi-lo)/2
			if older(mid, ts, true) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return max(lo-1, minOff), nil
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if older(mid, ts, false) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return min(lo, maxOff), nil
}

// MessageStoreTime is the store time of the message at a queue offset.
func (s *Store) MessageStoreTime(topic string, queueID int32, offset int64) (ts int64, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return 0, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	q := s.lookupQueue(topic, queueID)
	if q == nil || offset < q.min.Load() || offset >= q.max.Load() {
		return 0, fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	t, ok := s.storeTimestampOf(q, offset)
	if !ok {
		return 0, fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	return t, nil
}

// EarliestMessageTime is the store time of the message at the queue's
// minimum offset (GET_EARLIEST_MSG_STORETIME).
func (s *Store) EarliestMessageTime(topic string, queueID int32) (int64, error) {
	return s.MessageStoreTime(topic, queueID, s.MinOffset(topic, queueID))
}

// QueueEntry is one consume-queue entry.
type QueueEntry struct {
	PhysicalOffset int64
	Size           int32
	TagsCode       int64
}

// ConsumeQueueEntry reads the entry at a queue offset (the delay service
// reads delivery times from the tags code this way).
func (s *Store) ConsumeQueueEntry(topic string, queueID int32, offset int64) (_ QueueEntry, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return QueueEntry{}, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	q := s.lookupQueue(topic, queueID)
	if q == nil || offset < q.min.Load() || offset >= q.max.Load() {
		return QueueEntry{}, fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	e, ok := q.entry(offset)
	if !ok || e.filler() {
		return QueueEntry{}, fmt.Errorf("%w: %s/%d offset %d", ErrNotFound, topic, queueID, offset)
	}
	return QueueEntry{PhysicalOffset: e.phys, Size: e.size, TagsCode: e.tags}, nil
}

// MessageAt returns a copy of the record at a commit-log offset
// (VIEW_MESSAGE_BY_ID). An offset that is not the start of a stored record
// gives ErrNotFound.
func (s *Store) MessageAt(phys int64) ([]byte, error) {
	b, err := s.AppendMessageAt(nil, phys)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendMessageAt is MessageAt appending the record to dst, so that a
// caller that reads many records can reuse one buffer.
func (s *Store) AppendMessageAt(dst []byte, phys int64) (b []byte, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return dst, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	var h segHold
	defer h.release()
	rec := s.recordAtPhys(&h, phys)
	if rec == nil {
		return dst, fmt.Errorf("%w: commit-log offset %d", ErrNotFound, phys)
	}
	return append(dst, rec...), nil
}

// recordAtPhys returns the validated record starting at phys, or nil; it
// stays valid until h is released or moved.
func (s *Store) recordAtPhys(hold *segHold, phys int64) []byte {
	end := s.end.Load()
	segs := *s.segs.Load()
	if len(segs) == 0 || phys < segs[0].start || phys+message.RecordMinSize > end {
		return nil
	}
	i := (phys - segs[0].start) / s.cfg.CommitLogSegmentSize
	if i >= int64(len(segs)) {
		return nil
	}
	seg := segs[i]
	if !hold.hold(seg) {
		return nil
	}
	p := phys - seg.start
	limit := min(seg.end(), end) - seg.start
	h, err := parseRecord(seg.data[p:limit], false)
	if err != nil || h.PhysicalOffset != phys {
		return nil
	}
	return seg.data[p : p+int64(h.Size)]
}

// CommitLogMinOffset and CommitLogMaxOffset bound the commit log.
func (s *Store) CommitLogMinOffset() int64 {
	segs := *s.segs.Load()
	if len(segs) == 0 {
		return s.end.Load()
	}
	return segs[0].start
}

// CommitLogMaxOffset is the write position of the commit log.
func (s *Store) CommitLogMaxOffset() int64 { return s.end.Load() }

// QueueInfo describes one consume queue.
type QueueInfo struct {
	Topic     string
	QueueID   int32
	MinOffset int64
	MaxOffset int64
}

// Queues lists the consume queues (after a restart, the broker learns from
// it which queues hold messages).
func (s *Store) Queues() []QueueInfo {
	s.life.RLock()
	defer s.life.RUnlock()
	out := make([]QueueInfo, 0, len(s.queues))
	for k, q := range s.queues {
		out = append(out, QueueInfo{Topic: k.topic, QueueID: k.id, MinOffset: q.min.Load(), MaxOffset: q.max.Load()})
	}
	return out
}
