package e2e

import (
	"context"
	"crypto/rand"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// countingConn counts the bytes read through it.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// TestFlowControl: with a handler that does not return, a consumer stops
// pulling once each queue holds its share: what it reads from the broker
// stays within the per-queue size threshold plus one pull batch per queue,
// however large the backlog. Once the handler returns, everything is
// consumed.
//
// The backlog is 64 MiB by default and ROCKETMQ_E2E_BACKLOG_MIB sets it
// (1024 for the 1 GiB case): the bound does not depend on it, and writing
// 1 GiB takes longer than a test of the ordinary run should.
func TestFlowControl(t *testing.T) {
	const (
		queues    = 4
		bodySize  = 64 << 10
		batch     = 4 // messages per pull: 256 KiB
		threshold = 1 // MiB held per queue before its pulls pause
		perSend   = 16
	)
	backlogMiB := 64
	if s := os.Getenv("ROCKETMQ_E2E_BACKLOG_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 8 {
			t.Fatalf("ROCKETMQ_E2E_BACKLOG_MIB=%q: want a number of MiB >= 8", s)
		}
		backlogMiB = n
	}
	e := start(t)
	topic := e.newTopic(t, queues)
	g := group(t, "")
	p := e.newProducer(t)

	// The backlog, in batches (never compressed) of random bodies.
	body := make([]byte, bodySize)
	rand.Read(body)
	count := backlogMiB << 20 / bodySize
	sent := time.Now()
	for i := 0; i < count; i += perSend {
		msgs := make([]*rocketmq.Message, perSend)
		for j := range msgs {
			msgs[j] = &rocketmq.Message{Topic: topic, Body: body}
		}
		if _, err := p.Send(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("backlog of %d MiB (%d messages) stored in %v", backlogMiB, count, time.Since(sent))

	var read atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || addr == e.ns {
			return c, err
		}
		return countingConn{c, &read}, nil
	}
	release := make(chan struct{})
	var entered atomic.Int32
	h := func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		entered.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			return consumer.RetryLater, ctx.Err()
		}
		return consumer.Success, nil
	}
	// More handler goroutines than messages the queues may hold: every
	// message pulled goes straight into a stuck handler, and only the
	// per-queue thresholds stop the pulls.
	const goroutines = 256
	e.startConsumer(t, g, topic, consumer.All, h, consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithDialer(dial),
		consumer.WithPullBatchSize(batch), consumer.WithPullThresholdSizeForQueue(threshold), consumer.WithConsumeGoroutines(goroutines))

	// Each queue may hold its threshold plus one pull that was under way,
	// the messages in the handlers among them. Java compares whole MiB
	// (held / 1 MiB > threshold), which lets a queue reach threshold+1 MiB
	// before it pauses. Frames and headers add under 1 KiB a message.
	perQueue := (threshold+1)<<20 + batch*bodySize
	bound := int64(queues*perQueue + queues*(perQueue/bodySize)*1024)
	floor := int64(queues * threshold << 20)
	testutil.WaitFor(t, wait, "every queue holding its threshold", func() bool { return read.Load() >= floor })
	// Nothing happens from here on: the pulls stay paused. The consumer
	// re-checks every 50 ms, so a second shows whether it keeps them so.
	testutil.Poll(time.Second, func() bool {
		if n := read.Load(); n > bound {
			t.Fatalf("read %d bytes from the broker with the handler stuck, bound %d (backlog %d MiB)", n, bound, backlogMiB)
		}
		return false
	})
	t.Logf("held back at %d bytes read, %d messages (bound %d bytes) of a %d MiB backlog", read.Load(), entered.Load(), bound, backlogMiB)
	if held, most := int(entered.Load()), queues*perQueue/bodySize; held > most {
		t.Fatalf("%d messages in stuck handlers, bound %d", held, most)
	}

	close(release)
	if backlogMiB <= 64 {
		e.waitConsumed(t, g, topic, int64(count))
	}
}
