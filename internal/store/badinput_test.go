package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// Damaged or unusable store directories: Open either recovers every
// acknowledged message or refuses with an error that names the file,
// leaving the commit log as it was. It never panics.

// badSnapshot is the content of every file under dir/commitlog.
func badSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	ents, _ := os.ReadDir(filepath.Join(dir, "commitlog"))
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, "commitlog", e.Name()))
		fmt.Fprintf(&b, "%s:%x\n", e.Name(), data)
	}
	return b.String()
}

func TestBadInputDamagedStoreRecovers(t *testing.T) {
	cq := func(cfg Config, parts ...string) string {
		return filepath.Join(append([]string{cfg.Dir, "consumequeue"}, parts...)...)
	}
	cases := []struct {
		name  string
		crash bool
		hurt  func(t *testing.T, cfg Config)
	}{
		{"consume queue file 7 bytes too long", false, func(t *testing.T, cfg Config) {
			f, err := os.OpenFile(cq(cfg, "RecB", "1", offsetName(0)), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte{1, 2, 3, 4, 5, 6, 7})
			f.Close()
		}},
		{"consume queue file cut mid-entry after a crash", true, func(t *testing.T, cfg Config) {
			os.Truncate(cq(cfg, "RecA", "0", offsetName(0)), 3*20+9)
		}},
		{"stray entries beside the store files", false, func(t *testing.T, cfg Config) {
			os.WriteFile(filepath.Join(cfg.Dir, "commitlog", "README"), []byte("x"), 0o644)
			os.WriteFile(filepath.Join(cfg.Dir, "commitlog", offsetName(0)+".tmp"), []byte("x"), 0o644)
			os.MkdirAll(cq(cfg, "bad name", "0"), 0o755)
			os.MkdirAll(cq(cfg, "RecA", "-1"), 0o755)
			os.MkdirAll(cq(cfg, "RecA", "queue"), 0o755)
		}},
		{"checkpoint cut short after a crash", true, func(t *testing.T, cfg Config) {
			os.Truncate(filepath.Join(cfg.Dir, "checkpoint"), 3)
		}},
		{"index file cut in half", false, func(t *testing.T, cfg Config) {
			ents, _ := os.ReadDir(filepath.Join(cfg.Dir, "index"))
			for _, e := range ents {
				p := filepath.Join(cfg.Dir, "index", e.Name())
				st, _ := os.Stat(p)
				os.Truncate(p, st.Size()/2)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			s := openStore(t, cfg)
			all := fill(t, s, 90)
			stopStore(s, c.crash)
			c.hurt(t, cfg)
			s2 := openStore(t, cfg)
			checkAll(t, s2, all)
			more := fill(t, s2, 9)
			s2.Close()
			s3 := openStore(t, cfg)
			checkAll(t, s3, append(append([]stored{}, all...), more...))
		})
	}
}

func TestBadInputStoreRefusedWithClearError(t *testing.T) {
	mkdir := func(p string) { os.RemoveAll(p); os.MkdirAll(p, 0o755) }
	toFile := func(p string) { os.RemoveAll(p); os.WriteFile(p, []byte("junk"), 0o644) }
	cases := []struct {
		name    string
		culprit func(cfg Config, s *Store) string
		hurt    func(p string)
		corrupt bool // errors.Is(err, ErrCorrupt)
	}{
		{"directory named as the next commit-log segment", func(cfg Config, s *Store) string {
			next := (s.CommitLogMaxOffset()/cfg.CommitLogSegmentSize + 1) * cfg.CommitLogSegmentSize
			return filepath.Join(cfg.Dir, "commitlog", offsetName(next))
		}, mkdir, true},
		// Consume queues are derived data: once the file is gone they are
		// rebuilt from the commit log.
		{"queue directory replaced by a file", func(cfg Config, _ *Store) string {
			return filepath.Join(cfg.Dir, "consumequeue", "RecC", "0")
		}, toFile, true},
		{"topic directory replaced by a file", func(cfg Config, _ *Store) string {
			return filepath.Join(cfg.Dir, "consumequeue", "RecA")
		}, toFile, true},
		{"checkpoint is a directory", func(cfg Config, _ *Store) string { return filepath.Join(cfg.Dir, "checkpoint") }, mkdir, false},
		{"lock is a directory", func(cfg Config, _ *Store) string { return filepath.Join(cfg.Dir, "lock") }, mkdir, false},
		{"index is a file", func(cfg Config, _ *Store) string { return filepath.Join(cfg.Dir, "index") }, toFile, false},
		{"deleted-topics file half written", func(cfg Config, _ *Store) string { return filepath.Join(cfg.Dir, deletedTopicsFile) }, func(p string) {
			os.WriteFile(p, []byte(`{"RecA":`), 0o644)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.CommitLogSegmentSize = 4096
			s := openStore(t, cfg)
			all := fill(t, s, 40)
			p := c.culprit(cfg, s)
			s.Close()
			c.hurt(p)
			before := badSnapshot(t, cfg.Dir)
			s2, err := Open(cfg)
			if err == nil {
				s2.Close()
				t.Fatal("Open succeeded")
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
			if c.corrupt && !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v is not ErrCorrupt", err)
			}
			if badSnapshot(t, cfg.Dir) != before {
				t.Fatal("a refused open changed the commit log")
			}
			// Once repaired the store opens with everything in it (the
			// failed open released its lock).
			os.RemoveAll(p)
			s3 := openStore(t, cfg)
			checkAll(t, s3, all)
		})
	}
}

// TestBadInputUnwritableStoreDir uses paths that cannot be created whatever
// the user's rights: a chmod'ed directory does not stop root, as CI runs.
func TestBadInputUnwritableStoreDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, dir := range []string{file, filepath.Join(file, "store"), filepath.Join(file, "a", "b")} {
		t.Run(strings.TrimPrefix(dir, root), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Dir = dir
			s, err := Open(cfg)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.HasPrefix(err.Error(), "rocketmq: store") || !strings.Contains(err.Error(), "not a directory") ||
				!strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not say that %s is not a directory", err, file)
			}
		})
	}
	t.Run("read-only", func(t *testing.T) {
		dir := testutil.ReadOnlyDir(t)
		cfg := testConfig(t)
		cfg.Dir = filepath.Join(dir, "store")
		if s, err := Open(cfg); err == nil {
			s.Close()
			t.Fatal("Open succeeded")
		} else if !strings.Contains(err.Error(), cfg.Dir) {
			t.Errorf("error %q does not name %s", err, cfg.Dir)
		}
	})
}
