package main

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"sync"
	"time"
)

// recorder collects one caller's outcomes. Async completions arrive on the
// client's goroutines, hence the mutex; it is uncontended for sync callers.
type recorder struct {
	mu   sync.Mutex
	lat  []time.Duration
	msgs int64
	errs int64
	last time.Time // latest completion
}

func (r *recorder) ok(lat time.Duration, msgs int) {
	now := time.Now()
	r.mu.Lock()
	r.lat = append(r.lat, lat)
	r.msgs += int64(msgs)
	if now.After(r.last) {
		r.last = now
	}
	r.mu.Unlock()
}

func (r *recorder) fail() {
	r.mu.Lock()
	r.errs++
	r.mu.Unlock()
}

// totals merges recorders: all latencies sorted ascending, message and
// error counts, and the latest completion time.
type totals struct {
	lat  []time.Duration
	msgs int64
	errs int64
	last time.Time
}

func merge(recs []*recorder) totals {
	var t totals
	for _, r := range recs {
		r.mu.Lock()
		t.lat = append(t.lat, r.lat...)
		t.msgs += r.msgs
		t.errs += r.errs
		if r.last.After(t.last) {
			t.last = r.last
		}
		r.mu.Unlock()
	}
	slices.Sort(t.lat)
	return t
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, or 0 when it is empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// result is the JSON line rmqbench prints.
type result struct {
	Client         string  `json:"client"`
	Mode           string  `json:"mode"`
	Orderly        bool    `json:"orderly,omitempty"`
	Queues         int     `json:"queues,omitempty"`
	Rate           int     `json:"rate,omitempty"`
	Callers        int     `json:"callers"`
	Msgs           int64   `json:"msgs"`
	Seconds        float64 `json:"seconds"`
	MsgsPerS       float64 `json:"msgs_per_s"`
	P50us          float64 `json:"p50_us"`
	P99us          float64 `json:"p99_us"`
	ClientCPUusMsg float64 `json:"client_cpu_us_per_msg"`
	BrokerCPUusMsg float64 `json:"broker_cpu_us_per_msg,omitempty"`
	// Heap allocations of this process per message over the measured
	// phase (with -broker inprocess the broker's too).
	AllocsPerMsg     float64 `json:"client_allocs_per_msg"`
	AllocBytesPerMsg float64 `json:"client_alloc_bytes_per_msg"`
	Batch            int     `json:"pull_batch,omitempty"` // pull mode
	Duplicates       int64   `json:"duplicates,omitempty"` // pull mode: messages handed out again
	Errors           int64   `json:"errors"`
}

// newResult derives the rate and latencies (sorted; nil in consume mode)
// of elapsed; meter.apply adds the CPU figures.
func newResult(cfg config, t totals, elapsed time.Duration) result {
	r := result{
		Client:  cfg.client,
		Mode:    cfg.mode,
		Orderly: cfg.orderly,
		Queues:  cfg.queues,
		Callers: cfg.callers,
		Msgs:    t.msgs,
		Seconds: round(elapsed.Seconds(), 3),
		P50us:   round(micros(percentile(t.lat, 50)), 1),
		P99us:   round(micros(percentile(t.lat, 99)), 1),
		Errors:  t.errs,
	}
	if t.msgs > 0 && elapsed > 0 {
		r.MsgsPerS = round(float64(t.msgs)/elapsed.Seconds(), 1)
	}
	return r
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// writeResult writes r as one JSON line.
func writeResult(w io.Writer, r result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
