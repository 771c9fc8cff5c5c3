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

// TestFlowControl: with handlers that do not return, a consumer stops
// pulling once each queue holds its cap, by size per queue, by count per
// queue, or by size per topic (split over the queues held, replacing the
// per-queue default): what it reads from the broker stays within the caps
// plus one pull batch per queue, however large the backlog. Once the
// handlers return, everything is consumed.
//
// The backlog is 32 MiB by default and ROCKETMQ_E2E_BACKLOG_MIB sets it
// (1024 for the 1 GiB case): the bound does not depend on it, and writing
// 1 GiB under -race takes longer than a test of the ordinary run should.
func TestFlowControl(t *testing.T) {
	const (
		queues   = 4
		bodySize = 64 << 10
		batch    = 4 // messages per pull: 256 KiB
		perSend  = 16
	)
	backlogMiB := 32
	if s := os.Getenv("ROCKETMQ_E2E_BACKLOG_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 8 {
			t.Fatalf("ROCKETMQ_E2E_BACKLOG_MIB=%q: want a number of MiB >= 8", s)
		}
		backlogMiB = n
	}
	e := start(t)
	topic := e.newTopic(t, queues)
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

	// Each queue may hold its cap plus one pull that was under way, the
	// messages in the handlers among them. Java compares whole MiB (held /
	// 1 MiB > cap), which lets a queue reach cap+1 MiB before it pauses.
	// Frames and headers add under 1 KiB a message.
	const msgCost = bodySize + 1024
	for _, tc := range []struct {
		name    string
		opts    []consumer.Option
		capMsgs int // messages per queue before its pulls pause
	}{
		{"size per queue", []consumer.Option{consumer.WithPullThresholdSizeForQueue(1)}, (1 + 1) << 20 / bodySize},
		{"count per queue", []consumer.Option{consumer.WithPullThresholdForQueue(8)}, 8},
		// 4 MiB over 4 queues: 1 MiB each, whatever the per-queue setting
		// (100 MiB by default) says.
		{"size per topic", []consumer.Option{consumer.WithPullThresholdSizeForTopic(queues)}, (1 + 1) << 20 / bodySize},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
				entered.Add(int32(len(msgs)))
				select {
				case <-release:
				case <-ctx.Done():
					return consumer.RetryLater, ctx.Err()
				}
				return consumer.Success, nil
			}
			// More handler goroutines than messages the queues may hold:
			// every message pulled goes straight into a stuck handler, and
			// only the thresholds stop the pulls.
			const goroutines = 256
			g := group(t, "")
			opts := append([]consumer.Option{consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithDialer(dial),
				consumer.WithPullBatchSize(batch), consumer.WithConsumeGoroutines(goroutines)}, tc.opts...)
			c := e.startConsumer(t, g, topic, consumer.All, h, opts...)

			mostMsgs := queues * (tc.capMsgs + batch)
			bound := int64(mostMsgs * msgCost)
			floor := int32(queues * (tc.capMsgs / 2))
			testutil.WaitFor(t, wait, "every queue holding messages", func() bool { return entered.Load() >= floor })
			// Nothing happens from here on: the pulls stay paused. The
			// consumer re-checks every 50 ms, so a second shows whether it
			// keeps them so.
			testutil.Poll(time.Second, func() bool {
				if n := read.Load(); n > bound {
					t.Fatalf("read %d bytes from the broker with the handlers stuck, bound %d (backlog %d MiB)", n, bound, backlogMiB)
				}
				return false
			})
			t.Logf("held back at %d bytes read, %d messages (bound %d bytes, %d messages) of a %d MiB backlog",
				read.Load(), entered.Load(), bound, mostMsgs, backlogMiB)
			if held := int(entered.Load()); held > mostMsgs {
				t.Fatalf("%d messages in stuck handlers, bound %d", held, mostMsgs)
			}
			// The consumer's own figures, as the admin tool shows them.
			var cached []int32
			for mq, pq := range e.runningInfo(t, g).MQTable {
				if mq.Topic != topic {
					continue
				}
				cached = append(cached, pq.CachedMsgCount)
				if int(pq.CachedMsgCount) > tc.capMsgs+batch {
					t.Errorf("queue %d holds %d messages, bound %d", mq.QueueID, pq.CachedMsgCount, tc.capMsgs+batch)
				}
			}
			t.Logf("messages held per queue (running info): %v", cached)
			close(release)
			if backlogMiB <= 64 {
				e.waitConsumed(t, g, topic, int64(count))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
