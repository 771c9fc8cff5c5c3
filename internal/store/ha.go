package store

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Replication (docs/DESIGN.md "Replication"): a master's HA service reads
// raw commit-log bytes with ReadCommitLog; a slave's store (Config.Replica)
// refuses puts and takes those bytes with AppendReplica, at the master's
// offsets, dispatching every whole record as a local append would.

// ErrReplica is returned by every put of a slave's store (Config.Replica).
var ErrReplica = fmt.Errorf("%w: the store is a slave's replica", ErrNotWritable)

// ErrReplicaOffset is returned by AppendReplica for bytes that do not start
// at the commit log's write position, or that cross a segment.
var ErrReplicaOffset = fmt.Errorf("%w: replicated bytes out of place", ErrCorrupt)

// replicaState is the dispatch cursor of a replica; under Store.mu.
type replicaState struct {
	started bool
	next    int64 // first commit-log byte not yet dispatched
}

// CommitLogSegmentSize is the size of each commit-log file.
func (s *Store) CommitLogSegmentSize() int64 { return s.cfg.CommitLogSegmentSize }

// ReadCommitLog appends to dst the commit-log bytes from off on: at most
// max of them, never past the end of off's segment nor past the write
// position. At the write position it appends nothing. An offset below the
// commit log's minimum (deleted by retention) is ErrNotFound.
func (s *Store) ReadCommitLog(dst []byte, off int64, max int) (b []byte, err error) {
	b = dst
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return b, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	end := s.end.Load()
	segs := *s.segs.Load()
	switch {
	case off > end:
		return b, fmt.Errorf("%w: commit-log offset %d is past the write position %d", ErrNotFound, off, end)
	case off == end || max <= 0:
		return b, nil
	case len(segs) == 0 || off < segs[0].start:
		return b, fmt.Errorf("%w: commit-log offset %d is below the minimum", ErrNotFound, off)
	}
	i := (off - segs[0].start) / s.cfg.CommitLogSegmentSize
	if i >= int64(len(segs)) {
		return b, fmt.Errorf("%w: no segment holds commit-log offset %d", ErrNotFound, off)
	}
	seg := segs[i]
	var hold segHold
	defer hold.release()
	if !hold.hold(seg) {
		return b, fmt.Errorf("%w: commit-log offset %d is being deleted", ErrNotFound, off)
	}
	limit := min(seg.end(), end, off+int64(max))
	return append(b, seg.data[off-seg.start:limit-seg.start]...), nil
}

// AppendReplica writes data, commit-log bytes of a master starting at its
// offset off, into the commit log of a replica, then dispatches every
// record it completed. off must be the write position; only an empty store
// takes any offset, which must start a segment (a master sends an empty
// slave the start of its last file). data never crosses a segment: the
// master's chunks end at its file ends, blank tails included. Records are
// dispatched only once whole, so a chunk may end inside one.
func (s *Store) AppendReplica(off int64, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	s.mu.Lock()
	evs, err := s.appendReplicaLocked(off, data)
	s.mu.Unlock()
	if cb := s.cfg.OnDispatch; cb != nil {
		for _, ev := range evs {
			cb(ev)
		}
	}
	return err
}

func (s *Store) appendReplicaLocked(off int64, data []byte) (evs []DispatchEvent, err error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if !s.cfg.Replica {
		return nil, fmt.Errorf("%w: the store is not a replica", ErrNotWritable)
	}
	if err := s.writableLocked(); err != nil {
		return nil, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	size := s.cfg.CommitLogSegmentSize
	segs := *s.segs.Load()
	end := s.end.Load()
	if !s.rep.started {
		s.rep.started, s.rep.next = true, end
	}
	if off != end {
		if len(segs) != 0 || end != 0 {
			return nil, fmt.Errorf("%w: %d bytes at %d, the write position is %d", ErrReplicaOffset, len(data), off, end)
		}
		if off%size != 0 {
			return nil, fmt.Errorf("%w: first offset %d does not start a %d-byte segment", ErrReplicaOffset, off, size)
		}
		end = off
		s.end.Store(end)
		s.rep.next = end
	}
	var seg *mappedFile
	if n := len(segs); n > 0 && end >= segs[n-1].start && end < segs[n-1].end() {
		seg = segs[n-1]
	} else {
		if n > 0 && end != segs[n-1].end() {
			return nil, fmt.Errorf("%w: write position %d outside the last segment", ErrReplicaOffset, end)
		}
		if seg, err = s.newSegment(end); err != nil {
			return nil, err
		}
	}
	pos := end - seg.start
	if pos+int64(len(data)) > size {
		return nil, fmt.Errorf("%w: %d bytes at %d cross the segment end %d", ErrReplicaOffset, len(data), off, seg.end())
	}
	copy(seg.data[pos:], data)
	s.end.Store(end + int64(len(data)))
	return s.dispatchReplicaLocked(evs)
}

// dispatchReplicaLocked builds the consume-queue and index entries of the
// whole records between the dispatch cursor and the write position.
func (s *Store) dispatchReplicaLocked(evs []DispatchEvent) ([]DispatchEvent, error) {
	be := binary.BigEndian
	end := s.end.Load()
	for s.rep.next < end {
		segs := *s.segs.Load()
		next := s.rep.next
		i := (next - segs[0].start) / s.cfg.CommitLogSegmentSize
		if next < segs[0].start || i >= int64(len(segs)) {
			return evs, fmt.Errorf("%w: dispatch offset %d outside the commit log", ErrReplicaOffset, next)
		}
		seg := segs[i]
		pos := next - seg.start
		avail := min(end, seg.end()) - next
		if avail < 8 {
			break
		}
		size := int64(int32(be.Uint32(seg.data[pos:])))
		magic := int32(be.Uint32(seg.data[pos+4:]))
		if magic == blankMagic && pos+size == int64(len(seg.data)) {
			if end < seg.end() {
				break // the rest of the blank tail is still on its way
			}
			s.rep.next = seg.end()
			continue
		}
		if size < message.RecordMinSize || pos+size > int64(len(seg.data)) {
			return evs, fmt.Errorf("%w: bad record size %d at commit-log offset %d", ErrCorrupt, size, next)
		}
		if size > avail {
			break // the rest of the record comes with the next chunk
		}
		h, perr := parseRecord(seg.data[pos:pos+size], false)
		if perr != nil || h.PhysicalOffset != next {
			return evs, fmt.Errorf("%w: replicated record at %d: %v", ErrCorrupt, next, perr)
		}
		if _, err := s.redispatch(&h); err != nil {
			return evs, err
		}
		seg.lastTs, s.lastStoreTs = h.StoreTimestamp, h.StoreTimestamp
		if isDispatched(h.SysFlag) && validTopic(string(h.Topic)) && h.QueueID >= 0 {
			topic := string(h.Topic)
			evs = append(evs, DispatchEvent{
				Topic:          topic,
				QueueID:        h.QueueID,
				QueueOffset:    h.QueueOffset,
				TagsCode:       s.cfg.TagsCode(topic, h.Properties, h.StoreTimestamp),
				PhysicalOffset: h.PhysicalOffset,
				StoreTimestamp: h.StoreTimestamp,
			})
		}
		s.rep.next = next + size
	}
	return evs, nil
}
