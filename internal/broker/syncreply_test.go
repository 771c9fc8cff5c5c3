package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// fakeFlush stands in for the store's flush progress: the commit log is
// "durable" only as far as the test says.
type fakeFlush struct {
	mu      sync.Mutex
	flushed int64
	next    chan struct{}
}

func newFakeFlush() *fakeFlush { return &fakeFlush{next: make(chan struct{})} }

func (f *fakeFlush) progress() (int64, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flushed, f.next
}

// advance ends a round that made the log durable up to to.
func (f *fakeFlush) advance(to int64) {
	f.mu.Lock()
	f.flushed = to
	close(f.next)
	f.next = make(chan struct{})
	f.mu.Unlock()
}

// syncFlushBroker starts a sync-flush broker whose sends wait for ff
// instead of the store's real rounds.
func syncFlushBroker(t *testing.T, ff *fakeFlush, timeout time.Duration) *Broker {
	t.Helper()
	cfg := sendTestConfig(t)
	cfg.FlushMode = store.FlushSync
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.syncs = newSyncReplies(ff.progress, timeout)
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

func TestSyncFlushRepliesAfterTheRound(t *testing.T) {
	ff := newFakeFlush()
	b := syncFlushBroker(t, ff, time.Minute)
	c := rawframe.Dial(t, b.Addr())

	// A burst: the first creates the topic (on a worker), the rest are
	// served on the event loop; WAIT=false is answered at once.
	var burst []byte
	const n = 8
	for i := range n {
		req := sendV2Req(sendTestHeader("SyncReply", 0, ""), []byte("m"+strconv.Itoa(i)))
		req.Opaque = int32(100 + i)
		var err error
		if burst, err = req.AppendFrame(burst); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// Let the topic exist before the others arrive.
			c.Write(burst)
			burst = burst[:0]
			waitTopic(t, b, "SyncReply")
		}
	}
	c.Write(burst)
	noWait := sendV2Req(sendTestHeader("SyncReply", 1, sendTestProps("WAIT", "false")), []byte("nowait"))
	noWait.Opaque = 99
	c.Send(noWait)
	resp := c.Read()
	if resp.Opaque != 99 {
		t.Fatalf("first reply is opaque %d; want the WAIT=false send (99), the others wait for the device", resp.Opaque)
	}
	sendCheckResp(t, resp, remoting.Success, "")
	c.ExpectNothing(200 * time.Millisecond) // WAIT=true sends: no reply before the flush round

	// Stored and readable before the round; only the reply waits.
	testutil.WaitFor(t, 0, fmt.Sprintf("%d messages stored before the round", n), func() bool { return b.store.MaxOffset("SyncReply", 0) == n })
	// A round that does not reach the last record answers only the others.
	last, err := b.store.ConsumeQueueEntry("SyncReply", 0, n-1)
	if err != nil {
		t.Fatal(err)
	}
	end := last.PhysicalOffset + int64(last.Size)
	ff.advance(end - 1)
	got := map[int32]bool{}
	for range n - 1 {
		resp, err := c.ReadErr(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		sendCheckResp(t, resp, remoting.Success, "")
		got[resp.Opaque] = true
	}
	c.ExpectNothing(200 * time.Millisecond) // the last send, not yet durable: no reply before the flush round
	ff.advance(end)
	resp, err = c.ReadErr(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sendCheckResp(t, resp, remoting.Success, "")
	got[resp.Opaque] = true
	for i := range n {
		if !got[int32(100+i)] {
			t.Errorf("no reply to opaque %d", 100+i)
		}
	}
	if h := sendRespHeader(t, resp); h.QueueOffset != n-1 {
		t.Errorf("last reply's queue offset %d, want %d", h.QueueOffset, n-1)
	}
}

func TestSyncFlushTimeoutAnswersFlushDiskTimeout(t *testing.T) {
	ff := newFakeFlush() // never advances
	b := syncFlushBroker(t, ff, 300*time.Millisecond)
	c := rawframe.Dial(t, b.Addr())
	start := time.Now()
	resp := c.CallNext(sendV2Req(sendTestHeader("SyncTimeout", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.FlushDiskTimeout, "")
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("FLUSH_DISK_TIMEOUT after %v, before the 300ms timeout", d)
	}
	if h := sendRespHeader(t, resp); h.MsgID == "" || h.QueueOffset != 0 {
		t.Errorf("header %+v: a timed-out send is still stored and says where", h)
	}
	if got := b.store.MaxOffset("SyncTimeout", 0); got != 1 {
		t.Errorf("%d stored", got)
	}
}

// With the real store, many concurrent sync-flush sends over one
// connection all succeed, and by the time each answer is read its record
// is synced. (That the answer waits for the round is shown with a fake
// flush in TestSyncFlushRepliesAfterTheRound: here the sync could also
// finish between an early answer and the check.)
func TestSyncFlushConcurrentSends(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.FlushMode = store.FlushSync })
	e.invoke(t, sendV2Req(sendTestHeader("SyncMany", 0, ""), []byte("create")))
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err := e.cli.Invoke(ctx, e.b.Addr(), sendV2Req(sendTestHeader("SyncMany", int32(i%4), ""), []byte("x")))
			if err != nil {
				errs <- err
				return
			}
			if resp.Code != remoting.Success {
				errs <- errors.New("code " + strconv.Itoa(int(resp.Code)) + " " + resp.Remark)
				return
			}
			var h remoting.SendMessageResponseHeader
			if err := h.FromExt(resp.Ext); err != nil {
				errs <- err
				return
			}
			// The reply came after the round: the record is durable.
			entry, err := e.b.store.ConsumeQueueEntry("SyncMany", h.QueueID, h.QueueOffset)
			if err != nil {
				errs <- err
				return
			}
			if flushed, _ := e.b.store.FlushProgress(); flushed < entry.PhysicalOffset+int64(entry.Size) {
				errs <- errors.New("answered before the commit log was synced past the record")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func waitTopic(t *testing.T, b *Broker, topic string) {
	t.Helper()
	testutil.WaitFor(t, 0, "topic "+topic, func() bool { _, ok := b.topics.get(topic); return ok })
}

// A batch with sync flush is answered, with every id, once the round that
// covers its last record ends; the first (auto-creating) one goes through
// a worker, the second through the event loop.
func TestSyncFlushBatch(t *testing.T) {
	ff := newFakeFlush()
	b := syncFlushBroker(t, ff, time.Minute)
	c := rawframe.Dial(t, b.Addr())
	for round := range 2 {
		var msgs []*rocketmq.Message
		for i := range 4 {
			msgs = append(msgs, &rocketmq.Message{Topic: "SyncBatch", Body: []byte(fmt.Sprint("b", round, i))})
		}
		body, err := message.AppendBatch(nil, msgs)
		if err != nil {
			t.Fatal(err)
		}
		h := sendTestHeader("SyncBatch", 0, sendTestProps("WAIT", "true"))
		h.Batch = true
		frame, err := remoting.NewRequest(remoting.SendBatchMessage, h.V2().AppendExt(nil), body).AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(frame)
		testutil.WaitFor(t, 0, fmt.Sprintf("round %d stored", round), func() bool { return b.store.MaxOffset("SyncBatch", 0) == int64(4*(round+1)) })
		c.ExpectNothing(200 * time.Millisecond) // a batch not yet durable: no reply before the flush round
		last, err := b.store.ConsumeQueueEntry("SyncBatch", 0, int64(4*round+3))
		if err != nil {
			t.Fatal(err)
		}
		ff.advance(last.PhysicalOffset + int64(last.Size))
		resp, err := c.ReadErr(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		sendCheckResp(t, resp, remoting.Success, "")
		if ids := strings.Split(sendRespHeader(t, resp).MsgID, ","); len(ids) != 4 {
			t.Fatalf("round %d: %d ids in the answer, want 4", round, len(ids))
		}
	}
}
