package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// loadSegments maps the commit-log files. Names must be contiguous offsets;
// every file but the last must have the segment size. A last file of
// another size is a torn tail: it is cut or extended to the segment size and
// the caller runs an abnormal recovery.
func (s *Store) loadSegments() (torn bool, err error) {
	dir := s.dirPath("commitlog")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("rocketmq: store: read %s: %w", dir, err)
	}
	var starts []int64
	for _, de := range ents {
		start, ok := parseOffsetName(de.Name())
		if !ok {
			continue
		}
		// Skipping it would hide its offsets and fail every later put.
		if !de.Type().IsRegular() {
			return false, fmt.Errorf("%w: commit log: %s is not a regular file", ErrCorrupt, filepath.Join(dir, de.Name()))
		}
		starts = append(starts, start)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	size := s.cfg.CommitLogSegmentSize
	var segs []*mappedFile
	defer func() { s.segs.Store(&segs) }()
	for i, start := range starts {
		path := filepath.Join(dir, offsetName(start))
		if i > 0 && start != starts[i-1]+size {
			return torn, fmt.Errorf("%w: commit log: %s does not follow %s (segment size %d)",
				ErrCorrupt, offsetName(start), offsetName(starts[i-1]), size)
		}
		st, err := os.Stat(path)
		if err != nil {
			return torn, fmt.Errorf("rocketmq: store: %w", err)
		}
		if st.Size() != size {
			if i != len(starts)-1 {
				return torn, fmt.Errorf("%w: commit log: %s has %d bytes, want %d", ErrCorrupt, path, st.Size(), size)
			}
			s.log.Warn("store: last commit-log file has the wrong size, recovering", "file", path, "size", st.Size())
			torn = true
			if st.Size() > size {
				if err := os.Truncate(path, size); err != nil {
					return torn, fmt.Errorf("%w: %v", ErrIO, err)
				}
			}
		}
		m, err := openMapped(path, start, size, mapGrow)
		if err != nil {
			return torn, fmt.Errorf("rocketmq: store: map %s: %w", path, err)
		}
		segs = append(segs, m)
	}
	return torn, nil
}

// loadQueues maps every consume queue. A malformed queue is removed (it is
// derived data) and needDeep asks for a rebuild from the whole commit log.
func (s *Store) loadQueues() (needDeep bool, err error) {
	root := s.dirPath("consumequeue")
	topics, err := os.ReadDir(root)
	if err != nil {
		return false, fmt.Errorf("rocketmq: store: read %s: %w", root, err)
	}
	for _, td := range topics {
		if !validTopic(td.Name()) {
			continue
		}
		// A file where a queue directory belongs hides that queue's
		// messages and fails its puts: refuse rather than guess.
		if !td.IsDir() {
			return false, fmt.Errorf("%w: consume queues: %s is not a directory", ErrCorrupt, filepath.Join(root, td.Name()))
		}
		qdirs, err := os.ReadDir(filepath.Join(root, td.Name()))
		if err != nil {
			return false, fmt.Errorf("rocketmq: store: %w", err)
		}
		for _, qd := range qdirs {
			id, perr := strconv.Atoi(qd.Name())
			if perr != nil || id < 0 || id > math.MaxInt32 || strconv.Itoa(id) != qd.Name() {
				continue
			}
			if !qd.IsDir() {
				return false, fmt.Errorf("%w: consume queues: %s is not a directory", ErrCorrupt, filepath.Join(root, td.Name(), qd.Name()))
			}
			q, err := loadConsumeQueue(root, td.Name(), int32(id), int64(s.cfg.ConsumeQueueEntriesPerFile), s.cqCache)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					return false, fmt.Errorf("rocketmq: store: load consume queue %s/%d: %w", td.Name(), id, err)
				}
				s.log.Warn("store: consume queue is corrupt, rebuilding it", "topic", td.Name(), "queue", id, "err", err)
				if err := os.RemoveAll(q.dir); err != nil {
					return false, fmt.Errorf("%w: %v", ErrIO, err)
				}
				needDeep = true
				continue
			}
			s.queues[queueKey{td.Name(), int32(id)}] = q
		}
	}
	return needDeep, nil
}

// recover finds the end of the commit log and makes the consume queues and
// the index agree with it.
//
// A clean start walks the last segment (headers only) and checks that each
// record has its queue entry. After a crash it walks, checking body CRCs,
// from the newest segment whose first message is older than the checkpoint.
// A queue found missing entries, or removed as corrupt, widens the walk to
// the whole log. Every walk re-dispatches what is missing.
func (s *Store) recover(abnormal, needDeep bool, ckpt checkpoint) error {
	started := time.Now()
	segs := *s.segs.Load()
	s.idxEnd = -1
	if !s.cfg.DisableIndex {
		s.idxEnd = s.idx.lastEndPhy()
	}
	from, crc := len(segs)-1, false
	if abnormal {
		from, crc = s.checkpointSegment(ckpt), true
	}
	if needDeep {
		from, crc = 0, true
	}
	var r scanResult
	for {
		var err error
		r, err = s.scan(from, crc)
		if err != nil {
			return err
		}
		if !crc && r.garbage {
			s.log.Warn("store: damaged commit-log tail after a clean shutdown, recovering", "offset", r.end)
			from, crc = min(from, s.checkpointSegment(ckpt)), true
			continue
		}
		if r.gap && from > 0 {
			s.log.Warn("store: consume queues miss entries, rebuilding from the whole commit log")
			from, crc = 0, true
			continue
		}
		s.truncateCommitLog(r.end)
		// Retention may have deleted head segments: entries below the
		// commit log's minimum are not damage.
		s.correctMinOffsetsLocked(s.CommitLogMinOffset())
		if s.checkQueues(r.end) && from > 0 {
			s.log.Warn("store: consume queues disagree with the commit log, rebuilding from the whole commit log")
			from, crc = 0, true
			continue
		}
		break
	}
	s.lastStoreTs = r.lastTs
	if s.lastStoreTs == 0 {
		s.lastStoreTs = ckpt.physicMsgTimestamp
	}
	// What recovery accepted is made durable before new appends.
	for _, seg := range (*s.segs.Load())[max(from, 0):] {
		if err := seg.sync(); err != nil {
			return fmt.Errorf("%w: sync %s: %v", ErrIO, seg.path, err)
		}
	}
	s.flushed.Store(s.end.Load())
	s.log.Info("store: recovered", "abnormal", abnormal, "commitLogEnd", s.end.Load(),
		"queues", len(s.queues), "elapsed", time.Since(started))
	return nil
}

// checkpointSegment is the newest segment whose first record was stored at
// or before the checkpoint's safe time, else 0.
func (s *Store) checkpointSegment(ckpt checkpoint) int {
	ts := ckpt.minTimestamp()
	segs := *s.segs.Load()
	for i := len(segs) - 1; i > 0; i-- {
		h, err := parseRecord(segs[i].data, false)
		if err == nil && h.StoreTimestamp > 0 && h.StoreTimestamp <= ts && h.PhysicalOffset == segs[i].start {
			return i
		}
	}
	return 0
}

type scanResult struct {
	end     int64 // end of the valid records
	lastTs  int64 // store time of the last valid record
	gap     bool  // a record's queue offset was past its queue's end
	garbage bool  // stopped at something that is neither a record nor zeros
}

// scan walks records from segment from and re-dispatches them.
func (s *Store) scan(from int, checkCRC bool) (r scanResult, err error) {
	segs := *s.segs.Load()
	if len(segs) == 0 {
		return r, nil
	}
	from = max(from, 0)
	r.end = segs[from].start
	be := binary.BigEndian
	for _, seg := range segs[from:] {
		if seg.start != r.end {
			return r, nil
		}
		pos := 0
		for {
			if pos+message.BlankMinSize > len(seg.data) {
				r.garbage = true
				r.end = seg.start + int64(pos)
				return r, nil
			}
			size := int32(be.Uint32(seg.data[pos:]))
			magic := int32(be.Uint32(seg.data[pos+4:]))
			if size == 0 && magic == 0 {
				r.end = seg.start + int64(pos)
				return r, nil
			}
			if magic == blankMagic && int(size) == len(seg.data)-pos {
				r.end = seg.end()
				break
			}
			h, perr := parseRecord(seg.data[pos:], checkCRC)
			if perr != nil || h.PhysicalOffset != seg.start+int64(pos) || pos+int(h.Size)+message.BlankMinSize > len(seg.data) {
				r.garbage = true
				r.end = seg.start + int64(pos)
				return r, nil
			}
			gap, err := s.redispatch(&h)
			if err != nil {
				return r, err
			}
			r.gap = r.gap || gap
			r.lastTs = h.StoreTimestamp
			seg.lastTs = h.StoreTimestamp
			pos += int(h.Size)
			r.end = seg.start + int64(pos)
		}
	}
	return r, nil
}

// redispatch makes the queue entry and index entries of a recovered record
// exist. An existing matching entry is kept; a different one is replaced
// together with every later entry of the queue (they belong to later
// records, which the walk visits next).
func (s *Store) redispatch(h *message.RecordView) (gap bool, err error) {
	topic := string(h.Topic)
	if at, ok := s.deleted[topic]; ok && h.PhysicalOffset < at {
		return false, nil
	}
	if !validTopic(topic) || h.QueueID < 0 || h.QueueOffset < 0 {
		return false, nil
	}
	if isDispatched(h.SysFlag) {
		q, err := s.queueLocked(topic, h.QueueID)
		if err != nil {
			return false, err
		}
		n := h.QueueOffset
		e := cqEntry{phys: h.PhysicalOffset, size: int32(h.Size), tags: s.cfg.TagsCode(topic, h.Properties, h.StoreTimestamp)}
		if !s.entryMatches(q, n, e) {
			if n < q.max.Load() {
				q.truncate(n)
			} else if n > q.max.Load() {
				gap = true
			}
			if err := q.ensure(n, s); err != nil {
				return gap, err
			}
			from := q.putFrom()
			if err := q.pinRange(from, n); err != nil {
				return gap, err
			}
			q.put(n, e, s)
			q.unpinRange(from, n)
		}
	}
	if !s.cfg.DisableIndex && h.TransactionType() != message.FlagTransactionRoll && h.PhysicalOffset > s.idxEnd {
		uniq, _ := message.PropertyValue(h.Properties, propUniqKey)
		keys, _ := message.PropertyValue(h.Properties, propKeys)
		s.idx.mu.Lock()
		s.indexRecordLocked(topic, string(uniq), string(keys), h.PhysicalOffset, h.StoreTimestamp)
		s.idx.mu.Unlock()
		s.idxEnd = h.PhysicalOffset
	}
	return gap, nil
}

func (s *Store) entryMatches(q *consumeQueue, n int64, e cqEntry) bool {
	if n < q.min.Load() || n >= q.max.Load() {
		return false
	}
	cur, ok := q.entry(n)
	return ok && cur.phys == e.phys && cur.size == e.size
}

// truncateCommitLog drops everything from end on: the rest of end's
// segment is zeroed, an empty segment starting at end is kept, later
// segments are renamed aside (never deleted).
func (s *Store) truncateCommitLog(end int64) {
	segs := *s.segs.Load()
	var keep []*mappedFile
	for _, seg := range segs {
		switch {
		case seg.end() <= end:
			keep = append(keep, seg)
		case seg.start < end || (seg.start == end && allZero(seg.data[:message.BlankMinSize])):
			pos := int(end - seg.start)
			if !allZero(seg.data[pos:min(pos+message.BlankMinSize, len(seg.data))]) {
				s.log.Warn("store: truncating the commit log", "offset", end, "file", seg.path)
			}
			seg.zeroFrom(pos)
			keep = append(keep, seg)
		default:
			aside := fmt.Sprintf("%s.corrupt-%d", seg.path, time.Now().UnixNano())
			s.log.Warn("store: commit-log file past the recovered end moved aside", "file", seg.path, "to", aside)
			seg.close()
			if err := os.Rename(seg.path, aside); err != nil {
				s.log.Error("store: cannot move commit-log file aside", "file", seg.path, "err", err)
			}
		}
	}
	s.segs.Store(&keep)
	s.end.Store(end)
}

// checkQueues drops queue entries that point past end (a normal crash tail)
// and then entries that do not match their record (damage). It reports
// whether damage was found.
func (s *Store) checkQueues(end int64) (damaged bool) {
	for _, q := range s.queues {
		minOff := q.min.Load()
		n := q.max.Load()
		for n > minOff {
			e, ok := q.entry(n - 1)
			if !ok || e.filler() || e.phys+int64(e.size) <= end {
				break
			}
			n--
		}
		for n > minOff {
			e, _ := q.entry(n - 1)
			if s.recordMatchesQueue(q, n-1, e) {
				break
			}
			damaged = true
			n--
		}
		if n < q.max.Load() {
			q.truncate(n)
		}
		// Spot-check the older files too: their first, middle and last
		// entries must match their records. A queue failing this is dropped
		// and rebuilt by a walk over the whole log.
		for _, f := range *q.files.Load() {
			first, last := max(f.start/cqUnit, q.min.Load()), min(f.end()/cqUnit, q.max.Load())-1
			for _, i := range [3]int64{first, first + (last-first)/2, last} {
				if i < first || i > last {
					continue
				}
				if e, _ := q.entry(i); !s.recordMatchesQueue(q, i, e) {
					s.log.Warn("store: consume queue disagrees with the commit log, dropping it",
						"topic", q.topic, "queue", q.queueID, "offset", i)
					q.truncate(q.min.Load())
					damaged = true
					break
				}
			}
			if q.max.Load() == 0 {
				break
			}
		}
	}
	return damaged
}

// recordMatchesQueue is queueRecord plus a topic check, for recovery.
func (s *Store) recordMatchesQueue(q *consumeQueue, n int64, e cqEntry) bool {
	var hold segHold
	defer hold.release()
	rec := s.queueRecord(&hold, q, n, e)
	if rec == nil {
		return false
	}
	h, err := parseRecord(rec, false)
	return err == nil && string(h.Topic) == q.topic
}
