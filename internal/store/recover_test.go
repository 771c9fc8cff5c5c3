package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// fill stores n messages over three topics/queues and returns them.
func fill(t *testing.T, s *Store, n int) []stored {
	t.Helper()
	var all []stored
	for i := range n {
		m := msg{
			topic: []string{"RecA", "RecB", "RecC"}[i%3],
			queue: int32(i % 2),
			body:  body(i, 60+i*13%300),
			tags:  "TagA",
			uniq:  fmt.Sprintf("UNIQ%05d", i),
			keys:  fmt.Sprintf("key%d order%d", i, i/10),
		}
		all = append(all, put(t, s, m))
	}
	return all
}

func TestCleanRestart(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	if _, err := os.Stat(filepath.Join(cfg.Dir, "abort")); err != nil {
		t.Fatalf("abort file missing while open: %v", err)
	}
	all := fill(t, s, 120)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "abort")); !os.IsNotExist(err) {
		t.Fatalf("abort file after clean close: %v", err)
	}
	ck, err := os.ReadFile(filepath.Join(cfg.Dir, "checkpoint"))
	if err != nil || len(ck) != checkpointSize {
		t.Fatalf("checkpoint: %d bytes, %v", len(ck), err)
	}
	last := all[len(all)-1].res.StoreTimestamp
	for i := range 3 {
		if got := int64(binary.BigEndian.Uint64(ck[i*8:])); got != last {
			t.Errorf("checkpoint field %d = %d, want %d", i, got, last)
		}
	}

	s2 := openStore(t, cfg)
	checkAll(t, s2, all)
	// Offsets continue where they stopped.
	next := put(t, s2, msg{topic: "RecA", queue: 0, body: "after restart"})
	if want := s2.MaxOffset("RecA", 0) - 1; next.res.QueueOffset != want || want != 20 {
		t.Fatalf("queue offset after restart %d, want 20", next.res.QueueOffset)
	}
	if next.res.PhysicalOffset != all[len(all)-1].res.PhysicalOffset+int64(all[len(all)-1].res.WroteBytes) &&
		next.res.PhysicalOffset%cfg.CommitLogSegmentSize != 0 {
		t.Fatalf("physical offset after restart %d", next.res.PhysicalOffset)
	}
	checkQuery(t, s2, all)
}

func TestCrashRecovery(t *testing.T) {
	for _, mode := range []FlushMode{FlushAsync, FlushSync} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.FlushMode = mode
			cfg.CheckpointInterval = time.Hour // recovery has no recent checkpoint to lean on
			s := openStore(t, cfg)
			all := fill(t, s, 150)
			if err := s.Crash(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(cfg.Dir, "abort")); err != nil {
				t.Fatalf("abort file gone after crash: %v", err)
			}
			s2 := openStore(t, cfg)
			checkAll(t, s2, all)
			checkQuery(t, s2, all)
			more := put(t, s2, msg{topic: "RecB", queue: 1, body: "more"})
			if more.res.QueueOffset != 25 {
				t.Fatalf("queue offset after recovery %d, want 25", more.res.QueueOffset)
			}
		})
	}
}

// After a crash with a recent checkpoint, recovery starts at a late segment
// and still finds everything.
func TestCrashRecoveryFromCheckpoint(t *testing.T) {
	cfg := testConfig(t)
	var now int64 = 1_700_000_000_000
	cfg.Clock = func() time.Time { return time.UnixMilli(now) }
	s := openStore(t, cfg)
	var all []stored
	for i := range 100 {
		if i == 90 {
			// Force a checkpoint covering the first 90 messages.
			s.mu.Lock()
			snap := s.snapshotLocked()
			s.mu.Unlock()
			if err := s.persist(snap); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		now += 1000
		s.mu.Unlock()
		all = append(all, fill1(t, s, i))
	}
	segs := len(*s.segs.Load())
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	// Reopen without starting anything to see where recovery would start.
	s2 := openStore(t, cfg)
	ck, _ := readCheckpoint(s2.ckptFile)
	if got := s2.checkpointSegment(ck); got == 0 || got >= segs {
		t.Fatalf("recovery starts at segment %d of %d, want a late one", got, segs)
	}
	checkAll(t, s2, all)
}

func fill1(t *testing.T, s *Store, i int) stored {
	return put(t, s, msg{topic: "Ck", queue: int32(i % 4), body: body(i, 200), uniq: fmt.Sprintf("U%d", i)})
}

func lastSegmentPath(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "commitlog"))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, e := range ents {
		if _, ok := parseOffsetName(e.Name()); ok {
			last = e.Name()
		}
	}
	return filepath.Join(dir, "commitlog", last)
}

func TestTornTail(t *testing.T) {
	type damage func(t *testing.T, cfg Config, all []stored) (lost int)
	endOf := func(st stored) int64 { return st.res.PhysicalOffset + int64(st.res.WroteBytes) }
	cases := []struct {
		name  string
		crash bool
		hurt  damage
	}{
		{"garbage after the last record (clean close)", false, func(t *testing.T, cfg Config, all []stored) int {
			f, _ := os.OpenFile(lastSegmentPath(t, cfg.Dir), os.O_WRONLY, 0)
			defer f.Close()
			end := endOf(all[len(all)-1]) % cfg.CommitLogSegmentSize
			f.WriteAt(bytes.Repeat([]byte{0xA5}, 100), end)
			return 0
		}},
		{"garbage appended past the file size", false, func(t *testing.T, cfg Config, all []stored) int {
			f, _ := os.OpenFile(lastSegmentPath(t, cfg.Dir), os.O_WRONLY|os.O_APPEND, 0)
			defer f.Close()
			f.Write(bytes.Repeat([]byte{0x5A}, 333))
			return 0
		}},
		{"file cut in the middle of the last record", true, func(t *testing.T, cfg Config, all []stored) int {
			last := all[len(all)-1]
			cut := last.res.PhysicalOffset%cfg.CommitLogSegmentSize + int64(last.res.WroteBytes)/2
			if err := os.Truncate(lastSegmentPath(t, cfg.Dir), cut); err != nil {
				t.Fatal(err)
			}
			return 1
		}},
		{"corrupt body of the last record", true, func(t *testing.T, cfg Config, all []stored) int {
			last := all[len(all)-1]
			f, _ := os.OpenFile(lastSegmentPath(t, cfg.Dir), os.O_WRONLY, 0)
			defer f.Close()
			f.WriteAt([]byte("!"), last.res.PhysicalOffset%cfg.CommitLogSegmentSize+84+4+5) // inside the body
			return 1
		}},
		{"half-written size field", true, func(t *testing.T, cfg Config, all []stored) int {
			last := all[len(all)-1]
			f, _ := os.OpenFile(lastSegmentPath(t, cfg.Dir), os.O_WRONLY, 0)
			defer f.Close()
			f.WriteAt([]byte{0, 0}, last.res.PhysicalOffset%cfg.CommitLogSegmentSize+2)
			return 1
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.CommitLogSegmentSize = 64 << 10
			s := openStore(t, cfg)
			all := fill(t, s, 60)
			stopStore(s, c.crash)
			lost := c.hurt(t, cfg, all)
			kept := all[:len(all)-lost]
			s2 := openStore(t, cfg)
			checkAll(t, s2, kept)
			if got, want := s2.CommitLogMaxOffset(), endOf(kept[len(kept)-1]); got != want {
				t.Fatalf("commit log ends at %d, want %d", got, want)
			}
			raw, _ := os.ReadFile(lastSegmentPath(t, cfg.Dir))
			if int64(len(raw)) != cfg.CommitLogSegmentSize {
				t.Fatalf("segment has %d bytes after recovery", len(raw))
			}
			if !allZero(raw[endOf(kept[len(kept)-1]):]) {
				t.Fatal("damaged tail not cleared")
			}
			// The store keeps working and survives another restart.
			more := fill(t, s2, 10)
			s2.Close()
			s3 := openStore(t, cfg)
			checkAll(t, s3, append(append([]stored{}, kept...), more...))
		})
	}
}

func TestConsumeQueueRebuild(t *testing.T) {
	cqDir := func(cfg Config) string { return filepath.Join(cfg.Dir, "consumequeue", "RecB", "1") }
	cases := []struct {
		name  string
		crash bool
		hurt  func(t *testing.T, cfg Config)
	}{
		{"queue directory deleted", false, func(t *testing.T, cfg Config) {
			os.RemoveAll(cqDir(cfg))
		}},
		{"topic directory deleted after crash", true, func(t *testing.T, cfg Config) {
			os.RemoveAll(filepath.Join(cfg.Dir, "consumequeue", "RecB"))
		}},
		{"all consume queues deleted", false, func(t *testing.T, cfg Config) {
			os.RemoveAll(filepath.Join(cfg.Dir, "consumequeue"))
			os.Mkdir(filepath.Join(cfg.Dir, "consumequeue"), 0o755)
		}},
		{"garbage queue file", false, func(t *testing.T, cfg Config) {
			junk := make([]byte, 16*20)
			rand.New(rand.NewSource(1)).Read(junk)
			os.WriteFile(filepath.Join(cqDir(cfg), "00000000000000000000"), junk, 0o644)
		}},
		{"queue file cut short", false, func(t *testing.T, cfg Config) {
			os.Truncate(filepath.Join(cqDir(cfg), "00000000000000000000"), 50)
		}},
		{"lost queue tail after crash", true, func(t *testing.T, cfg Config) {
			p := filepath.Join(cqDir(cfg), "00000000000000000640")
			raw, _ := os.ReadFile(p)
			clear(raw[4*20:])
			os.WriteFile(p, raw, 0o644)
		}},
		{"middle queue file missing", false, func(t *testing.T, cfg Config) {
			os.Remove(filepath.Join(cqDir(cfg), "00000000000000000320"))
		}},
		{"entries pointing to the wrong records", false, func(t *testing.T, cfg Config) {
			p := filepath.Join(cqDir(cfg), "00000000000000000320")
			raw, _ := os.ReadFile(p)
			copy(raw[2*20:], raw[0:20]) // entry 18 := entry 16
			os.WriteFile(p, raw, 0o644)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			s := openStore(t, cfg)
			all := fill(t, s, 6*40) // RecB/1 gets 40 entries: files 0, 320, 640 (16 entries each)
			stopStore(s, c.crash)
			c.hurt(t, cfg)
			s2 := openStore(t, cfg)
			checkAll(t, s2, all)
			s2.Close()
			s3 := openStore(t, cfg)
			checkAll(t, s3, all)
		})
	}
}

func TestIndexRebuiltAfterLoss(t *testing.T) {
	cfg := testConfig(t)
	s := openStore(t, cfg)
	all := fill(t, s, 30)
	s.Crash()
	os.RemoveAll(filepath.Join(cfg.Dir, "index"))
	s2 := openStore(t, cfg)
	checkQuery(t, s2, all)
}

func TestOpenDamagedStore(t *testing.T) {
	t.Run("dir is a file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "file")
		os.WriteFile(p, []byte("x"), 0o644)
		if _, err := Open(Config{Dir: p}); err == nil {
			t.Fatal("Open succeeded")
		}
	})
	t.Run("read-only dir", func(t *testing.T) {
		dir := testutil.ReadOnlyDir(t)
		if _, err := Open(Config{Dir: filepath.Join(dir, "store")}); err == nil {
			t.Fatal("Open succeeded")
		}
	})
	t.Run("commitlog is a file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "commitlog"), []byte("x"), 0o644)
		if _, err := Open(Config{Dir: dir}); err == nil {
			t.Fatal("Open succeeded")
		}
	})
	damaged := func(t *testing.T, hurt func(cfg Config)) {
		cfg := testConfig(t)
		cfg.CommitLogSegmentSize = 4096
		s := openStore(t, cfg)
		fill(t, s, 40)
		s.Close()
		hurt(cfg)
		before := snapshotDir(t, filepath.Join(cfg.Dir, "commitlog"))
		if _, err := Open(cfg); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v, want ErrCorrupt", err)
		}
		after := snapshotDir(t, filepath.Join(cfg.Dir, "commitlog"))
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatal("a refused open changed the commit log")
		}
		// The failed open released the lock.
		if _, err := Open(cfg); errors.Is(err, ErrLocked) {
			t.Fatal("lock kept after a failed open")
		}
	}
	t.Run("middle segment cut", func(t *testing.T) {
		damaged(t, func(cfg Config) { os.Truncate(filepath.Join(cfg.Dir, "commitlog", offsetName(4096)), 1000) })
	})
	t.Run("middle segment missing", func(t *testing.T) {
		damaged(t, func(cfg Config) { os.Remove(filepath.Join(cfg.Dir, "commitlog", offsetName(4096))) })
	})
	t.Run("segment size changed", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.CommitLogSegmentSize = 4096
		s := openStore(t, cfg)
		fill(t, s, 40)
		s.Close()
		cfg.CommitLogSegmentSize = 8192
		if _, err := Open(cfg); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v, want ErrCorrupt", err)
		}
	})
	t.Run("garbage checkpoint and deleted-topics files", func(t *testing.T) {
		cfg := testConfig(t)
		s := openStore(t, cfg)
		all := fill(t, s, 20)
		s.Crash()
		os.WriteFile(filepath.Join(cfg.Dir, "checkpoint"), []byte("garbage"), 0o644)
		s2 := openStore(t, cfg)
		checkAll(t, s2, all)
		s2.Close()
		os.WriteFile(filepath.Join(cfg.Dir, deletedTopicsFile), []byte("{broken"), 0o644)
		if _, err := Open(cfg); err == nil {
			t.Fatal("Open accepted a corrupt deleted-topics file")
		}
	})
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = fmt.Sprintf("%x", b)
	}
	return out
}
