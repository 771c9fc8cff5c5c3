package trace

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

type sent struct {
	topic string
	body  string
	keys  []string
}

type fakeSender struct {
	mu    sync.Mutex
	got   []sent
	block chan struct{} // when set, SendTrace waits for it or ctx
	err   error
}

func (f *fakeSender) SendTrace(ctx context.Context, topic string, body []byte, keys []string) error {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.got = append(f.got, sent{topic, string(body), append([]string(nil), keys...)})
	return nil
}

func (f *fakeSender) records() (n int, msgs []sent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.got {
		cs, _ := Decode(s.body)
		n += len(cs)
	}
	return n, append([]sent(nil), f.got...)
}

func pubCtx(i int, keys string) *Context {
	return &Context{Type: Pub, TimeStamp: int64(i), RegionID: "r", Group: "g", Success: true,
		Beans: []Bean{{Topic: "T", MsgID: "ID" + strconv.Itoa(i), Keys: keys, StoreHost: "h:1", OffsetMsgID: "O"}}}
}

func closeNow(t *testing.T, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A few records go out together once the first is WaitThreshold old, with
// the msgIds and keys of all of them as keys.
func TestDispatcherBatchesByTime(t *testing.T) {
	f := &fakeSender{}
	d := NewDispatcher("", f, nil)
	defer closeNow(t, d)
	start := time.Now()
	for i := range 3 {
		if !d.Append(pubCtx(i, "k"+strconv.Itoa(i)+" shared")) {
			t.Fatal("append refused")
		}
	}
	testutil.WaitFor(t, 5*time.Second, "a batch", func() bool { n, _ := f.records(); return n == 3 })
	if el := time.Since(start); el < WaitThreshold {
		t.Errorf("sent after %v, before the %v threshold", el, WaitThreshold)
	}
	_, msgs := f.records()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1 batch", len(msgs))
	}
	if msgs[0].topic != DefaultTopic {
		t.Errorf("topic %q", msgs[0].topic)
	}
	want := []string{"ID0", "k0", "shared", "ID1", "k1", "ID2", "k2"}
	if len(msgs[0].keys) != len(want) {
		t.Fatalf("keys %q, want %q", msgs[0].keys, want)
	}
	for i := range want {
		if msgs[0].keys[i] != want[i] {
			t.Fatalf("keys %q, want %q", msgs[0].keys, want)
		}
	}
	if d.Sent() != 3 || d.Dropped() != 0 {
		t.Errorf("sent %d dropped %d", d.Sent(), d.Dropped())
	}
}

// A batch is sent as soon as its data reaches BatchSize.
func TestDispatcherBatchesBySize(t *testing.T) {
	f := &fakeSender{}
	d := NewDispatcher("custom_trace", f, nil)
	defer closeNow(t, d)
	long := strings.Repeat("k", 300) // fewer records than QueueSize fill a batch
	one, _ := Encode(nil, pubCtx(0, long), nil)
	n := BatchSize/len(one) + 1
	start := time.Now()
	for range n {
		if !d.Append(pubCtx(0, long)) {
			t.Fatal("append refused")
		}
	}
	testutil.WaitFor(t, 5*time.Second, "a full batch", func() bool { c, _ := f.records(); return c == n })
	t.Logf("%d records sent in %v", n, time.Since(start))
	_, msgs := f.records()
	if len(msgs) != 1 || len(msgs[0].body) < BatchSize || msgs[0].topic != "custom_trace" {
		t.Fatalf("%d messages, first of %d bytes to %q", len(msgs), len(msgs[0].body), msgs[0].topic)
	}
}

// Append never blocks: with the sender stuck, records beyond the queues
// are dropped and counted; Close within a short ctx gives up on them,
// cancels the send in progress and still returns.
func TestDispatcherDropsWhenFull(t *testing.T) {
	f := &fakeSender{block: make(chan struct{})}
	d := NewDispatcher("", f, nil)
	one, _ := Encode(nil, pubCtx(0, ""), nil)
	perBatch := BatchSize/len(one) + 1
	// Enough to fill the senders, the batch queue and the record queue.
	total := perBatch*(senders+batchQueue+2) + QueueSize*2
	accepted := 0
	start := time.Now()
	for range total {
		if d.Append(pubCtx(0, "")) {
			accepted++
		}
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("appends took %v", el)
	}
	if accepted == total || d.Dropped() == 0 {
		t.Fatalf("accepted %d of %d, dropped %d", accepted, total, d.Dropped())
	}
	if int(d.Dropped())+accepted != total {
		t.Fatalf("dropped %d + accepted %d != %d", d.Dropped(), accepted, total)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := d.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v, want deadline exceeded", err)
	}
	if d.Sent() != 0 || d.Dropped() != int64(total) {
		t.Fatalf("sent %d dropped %d of %d", d.Sent(), d.Dropped(), total)
	}
	if d.Append(pubCtx(0, "")) {
		t.Fatal("append after Close accepted")
	}
}

// Close sends what is queued before returning.
func TestDispatcherCloseDrains(t *testing.T) {
	f := &fakeSender{}
	d := NewDispatcher("", f, nil)
	for i := range 50 {
		d.Append(pubCtx(i, ""))
	}
	closeNow(t, d)
	if n, _ := f.records(); n != 50 {
		t.Fatalf("%d records sent by Close, want 50", n)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A failed send is counted as dropped, not retried forever.
func TestDispatcherSendFailure(t *testing.T) {
	f := &fakeSender{err: errors.New("broker down")}
	d := NewDispatcher("", f, nil)
	d.Append(pubCtx(1, ""))
	d.Append(pubCtx(2, ""))
	closeNow(t, d)
	if d.Dropped() != 2 || d.Sent() != 0 {
		t.Fatalf("dropped %d sent %d", d.Dropped(), d.Sent())
	}
}
