package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestPullSinkCountsOnce checks that a message counts once by queue and
// offset, that the run is done at the count wanted, and that offsets past
// the checked range still count.
func TestPullSinkCountsOnce(t *testing.T) {
	s := newPullSink("r", 5, time.Now())
	a0, a1, b0 := sinkQueue{"a", 0}, sinkQueue{"a", 1}, sinkQueue{"b", 0}
	for _, d := range []struct {
		queue sinkQueue
		off   int64
	}{{a0, 0}, {a0, 1}, {a0, 1}, {a1, 1}, {b0, 0}, {a0, 0}} {
		s.deliver(s.bitmap(d.queue), d.off)
	}
	if got, dups := s.got.Load(), s.dups.Load(); got != 4 || dups != 2 {
		t.Fatalf("counted %d with %d duplicates, want 4 and 2", got, dups)
	}
	select {
	case <-s.done:
		t.Fatal("done before the count wanted")
	default:
	}
	s.deliver(s.bitmap(a1), 1000) // past the checked range: counted as is
	select {
	case <-s.done:
	default:
		t.Fatalf("not done at %d of 5", s.got.Load())
	}
}

// TestPullMode runs both lite pull consumers over one backlog in one run,
// in each order: one result line per client, each with every message
// once.
func TestPullMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and the official client")
	}
	for _, clients := range []string{"ours,official", "official,ours"} {
		t.Run(clients, func(t *testing.T) {
			args := []string{"-mode", "pull", "-client", clients, "-backlog", "600", "-batch", "16",
				"-pull-batch", "8", "-callers", "2", "-size", "128", "-duration", "60s"}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, errOut.String())
			}
			var got []string
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				var r result
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				if r.Mode != modePull || r.Msgs != 601 || r.Duplicates != 0 || r.Batch != 8 || r.Queues != defaultQueues ||
					r.MsgsPerS <= 0 || r.ClientCPUusMsg <= 0 || r.BrokerCPUusMsg <= 0 || r.AllocsPerMsg <= 0 {
					t.Fatalf("result %+v\nstderr: %s", r, errOut.String())
				}
				got = append(got, r.Client)
			}
			if want := clients; len(got) != 2 || got[0]+","+got[1] != want {
				t.Fatalf("clients %v, want %s", got, want)
			}
		})
	}
}
