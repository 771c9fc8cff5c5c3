package consumer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

func pqMsgs(offsets ...int64) []*rocketmq.MessageExt {
	out := make([]*rocketmq.MessageExt, len(offsets))
	for i, o := range offsets {
		out[i] = &rocketmq.MessageExt{Message: rocketmq.Message{Body: make([]byte, 10)}, QueueOffset: o}
	}
	return out
}

func TestProcessQueueCommitOffset(t *testing.T) {
	pq := newProcessQueue()
	if got := pq.remove(0, nil, nil, nil, 0); got != -1 {
		t.Fatalf("empty queue commit offset %d, want -1", got)
	}
	msgs := pqMsgs(10, 11, 12, 15, 20)
	seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
	if c, b, s := pq.stats(); c != 5 || b != 50 || s != 10 {
		t.Fatalf("stats %d %d %d, want 5 50 10", c, b, s)
	}
	steps := []struct {
		idx  int
		want int64 // commit offset after removing msgs[idx]
		span int64
	}{
		{1, 10, 10}, // the smallest held stays 10
		{4, 10, 5},  // tail trimmed: span shrinks
		{0, 12, 3},
		{2, 15, 0},
		{3, 21, 0}, // empty: one past the highest added
	}
	for _, st := range steps {
		got := pq.remove(seq+uint64(st.idx), nil, msgs[st.idx:st.idx+1], nil, 0)
		if got != st.want {
			t.Fatalf("after removing offset %d: commit %d, want %d", msgs[st.idx].QueueOffset, got, st.want)
		}
		if _, _, s := pq.stats(); s != st.span {
			t.Fatalf("after removing offset %d: span %d, want %d", msgs[st.idx].QueueOffset, s, st.span)
		}
	}
	if c, b, _ := pq.stats(); c != 0 || b != 0 {
		t.Fatalf("stats after all removed: %d %d", c, b)
	}
	// Removing twice changes nothing.
	if got := pq.remove(seq, nil, msgs[:1], nil, 0); got != 21 {
		t.Fatalf("second removal: commit %d", got)
	}
	// New messages after a full trim get fresh seqs that still resolve.
	more := pqMsgs(21, 22)
	seq2, _ := pq.add(more, pullChargeOf(more, 0))
	if got := pq.remove(seq2+1, nil, more[1:], nil, 0); got != 21 {
		t.Fatalf("commit %d, want 21", got)
	}
	// A stale seq pointing at a reused slot does not remove the wrong one.
	if got := pq.remove(seq2, nil, pqMsgs(99), nil, 0); got != 21 {
		t.Fatalf("stale removal moved the offset to %d", got)
	}
	if got := pq.remove(seq2, nil, more[:1], nil, 0); got != 23 {
		t.Fatalf("commit %d, want 23", got)
	}
}

// A handler that replaces a body does not skew the size.
func TestProcessQueueBodyReplaced(t *testing.T) {
	pq := newProcessQueue()
	msgs := pqMsgs(30, 31)
	seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
	msgs[0].Body = nil
	msgs[1].Body = make([]byte, 1000)
	pq.remove(seq, nil, msgs, nil, 0)
	if _, b, _ := pq.stats(); b != 0 {
		t.Fatalf("bytes %d after removing messages whose bodies were replaced", b)
	}
}

func TestProcessQueueKeepAndSeqs(t *testing.T) {
	pq := newProcessQueue()
	msgs := pqMsgs(0, 1, 2, 3)
	seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
	var inflight atomic.Int32
	pq.begin(seq, nil, 4, 1000, &inflight)
	// 1 and 3 stay held for a local retry.
	got := pq.remove(seq, nil, msgs, []bool{false, true, false, true}, 0)
	if got != 1 {
		t.Fatalf("commit %d, want 1", got)
	}
	// Waiting for their retry, they are not running: nothing to expire.
	if exp := pq.expired(5000, 16); len(exp) != 0 {
		t.Fatalf("messages waiting for a local retry expired: %v", exp)
	}
	if held, _ := pq.claimFailed(seq+1, msgs[1]); !held {
		t.Fatal("a kept message is not held")
	}
	pq.unclaim(seq+1, msgs[1])
	if held, _ := pq.claimFailed(seq, msgs[0]); held {
		t.Fatal("a removed message is held")
	}
	// The retry batch carries its own seqs.
	got = pq.remove(0, []uint64{seq + 1, seq + 3}, []*rocketmq.MessageExt{msgs[1], msgs[3]}, nil, 0)
	if got != 4 {
		t.Fatalf("commit %d, want 4", got)
	}
}

func TestProcessQueueExpired(t *testing.T) {
	pq := newProcessQueue()
	msgs := pqMsgs(5, 6, 7)
	seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
	var inflight atomic.Int32
	if !pq.begin(seq, nil, 2, 1000, &inflight) {
		t.Fatal("begin on a live queue failed")
	}
	inflight.Add(-1)
	exp := pq.expired(1500, 16)
	if len(exp) != 2 || exp[0].msg.QueueOffset != 5 || exp[1].msg.QueueOffset != 6 {
		t.Fatalf("expired %v", exp)
	}
	if off, ok := pq.removeOne(exp[0].seq, exp[0].msg); !ok || off != 6 {
		t.Fatalf("removeOne: %d %v", off, ok)
	}
	if len(pq.expired(500, 16)) != 0 {
		t.Fatal("nothing started before 500")
	}
	pq.setDropped()
	if pq.begin(seq+2, nil, 1, 2000, &inflight) {
		t.Fatal("begin on a dropped queue succeeded")
	}
}

// The deque compacts: a long run of add/remove keeps its backing array
// bounded.
func TestProcessQueueBounded(t *testing.T) {
	pq := newProcessQueue()
	var off int64
	var held []*rocketmq.MessageExt
	var seqs []uint64
	for round := 0; round < 2000; round++ {
		batch := pqMsgs(off, off+1, off+2, off+3)
		off += 4
		s, _ := pq.add(batch, pullChargeOf(batch, 0))
		for i := range batch {
			held = append(held, batch[i])
			seqs = append(seqs, s+uint64(i))
		}
		// Remove all but the newest 10, oldest last, so the head stays.
		for len(held) > 10 {
			i := len(held) - 11
			pq.remove(seqs[i], nil, held[i:i+1], nil, 0)
			if i == 0 {
				held, seqs = held[1:], seqs[1:]
				continue
			}
			held = append(held[:i], held[i+1:]...)
			seqs = append(seqs[:i], seqs[i+1:]...)
		}
	}
	if c, _, _ := pq.stats(); c != 10 {
		t.Fatalf("held %d, want 10", c)
	}
	if cap(pq.ents) > 4096 {
		t.Fatalf("backing array grew to %d", cap(pq.ents))
	}
}

func BenchmarkProcessQueue(b *testing.B) {
	pq := newProcessQueue()
	msgs := pqMsgs(make([]int64, 32)...)
	b.ReportAllocs()
	var off int64
	for i := 0; i < b.N; i++ {
		for j := range msgs {
			msgs[j].QueueOffset = off
			off++
		}
		seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
		for j := range msgs {
			pq.remove(seq+uint64(j), nil, msgs[j:j+1], nil, 0)
		}
	}
}

func TestHandlerCtx(t *testing.T) {
	base, cancel := context.WithCancel(context.Background())
	c := newHandlerCtx(base, time.Now().Add(time.Hour))
	if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("deadline %v %v", d, ok)
	}
	if c.Err() != nil || c.made.Load() {
		t.Fatal("live ctx: Err must be nil without making a timer")
	}
	cancel()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("Err after the base ended: %v", c.Err())
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the base ended")
	}
	c.release()

	short := newHandlerCtx(context.Background(), time.Now().Add(20*time.Millisecond))
	select {
	case <-short.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("consume timeout did not end the ctx")
	}
	if !errors.Is(short.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", short.Err())
	}
	short.release()
	type key struct{}
	v := newHandlerCtx(context.WithValue(context.Background(), key{}, 7), time.Now().Add(time.Second))
	if v.Value(key{}) != 7 {
		t.Fatal("values of the base are not visible")
	}
	v.release()
}

// Offsets already added are left out of a later add.
func TestProcessQueueRepeatedOffsets(t *testing.T) {
	pq := newProcessQueue()
	first := pqMsgs(0, 1, 2)
	seq, got := pq.add(first, pullChargeOf(first, 0))
	if len(got) != 3 {
		t.Fatalf("took %d", len(got))
	}
	again := pqMsgs(1, 2, 3, 4)
	seq2, got2 := pq.add(again, pullChargeOf(again, 0))
	if len(got2) != 2 || got2[0].QueueOffset != 3 || seq2 != seq+3 {
		t.Fatalf("second add took %d (seq %d), want offsets 3 and 4 at seq %d", len(got2), seq2, seq+3)
	}
	if c, _, s := pq.stats(); c != 5 || s != 4 {
		t.Fatalf("count %d span %d", c, s)
	}
	pq.remove(seq, nil, got, nil, 0)
	if off := pq.remove(seq2, nil, got2, nil, 0); off != 5 {
		t.Fatalf("commit %d, want 5", off)
	}
}

// A pull's memory stays charged until its last message is done: a slow
// message holds its whole response.
func TestProcessQueuePullCharge(t *testing.T) {
	pq := newProcessQueue()
	a := pqMsgs(0, 1, 2, 3)
	seqA, a := pq.add(a, 4000)
	b := pqMsgs(4, 5)
	seqB, b := pq.add(b, 2000)
	if _, bytes, _ := pq.stats(); bytes != 6000 {
		t.Fatalf("bytes %d, want 6000", bytes)
	}
	// All of pull a but its first message, all of pull b.
	pq.remove(seqA+1, nil, a[1:], nil, 0)
	pq.remove(seqB, nil, b, nil, 0)
	if _, bytes, _ := pq.stats(); bytes != 4000 {
		t.Fatalf("bytes %d, want 4000: the slow message holds its pull", bytes)
	}
	pq.remove(seqA, nil, a[:1], nil, 0)
	if c, bytes, _ := pq.stats(); c != 0 || bytes != 0 {
		t.Fatalf("count %d bytes %d after everything", c, bytes)
	}
	// Inflated bodies are charged when larger than the response.
	if got := pullChargeOf(pqMsgs(0, 1), 5); got != 20 {
		t.Fatalf("charge %d, want the bodies' 20", got)
	}
}

// Orderly batches come from the head in offset order, stay held until
// committed, and a batch put back is taken again first; the schedule
// mark is cleared when nothing is left, and a dropped queue gives
// nothing.
func TestProcessQueueOrderlyTake(t *testing.T) {
	pq := newProcessQueue()
	var inflight atomic.Int32
	if !pq.schedule() || pq.schedule() {
		t.Fatal("schedule: want true once")
	}
	msgs := pqMsgs(0, 1, 2, 3, 4)
	pq.add(msgs, pullChargeOf(msgs, 0))
	offsets := func(ms []*rocketmq.MessageExt) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.QueueOffset)
		}
		return out
	}
	seq1, b1 := pq.take(2, 1, &inflight)
	seq2, b2 := pq.take(2, 1, &inflight)
	if got := offsets(b1); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("first batch %v", got)
	}
	if got := offsets(b2); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("second batch %v", got)
	}
	if c, _, _ := pq.stats(); c != 5 {
		t.Fatalf("held %d, want 5: taken messages stay until committed", c)
	}
	if off := pq.remove(seq1, nil, b1, nil, 2); off != 2 {
		t.Fatalf("commit offset %d, want 2", off)
	}
	pq.putBack(seq2)
	seq3, b3 := pq.take(3, 3, &inflight)
	if got := offsets(b3); seq3 != seq2 || len(got) != 3 || got[0] != 2 || got[2] != 4 {
		t.Fatalf("after put back: seq %d (want %d), batch %v", seq3, seq2, got)
	}
	if off := pq.remove(seq3, nil, b3, nil, 4); off != 5 {
		t.Fatalf("commit offset %d, want 5", off)
	}
	if _, b := pq.take(1, 5, &inflight); b != nil {
		t.Fatalf("took %v from an empty queue", offsets(b))
	}
	if !pq.schedule() {
		t.Fatal("mark not cleared by an empty take")
	}
	more := pqMsgs(5, 6)
	pq.add(more, pullChargeOf(more, 0))
	pq.setDropped()
	if _, b := pq.take(1, 6, &inflight); b != nil || pq.schedule() {
		t.Fatal("a dropped queue gives a batch or takes a task")
	}
	if n := inflight.Load(); n != 3 {
		t.Fatalf("inflight %d, want 3 (one per batch taken)", n)
	}
}

// The expiry sweep and a failed handler never both give a message back.
func TestProcessQueueGiveBackOnce(t *testing.T) {
	t.Run("sweep first", func(t *testing.T) {
		pq := newProcessQueue()
		msgs := pqMsgs(0)
		seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
		var inflight atomic.Int32
		pq.begin(seq, nil, 1, 1000, &inflight)
		if exp := pq.expired(5000, 16); len(exp) != 1 {
			t.Fatalf("%d expired, want 1", len(exp))
		}
		if exp := pq.expired(5000, 16); len(exp) != 0 {
			t.Fatal("a message the sweep is giving back expired again")
		}
		held, swept := pq.claimFailed(seq, msgs[0])
		if !held || !swept {
			t.Fatalf("handler failure during the sweep: held %v, swept %v; want both", held, swept)
		}
		// The sweep's send-back failed: it owns the local retry.
		if !pq.unclaim(seq, msgs[0]) {
			t.Fatal("unclaim does not report the handler's failure")
		}
		if held, swept := pq.claimFailed(seq, msgs[0]); !held || swept {
			t.Fatalf("after unclaim: held %v, swept %v; want held only", held, swept)
		}
	})
	t.Run("handler first", func(t *testing.T) {
		pq := newProcessQueue()
		msgs := pqMsgs(0)
		seq, _ := pq.add(msgs, pullChargeOf(msgs, 0))
		var inflight atomic.Int32
		pq.begin(seq, nil, 1, 1000, &inflight)
		if held, swept := pq.claimFailed(seq, msgs[0]); !held || swept {
			t.Fatalf("held %v, swept %v; want held only", held, swept)
		}
		if exp := pq.expired(5000, 16); len(exp) != 0 {
			t.Fatal("the sweep took a message its failed handler is giving back")
		}
		if pq.unclaim(seq, msgs[0]) {
			t.Fatal("unclaim reports a handler failure the sweep never saw")
		}
		if exp := pq.expired(5000, 16); len(exp) != 1 {
			t.Fatal("an unclaimed running message does not expire")
		}
	})
}
