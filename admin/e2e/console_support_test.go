package e2e

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestMessagesByTime: the messages stored in a time range come back, each
// once, earliest first, bounded by maxNum; a range before them is empty.
func TestMessagesByTime(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	ctx := ctxT(t)
	begin := time.Now().Add(-time.Second)
	ids := e.send(t, topic, 10)
	end := time.Now().Add(time.Second)

	// A Java broker indexes a message for pulls after the send returns:
	// wait until it has indexed all.
	var msgs []*rocketmq.MessageExt
	testutil.WaitFor(t, wait, "the 10 messages to be pullable", func() bool {
		var err error
		msgs, err = e.adm.MessagesByTime(ctx, topic, begin, end, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs) >= len(ids)
	})
	var got []string
	for i, m := range msgs {
		got = append(got, m.MsgID)
		if m.Topic != topic || m.BrokerName == "" {
			t.Errorf("message %s: topic %q broker %q", m.MsgID, m.Topic, m.BrokerName)
		}
		if i > 0 && m.StoreTimestamp < msgs[i-1].StoreTimestamp {
			t.Errorf("message %d stored before message %d", i, i-1)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(ids))) {
		t.Fatalf("got %v, want %v", got, ids)
	}
	few, err := e.adm.MessagesByTime(ctx, topic, begin, end, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(few) != 3 {
		t.Fatalf("maxNum 3: %d messages", len(few))
	}
	none, err := e.adm.MessagesByTime(ctx, topic, begin.Add(-time.Hour), begin.Add(-30*time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(none) != 0 {
		t.Fatalf("range before the messages: %d messages", len(none))
	}
	if _, err := e.adm.MessagesByTime(ctx, topic, end, begin, 10); err == nil {
		t.Fatal("end before begin: no error")
	}

	// A second batch stored later: a range ending at the first batch's
	// last store time holds the first batch only, one starting at the
	// second's first store time the second only.
	last := msgs[len(msgs)-1].StoreTimestamp
	testutil.WaitFor(t, wait, "the clock past the first batch", func() bool { return time.Now().UnixMilli() > last })
	ids2 := e.send(t, topic, 4)
	var all []*rocketmq.MessageExt
	testutil.WaitFor(t, wait, "the 14 messages to be pullable", func() bool {
		var err error
		all, err = e.adm.MessagesByTime(ctx, topic, begin, time.Now().Add(time.Second), 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(all) >= 14
	})
	if len(all) != 14 {
		t.Fatalf("both batches: %d messages", len(all))
	}
	first := all[10].StoreTimestamp
	for _, c := range []struct {
		b, e time.Time
		want []string
	}{
		{begin, time.UnixMilli(last), ids},
		{time.UnixMilli(first), time.Now().Add(time.Second), ids2},
	} {
		got, err := e.adm.MessagesByTime(ctx, topic, c.b, c.e, 100)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, m := range got {
			gotIDs = append(gotIDs, m.MsgID)
		}
		if !slices.Equal(slices.Sorted(slices.Values(gotIDs)), slices.Sorted(slices.Values(c.want))) {
			t.Errorf("[%d, %d]: %v, want %v", c.b.UnixMilli(), c.e.UnixMilli(), gotIDs, c.want)
		}
	}
}

// TestConsumeMessageDirectly: a live member consumes a stored message
// again when asked through its broker, and the admin returns its answer.
func TestConsumeMessageDirectly(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 2)
	group := name(t, "cmdg")
	var mu sync.Mutex
	seen := map[string]int{}
	e.startConsumerFunc(t, group, topic, func(m *rocketmq.MessageExt) {
		mu.Lock()
		seen[m.MsgID]++
		mu.Unlock()
	})
	ids := e.send(t, topic, 1)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return seen[ids[0]]
	}
	testutil.WaitFor(t, wait, "the message consumed", func() bool { return count() == 1 })
	ctx := ctxT(t)
	cc, err := e.adm.ConsumerConnection(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.adm.ConsumeMessageDirectly(ctx, group, cc.ConnectionSet[0].ClientID, topic, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if res.ConsumeResult != remoting.ConsumeResultSuccess {
		t.Fatalf("consume result %+v", res)
	}
	if n := count(); n != 2 {
		t.Fatalf("message consumed %d times, want 2", n)
	}
	if _, err := e.adm.ConsumeMessageDirectly(ctx, group, "no-such-client@1", topic, ids[0]); err == nil {
		t.Fatal("unknown client: no error")
	}
}
