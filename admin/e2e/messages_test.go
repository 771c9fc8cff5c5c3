package e2e

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestQueryAndView: a message sent is found at once by its key among the
// others, by its offset id and by its client id, with its body, keys and
// position; whether a group consumed it follows the group's progress.
func TestQueryAndView(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 4)
	begin := time.Now().Add(-time.Minute)
	res := e.sendResults(t, topic, 50)
	const i = 37
	want := res[i]

	msgs, err := e.adm.QueryMessage(ctx, topic, fmt.Sprintf("key-%d", i), 0, begin, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("query found %d messages", len(msgs))
	}
	check := func(how string, m *rocketmq.MessageExt) {
		t.Helper()
		if m.Topic != topic || string(m.Body) != fmt.Sprintf("body-%d", i) || m.MsgID != want.MsgID ||
			m.OffsetMsgID != want.OffsetMsgID || m.QueueOffset != want.QueueOffset || int(m.QueueID) != want.Queue.QueueID {
			t.Fatalf("%s: %+v, want %+v", how, m, want)
		}
	}
	check("query by key", msgs[0])
	if msgs[0].BrokerName != want.Queue.BrokerName {
		t.Fatalf("query by key: broker %q, want %q", msgs[0].BrokerName, want.Queue.BrokerName)
	}
	// A time window before the send finds nothing, without an error.
	if msgs, err := e.adm.QueryMessage(ctx, topic, fmt.Sprintf("key-%d", i), 0, begin, begin.Add(time.Second)); err != nil || len(msgs) != 0 {
		t.Fatalf("query before the send: %d messages, %v", len(msgs), err)
	}

	m, err := e.adm.ViewMessageByOffsetID(ctx, want.OffsetMsgID)
	if err != nil {
		t.Fatal(err)
	}
	check("view by offset id", m)
	if m, err = e.adm.MessageByUniqKey(ctx, topic, want.MsgID); err != nil {
		t.Fatal(err)
	}
	check("by unique key", m)
	for _, id := range []string{want.MsgID, want.OffsetMsgID} {
		if m, err = e.adm.ViewMessage(ctx, topic, id); err != nil {
			t.Fatal(err)
		}
		check("view "+id, m)
	}
	if _, err := e.adm.MessageByUniqKey(ctx, topic, "0A0000010000000000000000000000FF"); !errors.Is(err, remoting.ErrQueryNotFound) {
		t.Fatalf("unknown client id: %v", err)
	}
	if _, err := e.adm.ViewMessageByOffsetID(ctx, "not-an-id"); !errors.Is(err, rocketmq.ErrInvalidMsgID) {
		t.Fatalf("bad offset id: %v", err)
	}

	g := name(t, "cg")
	var count atomic.Int64
	if ok, err := e.adm.Consumed(ctx, g, m); err != nil || ok {
		t.Fatalf("consumed before any consumer: %v %v", ok, err)
	}
	e.startConsumer(t, g, topic, &count)
	testutil.WaitFor(t, wait, "the message consumed", func() bool {
		ok, err := e.adm.Consumed(ctx, g, m)
		return err == nil && ok
	})
}
