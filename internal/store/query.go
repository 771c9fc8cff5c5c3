package store

import (
	"runtime/debug"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// QueryResult is the answer of QueryByKey.
type QueryResult struct {
	// Data holds the matching records back to back, newest first.
	Data     []byte
	Messages int
	// Header fields of the QUERY_MESSAGE response: end time and end offset
	// of the newest index file.
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyOffset int64
}

// QueryByKey finds up to maxNum messages of topic whose UNIQ_KEY or one of
// whose KEYS equals key, stored within [begin, end] (ms), through the index
// files newest first (docs/PROTOCOL.md §9.10, §10.4). Unlike Java it drops hash
// collisions itself. maxNum ≤ 0 or above Config.MaxQueryNum takes that value.
//
// The index lock, which appends take too, is held only while walking the
// index for candidates; the records are read and checked after it is
// released, and the walk resumes if collisions left too few.
func (s *Store) QueryByKey(topic, key string, maxNum int, begin, end int64) (res QueryResult, err error) {
	s.life.RLock()
	defer s.life.RUnlock()
	if s.closed.Load() {
		return res, ErrClosed
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faultGuard(&err)
	if maxNum <= 0 || maxNum > s.cfg.MaxQueryNum {
		maxNum = s.cfg.MaxQueryNum
	}
	hash := indexKeyHash(topic, key)
	var seen, cand []int64
	fi := -2         // index file being walked; -2 before the first round, -1 when done
	from := int32(0) // entry to resume at in file fi
	removed := 0     // idx.removed when fi was set
	for res.Messages < maxNum && fi != -1 {
		need := maxNum - res.Messages
		cand = cand[:0]
		add := func(phys int64) bool {
			for _, p := range seen {
				if p == phys {
					return true
				}
			}
			seen = append(seen, phys)
			cand = append(cand, phys)
			return len(cand) < need
		}
		s.idx.mu.RLock()
		files := s.idx.files
		if fi >= 0 {
			// Retention dropped head files since the last round.
			fi -= s.idx.removed - removed
			if fi < 0 {
				fi, from = -1, 0
			}
		}
		removed = s.idx.removed
		if fi == -2 {
			fi = len(files) - 1
			if fi >= 0 {
				last := files[fi]
				res.IndexLastUpdateTimestamp, res.IndexLastUpdatePhyOffset = last.endTs, last.endPhy
			}
		}
		for fi >= 0 && len(cand) < need {
			f := files[fi]
			if from != 0 || f.timeMatched(begin, end) {
				if from = f.lookup(hash, begin, end, from, add); from != 0 {
					break // enough candidates: resume here
				}
			}
			if f.beginTs < begin {
				fi = -1
				break
			}
			fi--
		}
		s.idx.mu.RUnlock()
		var hold segHold
		for _, phys := range cand {
			if rec := s.recordAtPhys(&hold, phys); rec != nil && recordHasKey(rec, topic, key) {
				res.Data = append(res.Data, rec...)
				res.Messages++
			}
		}
		hold.release()
		if len(cand) == 0 {
			break
		}
	}
	return res, nil
}

// recordHasKey reports whether the record belongs to topic and carries key
// as its UNIQ_KEY or among its KEYS.
func recordHasKey(rec []byte, topic, key string) bool {
	h, err := parseRecord(rec, false)
	if err != nil || string(h.Topic) != topic {
		return false
	}
	if v, ok := message.PropertyValue(h.Properties, propUniqKey); ok && string(v) == key {
		return true
	}
	v, ok := message.PropertyValue(h.Properties, propKeys)
	if !ok {
		return false
	}
	found := false
	forEachKey(v, func(k []byte) {
		found = found || string(k) == key
	})
	return found
}

// IndexLastUpdate returns the end time and end offset of the newest index
// file, as QueryByKey reports them; zeros without one or once closed.
func (s *Store) IndexLastUpdate() (timestamp, phys int64) {
	s.life.RLock()
	defer s.life.RUnlock()
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	if n := len(s.idx.files); n > 0 {
		return s.idx.files[n-1].endTs, s.idx.files[n-1].endPhy
	}
	return 0, 0
}
