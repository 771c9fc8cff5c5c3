package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDriver stands in for a client: sends take a fixed time, every
// failEvery-th send fails, and Consume delivers what was stored.
type fakeDriver struct {
	delay     time.Duration
	failEvery int64

	calls  atomic.Int64
	stored atomic.Int64
	wg     sync.WaitGroup // async completions and consumer goroutine
}

var errFake = errors.New("fake send failure")

func (f *fakeDriver) attempt() error {
	n := f.calls.Add(1)
	time.Sleep(f.delay)
	if f.failEvery > 0 && n%f.failEvery == 0 {
		return errFake
	}
	return nil
}

func (f *fakeDriver) SendSync(ctx context.Context, n int) error {
	if err := f.attempt(); err != nil {
		return err
	}
	f.stored.Add(int64(n))
	return nil
}

func (f *fakeDriver) SendAsync(ctx context.Context, done func(error)) error {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		err := f.attempt()
		if err == nil {
			f.stored.Add(1)
		}
		done(err)
	}()
	return nil
}

func (f *fakeDriver) SendOneway(ctx context.Context) error { return f.SendSync(ctx, 1) }

func (f *fakeDriver) Consume(ctx context.Context, group string, sink consumeSink) (func() error, error) {
	stop := make(chan struct{})
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		left := f.stored.Load()
		for left > 0 {
			select {
			case <-stop:
				return
			default:
			}
			n := min(left, 32)
			sink.delivered(int(n))
			left -= n
		}
	}()
	return func() error { close(stop); return nil }, nil
}

func (f *fakeDriver) Close() error { f.wg.Wait(); return nil }

func TestRunSendModes(t *testing.T) {
	tests := []struct {
		mode      string
		batch     int
		failEvery int64
	}{
		{mode: modeSync},
		{mode: modeOneway},
		{mode: modeBatch, batch: 8},
		{mode: modeAsync},
		{mode: modeSync, failEvery: 4},
		{mode: modeAsync, failEvery: 4},
	}
	for _, tt := range tests {
		name := tt.mode
		if tt.failEvery > 0 {
			name += "/with-failures"
		}
		t.Run(name, func(t *testing.T) {
			f := &fakeDriver{delay: 200 * time.Microsecond, failEvery: tt.failEvery}
			cfg := config{client: "fake", mode: tt.mode, callers: 3, batch: max(tt.batch, 1),
				duration: 150 * time.Millisecond, window: 4}
			r, err := runSend(context.Background(), cfg, f, &meter{})
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			calls := f.calls.Load()
			if r.Msgs != f.stored.Load() || r.Msgs == 0 {
				t.Fatalf("msgs %d, fake stored %d", r.Msgs, f.stored.Load())
			}
			if r.Errors+r.Msgs/int64(cfg.batch) != calls {
				t.Fatalf("errors %d + ops %d != calls %d", r.Errors, r.Msgs/int64(cfg.batch), calls)
			}
			if tt.failEvery > 0 && r.Errors == 0 {
				t.Fatal("failures not counted")
			}
			if r.Seconds < 0.15 || r.Seconds > 5 || r.MsgsPerS <= 0 {
				t.Fatalf("seconds %v, rate %v", r.Seconds, r.MsgsPerS)
			}
			if r.P50us < 200 || r.P99us < r.P50us {
				t.Fatalf("latencies p50 %v p99 %v below the fake's 200us", r.P50us, r.P99us)
			}
		})
	}
}

func TestRunConsume(t *testing.T) {
	f := &fakeDriver{}
	cfg := config{client: "fake", mode: modeConsume, callers: 2, batch: 7, backlog: 100, duration: 5 * time.Second}
	if err := f.SendSync(context.Background(), 1); err != nil { // the warm-up
		t.Fatal(err)
	}
	r, err := runConsume(context.Background(), cfg, f, &meter{}, io.Discard)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r.Msgs != 101 || f.stored.Load() != 101 {
		t.Fatalf("consumed %d, stored %d, want 101", r.Msgs, f.stored.Load())
	}
	if r.P50us != 0 || r.P99us != 0 {
		t.Fatalf("consume mode has no latencies, got %+v", r)
	}
}

func TestRunConsumeTimesOut(t *testing.T) {
	f := &fakeDriver{}
	cfg := config{client: "fake", mode: modeConsume, callers: 1, batch: 10, backlog: 10, duration: 50 * time.Millisecond}
	// No warm-up message was stored, so one message is never delivered.
	_, err := runConsume(context.Background(), cfg, f, &meter{}, io.Discard)
	f.Close()
	if err == nil {
		t.Fatal("drain of a missing message succeeded")
	}
}

func TestPreloadCountsOnlyStored(t *testing.T) {
	f := &fakeDriver{failEvery: 3}
	n, err := preload(context.Background(), f, 90, 10, io.Discard)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n != f.stored.Load() || n >= 90 || n%10 != 0 {
		t.Fatalf("preload reported %d, fake stored %d", n, f.stored.Load())
	}
}
