package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Offset stores (Java OffsetStore): the consume offset of each queue in
// memory, read from and persisted to the broker (clustering) or a local
// file (broadcasting). The hot path, updating a queue's offset after each
// consumed batch, is one CAS on the queue's own counter.

// errNoOffset: the store has no offset for the queue (the broker answered
// QUERY_NOT_FOUND, or the file has none).
var errNoOffset = errors.New("rocketmq: no stored offset")

// offsetCell is the in-memory offset of one queue; -1 is none.
type offsetCell struct{ v atomic.Int64 }

// update sets the offset; with increaseOnly it never moves it back.
func (c *offsetCell) update(off int64, increaseOnly bool) {
	if !increaseOnly {
		c.v.Store(off)
		return
	}
	for {
		cur := c.v.Load()
		if off <= cur || c.v.CompareAndSwap(cur, off) {
			return
		}
	}
}

type offsetStore interface {
	// load reads what the store keeps at Start.
	load() error
	// cell returns the queue's in-memory offset, creating it at -1.
	cell(mq rocketmq.MessageQueue) *offsetCell
	// readMemory returns the in-memory offset, -1 when none.
	readMemory(mq rocketmq.MessageQueue) int64
	// readStore reads the offset from the backing store into memory;
	// errNoOffset when it has none.
	readStore(ctx context.Context, mq rocketmq.MessageQueue) (int64, error)
	update(mq rocketmq.MessageQueue, off int64, increaseOnly bool)
	// persistAll writes the offsets of mqs (sync: acknowledged; else
	// oneway where the store can).
	persistAll(ctx context.Context, mqs []rocketmq.MessageQueue, sync bool) error
	// persist writes one queue's offset, acknowledged.
	persist(ctx context.Context, mq rocketmq.MessageQueue) error
	remove(mq rocketmq.MessageQueue)
	// snapshot returns the in-memory offsets of topic ("" for all).
	snapshot(topic string) map[rocketmq.MessageQueue]int64
	// close releases what load took.
	close()
}

// errLocked: another consumer holds the offset file.
var errLocked = errors.New("locked")

// memTable is the in-memory part both stores share.
type memTable struct {
	mu    sync.RWMutex
	cells map[rocketmq.MessageQueue]*offsetCell
}

func (t *memTable) cell(mq rocketmq.MessageQueue) *offsetCell {
	t.mu.RLock()
	c := t.cells[mq]
	t.mu.RUnlock()
	if c != nil {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c = t.cells[mq]; c == nil {
		c = &offsetCell{}
		c.v.Store(-1)
		t.cells[mq] = c
	}
	return c
}

func (t *memTable) readMemory(mq rocketmq.MessageQueue) int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if c := t.cells[mq]; c != nil {
		return c.v.Load()
	}
	return -1
}

func (t *memTable) update(mq rocketmq.MessageQueue, off int64, increaseOnly bool) {
	t.cell(mq).update(off, increaseOnly)
}

func (t *memTable) remove(mq rocketmq.MessageQueue) {
	t.mu.Lock()
	delete(t.cells, mq)
	t.mu.Unlock()
}

func (t *memTable) snapshot(topic string) map[rocketmq.MessageQueue]int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make(map[rocketmq.MessageQueue]int64, len(t.cells))
	for mq, c := range t.cells {
		if topic == "" || mq.Topic == topic {
			if v := c.v.Load(); v >= 0 {
				out[mq] = v
			}
		}
	}
	return out
}

// remoteStore keeps offsets on the brokers (Java RemoteBrokerOffsetStore,
// docs/PROTOCOL.md §3.6, §3.7).
type remoteStore struct {
	memTable
	cli   *mqclient.Client
	group string // on the wire
	log   *slog.Logger
}

func newRemoteStore(cli *mqclient.Client, group string, log *slog.Logger) *remoteStore {
	return &remoteStore{memTable: memTable{cells: map[rocketmq.MessageQueue]*offsetCell{}}, cli: cli, group: group, log: log}
}

func (s *remoteStore) load() error { return nil }

func (s *remoteStore) close() {}

// masterAddr finds the master of mq's broker, refreshing the route once.
func masterAddr(ctx context.Context, cli *mqclient.Client, mq rocketmq.MessageQueue) (string, error) {
	if a, ok := cli.BrokerAddr(mq.BrokerName); ok {
		return a, nil
	}
	_ = cli.UpdateRoute(ctx, mq.Topic)
	if a, ok := cli.BrokerAddr(mq.BrokerName); ok {
		return a, nil
	}
	return "", fmt.Errorf("rocketmq: broker %s of %s has no master", mq.BrokerName, mq.Topic)
}

// offsetAddr finds where mq's offsets are read and written (Java
// RemoteBrokerOffsetStore): the master, else, after a route refresh, any
// replica of the broker.
func offsetAddr(ctx context.Context, cli *mqclient.Client, mq rocketmq.MessageQueue) (string, error) {
	if a, ok := cli.BrokerAddr(mq.BrokerName); ok {
		return a, nil
	}
	_ = cli.UpdateRoute(ctx, mq.Topic)
	if br, ok := cli.FindBroker(mq.BrokerName, remoting.MasterID, false); ok {
		return br.Addr, nil
	}
	return "", fmt.Errorf("rocketmq: broker %s of %s has no known address", mq.BrokerName, mq.Topic)
}

func (s *remoteStore) readStore(ctx context.Context, mq rocketmq.MessageQueue) (int64, error) {
	addr, err := offsetAddr(ctx, s.cli, mq)
	if err != nil {
		return -1, err
	}
	h := remoting.QueryConsumerOffsetRequestHeader{
		ConsumerGroup: s.group, Topic: mq.Topic, QueueID: int32(mq.QueueID), BrokerName: &mq.BrokerName,
	}
	resp, err := s.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.QueryConsumerOffset, h.AppendExt(nil), nil), 0)
	if err != nil {
		return -1, err
	}
	if resp.Code == remoting.QueryNotFound {
		return -1, errNoOffset
	}
	if err := remoting.ResponseError(resp); err != nil {
		return -1, err
	}
	var rh remoting.QueryConsumerOffsetResponseHeader
	if err := rh.FromExt(resp.Ext); err != nil {
		return -1, err
	}
	s.update(mq, rh.Offset, false)
	return rh.Offset, nil
}

func (s *remoteStore) persistAll(ctx context.Context, mqs []rocketmq.MessageQueue, sync bool) error {
	var errs []error
	for _, mq := range mqs {
		off := s.readMemory(mq)
		if off < 0 {
			continue
		}
		if err := s.send(ctx, mq, off, sync); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *remoteStore) persist(ctx context.Context, mq rocketmq.MessageQueue) error {
	off := s.readMemory(mq)
	if off < 0 {
		return nil
	}
	return s.send(ctx, mq, off, true)
}

// send is UPDATE_CONSUMER_OFFSET, oneway for the periodic persist as Java
// updateConsumerOffsetOneway, acknowledged otherwise.
func (s *remoteStore) send(ctx context.Context, mq rocketmq.MessageQueue, off int64, sync bool) error {
	addr, err := offsetAddr(ctx, s.cli, mq)
	if err != nil {
		return err
	}
	h := remoting.UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: s.group, Topic: mq.Topic, QueueID: int32(mq.QueueID), CommitOffset: off, BrokerName: &mq.BrokerName,
	}
	req := remoting.NewRequest(remoting.UpdateConsumerOffset, h.AppendExt(nil), nil)
	if !sync {
		return s.cli.InvokeOneway(ctx, addr, req)
	}
	resp, err := s.cli.Invoke(ctx, addr, req, 0)
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return fmt.Errorf("rocketmq: persist offset %d of %s/%s/%d: %w", off, mq.Topic, mq.BrokerName, mq.QueueID, err)
	}
	return nil
}

// localStore keeps offsets in a file per member (Java
// LocalFileOffsetStore): <dir>/<clientIP>@<instance>/<group>/offsets.json
// in Java's OffsetSerializeWrapper shape, with the previous version kept
// as offsets.json.bak.
type localStore struct {
	memTable
	path   string
	wmu    sync.Mutex // one writer at a time
	unlock func()     // releases offsets.json.lock, taken by load
}

// localStorePath names the file of a member. The instance is the
// configured name or DEFAULT, never the process id, so that a restarted
// member finds its file.
func localStorePath(dir, ip, instance, unit, group string) string {
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".rocketmq_offsets")
	}
	if ip == "" {
		ip = mqclient.LocalIP()
	}
	if instance == "" {
		instance = "DEFAULT"
	}
	return filepath.Join(dir, mqclient.BuildClientID(ip, instance, unit), group, "offsets.json")
}

func newLocalStore(path string) *localStore {
	return &localStore{memTable: memTable{cells: map[rocketmq.MessageQueue]*offsetCell{}}, path: path}
}

// load locks the member's file against a second consumer using it (two
// members of a group on one host without their own instance names would
// overwrite each other's offsets), then reads it, or its .bak when the
// file is missing or unreadable (Java readLocalOffset / readLocalOffsetBak).
func (s *localStore) load() error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("rocketmq: offset directory: %w", err)
	}
	unlock, err := lockFile(s.path + ".lock")
	if errors.Is(err, errLocked) {
		return fmt.Errorf("rocketmq: offset file %s is in use by another consumer; give each member of the group on this host its own WithInstanceName", s.path)
	}
	if err != nil {
		return fmt.Errorf("rocketmq: lock offset file: %w", err)
	}
	s.unlock = unlock
	if err := s.read(); err != nil {
		s.close()
		return err
	}
	return nil
}

func (s *localStore) close() {
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
}

func (s *localStore) read() error {
	t, err := readOffsetFile(s.path)
	if err != nil {
		bt, berr := readOffsetFile(s.path + atomicfile.BackupSuffix)
		if berr != nil {
			if errors.Is(err, os.ErrNotExist) && errors.Is(berr, os.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("rocketmq: offset file %s: %w", s.path, err)
		}
		t = bt
	}
	for mq, off := range t {
		s.update(mq, off, false)
	}
	return nil
}

func readOffsetFile(path string) (map[rocketmq.MessageQueue]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var body remoting.ResetOffsetBody // {"offsetTable":{mq:offset}}
	if err := body.DecodeJSON(b); err != nil {
		return nil, err
	}
	return body.OffsetTable, nil
}

func (s *localStore) readStore(_ context.Context, mq rocketmq.MessageQueue) (int64, error) {
	t, err := readOffsetFile(s.path)
	if err != nil {
		t, err = readOffsetFile(s.path + atomicfile.BackupSuffix)
	}
	if err != nil {
		return -1, errNoOffset
	}
	off, ok := t[mq]
	if !ok {
		return -1, errNoOffset
	}
	s.update(mq, off, false)
	return off, nil
}

// persistAll writes every offset in memory: queues not held now keep
// theirs, so a member that restarts before its routes arrive loses none.
func (s *localStore) persistAll(context.Context, []rocketmq.MessageQueue, bool) error {
	return s.write()
}

func (s *localStore) persist(context.Context, rocketmq.MessageQueue) error { return s.write() }

func (s *localStore) write() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	body := remoting.ResetOffsetBody{OffsetTable: s.snapshot("")}
	data := body.AppendJSON(nil, remoting.JSONFastjson)
	keep := func(old []byte) bool {
		var b remoting.ResetOffsetBody
		return b.DecodeJSON(old) == nil
	}
	if err := atomicfile.WriteKeepingBackup(s.path, data, 0o644, keep); err != nil {
		return fmt.Errorf("rocketmq: persist offsets: %w", err)
	}
	return nil
}

// every calls fn every interval until stop closes.
func every(stop <-chan struct{}, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
		}
	}
}
