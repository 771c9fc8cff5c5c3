package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestReviewOrderlyCalls feeds the orderly checks made-up call logs of
// one queue: each table row must be found to have exactly the problem it
// was made with, or none.
func TestReviewOrderlyCalls(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := queueKey{"b", 1}
	// call makes a call of member on q from ms to ms+dur milliseconds
	// with key k's messages seqs; members named "o…" are official ones.
	call := func(member string, ms, dur int, seqs ...int) orderlyCall {
		c := orderlyCall{member: member, official: strings.HasPrefix(member, "o"), queue: q,
			start: t0.Add(time.Duration(ms) * time.Millisecond), end: t0.Add(time.Duration(ms+dur) * time.Millisecond)}
		for _, s := range seqs {
			c.msgs = append(c.msgs, keySeq{"k", s})
		}
		return c
	}
	tests := []struct {
		name      string
		calls     []orderlyCall
		n         int
		want      string // a problem containing this; "" for none
		handovers map[string]int
		redeliv   int
		offSelf   int
	}{
		{name: "one member in order", n: 4, calls: []orderlyCall{call("u1", 0, 1, 0, 1), call("u1", 2, 1, 2), call("u1", 4, 1, 3)}},
		{name: "clean handovers both ways", n: 4,
			calls:     []orderlyCall{call("u1", 0, 1, 0), call("o1", 2, 1, 1), call("o1", 4, 1, 2), call("u1", 6, 1, 3)},
			handovers: map[string]int{"ours→official": 1, "official→ours": 1}},
		{name: "redelivery at a handover", n: 3,
			calls:     []orderlyCall{call("o1", 0, 1, 0, 1), call("u1", 2, 1, 1, 2)},
			handovers: map[string]int{"official→ours": 1}, redeliv: 1},
		{name: "redelivery after ours handed over", n: 3,
			calls:     []orderlyCall{call("u1", 0, 1, 0, 1), call("o1", 2, 1, 1, 2)},
			handovers: map[string]int{"ours→official": 1}, redeliv: 1, want: "again after ours handed the queue over"},
		{name: "members overlap", n: 2, calls: []orderlyCall{call("o1", 0, 10, 0), call("u1", 5, 1, 1)}, want: "overlaps"},
		{name: "ours overlaps itself", n: 2, calls: []orderlyCall{call("u1", 0, 10, 0), call("u1", 5, 1, 1)}, want: "two calls of u1 at once"},
		{name: "official overlapping itself is only counted", n: 2, calls: []orderlyCall{call("o1", 0, 10, 0), call("o1", 5, 1, 1)}, offSelf: 1},
		{name: "gap", n: 3, calls: []orderlyCall{call("u1", 0, 1, 0), call("u1", 2, 1, 2)}, want: "a gap"},
		{name: "gap at a handover", n: 3, calls: []orderlyCall{call("o1", 0, 1, 0), call("u1", 2, 1, 2)}, want: "a gap"},
		{name: "redelivery without a handover", n: 2, calls: []orderlyCall{call("u1", 0, 1, 0, 1), call("u1", 2, 1, 1)}, want: "out of order"},
		{name: "missing message", n: 3, calls: []orderlyCall{call("u1", 0, 1, 0, 1)}, want: "k/2 never delivered"},
		{name: "back at an earlier holder, which starts again at the last delivered", n: 2,
			calls: []orderlyCall{call("o1", 0, 1, 0, 1), {member: "u2", queue: q, start: t0.Add(-time.Millisecond), end: t0.Add(-time.Millisecond / 2)}, call("u2", 3, 1, 1)},
			// u2's empty call comes first: u2 → o1 → u2, both handovers.
			handovers: map[string]int{"ours→official": 1, "official→ours": 1}, redeliv: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reviewOrderlyCalls(tt.calls, []string{"k"}, tt.n, map[string]int{"k": q.id})
			switch {
			case tt.want == "" && len(r.problems) > 0:
				t.Fatalf("problems %q, want none", r.problems)
			case tt.want != "" && (len(r.problems) == 0 || !strings.Contains(strings.Join(r.problems, "\n"), tt.want)):
				t.Fatalf("problems %q, want one with %q", r.problems, tt.want)
			}
			if tt.handovers != nil && len(r.handovers) != len(tt.handovers) {
				t.Errorf("handovers %v, want %v", r.handovers, tt.handovers)
			}
			for k, v := range tt.handovers {
				if r.handovers[k] != v {
					t.Errorf("handovers %v, want %v", r.handovers, tt.handovers)
				}
			}
			if r.officialSelf != tt.offSelf {
				t.Errorf("official self-overlaps %d, want %d", r.officialSelf, tt.offSelf)
			}
			if r.redelivered != tt.redeliv {
				t.Errorf("redelivered %d, want %d", r.redelivered, tt.redeliv)
			}
		})
	}
}
