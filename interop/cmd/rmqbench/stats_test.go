package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", hundred, 50, 50 * time.Millisecond},
		{"p99 of 1..100", hundred, 99, 99 * time.Millisecond},
		{"p100 of 1..100", hundred, 100, 100 * time.Millisecond},
		{"p50 of four", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of four", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"tiny p", ms(5, 6), 0.0001, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestMergeSortsAndSums(t *testing.T) {
	a, b := &recorder{}, &recorder{}
	a.ok(3*time.Millisecond, 1)
	b.ok(1*time.Millisecond, 32)
	a.ok(2*time.Millisecond, 1)
	b.fail()
	tot := merge([]*recorder{a, b})
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}
	if len(tot.lat) != 3 || tot.lat[0] != want[0] || tot.lat[1] != want[1] || tot.lat[2] != want[2] {
		t.Fatalf("latencies %v, want %v", tot.lat, want)
	}
	if tot.msgs != 34 || tot.errs != 1 || tot.last.IsZero() {
		t.Fatalf("totals %+v", tot)
	}
}

func TestResultLine(t *testing.T) {
	cfg := config{client: "official", mode: "batch", callers: 4}
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * 10 * time.Microsecond
	}
	r := newResult(cfg, totals{lat: lat, msgs: 3200, errs: 2}, 2*time.Second)
	mt := meter{client: 64 * time.Millisecond, mallocs: 8000, bytes: 3200 * 1500}
	mt.apply(&r)
	var buf bytes.Buffer
	if err := writeResult(&buf, r); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("want exactly one line, got %q", line)
	}
	want := `{"client":"official","mode":"batch","callers":4,"msgs":3200,"seconds":2,"msgs_per_s":1600,` +
		`"p50_us":500,"p99_us":990,"client_cpu_us_per_msg":20,"client_allocs_per_msg":2.5,"client_alloc_bytes_per_msg":1500,"errors":2}` + "\n"
	if line != want {
		t.Fatalf("line\n got %s\nwant %s", line, want)
	}
	// Every required key is present under its exact name.
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"client", "mode", "callers", "msgs", "seconds", "msgs_per_s", "p50_us", "p99_us", "client_cpu_us_per_msg", "client_allocs_per_msg", "client_alloc_bytes_per_msg"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, line)
		}
	}
}

func TestResultWithoutMessages(t *testing.T) {
	r := newResult(config{client: "ours", mode: "consume", callers: 1}, totals{}, 0)
	m := meter{client: time.Second, broker: func() (time.Duration, error) { return 0, nil }, brokerUsed: time.Second}
	m.apply(&r)
	var buf bytes.Buffer
	if err := writeResult(&buf, r); err != nil { // NaN or Inf would fail here
		t.Fatal(err)
	}
	if r.MsgsPerS != 0 || r.ClientCPUusMsg != 0 || r.BrokerCPUusMsg != 0 || r.P50us != 0 {
		t.Fatalf("result %+v", r)
	}
}

func TestProcessCPUAdvances(t *testing.T) {
	c0, err := processCPU()
	if err != nil {
		t.Skip(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		c1, err := processCPU()
		if err != nil {
			t.Fatal(err)
		}
		if c1 > c0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process CPU stuck at %v after busy work (%d)", c1, x)
		}
	}
}
