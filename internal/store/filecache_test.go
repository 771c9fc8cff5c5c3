package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// openFDs counts the process's open descriptors, or -1 where /proc/self/fd
// is missing.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func fileCacheConfig(t *testing.T, limit int) Config {
	cfg := testConfig(t)
	cfg.CommitLogSegmentSize = 4 << 20
	cfg.IndexSlots, cfg.IndexEntries = 1024, 1<<14
	cfg.MaxOpenQueueFiles = limit
	return cfg
}

// One message to each of thousands of queues keeps at most the cap of
// consume-queue files open, before and after a restart, and every message
// reads back.
func TestConsumeQueueFilesCapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	const limit, queues, margin = 64, 2000, 16
	cfg := fileCacheConfig(t, limit)
	base := openFDs()
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	peak := 0
	sample := func(what string) {
		n := openFDs() - base
		peak = max(peak, n)
		if n > limit+margin {
			t.Fatalf("%s: %d descriptors open beyond the start, cap %d", what, n, limit)
		}
		if m := s.cqCache.mapped(); m > limit {
			t.Fatalf("%s: %d consume-queue files mapped, cap %d", what, m, limit)
		}
	}
	ctx := context.Background()
	topic := func(i int) (string, int32) { return fmt.Sprintf("Wide%d", i/500), int32(i % 500) }
	for i := range queues {
		tp, q := topic(i)
		if _, err := s.PutMessage(ctx, msg{topic: tp, queue: q, body: fmt.Sprintf("body-%d", i)}.req()); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if i%100 == 0 {
			sample(fmt.Sprintf("after %d puts", i))
		}
	}
	check := func(s *Store) {
		for i := range queues {
			tp, q := topic(i)
			res, err := s.GetMessages(nil, &GetRequest{Topic: tp, QueueID: q})
			if err != nil || res.Status != GetFound || res.Messages != 1 {
				t.Fatalf("get %s/%d: %v %v %d", tp, q, err, res.Status, res.Messages)
			}
			if h, err := parseRecord(res.Data, true); err != nil || string(h.Body) != fmt.Sprintf("body-%d", i) {
				t.Fatalf("get %s/%d: %v %q", tp, q, err, h.Body)
			}
			if i%100 == 0 {
				sample(fmt.Sprintf("after %d gets", i))
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sample("after reopening")
	check(s)
	t.Logf("at most %d descriptors beyond the start for %d queues (cap %d); %d files mapped again", peak, queues, limit, s.cqCache.opens.Load())
}

// A queue whose file cannot be mapped again fails its own reads; other
// queues keep working.
func TestConsumeQueueFileFailureIsLocal(t *testing.T) {
	cfg := fileCacheConfig(t, 2)
	s := openStore(t, cfg)
	ctx := context.Background()
	for q := range int32(4) {
		if _, err := s.PutMessage(ctx, msg{topic: "Local", queue: q, body: "x"}.req()); err != nil {
			t.Fatal(err)
		}
	}
	// Queue 0's file was evicted by the later ones: remove it behind the
	// store's back.
	if err := os.Remove(filepath.Join(cfg.Dir, "consumequeue", "Local", "0", offsetName(0))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetMessages(nil, &GetRequest{Topic: "Local", QueueID: 0}); err == nil {
		t.Fatal("read of a queue whose file is gone succeeded")
	}
	for q := range int32(4) {
		if q == 0 {
			continue
		}
		res, err := s.GetMessages(nil, &GetRequest{Topic: "Local", QueueID: q})
		if err != nil || res.Status != GetFound {
			t.Fatalf("queue %d: %v %v", q, err, res.Status)
		}
	}
	if _, err := s.PutMessage(ctx, msg{topic: "Local", queue: 3, body: "y"}.req()); err != nil {
		t.Fatalf("put to a healthy queue: %v", err)
	}
}

// Readers, a writer and checkpoints share a cache far smaller than the
// queues in use: files are evicted and mapped again under them.
func TestConsumeQueueFilesConcurrent(t *testing.T) {
	cfg := fileCacheConfig(t, 3)
	s := openStore(t, cfg)
	ctx := context.Background()
	const queues, rounds = 12, 40
	done := make(chan struct{})
	errs := make(chan error, 4)
	for r := range 3 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				q := int32((i + r) % queues)
				res, err := s.GetMessages(nil, &GetRequest{Topic: "Conc", QueueID: q, MaxMessages: 32})
				if err != nil {
					errs <- fmt.Errorf("get %d: %v", q, err)
					return
				}
				if res.Status == GetFound {
					if _, err := parseRecord(res.Data, true); err != nil {
						errs <- fmt.Errorf("get %d: %v", q, err)
						return
					}
				}
			}
		}()
	}
	for i := range queues * rounds {
		if _, err := s.PutMessage(ctx, msg{topic: "Conc", queue: int32(i % queues), body: "c"}.req()); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for q := range int32(queues) {
		if got := s.MaxOffset("Conc", q); got != rounds {
			t.Errorf("queue %d max offset %d, want %d", q, got, rounds)
		}
		res, err := s.GetMessages(nil, &GetRequest{Topic: "Conc", QueueID: q, Offset: rounds - 1})
		if err != nil || res.Messages != 1 {
			t.Errorf("queue %d last entry: %v %v", q, err, res.Status)
		}
	}
	if m := s.cqCache.mapped(); m > 3 {
		t.Errorf("%d files mapped, cap 3", m)
	}
}
