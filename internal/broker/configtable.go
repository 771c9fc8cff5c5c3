package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// configTable is a versioned name → config table behind a read-write lock:
// the shared part of the topic and subscription-group managers. Reads take
// the read lock only (the send and pull paths look configs up per request).
type configTable[V any] struct {
	mu      sync.RWMutex
	table   map[string]V
	version remoting.DataVersion
}

// get returns a config without creating it.
func (t *configTable[V]) get(name string) (V, bool) {
	t.mu.RLock()
	v, ok := t.table[name]
	t.mu.RUnlock()
	return v, ok
}

// names returns the sorted names.
func (t *configTable[V]) names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Sorted(maps.Keys(t.table))
}

// snapshot returns a copy of the table and its data version.
func (t *configTable[V]) snapshot() (map[string]V, remoting.DataVersion) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return maps.Clone(t.table), t.version
}

// set creates or replaces a config and bumps the version.
func (t *configTable[V]) set(name string, v V) {
	t.mu.Lock()
	t.table[name] = v
	t.bumpLocked()
	t.mu.Unlock()
}

// del removes a config; it reports whether it existed.
func (t *configTable[V]) del(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.table[name]; !ok {
		return false
	}
	delete(t.table, name)
	t.bumpLocked()
	return true
}

func (t *configTable[V]) bumpLocked() {
	t.version.Counter++
	t.version.Timestamp = time.Now().UnixMilli()
}

// merge puts loaded configs over the table (fix may complete each one)
// and takes over the loaded version.
func (t *configTable[V]) merge(loaded map[string]V, version remoting.DataVersion, fix func(name string, v V) V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range loaded {
		if fix != nil {
			v = fix(k, v)
		}
		t.table[k] = v
	}
	t.version = version
}

// readConfig decodes a config file with decode; found is false, with no
// error, when the file does not exist.
func readConfig(path string, decode func([]byte) error) (found bool, err error) {
	data, err := store.ReadConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("rocketmq: broker: read %s: %w", path, err)
	}
	if err := decode(data); err != nil {
		return false, fmt.Errorf("rocketmq: broker: parse %s: %w", path, err)
	}
	return true, nil
}
