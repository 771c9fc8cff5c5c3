package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
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

	query := func() ([]*rocketmq.MessageExt, error) {
		return e.adm.QueryMessage(ctx, topic, fmt.Sprintf("key-%d", i), 0, begin, time.Now().Add(time.Minute))
	}
	if e.local == nil {
		// A Java broker indexes shortly after the send's answer; ours before.
		testutil.WaitFor(t, wait, "the message indexed", func() bool { m, err := query(); return err == nil && len(m) > 0 })
	}
	msgs, err := query()
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
	if ok, err := e.adm.Consumed(ctx, g, m); err != nil || ok {
		t.Fatalf("consumed before any consumer: %v %v", ok, err)
	}
	var consumed atomic.Pointer[rocketmq.MessageExt]
	e.startConsumerFunc(t, g, topic, func(c *rocketmq.MessageExt) {
		if c.MsgID == want.MsgID {
			consumed.Store(c)
		}
	})
	testutil.WaitFor(t, wait, "the message consumed", func() bool {
		ok, err := e.adm.Consumed(ctx, g, m)
		return err == nil && ok && consumed.Load() != nil
	})
	tracks, err := e.adm.MessageTrack(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 1 || tracks[0].Group != g || tracks[0].Type != admin.TrackConsumed || tracks[0].Err != nil {
		t.Fatalf("track %+v", tracks)
	}
	// What the admin client reads is what the consumer got, but for the
	// properties a consumer adds on delivery (as Java's does).
	c := consumed.Load()
	props := maps.Clone(c.Properties)
	for _, k := range []string{"CONSUME_START_TIME", "MAX_OFFSET", "MIN_OFFSET"} {
		if _, ok := props[k]; !ok {
			t.Fatalf("consumed message without %s: %v", k, props)
		}
		delete(props, k)
	}
	if !bytes.Equal(c.Body, m.Body) || !maps.Equal(props, m.Properties) || c.OffsetMsgID != m.OffsetMsgID ||
		c.BornTimestamp != m.BornTimestamp || c.StoreTimestamp != m.StoreTimestamp || c.BornHost != m.BornHost ||
		c.SysFlag != m.SysFlag || c.BodyCRC != m.BodyCRC || c.CommitLogOffset != m.CommitLogOffset {
		t.Fatalf("viewed %+v\nconsumed %+v", m, c)
	}
}

// TestQueryAmongMany: among 10,000 messages with keys of their own, spread
// over several index files by a small index, a key of the first, a middle
// and the last file each finds exactly its message.
func TestQueryAmongMany(t *testing.T) {
	const n, perFile = 10000, 3000
	e := start(t, rmqtest.WithIndexSize(1000, perFile))
	e.needLocal(t, "the index-file size is the in-process broker's")
	ctx := ctxT(t)
	topic := e.newTopic(t, 4)
	p, err := producer.New(producer.WithGroup("pg_admin_e2e"), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	for i := 0; i < n; i += 100 {
		batch := make([]*rocketmq.Message, 0, 100)
		for j := i; j < i+100; j++ {
			m, err := producer.NewMessage(topic, []byte(fmt.Sprintf("many-%d", j)), producer.Keys(fmt.Sprintf("many-%d", j)))
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, m)
		}
		if _, err := p.Send(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	// Each message is indexed twice (UNIQ_KEY and its key): 10,000
	// messages fill 20,000 entries, more than 6 files.
	for _, i := range []int{0, 1, perFile / 2, n / 2, n - 1} {
		key := fmt.Sprintf("many-%d", i)
		msgs, err := e.adm.QueryMessage(ctx, topic, key, 0, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || string(msgs[0].Body) != key || !slices.Contains(msgs[0].Keys(), key) {
			t.Fatalf("key %s: %d messages %v", key, len(msgs), msgs)
		}
	}
	entries, err := os.ReadDir(filepath.Join(e.local.StoreDir(e.broker), "index"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 3 {
		t.Fatalf("%d index files, want several", len(entries))
	}
}

// TestMessageTrack: for a message tagged B, a group taking every tag has
// consumed it, a group taking only tag A has consumed it but filtered it
// out.
func TestMessageTrack(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 1)
	p, err := producer.New(producer.WithGroup("pg_admin_e2e"), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	m, err := producer.NewMessage(topic, []byte("tagged"), producer.Tag("B"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Send(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := e.adm.ViewMessageByOffsetID(ctx, res.OffsetMsgID)
	if err != nil {
		t.Fatal(err)
	}
	all, onlyA := name(t, "cgall"), name(t, "cga")
	e.startConsumerSel(t, all, topic, consumer.Tags("*"), func(*rocketmq.MessageExt) {})
	e.startConsumerSel(t, onlyA, topic, consumer.Tags("A"), func(*rocketmq.MessageExt) {})
	want := map[string]admin.TrackType{all: admin.TrackConsumed, onlyA: admin.TrackConsumedButFiltered}
	var tracks []admin.MessageTrack
	testutil.WaitFor(t, wait, "both groups past the message", func() bool {
		tracks, err = e.adm.MessageTrack(ctx, msg)
		if err != nil || len(tracks) != 2 {
			return false
		}
		for _, tr := range tracks {
			if tr.Type != want[tr.Group] || tr.Err != nil {
				return false
			}
		}
		return true
	})
	if s := admin.TrackConsumedButFiltered.String(); s != "CONSUMED_BUT_FILTERED" {
		t.Fatalf("String() = %q", s)
	}
}

// TestMessageTrackPull: a lite-pull group's progress is its own: the track
// says PULL whatever it committed.
func TestMessageTrackPull(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 1)
	res := e.sendResults(t, topic, 1)
	msg, err := e.adm.ViewMessageByOffsetID(ctx, res[0].OffsetMsgID)
	if err != nil {
		t.Fatal(err)
	}
	g := name(t, "cgpull")
	c, err := consumer.NewPull(consumer.WithGroup(g), consumer.WithNameServers(e.ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.Tags("*")); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Shutdown(context.Background()) }()
	for got := 0; got == 0; {
		msgs, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = len(msgs)
	}
	if err := c.CommitSync(ctx); err != nil {
		t.Fatal(err)
	}
	var tracks []admin.MessageTrack
	testutil.WaitFor(t, wait, "the pull group tracked", func() bool {
		tracks, err = e.adm.MessageTrack(ctx, msg)
		return err == nil && len(tracks) == 1 && tracks[0].Group == g && tracks[0].Type == admin.TrackPull
	})
}
