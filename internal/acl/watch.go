package acl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// DefaultReloadInterval is how often a Watcher looks at its file: Java's
// AclFileWatchService checks every 5 s.
const DefaultReloadInterval = 5 * time.Second

// Watcher holds the accounts of a file and reloads them when the file
// changes (best replaced atomically, by a rename). A file that fails to parse keeps the accounts in force and is
// logged (without any value from the file).
type Watcher struct {
	path     string
	interval time.Duration
	log      *slog.Logger
	cur      atomic.Pointer[Config]
	sum      [sha256.Size]byte // of the content last applied or refused
	pending  [sha256.Size]byte // of a new content seen once
	failing  bool              // the last read failed (logged once)
	reloads  atomic.Int64
}

// NewWatcher loads path; an unreadable or invalid file is an error.
func NewWatcher(path string, interval time.Duration, log *slog.Logger) (*Watcher, error) {
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{path: path, interval: interval, log: log}
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: acl file: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	w.cur.Store(c)
	w.sum = sha256.Sum256(data)
	return w, nil
}

// Static returns a Watcher that never reloads, for accounts given in code.
func Static(c *Config) *Watcher {
	w := &Watcher{}
	w.cur.Store(c)
	return w
}

// Config returns the accounts in force.
func (w *Watcher) Config() *Config { return w.cur.Load() }

// Reloads counts the successful reloads since NewWatcher.
func (w *Watcher) Reloads() int64 { return w.reloads.Load() }

// Run polls the file until ctx ends. A Static watcher returns at once.
func (w *Watcher) Run(ctx context.Context) {
	if w.path == "" {
		return
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Poll()
		}
	}
}

// Poll reloads the file once a changed content has been seen twice in a
// row. Run calls it; calls
// must not overlap.
func (w *Watcher) Poll() {
	data, err := readLimited(w.path)
	if err != nil {
		if !w.failing {
			w.log.Error("acl: cannot read the accounts file; keeping the accounts in force", "path", w.path, "err", err)
		}
		w.failing = true
		return
	}
	w.failing = false
	sum := sha256.Sum256(data)
	if bytes.Equal(sum[:], w.sum[:]) {
		return
	}
	// A new content counts once two looks agree, so a file caught half
	// written is not applied.
	if !bytes.Equal(sum[:], w.pending[:]) {
		w.pending = sum
		return
	}
	c, err := Parse(data)
	if err != nil {
		w.log.Error("acl: invalid accounts file; keeping the accounts in force", "path", w.path, "err", err)
		w.sum = sum // log a bad version once
		return
	}
	w.sum = sum
	w.cur.Store(c)
	w.reloads.Add(1)
	w.log.Info("acl: accounts reloaded", "path", w.path, "accounts", len(c.Accounts))
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFileSize+1))
}
