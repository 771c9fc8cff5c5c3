package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// 64 concurrent synchronous puts all succeed and share few device syncs.
func TestSyncFlushGroupCommit(t *testing.T) {
	for _, held := range []bool{true, false} {
		t.Run(fmt.Sprint("held=", held), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.CommitLogSegmentSize = 1 << 20
			cfg.FlushMode = FlushSync
			cfg.FlushInterval = time.Hour // only waiters trigger syncs
			cfg.CheckpointInterval = time.Hour
			s := openStore(t, cfg)
			before := s.Stats().CommitLogSyncs
			const n = 64
			if held {
				// Deterministic: the device is "busy" until all 64 wait.
				s.syncMu.Lock()
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					res, err := s.PutMessage(context.Background(), msg{topic: "Sync", queue: int32(i % 4), body: body(i, 1024)}.req())
					switch {
					case err != nil:
						errs <- err
					case res.Status != PutOK:
						errs <- fmt.Errorf("status %v", res.Status)
					case s.flushed.Load() < res.PhysicalOffset+int64(res.WroteBytes):
						errs <- fmt.Errorf("returned before its sync: flushed %d < %d", s.flushed.Load(), res.PhysicalOffset+int64(res.WroteBytes))
					}
				}()
			}
			close(start)
			if held {
				testutil.WaitFor(t, 0, "64 appends", func() bool {
					total := int64(0)
					for q := range int32(4) {
						total += s.MaxOffset("Sync", q)
					}
					return total == n
				})
				s.syncMu.Unlock()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			syncs := s.Stats().CommitLogSyncs - before
			t.Logf("%d synchronous puts used %d syncs", n, syncs)
			limit := int64(n - 1) // free running: at least some sharing
			if held {
				limit = 3 // one stale round at most, then one for everyone
			}
			if syncs < 1 || syncs > limit {
				t.Fatalf("%d syncs for %d concurrent puts", syncs, n)
			}
		})
	}
}

func TestSyncFlushStatus(t *testing.T) {
	cfg := testConfig(t)
	cfg.FlushMode = FlushSync
	cfg.FlushInterval = time.Hour
	s := openStore(t, cfg)
	t.Run("no wait", func(t *testing.T) {
		r := msg{topic: "S", body: "x"}.req()
		r.WaitFlush = false
		res, err := s.PutMessage(context.Background(), r)
		if err != nil || res.Status != PutOK {
			t.Fatalf("%v %v", res.Status, err)
		}
		// The flusher is still woken and syncs soon.
		testutil.WaitFor(t, 0, "background sync", func() bool { return s.flushed.Load() >= res.PhysicalOffset+int64(res.WroteBytes) })
	})
	t.Run("ctx done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Hold the sync lock so the flusher cannot finish first.
		s.syncMu.Lock()
		res, err := s.PutMessage(ctx, msg{topic: "S", body: "y"}.req())
		s.syncMu.Unlock()
		if err != nil || res.Status != PutFlushDiskTimeout {
			t.Fatalf("%v %v", res.Status, err)
		}
		// Stored anyway.
		if _, err := s.MessageAt(res.PhysicalOffset); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		s.cfg.SyncFlushTimeout = 20 * time.Millisecond
		defer func() { s.cfg.SyncFlushTimeout = 5 * time.Second }()
		s.syncMu.Lock()
		res, err := s.PutMessage(context.Background(), msg{topic: "S", body: "z"}.req())
		s.syncMu.Unlock()
		if err != nil || res.Status != PutFlushDiskTimeout {
			t.Fatalf("%v %v", res.Status, err)
		}
	})
}

func TestAsyncFlushInBackground(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	before := s.Stats()
	res := put(t, s, msg{topic: "A", body: "x"})
	testutil.WaitFor(t, 0, "background sync", func() bool { return s.flushed.Load() >= res.res.PhysicalOffset+int64(res.res.WroteBytes) })
	testutil.WaitFor(t, 0, "checkpoint", func() bool { return s.Stats().Checkpoints > before.Checkpoints })
	ck, err := readCheckpoint(s.ckptFile)
	if err != nil || ck.physicMsgTimestamp != res.res.StoreTimestamp {
		t.Fatalf("checkpoint %+v %v, want %d", ck, err, res.res.StoreTimestamp)
	}
}

func TestConcurrentPutGet(t *testing.T) {
	cfg := testConfig(t)
	cfg.CommitLogSegmentSize = 16 << 10
	s := openStore(t, cfg)
	const writers, each = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.PutMessage(context.Background(), msg{topic: "CC", queue: int32(w), body: body(i, 100+i%200)}.req()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// Readers follow the queues while they grow.
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var off int64
			deadline := time.Now().Add(20 * time.Second)
			for off < each && time.Now().Before(deadline) {
				res, err := s.GetMessages(nil, &GetRequest{Topic: "CC", QueueID: int32(r), Offset: off})
				if err != nil {
					errs <- err
					return
				}
				for b := res.Data; len(b) > 0; {
					h, err := parseRecord(b, true)
					if err != nil || h.QueueOffset != off {
						errs <- fmt.Errorf("reader %d at %d: %v (offset %d)", r, off, err, h.QueueOffset)
						return
					}
					b = b[h.Size:]
					off++
				}
				if res.Status != GetFound {
					time.Sleep(time.Millisecond)
				}
			}
			if off != each {
				errs <- fmt.Errorf("reader %d stopped at %d", r, off)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConfigFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	path := filepath.Join(dir, "topics.json")
	t.Run("missing", func(t *testing.T) {
		if _, err := ReadConfigFile(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v", err)
		}
	})
	v1 := []byte("{\n\t\"offsetTable\":{\n\t\t\"T@g\":{0:12,1:7}\n\t}\n}")
	v2 := []byte(`{"offsetTable":{"T@g":{"0":13}}}`)
	t.Run("write and read", func(t *testing.T) {
		if err := WriteConfigFile(path, v1); err != nil {
			t.Fatal(err)
		}
		got, err := ReadConfigFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "v1", got, v1)
		if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
			t.Fatal("a .bak without a previous version")
		}
	})
	t.Run("replace keeps bak", func(t *testing.T) {
		if err := WriteConfigFile(path, v2); err != nil {
			t.Fatal(err)
		}
		got, _ := ReadConfigFile(path)
		sameBytes(t, "v2", got, v2)
		bak, _ := os.ReadFile(path + ".bak")
		sameBytes(t, "bak", bak, v1)
		if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
			t.Fatal("temp file left behind")
		}
	})
	cases := []struct {
		name string
		main []byte
	}{
		{"empty", []byte{}},
		{"truncated", v2[:10]},
		{"trailing garbage", append(append([]byte{}, v2...), "xx"...)},
		{"not json", []byte("hello")},
	}
	for _, c := range cases {
		t.Run("corrupt main: "+c.name, func(t *testing.T) {
			os.WriteFile(path, c.main, 0o644)
			got, err := ReadConfigFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, "fallback", got, v1)
		})
	}
	t.Run("corrupt main is not rotated into bak", func(t *testing.T) {
		os.WriteFile(path, []byte("{broken"), 0o644)
		if err := WriteConfigFile(path, v2); err != nil {
			t.Fatal(err)
		}
		bak, _ := os.ReadFile(path + ".bak")
		sameBytes(t, "bak", bak, v1)
	})
	t.Run("main missing", func(t *testing.T) {
		os.Remove(path)
		got, err := ReadConfigFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "bak", got, v1)
	})
	t.Run("both corrupt", func(t *testing.T) {
		os.WriteFile(path, []byte("x"), 0o644)
		os.WriteFile(path+".bak", []byte("{"), 0o644)
		if _, err := ReadConfigFile(path); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("got %v", err)
		}
	})
}

// The prefaulter (both the madvise and the fallback path) never changes
// bytes, even while appends race with it.
func TestPrefaultKeepsData(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprint("fallback=", fallback), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.CommitLogSegmentSize = 256 << 10
			cfg.PrefaultBytes = 64 << 10
			s := openStore(t, cfg)
			s.noPopulate.Store(fallback)
			var all []stored
			for i := range 600 {
				all = append(all, put(t, s, msg{topic: "P", queue: int32(i % 3), body: body(i, 100+i%900)}))
			}
			testutil.WaitFor(t, 0, "prefault", func() bool { return s.prefaulted.Load() >= s.end.Load()+cfg.PrefaultBytes/2 })
			checkAll(t, s, all)
			seg := (*s.segs.Load())[len(*s.segs.Load())-1]
			if !allZero(seg.data[s.end.Load()-seg.start:]) {
				t.Fatal("prefaulted pages are not zero")
			}
		})
	}
}

// In FlushSync mode records are written with pwrite: they are readable
// through the mapping, survive a reopen, and a failed write stops appends
// (ErrIO, then ErrNotWritable) until a retried write succeeds, instead of
// leaving a half-written log to be appended to.
func TestSyncModeWritesThroughTheFile(t *testing.T) {
	cfg := testConfig(t)
	cfg.FlushMode = FlushSync
	cfg.WriteRetryInterval = 5 * time.Millisecond
	s := openStore(t, cfg)
	var all []stored
	for i := range 40 { // several 8 KiB segments
		all = append(all, put(t, s, msg{topic: "W", queue: int32(i % 2), body: body(i, 300+i*7), uniq: fmt.Sprint("U", i)}))
	}
	checkAll(t, s, all)
	if s.prefaulted.Load() != 0 {
		t.Errorf("prefaulted up to %d in FlushSync mode", s.prefaulted.Load())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	checkAll(t, s, all)

	// A descriptor that cannot write stands in for a failing device.
	s.mu.Lock()
	seg := (*s.segs.Load())[len(*s.segs.Load())-1]
	ro, err := os.Open(seg.path)
	if err != nil {
		s.mu.Unlock()
		t.Fatal(err)
	}
	rw := seg.f
	seg.f = ro
	s.mu.Unlock()
	end := s.end.Load()
	for i, want := range []error{ErrIO, ErrNotWritable} {
		if _, err := s.PutMessage(context.Background(), msg{topic: "W", body: "lost"}.req()); !errors.Is(err, want) {
			t.Fatalf("put %d after a failed write: %v, want %v", i, err, want)
		}
	}
	if got := s.end.Load(); got != end {
		t.Errorf("log end moved from %d to %d by failed appends", end, got)
	}
	s.mu.Lock()
	seg.f = rw
	s.mu.Unlock()
	ro.Close()
	testutil.WaitFor(t, 5*time.Second, "appends accepted after a retried write", func() bool { return s.WriteStatus().Writable })
	all = append(all, put(t, s, msg{topic: "W", body: "after"}))
	checkAll(t, s, all)
}
