package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	jsoniter "github.com/json-iterator/go"
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
// files newest first (PROTOCOL.md §9.10, §10.4). Unlike Java it drops hash
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
	if err != nil || string(h.topic) != topic {
		return false
	}
	if v, ok := propValue(h.properties, propUniqKey); ok && string(v) == key {
		return true
	}
	v, ok := propValue(h.properties, propKeys)
	if !ok {
		return false
	}
	found := false
	forEachKey(v, func(k []byte) {
		found = found || string(k) == key
	})
	return found
}

// deletedTopicsFile records, per deleted topic, the commit-log offset at
// deletion, so recovery does not resurrect its older messages.
const deletedTopicsFile = "deletedTopics.json"

// DeleteTopic drops the consume queues of topic (its records stay in the
// commit log until their segment goes). A later message to the topic
// starts again at queue offset 0, like Java.
func (s *Store) DeleteTopic(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !validTopic(topic) {
		return fmt.Errorf("%w: topic %q", ErrInvalidMessage, topic)
	}
	s.deleted[topic] = s.end.Load()
	if err := s.saveDeleted(); err != nil {
		return err
	}
	s.life.Lock()
	for k, q := range s.queues {
		if k.topic == topic {
			delete(s.queues, k)
			q.close()
		}
	}
	s.life.Unlock()
	// Closed files may still sit in the dirty list; their sync just fails.
	keep := s.dirty[:0]
	for _, f := range s.dirty {
		if !f.closed.Load() {
			keep = append(keep, f)
		}
	}
	clear(s.dirty[len(keep):])
	s.dirty = keep
	if err := os.RemoveAll(s.dirPath("consumequeue", topic)); err != nil {
		return fmt.Errorf("%w: remove consume queues of %s: %v", ErrIO, topic, err)
	}
	return nil
}

func (s *Store) loadDeleted() error {
	b, err := ReadConfigFile(s.dirPath(deletedTopicsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(b, &s.deleted)
	}
	if err != nil {
		return fmt.Errorf("rocketmq: store: read %s: %w", deletedTopicsFile, err)
	}
	return nil
}

func (s *Store) saveDeleted() error {
	b, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(s.deleted)
	if err != nil {
		return err
	}
	return WriteConfigFile(s.dirPath(deletedTopicsFile), b)
}

// WriteConfigFile replaces path atomically: the data goes to path.tmp and is
// synced, the current file (if it is well formed) becomes path.bak, and
// path.tmp is renamed over path. The broker owns the content (JSON).
func WriteConfigFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrIO, err)
	}
	tmp := path + ".tmp"
	if err := writeFileSync(tmp, data); err != nil {
		return fmt.Errorf("%w: write %s: %v", ErrIO, tmp, err)
	}
	if cur, err := os.ReadFile(path); err == nil && wellFormed(cur) {
		if err := os.Rename(path, path+".bak"); err != nil {
			return fmt.Errorf("%w: %v", ErrIO, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: %v", ErrIO, err)
	}
	syncDir(dir)
	return nil
}

// ReadConfigFile reads path, or path.bak when path is missing, empty or not
// well formed (a JSON-like document with balanced brackets; Java's unquoted
// integer keys are accepted). Neither file present: an error matching
// fs.ErrNotExist; both unusable: ErrCorrupt.
func ReadConfigFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && wellFormed(b) {
		return b, nil
	}
	mainErr := err
	bak, berr := os.ReadFile(path + ".bak")
	if berr == nil && wellFormed(bak) {
		return bak, nil
	}
	if errors.Is(mainErr, fs.ErrNotExist) && errors.Is(berr, fs.ErrNotExist) {
		return nil, fmt.Errorf("rocketmq: store: config file %s: %w", path, fs.ErrNotExist)
	}
	if mainErr != nil && !errors.Is(mainErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: read %s: %v", ErrIO, path, mainErr)
	}
	return nil, fmt.Errorf("%w: config file %s and its .bak are unusable", ErrCorrupt, path)
}

// wellFormed is a structural check: one object or array, brackets balanced
// outside strings, nothing but space after it.
func wellFormed(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || (b[0] != '{' && b[0] != '[') {
		return false
	}
	var stack []byte
	inStr, esc := false, false
	for i, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i == len(b)-1
			}
		}
	}
	return false
}
