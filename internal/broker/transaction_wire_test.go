package broker

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// txWireFrame decodes one captured frame of testdata/wire.
func txWireFrame(t testing.TB, file string) *remoting.Command {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../testdata/wire", file))
	if err != nil {
		t.Fatal(err)
	}
	cmd, _, err := remoting.DecodeFrame(data, remoting.DefaultMaxFrameSize)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cmd
}

// withExt is req with the named extFields replaced (other fields and
// their order kept).
func withExt(req *remoting.Command, kv map[string]string) *remoting.Command {
	r := *req
	r.Ext = append(remoting.ExtFields(nil), req.Ext...)
	for i, f := range r.Ext {
		if v, ok := kv[f.Key]; ok {
			r.Ext[i].Value = v
		}
	}
	return &r
}

// TestTransactionCapturedFrames replays the 4.9.8 Java transaction
// producer's exchange (wire 0115–0124, 0176–0178): half sends, END_TRANSACTION
// commit, rollback and unknown, the broker's CHECK_TRANSACTION_STATE and the
// producer's answer. The captured END_TRANSACTION requests are sent with
// their offsets replaced by ours; the check and the stored messages are
// compared field by field with the captured ones, except what depends on
// the store (offsets, store time, hosts) and the broker version.
func TestTransactionCapturedFrames(t *testing.T) {
	e := txTestBroker(t, nil)
	const group = "GoldenTxProducerJava"
	p := newTxProducer(t, e, "192.0.2.2@golden", group)
	ctx := context.Background()

	// send replays a captured half send and returns the offsets the
	// producer would take from the answer.
	send := func(file string) txHalf {
		t.Helper()
		req := txWireFrame(t, file)
		resp := invokeBroker(t, e.cli, e.b, req)
		if resp.Code != remoting.Success {
			t.Fatalf("%s: code %d remark %q", file, resp.Code, resp.Remark)
		}
		rh := sendRespHeader(t, resp)
		_, phys, err := rocketmq.DecodeOffsetMsgID(rh.MsgID)
		if err != nil {
			t.Fatal(err)
		}
		return txHalf{queueOffset: rh.QueueOffset, phys: phys}
	}
	// end sends a captured END_TRANSACTION, oneway as captured, naming h.
	end := func(file string, h txHalf) {
		t.Helper()
		req := withExt(txWireFrame(t, file), map[string]string{
			"commitLogOffset":      strconv.FormatInt(h.phys, 10),
			"tranStateTableOffset": strconv.FormatInt(h.queueOffset, 10),
		})
		if !req.IsOneway() {
			t.Fatalf("%s is not oneway", file)
		}
		if err := e.cli.InvokeOneway(ctx, e.b.Addr(), req); err != nil {
			t.Fatal(err)
		}
	}
	opsAfter := func(n int64) {
		t.Helper()
		testutil.WaitFor(t, 5*time.Second, "op record "+strconv.FormatInt(n, 10), func() bool {
			return e.b.store.MaxOffset(rocketmq.TopicTransOpHalf, 0) >= n
		})
	}
	capturedMsg := func(file string) *rocketmq.MessageExt {
		t.Helper()
		msgs, err := message.DecodeRecords(txWireFrame(t, file).Body)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("%s: %d messages, %v", file, len(msgs), err)
		}
		return msgs[0]
	}
	sameMessage := func(what string, got, want *rocketmq.MessageExt) {
		t.Helper()
		if got.Topic != want.Topic || got.QueueID != want.QueueID || got.SysFlag != want.SysFlag || got.Flag != want.Flag ||
			got.ReconsumeTimes != want.ReconsumeTimes || string(got.Body) != string(want.Body) || got.BornTimestamp != want.BornTimestamp ||
			got.StoreSize != want.StoreSize || !maps.Equal(got.Properties, want.Properties) {
			t.Errorf("%s:\n got  topic %s queue %d sysFlag %d flag %d reconsume %d size %d born %d body %q props %v\n want topic %s queue %d sysFlag %d flag %d reconsume %d size %d born %d body %q props %v",
				what, got.Topic, got.QueueID, got.SysFlag, got.Flag, got.ReconsumeTimes, got.StoreSize, got.BornTimestamp, got.Body, got.Properties,
				want.Topic, want.QueueID, want.SysFlag, want.Flag, want.ReconsumeTimes, want.StoreSize, want.BornTimestamp, want.Body, want.Properties)
		}
	}

	// Commit (0115, 0117): stored as 0120 shows it.
	commit := send("0115-java-req-310-SEND_MESSAGE_V2.bin")
	end("0117-java-req-37-END_TRANSACTION.bin", commit)
	opsAfter(1)
	got := e.read("GoldenTopicJava", 2)
	if len(got) != 1 {
		t.Fatalf("commit: queue 2 holds %d messages", len(got))
	}
	want := capturedMsg("0120-java-resp-11-PULL_MESSAGE-SUCCESS.bin")
	sameMessage("committed message", got[0], want)
	if got[0].PreparedTransactionOffset != commit.phys {
		t.Errorf("preparedTransactionOffset %d, want the half's %d", got[0].PreparedTransactionOffset, commit.phys)
	}

	// Rollback (0118, 0121): nothing delivered.
	rollback := send("0118-java-req-310-SEND_MESSAGE_V2.bin")
	end("0121-java-req-37-END_TRANSACTION.bin", rollback)
	opsAfter(2)

	// Unknown (0122, 0124), then the check (0176) and its answer (0177).
	check := send("0122-java-req-310-SEND_MESSAGE_V2.bin")
	end("0124-java-req-37-END_TRANSACTION.bin", check)
	wantCheck := txWireFrame(t, "0176-broker-req-39-CHECK_TRANSACTION_STATE.bin")
	// A round that began before the commit's or the rollback's op record
	// was written may check those first; they are let through.
	checkID, _ := wantCheck.Ext.Get("msgId")
	c := p.nextCheckFor(t, 5*time.Second, checkID)
	if c.req.Code != wantCheck.Code || c.req.Flag != wantCheck.Flag || c.req.Language != wantCheck.Language || c.req.Remark != wantCheck.Remark {
		t.Errorf("check code %d flag %d language %d remark %q, captured %d %d %d %q", c.req.Code, c.req.Flag, c.req.Language, c.req.Remark,
			wantCheck.Code, wantCheck.Flag, wantCheck.Language, wantCheck.Remark)
	}
	var gotKeys, wantKeys []string
	for _, f := range c.req.Ext {
		gotKeys = append(gotKeys, f.Key)
	}
	for _, f := range wantCheck.Ext {
		wantKeys = append(wantKeys, f.Key)
	}
	if strings.Join(gotKeys, ",") != strings.Join(wantKeys, ",") {
		t.Errorf("check header keys %v, captured %v", gotKeys, wantKeys)
	}
	for _, k := range []string{"msgId", "transactionId"} {
		g, _ := c.req.Ext.Get(k)
		w, _ := wantCheck.Ext.Get(k)
		if g != w {
			t.Errorf("check %s %q, captured %q", k, g, w)
		}
	}
	if c.h.TranStateTableOffset <= check.queueOffset || c.h.CommitLogOffset <= check.phys {
		t.Errorf("check names %d/%d, not a copy after the half at %d/%d", c.h.TranStateTableOffset, c.h.CommitLogOffset, check.queueOffset, check.phys)
	}
	wantBody := capturedMsg("0176-broker-req-39-CHECK_TRANSACTION_STATE.bin")
	sameMessage("check body", c.m, wantBody)
	if c.m.QueueOffset != c.h.TranStateTableOffset || c.m.CommitLogOffset != c.h.CommitLogOffset || c.m.PreparedTransactionOffset != 0 {
		t.Errorf("check body offsets %d/%d prepared %d, header %d/%d", c.m.QueueOffset, c.m.CommitLogOffset, c.m.PreparedTransactionOffset,
			c.h.TranStateTableOffset, c.h.CommitLogOffset)
	}
	// The producer answers on its own connection (0177).
	answer := withExt(txWireFrame(t, "0177-java-req-37-END_TRANSACTION.bin"), map[string]string{
		"commitLogOffset":      strconv.FormatInt(c.h.CommitLogOffset, 10),
		"tranStateTableOffset": strconv.FormatInt(c.h.TranStateTableOffset, 10),
	})
	if err := p.cli.InvokeOneway(ctx, e.b.Addr(), answer); err != nil {
		t.Fatal(err)
	}
	opsAfter(3)
	got = e.read("GoldenTopicJava", 0)
	if len(got) != 1 {
		t.Fatalf("checked commit: queue 0 holds %d messages", len(got))
	}
	sameMessage("message committed after a check", got[0], capturedMsg("0178-java-resp-11-PULL_MESSAGE-SUCCESS.bin"))
	if n := len(e.read("GoldenTopicJava", 3)); n != 0 {
		t.Errorf("rolled back message delivered: %d", n)
	}
	p.noCheck(t, 500*time.Millisecond, e.halfEnd())
}
