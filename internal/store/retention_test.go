package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// fakeClock is an injectable Config.Clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeDisk is an injectable Config.DiskUsage reading percent used.
type fakeDisk struct{ pct atomic.Int64 }

func (d *fakeDisk) usage(string) (used, total uint64, err error) {
	return uint64(d.pct.Load()), 100, nil
}

// day is a local date; hours are set on it so DeleteWhen matches.
func at(hour, minute int) time.Time {
	return time.Date(2026, 3, 10, hour, minute, 0, 0, time.Local)
}

type retentionEnv struct {
	s     *Store
	cfg   Config
	clock *fakeClock
	disk  *fakeDisk
	all   []stored
}

// newRetentionEnv stores n messages of ~500 bytes over two queues at 01:00
// (8 KiB segments: about 14 messages each).
func newRetentionEnv(t *testing.T, n int) *retentionEnv {
	t.Helper()
	e := &retentionEnv{clock: &fakeClock{t: at(1, 0)}, disk: &fakeDisk{}}
	e.disk.pct.Store(30)
	cfg := testConfig(t)
	cfg.FlushMode = FlushSync // every put synced: files are deletable at once
	cfg.Clock = e.clock.Now
	cfg.DiskUsage = e.disk.usage
	cfg.FileReservedTime = time.Hour
	cfg.DeleteWhen = "04"
	cfg.DeleteCommitLogFilesInterval = -1
	e.cfg = cfg
	e.s = openStore(t, cfg)
	for i := range n {
		e.all = append(e.all, put(t, e.s, msg{topic: "T", queue: int32(i % 2), body: body(i, 500), uniq: fmt.Sprintf("U%d", i)}))
	}
	return e
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "commitlog"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range ents {
		out = append(out, de.Name())
	}
	return out
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// kept are the messages at or above the commit log's minimum.
func (e *retentionEnv) kept() []stored {
	clMin := e.s.CommitLogMinOffset()
	var out []stored
	for _, st := range e.all {
		if st.res.PhysicalOffset >= clMin {
			out = append(out, st)
		}
	}
	return out
}

// checkAfterDeletion verifies min offsets, OFFSET_TOO_SMALL below them and
// every kept message byte for byte.
func (e *retentionEnv) checkAfterDeletion(t *testing.T) {
	t.Helper()
	kept := e.kept()
	for q := int32(0); q < 2; q++ {
		want := int64(-1)
		for _, st := range kept {
			if st.m.queue == q {
				want = st.res.QueueOffset
				break
			}
		}
		if want < 0 {
			want = e.s.MaxOffset("T", q)
		}
		if got := e.s.MinOffset("T", q); got != want {
			t.Fatalf("MinOffset(T/%d) = %d, want %d", q, got, want)
		}
		if want > 0 {
			res, err := e.s.GetMessages(nil, &GetRequest{Topic: "T", QueueID: q, Offset: 0})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != GetOffsetTooSmall || res.NextBeginOffset != want || res.MinOffset != want {
				t.Fatalf("GetMessages(T/%d@0) = %v next %d min %d; want OFFSET_TOO_SMALL next %d",
					q, res.Status, res.NextBeginOffset, res.MinOffset, want)
			}
		}
	}
	checkAll(t, e.s, kept)
	for _, st := range e.all {
		_, err := e.s.MessageAt(st.res.PhysicalOffset)
		if st.res.PhysicalOffset < e.s.CommitLogMinOffset() && !errors.Is(err, ErrNotFound) {
			t.Fatalf("MessageAt(%d) below the minimum: %v, want ErrNotFound", st.res.PhysicalOffset, err)
		}
	}
}

func TestRetentionByTime(t *testing.T) {
	tests := []struct {
		name       string
		deleteWhen string
		now        time.Time
		reserve    time.Duration
		deletes    bool
	}{
		{"not the hour", "04", at(10, 0), time.Hour, false},
		{"the hour", "04", at(4, 30), time.Hour, true},
		{"second of two hours", "01;04", at(4, 0), time.Hour, true},
		{"the hour but young", "04", at(4, 30), 4 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRetentionEnv(t, 84)
			before := segFiles(t, e.cfg.Dir)
			if len(before) < 4 || len(before) > 10 {
				t.Fatalf("setup: %d segments", len(before))
			}
			wantFiles := 0
			if tt.deletes {
				wantFiles = len(before) - 1
			}
			e.s.deleteHours, _ = parseDeleteWhen(tt.deleteWhen)
			e.s.cfg.FileReservedTime = tt.reserve
			e.clock.Set(tt.now)
			res := e.s.Clean()
			if res.CommitLogFiles != wantFiles {
				t.Fatalf("Clean deleted %d commit-log files, want %d", res.CommitLogFiles, wantFiles)
			}
			after := segFiles(t, e.cfg.Dir)
			if len(after) != len(before)-wantFiles {
				t.Fatalf("commit-log files %v after deleting %d of %v", after, wantFiles, before)
			}
			if wantFiles > 0 {
				if after[0] != before[len(before)-1] {
					t.Fatalf("kept %v, want only the file being written %s", after, before[len(before)-1])
				}
				if res.QueueFiles == 0 || res.IndexFiles == 0 {
					t.Fatalf("Clean = %+v: no consume-queue or index file deleted", res)
				}
			}
			e.checkAfterDeletion(t)
		})
	}
}

func TestRetentionDiskPressure(t *testing.T) {
	tests := []struct {
		name      string
		pct       int64
		now       time.Time
		wantFiles int // a batch is at most deleteFileBatchMax
	}{
		{"below the ratio", 70, at(10, 0), 0},
		{"above the ratio, expired", 80, at(10, 0), deleteFileBatchMax},
		{"above the ratio, young", 80, at(1, 30), 0},
		{"above the forcible ratio, young", 90, at(1, 30), deleteFileBatchMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRetentionEnv(t, 14*14) // more segments than one pass takes
			e.disk.pct.Store(tt.pct)
			e.clock.Set(tt.now)
			n := len(segFiles(t, e.cfg.Dir))
			res := e.s.Clean()
			if res.CommitLogFiles != tt.wantFiles {
				t.Fatalf("Clean deleted %d commit-log files, want %d", res.CommitLogFiles, tt.wantFiles)
			}
			e.checkAfterDeletion(t)
			if tt.wantFiles == 0 {
				return
			}
			// The next pass goes on, never deleting the file being written.
			res = e.s.Clean()
			if got := len(segFiles(t, e.cfg.Dir)); got != 1 || res.CommitLogFiles != n-1-tt.wantFiles {
				t.Fatalf("second pass deleted %d, %d files left; want %d and 1", res.CommitLogFiles, got, n-1-tt.wantFiles)
			}
			e.checkAfterDeletion(t)
		})
	}
}

func TestRetentionReaderPinsSegment(t *testing.T) {
	for _, forced := range []bool{false, true} {
		t.Run(fmt.Sprintf("forced=%v", forced), func(t *testing.T) {
			e := newRetentionEnv(t, 28) // 2 full segments and one being written
			first := filepath.Join(e.cfg.Dir, "commitlog", segFiles(t, e.cfg.Dir)[0])
			var reader segHold
			if rec := e.s.recordAtPhys(&reader, 0); rec == nil {
				t.Fatal("no record at 0")
			}
			e.clock.Set(at(4, 0))
			res := e.s.Clean()
			if res.CommitLogFiles != 2 || res.Pending != 1 {
				t.Fatalf("Clean = %+v, want 2 files, 1 pending", res)
			}
			if _, err := os.Stat(first); err != nil {
				t.Fatalf("pinned file gone before its reader released it: %v", err)
			}
			if _, err := e.s.MessageAt(0); !errors.Is(err, ErrNotFound) {
				t.Fatalf("MessageAt(0) of a deleted file: %v, want ErrNotFound", err)
			}
			if forced {
				e.clock.Add(e.s.cfg.DestroyMappedFileIntervalForcibly - time.Second)
				if res := e.s.Clean(); res.Pending != 1 {
					t.Fatalf("pending %d before the forcible interval, want 1", res.Pending)
				}
				e.clock.Add(time.Second)
			} else {
				reader.release()
			}
			if res := e.s.Clean(); res.Pending != 0 {
				t.Fatalf("pending %d, want 0", res.Pending)
			}
			if _, err := os.Stat(first); !os.IsNotExist(err) {
				t.Fatalf("released file still there: %v", err)
			}
			if forced {
				reader.release()
			}
		})
	}
}

func TestRetentionLoopDestroysOnRelease(t *testing.T) {
	e := newRetentionEnv(t, 28)
	e.s.Close()
	e.cfg.CleanResourceInterval = time.Hour // only the release wakes it
	s := openStore(t, e.cfg)
	first := filepath.Join(e.cfg.Dir, "commitlog", segFiles(t, e.cfg.Dir)[0])
	var reader segHold
	if s.recordAtPhys(&reader, 0) == nil {
		t.Fatal("no record at 0")
	}
	e.clock.Set(at(4, 0))
	if res := s.Clean(); res.Pending != 1 {
		t.Fatalf("Clean = %+v, want 1 pending", res)
	}
	reader.release()
	testutil.WaitFor(t, 5*time.Second, "the released file deleted", func() bool {
		_, err := os.Stat(first)
		return os.IsNotExist(err)
	})
}

func TestRetentionRestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			e := newRetentionEnv(t, 84)
			e.clock.Set(at(4, 0))
			if res := e.s.Clean(); res.CommitLogFiles == 0 {
				t.Fatalf("Clean = %+v, want files deleted", res)
			}
			mins := []int64{e.s.MinOffset("T", 0), e.s.MinOffset("T", 1)}
			clMin := e.s.CommitLogMinOffset()
			files := countFiles(t, e.cfg.Dir)
			stopStore(e.s, crash)
			e.s = openStore(t, e.cfg)
			if got := e.s.CommitLogMinOffset(); got != clMin {
				t.Fatalf("CommitLogMinOffset after restart = %d, want %d", got, clMin)
			}
			for q, want := range mins {
				if got := e.s.MinOffset("T", int32(q)); got != want {
					t.Fatalf("MinOffset(T/%d) after restart = %d, want %d", q, got, want)
				}
			}
			if got := countFiles(t, e.cfg.Dir); got > files+1 {
				t.Fatalf("%d files after restart, %d before: the queues were rebuilt", got, files)
			}
			e.checkAfterDeletion(t)
			st := put(t, e.s, msg{topic: "T", queue: 0, body: "after"})
			if want := e.all[len(e.all)-2].res.QueueOffset + 1; st.res.QueueOffset != want {
				t.Fatalf("queue offset after restart %d, want %d", st.res.QueueOffset, want)
			}
		})
	}
}

func TestRetentionQueryByKey(t *testing.T) {
	e := newRetentionEnv(t, 84)
	e.clock.Set(at(4, 0))
	e.s.Clean()
	clMin := e.s.CommitLogMinOffset()
	for i, st := range e.all {
		res, err := e.s.QueryByKey("T", fmt.Sprintf("U%d", i), 4, 0, 1<<62)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if st.res.PhysicalOffset >= clMin {
			want = 1
		}
		if res.Messages != want {
			t.Fatalf("QueryByKey(U%d) found %d, want %d", i, res.Messages, want)
		}
	}
}

func TestParseDeleteWhen(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"04", []int{4}, false},
		{"01;04", []int{1, 4}, false},
		{" 1 ; 23 ;", []int{1, 23}, false},
		{"24", nil, true},
		{"x", nil, true},
	}
	for _, tt := range tests {
		got, err := parseDeleteWhen(tt.in)
		if (err != nil) != tt.wantErr || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("parseDeleteWhen(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
