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
	s.idx.mu.RLock()
	defer s.idx.mu.RUnlock()
	files := s.idx.files
	if len(files) > 0 {
		last := files[len(files)-1]
		res.IndexLastUpdateTimestamp, res.IndexLastUpdatePhyOffset = last.endTs, last.endPhy
	}
	var seen []int64
	collect := func(phys int64) bool {
		for _, p := range seen {
			if p == phys {
				return true
			}
		}
		seen = append(seen, phys)
		if rec := s.recordAtPhys(phys); rec != nil && recordHasKey(rec, topic, key) {
			res.Data = append(res.Data, rec...)
			res.Messages++
		}
		return res.Messages < maxNum
	}
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.timeMatched(begin, end) {
			f.lookup(hash, begin, end, collect)
		}
		if f.beginTs < begin || res.Messages >= maxNum {
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
