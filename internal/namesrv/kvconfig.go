package namesrv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"sync"

	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
	jsoniter "github.com/json-iterator/go"
)

// namespaceOrderTopicConfig is the KV namespace of per-topic order config
// (NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG).
const namespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG"

// kvConfig is Java's KVConfigManager: namespace → key → value, saved to a
// file after every change when a path is set. A namespace whose last key is
// deleted stays (empty), as in Java.
type kvConfig struct {
	path string

	mu    sync.RWMutex
	table map[string]map[string]string

	// saveMu orders saves: each takes its snapshot and writes while holding
	// it, so the file never goes back to an older state. Lock order: saveMu,
	// then mu (read, for the snapshot only).
	saveMu sync.Mutex
}

// kvFile is the persisted form (KVConfigSerializeWrapper).
type kvFile struct {
	ConfigTable map[string]map[string]string `json:"configTable"`
}

func newKVConfig(path string) (*kvConfig, error) {
	kv := &kvConfig{path: path, table: make(map[string]map[string]string)}
	if path == "" {
		return kv, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return kv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rocketmq: load kv config: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return kv, nil
	}
	var f kvFile
	if err := jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("rocketmq: load kv config %s: %w", path, err)
	}
	for ns, t := range f.ConfigTable {
		if t == nil {
			t = make(map[string]string)
		}
		kv.table[ns] = t
	}
	return kv, nil
}

func (kv *kvConfig) get(ns, key string) (string, bool) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	v, ok := kv.table[ns][key]
	return v, ok
}

// list returns a copy of a namespace; ok is false when it does not exist.
func (kv *kvConfig) list(ns string) (map[string]string, bool) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	t, ok := kv.table[ns]
	if !ok {
		return nil, false
	}
	return maps.Clone(t), true
}

func (kv *kvConfig) put(ns, key, value string) error {
	kv.mu.Lock()
	t := kv.table[ns]
	if t == nil {
		t = make(map[string]string)
		kv.table[ns] = t
	}
	t[key] = value
	kv.mu.Unlock()
	return kv.save()
}

func (kv *kvConfig) delete(ns, key string) error {
	kv.mu.Lock()
	if t := kv.table[ns]; t != nil {
		delete(t, key)
	}
	kv.mu.Unlock()
	return kv.save()
}

// save writes the table to kv.path atomically and durably (atomicfile), so
// a crash leaves the old or the new content, never half of it.
func (kv *kvConfig) save() error {
	if kv.path == "" {
		return nil
	}
	kv.saveMu.Lock()
	defer kv.saveMu.Unlock()

	kv.mu.RLock()
	var buf bytes.Buffer
	enc := jsoniter.ConfigCompatibleWithStandardLibrary.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(kvFile{ConfigTable: kv.table})
	kv.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("rocketmq: encode kv config: %w", err)
	}
	data := bytes.TrimRight(buf.Bytes(), "\n")

	if err := atomicfile.Write(kv.path, data, 0o644); err != nil {
		return fmt.Errorf("rocketmq: save kv config: %w", err)
	}
	return nil
}
