package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// e2eWindow bounds the async sends outstanding in e2e mode: a client that
// cannot keep up with -rate falls behind instead of queueing without end.
const e2eWindow = 8192

// e2eDrainTimeout bounds the wait, after the offered period, for the
// consumer to receive what was sent.
const e2eDrainTimeout = 30 * time.Second

// runE2E starts a consumer, then offers cfg.rate messages per second for
// cfg.duration with async sends, each stamped with its send time, and
// measures the time from send to handler per message. The client CPU
// includes the producer's.
func runE2E(ctx context.Context, cfg config, d driver, m *meter, log io.Writer) (result, error) {
	var (
		rec       recorder
		got       atomic.Int64
		ready     = make(chan struct{})
		readyOnce sync.Once
		lastNanos atomic.Int64
		start     time.Time
		started   atomic.Bool
	)
	group := fmt.Sprintf("rmqbench_%d", time.Now().UnixNano())
	stop, err := d.Consume(ctx, group, consumeSink{
		delivered: func(n int) {
			if n > 0 {
				// The warm-up message arrived: the consumer owns its queues.
				readyOnce.Do(func() { close(ready) })
			}
		},
		sent: func(ns int64) {
			if !started.Load() {
				return // the warm-up message, received before the start
			}
			now := time.Now()
			rec.ok(time.Duration(now.UnixNano()-ns), 1)
			got.Add(1)
			lastNanos.Store(int64(now.Sub(start)))
		},
	})
	if err != nil {
		return result{}, err
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(log, "rmqbench: stopping consumer:", err)
		}
	}()
	timer := time.NewTimer(warmupTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-timer.C:
		return result{}, errors.New("the consumer did not receive the warm-up message in time")
	case <-ctx.Done():
		return result{}, ctx.Err()
	}

	if err := m.start(); err != nil {
		return result{}, err
	}
	start = time.Now()
	started.Store(true)
	sent, failed := offer(ctx, d, cfg.rate, start, cfg.duration)
	drained := time.Now().Add(e2eDrainTimeout)
	for got.Load() < sent && time.Now().Before(drained) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := m.stop(); err != nil {
		return result{}, err
	}
	if n := got.Load(); n < sent {
		return result{}, fmt.Errorf("received %d of %d sent messages within %v after the run", n, sent, e2eDrainTimeout)
	}
	t := merge([]*recorder{&rec})
	t.errs = failed
	r := newResult(cfg, t, time.Duration(lastNanos.Load()))
	r.Rate = cfg.rate
	m.apply(&r)
	return r, nil
}

// offer sends rate messages per second from start for period, at most
// e2eWindow outstanding, and returns how many were stored and failed once
// every send has completed.
func offer(ctx context.Context, d driver, rate int, start time.Time, period time.Duration) (sent, failed int64) {
	var ok, bad atomic.Int64
	slots := make(chan struct{}, e2eWindow)
	issued := int64(0)
	total := int64(float64(rate) * period.Seconds())
	// A millisecond tick: pacing costs the client about 1,000 wake-ups a
	// second (a few per cent of a core), counted in its CPU.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for issued < total && ctx.Err() == nil {
		due := min(total, int64(float64(rate)*time.Since(start).Seconds()))
		for ; issued < due; issued++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return ok.Load(), bad.Load()
			}
			err := d.SendAsync(ctx, func(err error) {
				if err != nil {
					bad.Add(1)
				} else {
					ok.Add(1)
				}
				<-slots
			})
			if err != nil {
				bad.Add(1)
				<-slots
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	wait := time.NewTimer(asyncDrainTimeout)
	defer wait.Stop()
	for range e2eWindow {
		select {
		case slots <- struct{}{}:
		case <-wait.C:
			return ok.Load(), bad.Load() + int64(e2eWindow-len(slots))
		}
	}
	return ok.Load(), bad.Load()
}
