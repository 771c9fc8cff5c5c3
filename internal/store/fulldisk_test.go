package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func modeName(m FlushMode) string {
	return map[FlushMode]string{FlushAsync: "async", FlushSync: "sync"}[m]
}

// fillUntilRefused runs writers goroutines, each putting to its own queue
// of topic until a put is refused, and returns what was acknowledged. A
// refusal must be ErrDiskFull; any other error fails the test.
func fillUntilRefused(t *testing.T, s *Store, topic string, writers, size int) []stored {
	t.Helper()
	var (
		mu    sync.Mutex
		acked []stored
		wg    sync.WaitGroup
	)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				m := msg{topic: topic, queue: int32(w), body: body(i, size), uniq: fmt.Sprintf("u-%d-%d", w, i)}
				res, err := s.PutMessage(context.Background(), m.req())
				if err != nil {
					if !errors.Is(err, ErrDiskFull) || !errors.Is(err, ErrNotWritable) {
						errs <- fmt.Errorf("writer %d put %d: %v, want ErrDiskFull", w, i, err)
					}
					return
				}
				if res.Status != PutOK {
					errs <- fmt.Errorf("writer %d put %d: status %v", w, i, res.Status)
					return
				}
				mu.Lock()
				acked = append(acked, stored{m: m, res: res})
				mu.Unlock()
				if i > 1<<20 {
					errs <- fmt.Errorf("writer %d: %d puts and the disk is not full", w, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	return acked
}

// A real file system filled by concurrent writers: the store never faults
// (a SIGBUS would kill the test binary), refuses with ErrDiskFull, keeps
// every acknowledged message, opens again on the still-full file system,
// serves reads, refuses appends, and accepts them again once there is room.
// Only the file system's ENOSPC refuses here: the ratio check is off.
func TestFullFileSystem(t *testing.T) {
	for _, mode := range []FlushMode{FlushAsync, FlushSync} {
		t.Run(modeName(mode), func(t *testing.T) {
			fs := testutil.SmallFS(t, 4<<20)
			ballast := filepath.Join(fs, "ballast")
			if err := os.WriteFile(ballast, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(t)
			cfg.Dir = filepath.Join(fs, "store")
			cfg.CommitLogSegmentSize = 1 << 20
			cfg.ConsumeQueueEntriesPerFile = 1024
			cfg.IndexSlots, cfg.IndexEntries = 4096, 16384
			cfg.FlushMode = mode
			cfg.DiskSpaceWarningLevelRatio = 100
			cfg.DiskCheckInterval = time.Hour
			cfg.WriteRetryInterval = 5 * time.Millisecond
			s := openStore(t, cfg)
			started := time.Now()
			acked := fillUntilRefused(t, s, "Full", 4, 900)
			t.Logf("%s: %d messages acknowledged, log end %d, filled in %v", modeName(mode), len(acked), s.CommitLogMaxOffset(), time.Since(started).Round(time.Millisecond))
			if len(acked) < 500 {
				t.Fatalf("only %d messages fit", len(acked))
			}
			if st := s.WriteStatus(); st.Writable || st.WriteError == "" {
				t.Errorf("WriteStatus when full: %+v", st)
			}
			checkAll(t, s, acked)

			// The process dies on the full file system; the restart comes
			// up and reads everything. It may still fill the blocks
			// reserved before the crash, then refuses appends.
			s.Crash()
			t0 := time.Now()
			s = openStore(t, cfg)
			t.Logf("%s: reopened on the full file system in %v", modeName(mode), time.Since(t0).Round(time.Millisecond))
			checkAll(t, s, acked)
			more := fillUntilRefused(t, s, "Full", 2, 900)
			t.Logf("%s: %d more acknowledged after the restart", modeName(mode), len(more))
			acked = append(acked, more...)

			// Room again: appends are accepted by themselves.
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			var last stored
			testutil.WaitFor(t, 10*time.Second, "an accepted put", func() bool {
				m := msg{topic: "Full", queue: 1, body: "room again"}
				res, err := s.PutMessage(context.Background(), m.req())
				last = stored{m: m, res: res}
				return err == nil
			})
			acked = append(acked, last)
			acked = append(acked, put(t, s, msg{topic: "Full", queue: 2, body: "and another"}))
			checkAll(t, s, acked)
			if st := s.WriteStatus(); !st.Writable {
				t.Errorf("WriteStatus with room: %+v", st)
			}
		})
	}
}

// reserveDouble makes block reservations fail with ENOSPC while on.
type reserveDouble struct {
	on    atomic.Bool
	fails atomic.Int64
}

func (d *reserveDouble) fault(string, int64, int64) error {
	if d.on.Load() {
		d.fails.Inc()
		return syscall.ENOSPC
	}
	return nil
}

// The same with an injected ENOSPC from the block reservation, for systems
// where no file system can be mounted: concurrent writers are refused with
// ErrDiskFull from the first refusal on, the store opens while
// reservations fail, and appends are accepted again when they succeed.
func TestReserveFailureRefusesWithDiskFull(t *testing.T) {
	for _, mode := range []FlushMode{FlushAsync, FlushSync} {
		t.Run(modeName(mode), func(t *testing.T) {
			d := &reserveDouble{}
			cfg := testConfig(t)
			cfg.FlushMode = mode
			cfg.ReserveFault = d.fault
			cfg.WriteRetryInterval = 5 * time.Millisecond
			s := openStore(t, cfg)
			var acked []stored
			for i := range 20 {
				acked = append(acked, put(t, s, msg{topic: "R", queue: int32(i % 4), body: body(i, 700)}))
			}
			d.on.Store(true)
			acked = append(acked, fillUntilRefused(t, s, "R", 4, 700)...)
			if d.fails.Load() == 0 {
				t.Fatal("no reservation was asked for")
			}
			checkAll(t, s, acked)

			s.Crash()
			s = openStore(t, cfg)
			checkAll(t, s, acked)
			// 8 KiB segments: within a few puts one needs a new segment.
			var err error
			for i := 0; err == nil && i < 20; i++ {
				m := msg{topic: "R", queue: 0, body: body(i, 700)}
				var res PutResult
				if res, err = s.PutMessage(context.Background(), m.req()); err == nil {
					acked = append(acked, stored{m: m, res: res})
				}
			}
			if !errors.Is(err, ErrDiskFull) {
				t.Fatalf("put after a restart while reservations fail: %v, want ErrDiskFull", err)
			}
			d.on.Store(false)
			testutil.WaitFor(t, 5*time.Second, "writable again", func() bool { return s.WriteStatus().Writable })
			for i := range 20 {
				acked = append(acked, put(t, s, msg{topic: "R", queue: int32(i % 4), body: body(i, 700)}))
			}
			checkAll(t, s, acked)
		})
	}
}

// syncDouble makes commit-log syncs fail with EIO while on.
type syncDouble struct {
	on    atomic.Bool
	fails atomic.Int64
}

func (d *syncDouble) fault(string) error {
	if d.on.Load() {
		d.fails.Inc()
		return syscall.EIO
	}
	return nil
}

// After a failed commit-log sync the store acknowledges nothing: a
// sync-flush put waiting for it is answered PutFlushDiskTimeout at once
// (not after SyncFlushTimeout), the flushed position stays, later puts are
// refused with ErrNotWritable and WriteStatus says why; once a retried
// sync succeeds everything is flushed and puts are accepted again.
// Nothing acknowledged is lost, through a retry, a crash or a Close.
func TestSyncFailureStopsAcknowledging(t *testing.T) {
	for _, mode := range []FlushMode{FlushAsync, FlushSync} {
		for _, stop := range []string{"retry", "crash", "close"} {
			t.Run(modeName(mode)+"/"+stop, func(t *testing.T) {
				d := &syncDouble{}
				cfg := testConfig(t)
				cfg.FlushMode = mode
				cfg.SyncFault = d.fault
				cfg.SyncFlushTimeout = time.Minute
				cfg.WriteRetryInterval = 5 * time.Millisecond
				s := openStore(t, cfg)
				var acked []stored
				for i := range 10 {
					acked = append(acked, put(t, s, msg{topic: "S", queue: int32(i % 2), body: body(i, 500)}))
				}
				testutil.WaitFor(t, 5*time.Second, "the flush", func() bool { f, _ := s.FlushProgress(); return f == s.CommitLogMaxOffset() })
				flushed, _ := s.FlushProgress()
				d.on.Store(true)

				m := msg{topic: "S", body: "unsynced"}
				started := time.Now()
				res, err := s.PutMessage(context.Background(), m.req())
				if err != nil {
					t.Fatalf("put as the sync fails: %v", err)
				}
				if mode == FlushSync {
					if res.Status != PutFlushDiskTimeout {
						t.Fatalf("sync-flush put over a failed sync: %v, want FLUSH_DISK_TIMEOUT", res.Status)
					}
					if waited := time.Since(started); waited >= cfg.SyncFlushTimeout {
						t.Errorf("the put waited %v, the whole SyncFlushTimeout", waited)
					}
				}
				acked = append(acked, stored{m: m, res: res}) // stored and readable all the same
				testutil.WaitFor(t, 5*time.Second, "the sync failure", s.SyncFailed)
				if _, err := s.PutMessage(context.Background(), msg{topic: "S", body: "refused"}.req()); !errors.Is(err, ErrNotWritable) || errors.Is(err, ErrDiskFull) {
					t.Fatalf("put after a failed sync: %v, want ErrNotWritable", err)
				}
				st := s.WriteStatus()
				if st.Writable || st.SyncError == "" || st.WriteError != "" {
					t.Errorf("WriteStatus after a failed sync: %+v", st)
				}
				// Further rounds (background, checkpoint) do not move it.
				n := d.fails.Load()
				testutil.WaitFor(t, 5*time.Second, "a retried sync", func() bool { return d.fails.Load() > n+2 })
				if f, _ := s.FlushProgress(); f != flushed {
					t.Fatalf("flushed position moved from %d to %d over a failed sync", flushed, f)
				}
				checkAll(t, s, acked)

				switch stop {
				case "crash":
					s.Crash()
					d.on.Store(false)
					s = openStore(t, cfg)
				case "close":
					if err := s.Close(); err == nil {
						t.Error("Close after a failed sync returned no error")
					}
					d.on.Store(false)
					s = openStore(t, cfg)
				default:
					d.on.Store(false)
					testutil.WaitFor(t, 5*time.Second, "writable again", func() bool { return s.WriteStatus().Writable })
					if f, _ := s.FlushProgress(); f != s.CommitLogMaxOffset() {
						t.Errorf("after the retry flushed %d, log end %d", f, s.CommitLogMaxOffset())
					}
				}
				checkAll(t, s, acked)
				acked = append(acked, put(t, s, msg{topic: "S", queue: 1, body: "accepted again"}))
				checkAll(t, s, acked)
			})
		}
	}
}
