package rmqtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// commitOffset stores offset for group on one queue as a consumer does
// (UPDATE_CONSUMER_OFFSET).
func commitOffset(t *testing.T, cli *transport.Client, addr, group, topic string, queue int32, offset int64) {
	t.Helper()
	h := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queue, CommitOffset: offset}
	resp, err := cli.Invoke(context.Background(), addr, remoting.NewRequest(remoting.UpdateConsumerOffset, h.AppendExt(nil), nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		t.Fatalf("commit %s/%d=%d: %v", topic, queue, offset, err)
	}
}

func TestWaitConsumed(t *testing.T) {
	c := StartCluster(t, WithBrokers(2))
	cli := newClient(t)
	ctx := context.Background()
	const group, topic = "wc_group", "WaitConsumedTopic"
	if err := c.CreateTopic(ctx, topic, 4); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(ctx, "OtherTopic", 4); err != nil {
		t.Fatal(err)
	}
	a, b := c.BrokerAddr("broker-a"), c.BrokerAddr("broker-b")

	if n, err := c.Consumed(ctx, group, topic); err != nil || n != 0 {
		t.Fatalf("before any commit: %d %v", n, err)
	}
	commitOffset(t, cli, a, group, topic, 0, 3)
	commitOffset(t, cli, b, group, topic, 2, 4)
	// Other groups and topics do not count.
	commitOffset(t, cli, a, "other_group", topic, 1, 100)
	commitOffset(t, cli, b, group, "OtherTopic", 1, 100)

	if n, err := c.Consumed(ctx, group, topic); err != nil || n != 7 {
		t.Fatalf("consumed %d %v, want 7", n, err)
	}
	if err := c.WaitConsumed(ctx, group, topic, 7); err != nil {
		t.Fatal(err)
	}

	// Long enough for the offsets to be read before the deadline on a
	// loaded machine: the error carries the last count.
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := c.WaitConsumed(short, group, topic, 8)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "committed 7 of 8 messages") {
		t.Fatalf("unreached count: %v", err)
	}

	// A wait under way sees commits made while it polls.
	done := make(chan error, 1)
	go func() { done <- WaitConsumed(ctx, c.NameServerAddr(), group, topic, 10) }()
	// Nothing happens before the commit: the wait is not satisfied by 7.
	if testutil.Poll(100*time.Millisecond, func() bool { return len(done) > 0 }) {
		t.Fatalf("WaitConsumed for 10 returned at 7: %v", <-done)
	}
	commitOffset(t, cli, a, group, topic, 3, 3)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitConsumed did not see the commit")
	}

	// Long enough for a route query to be answered before the deadline
	// on a loaded machine: the error carries the last answer.
	short2, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	defer cancel2()
	if err := c.WaitConsumed(short2, group, "NoSuchTopic", 1); !errors.Is(err, remoting.ErrTopicNotExist) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("missing topic: %v", err)
	}
}
