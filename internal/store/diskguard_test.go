package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// diskDouble stands in for the disk: a used percentage and a switch that
// makes commit-log writes fail with ENOSPC after writing part of them.
type diskDouble struct {
	percent atomic.Uint64
	mu      sync.Mutex
	failing bool
	partial int    // bytes a failing write still writes
	only    string // fail only paths containing this ("" all)
	create  bool   // fail only segment creations (off 0, n = segment size)
	segSize int64
	fails   int
}

func (d *diskDouble) usage(string) (used, total uint64, err error) {
	return d.percent.Load(), 100, nil
}

func (d *diskDouble) fault(path string, off int64, n int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.failing || !strings.Contains(path, d.only) {
		return 0, nil
	}
	if d.create != (off == 0 && int64(n) == d.segSize) {
		return 0, nil
	}
	d.fails++
	return d.partial, syscall.ENOSPC
}

func (d *diskDouble) set(failing bool) {
	d.mu.Lock()
	d.failing = failing
	d.mu.Unlock()
}

func guardConfig(t *testing.T, d *diskDouble) Config {
	cfg := testConfig(t)
	cfg.DiskUsage = d.usage
	cfg.WriteFault = d.fault
	cfg.DiskCheckInterval = 5 * time.Millisecond
	cfg.WriteRetryInterval = 5 * time.Millisecond
	d.segSize = cfg.CommitLogSegmentSize
	d.percent.Store(50)
	return cfg
}

// Above DiskSpaceWarningLevelRatio appends are refused with ErrDiskFull
// while reads go on; they are accepted again once the disk has room.
func TestDiskFullRefusesAppendsUntilSpaceReturns(t *testing.T) {
	d := &diskDouble{}
	cfg := guardConfig(t, d)
	s := openStore(t, cfg)
	all := []stored{put(t, s, msg{topic: "D", body: "before"})}
	if st := s.WriteStatus(); !st.Writable || st.DiskRatio != 0.5 {
		t.Fatalf("WriteStatus at 50%%: %+v", st)
	}

	d.percent.Store(90) // at the ratio: still room (Java compares with >)
	testutil.WaitFor(t, 2*time.Second, "the 90% reading", func() bool { return s.WriteStatus().DiskRatio == 0.9 })
	all = append(all, put(t, s, msg{topic: "D", body: "at-ratio"}))

	d.percent.Store(91)
	testutil.WaitFor(t, 2*time.Second, "the full mark", func() bool { return s.WriteStatus().DiskFull })
	end := s.CommitLogMaxOffset()
	for i := range 3 {
		_, err := s.PutMessage(context.Background(), msg{topic: "D", body: "refused"}.req())
		if !errors.Is(err, ErrDiskFull) || !errors.Is(err, ErrNotWritable) {
			t.Fatalf("put %d on a full disk: %v, want ErrDiskFull", i, err)
		}
	}
	if st := s.WriteStatus(); st.Writable || st.WriteError != "" {
		t.Errorf("WriteStatus on a full disk: %+v", st)
	}
	if got := s.CommitLogMaxOffset(); got != end {
		t.Errorf("refused puts moved the log end from %d to %d", end, got)
	}
	checkAll(t, s, all) // reads keep working

	d.percent.Store(70)
	testutil.WaitFor(t, 2*time.Second, "appends accepted again", func() bool { return s.WriteStatus().Writable })
	all = append(all, put(t, s, msg{topic: "D", body: "after"}))
	checkAll(t, s, all)
}

// A store opened on a full disk refuses appends from the start.
func TestDiskFullAtOpen(t *testing.T) {
	d := &diskDouble{}
	cfg := guardConfig(t, d)
	d.percent.Store(99)
	cfg.DiskCheckInterval = time.Hour
	s := openStore(t, cfg)
	if _, err := s.PutMessage(context.Background(), msg{topic: "D", body: "x"}.req()); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("put on a full disk at open: %v, want ErrDiskFull", err)
	}
}

// A failed commit-log write, whatever part of the record it wrote, is not
// acknowledged, makes the store refuse appends until a retried write
// succeeds, and leaves nothing that recovery keeps: neither after the
// retry nor after a crash or a Close before it.
func TestWriteFailureNeverLeavesATornRecord(t *testing.T) {
	for _, mode := range []FlushMode{FlushAsync, FlushSync} {
		for _, partial := range []int{0, 40, 1 << 20} {
			for _, stop := range []string{"retry", "crash", "close"} {
				name := map[FlushMode]string{FlushAsync: "async", FlushSync: "sync"}[mode]
				t.Run(strings.Join([]string{name, map[int]string{0: "nothing", 40: "header", 1 << 20: "body"}[partial], stop}, "/"), func(t *testing.T) {
					d := &diskDouble{partial: partial, only: "commitlog"}
					cfg := guardConfig(t, d)
					cfg.FlushMode = mode
					s := openStore(t, cfg)
					var all []stored
					for i := range 5 {
						all = append(all, put(t, s, msg{topic: "T", queue: int32(i % 2), body: body(i, 500)}))
					}
					end := s.CommitLogMaxOffset()
					d.set(true)
					if _, err := s.PutMessage(context.Background(), msg{topic: "T", body: body(99, 900)}.req()); !errors.Is(err, ErrIO) {
						t.Fatalf("put on a failing disk: %v, want ErrIO", err)
					}
					st := s.WriteStatus()
					if st.Writable || st.WriteError == "" {
						t.Fatalf("WriteStatus after a failed write: %+v", st)
					}
					// Retries keep failing while the disk does.
					testutil.WaitFor(t, 2*time.Second, "three failed retries", func() bool {
						d.mu.Lock()
						defer d.mu.Unlock()
						return d.fails >= 3
					})
					if _, err := s.PutMessage(context.Background(), msg{topic: "T", body: "refused"}.req()); !errors.Is(err, ErrNotWritable) {
						t.Fatalf("put while refusing: %v, want ErrNotWritable", err)
					}
					if got := s.CommitLogMaxOffset(); got != end {
						t.Fatalf("failed puts moved the log end from %d to %d", end, got)
					}
					checkAll(t, s, all)
					if stop != "retry" {
						halt := s.Crash
						if stop == "close" {
							halt = s.Close
						}
						if err := halt(); err != nil {
							t.Fatal(err)
						}
						d.set(false)
						s = openStore(t, cfg)
						if got := s.CommitLogMaxOffset(); got != end {
							t.Fatalf("recovered log end %d, want %d: a torn record was kept", got, end)
						}
						checkAll(t, s, all)
					} else {
						d.set(false)
						testutil.WaitFor(t, 2*time.Second, "appends accepted after the retry", func() bool { return s.WriteStatus().Writable })
					}
					for i := range 10 {
						all = append(all, put(t, s, msg{topic: "T", queue: int32(i % 2), body: body(100+i, 50)}))
					}
					if all[5].res.PhysicalOffset != end {
						t.Errorf("first put after the failure at %d, want %d", all[5].res.PhysicalOffset, end)
					}
					if err := s.Crash(); err != nil {
						t.Fatal(err)
					}
					s = openStore(t, cfg)
					checkAll(t, s, all)
					if got, want := s.CommitLogMaxOffset(), all[len(all)-1].res.End(); got != want {
						t.Fatalf("recovered log end %d, want %d", got, want)
					}
				})
			}
		}
	}
}

// A segment that cannot be created fails the put that needed it and makes
// the store refuse appends; the retry creates it and appends go on in it.
func TestSegmentCreationFailure(t *testing.T) {
	d := &diskDouble{only: "commitlog", create: true}
	cfg := guardConfig(t, d)
	s := openStore(t, cfg)
	var all []stored
	for i := range 3 {
		all = append(all, put(t, s, msg{topic: "C", body: body(i, 2000)}))
	}
	d.set(true)
	var err error
	for i := 0; err == nil; i++ {
		var res PutResult
		res, err = s.PutMessage(context.Background(), msg{topic: "C", body: body(10+i, 2000)}.req())
		if err == nil {
			all = append(all, stored{msg{topic: "C", body: body(10+i, 2000)}, res})
		}
		if i > 10 {
			t.Fatal("no segment roll within 10 puts")
		}
	}
	if !errors.Is(err, ErrIO) {
		t.Fatalf("put needing a new segment: %v, want ErrIO", err)
	}
	if _, err := s.PutMessage(context.Background(), msg{topic: "C", body: "x"}.req()); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("put after a failed creation: %v, want ErrNotWritable", err)
	}
	segs := len(*s.segs.Load())
	d.set(false)
	testutil.WaitFor(t, 2*time.Second, "the retried creation", func() bool { return s.WriteStatus().Writable })
	if got := len(*s.segs.Load()); got != segs+1 {
		t.Fatalf("%d segments after the retry, want %d", got, segs+1)
	}
	st := put(t, s, msg{topic: "C", body: body(50, 2000)})
	if st.res.PhysicalOffset != cfg.CommitLogSegmentSize*int64(segs) {
		t.Errorf("put after the retry at %d, want the new segment's start %d", st.res.PhysicalOffset, cfg.CommitLogSegmentSize*int64(segs))
	}
	all = append(all, st)
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	checkAll(t, s, all)
}

// A consume-queue file that faults (here: cut behind the store's back, as
// a hole on a full disk would) fails the put before its record is written,
// so nothing unacknowledged is in the log; once the file is back appends
// go on.
func TestQueueFileFaultFailsBeforeTheRecord(t *testing.T) {
	d := &diskDouble{}
	cfg := guardConfig(t, d)
	s := openStore(t, cfg)
	var all []stored
	for i := range 3 {
		all = append(all, put(t, s, msg{topic: "Q", body: body(i, 100)}))
	}
	path := filepath.Join(cfg.Dir, "consumequeue", "Q", "0", offsetName(0))
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	end := s.CommitLogMaxOffset()
	if _, err := s.PutMessage(context.Background(), msg{topic: "Q", body: "faulted"}.req()); !errors.Is(err, ErrIO) {
		t.Fatalf("put into a faulting queue file: %v, want ErrIO", err)
	}
	if got := s.CommitLogMaxOffset(); got != end {
		t.Fatalf("a put failed on its queue file moved the log end from %d to %d", end, got)
	}
	if err := os.WriteFile(path, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 2*time.Second, "appends accepted again", func() bool { return s.WriteStatus().Writable })
	all = append(all, put(t, s, msg{topic: "Q", body: "after"}))
	checkAll(t, s, all)
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, cfg)
	checkAll(t, s, all)
}
