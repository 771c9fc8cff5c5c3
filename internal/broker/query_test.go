package broker

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// querySend stores one message through SEND_MESSAGE_V2 and returns its
// commit-log offset.
func querySend(t testing.TB, e *sendEnv, topic string, queue int32, body []byte, kv ...string) int64 {
	t.Helper()
	resp := e.invoke(t, sendV2Req(sendTestHeader(topic, queue, sendTestProps(kv...)), body))
	sendCheckResp(t, resp, remoting.Success, "")
	_, off, err := rocketmq.DecodeOffsetMsgID(sendRespHeader(t, resp).MsgID)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

func queryReq(topic, key string, maxNum int32, begin, end int64, unique *bool) *remoting.Command {
	h := remoting.QueryMessageRequestHeader{Topic: topic, Key: key, MaxNum: maxNum, BeginTimestamp: begin, EndTimestamp: end, UniqueKeyQuery: unique}
	return remoting.NewRequest(remoting.QueryMessage, h.AppendExt(nil), nil)
}

func queryDecode(t testing.TB, resp *remoting.Command) []*rocketmq.MessageExt {
	t.Helper()
	if resp.Code != remoting.Success {
		return nil
	}
	msgs, err := message.DecodeRecords(resp.Body)
	if err != nil {
		t.Fatalf("DecodeRecords: %v", err)
	}
	return msgs
}

// TestQueryMessageCapturedFrames replays the QUERY_MESSAGE and
// VIEW_MESSAGE_BY_ID requests the Java admin tool sent to a 4.9.8 broker,
// after storing the message they found there, and compares the answers
// with the captured ones.
func TestQueryMessageCapturedFrames(t *testing.T) {
	wantResp, _ := pullReadFrame(t, "0139-java-resp-12-QUERY_MESSAGE-SUCCESS.bin")
	captured, err := message.DecodeRecords(wantResp.Body)
	if err != nil || len(captured) != 1 {
		t.Fatalf("captured body: %d messages, %v", len(captured), err)
	}
	cm := captured[0]
	e := sendTestBroker(t, nil)
	// Another message under the second key only, and one in another topic
	// under the same key: neither answers the captured query.
	querySend(t, e, cm.Topic, 1, []byte("other"), "KEYS", "GoldenKey-1b")
	querySend(t, e, "OtherTopic", 0, []byte("other topic"), "KEYS", "GoldenKey-1")
	phys := querySend(t, e, cm.Topic, cm.QueueID, cm.Body,
		"KEYS", cm.Properties["KEYS"], "TAGS", cm.Properties["TAGS"],
		"UNIQ_KEY", cm.Properties["UNIQ_KEY"], "goldenProp", cm.Properties["goldenProp"])

	req, _ := pullReadFrame(t, "0138-java-req-12-QUERY_MESSAGE.bin")
	resp := e.invoke(t, req)
	if resp.Code != wantResp.Code || resp.Remark != wantResp.Remark || resp.Flag != wantResp.Flag {
		t.Errorf("response code %d remark %q flag %d, captured %d %q %d", resp.Code, resp.Remark, resp.Flag, wantResp.Code, wantResp.Remark, wantResp.Flag)
	}
	if got, want := pullExtKeys(resp.Ext), pullExtKeys(wantResp.Ext); got != want {
		t.Errorf("response extFields %s, captured %s", got, want)
	}
	rh := respHeader[remoting.QueryMessageResponseHeader](t, resp)
	rec, err := e.b.store.MessageAt(phys)
	if err != nil {
		t.Fatal(err)
	}
	m := queryDecode(t, resp)
	if len(m) != 1 {
		t.Fatalf("%d messages, want 1", len(m))
	}
	if !bytes.Equal(resp.Body, rec) {
		t.Errorf("body is not the stored record")
	}
	if rh.IndexLastUpdatePhyoffset != phys || rh.IndexLastUpdateTimestamp != m[0].StoreTimestamp {
		t.Errorf("header %+v, want the newest entry: offset %d time %d", rh, phys, m[0].StoreTimestamp)
	}
	for _, k := range []string{"KEYS", "TAGS", "UNIQ_KEY", "goldenProp"} {
		if m[0].Properties[k] != cm.Properties[k] {
			t.Errorf("property %s = %q, captured %q", k, m[0].Properties[k], cm.Properties[k])
		}
	}
	if m[0].Topic != cm.Topic || m[0].QueueID != cm.QueueID || !bytes.Equal(m[0].Body, cm.Body) {
		t.Errorf("message %s/%d %q, captured %s/%d %q", m[0].Topic, m[0].QueueID, m[0].Body, cm.Topic, cm.QueueID, cm.Body)
	}

	// VIEW_MESSAGE_BY_ID: the captured request with the offset of our copy.
	wantView, _ := pullReadFrame(t, "0141-java-resp-33-VIEW_MESSAGE_BY_ID-SUCCESS.bin")
	view, _ := pullReadFrame(t, "0140-java-req-33-VIEW_MESSAGE_BY_ID.bin")
	if v, ok := view.Ext.Get("offset"); !ok || v != strconv.FormatInt(cm.CommitLogOffset, 10) {
		t.Fatalf("captured view offset %q, captured record at %d", v, cm.CommitLogOffset)
	}
	view.Ext.Set("offset", strconv.FormatInt(phys, 10))
	vr := e.invoke(t, view)
	if vr.Code != wantView.Code || vr.Remark != wantView.Remark || len(vr.Ext) != len(wantView.Ext) {
		t.Errorf("view: code %d remark %q ext %v, captured %d %q %v", vr.Code, vr.Remark, vr.Ext, wantView.Code, wantView.Remark, wantView.Ext)
	}
	if !bytes.Equal(vr.Body, rec) {
		t.Errorf("view body is not the stored record")
	}
	if len(wantView.Body) != len(wantResp.Body) {
		t.Errorf("captured view body %d bytes, captured query body %d", len(wantView.Body), len(wantResp.Body))
	}
}

func TestQueryMessage(t *testing.T) {
	e := sendTestBroker(t, nil)
	start := time.Now().UnixMilli()
	var offs []int64
	for i := range 5 {
		offs = append(offs, querySend(t, e, "QT", int32(i%4), []byte("b"+strconv.Itoa(i)),
			"KEYS", fmt.Sprintf("k%d shared", i), "UNIQ_KEY", fmt.Sprintf("U%d", i)))
	}
	far := time.Now().Add(time.Hour).UnixMilli()
	yes, no := true, false
	tests := []struct {
		name   string
		req    *remoting.Command
		code   int32
		remark string
		offs   []int64 // newest first
	}{
		{"one key", queryReq("QT", "k3", 32, 0, far, &no), remoting.Success, "", offs[3:4]},
		{"uniq key", queryReq("QT", "U2", 32, start-1000, far, &yes), remoting.Success, "", offs[2:3]},
		{"no flag", queryReq("QT", "k1", 32, 0, far, nil), remoting.Success, "", offs[1:2]},
		{"shared, newest first", queryReq("QT", "shared", 32, 0, far, nil), remoting.Success, "", []int64{offs[4], offs[3], offs[2], offs[1], offs[0]}},
		{"maxNum", queryReq("QT", "shared", 2, 0, far, nil), remoting.Success, "", []int64{offs[4], offs[3]}},
		// The unique-key flag sets maxNum to defaultQueryMaxNum (32).
		{"unique flag overrides maxNum", queryReq("QT", "shared", 1, 0, far, &yes), remoting.Success, "", []int64{offs[4], offs[3], offs[2], offs[1], offs[0]}},
		{"maxNum 0", queryReq("QT", "k1", 0, 0, far, nil), remoting.QueryNotFound, "can not find message, maybe time range not correct", nil},
		{"unknown key", queryReq("QT", "nokey", 32, 0, far, nil), remoting.QueryNotFound, "can not find message, maybe time range not correct", nil},
		{"other topic", queryReq("QT2", "k1", 32, 0, far, nil), remoting.QueryNotFound, "can not find message, maybe time range not correct", nil},
		{"window in the future", queryReq("QT", "k1", 32, far, far+1000, nil), remoting.QueryNotFound, "can not find message, maybe time range not correct", nil},
		{"window in the past", queryReq("QT", "k1", 32, 0, start-10000, nil), remoting.QueryNotFound, "can not find message, maybe time range not correct", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.invoke(t, tt.req)
			if resp.Code != tt.code || resp.Remark != tt.remark {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tt.code, tt.remark)
			}
			// Both answers carry the index's last update.
			rh := respHeader[remoting.QueryMessageResponseHeader](t, resp)
			if rh.IndexLastUpdatePhyoffset != offs[4] || rh.IndexLastUpdateTimestamp < start {
				t.Errorf("header %+v, want offset %d and a time from %d", rh, offs[4], start)
			}
			msgs := queryDecode(t, resp)
			var got []int64
			for _, m := range msgs {
				got = append(got, m.CommitLogOffset)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.offs) {
				t.Errorf("offsets %v, want %v", got, tt.offs)
			}
		})
	}
}

// TestQueryMessageAcrossIndexFiles finds messages in every index file
// after several roll-overs.
func TestQueryMessageAcrossIndexFiles(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.IndexSlots, c.IndexEntries = 8, 10 })
	const n = 40 // two entries each (UNIQ_KEY and key): about 9 files
	offs := make([]int64, n)
	for i := range offs {
		offs[i] = querySend(t, e, "QR", 0, []byte("x"), "KEYS", fmt.Sprintf("key-%d", i))
	}
	far := time.Now().Add(time.Hour).UnixMilli()
	for i, off := range offs {
		msgs := queryDecode(t, e.invoke(t, queryReq("QR", fmt.Sprintf("key-%d", i), 32, 0, far, nil)))
		if len(msgs) != 1 || msgs[0].CommitLogOffset != off {
			t.Errorf("key-%d: %d messages, want the one at %d", i, len(msgs), off)
		}
	}
}

func TestViewMessageByID(t *testing.T) {
	e := sendTestBroker(t, nil)
	phys := querySend(t, e, "VT", 0, []byte("viewed"), "KEYS", "v")
	querySend(t, e, "VT", 0, []byte("next"), "KEYS", "w")
	rec, err := e.b.store.MessageAt(phys)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		ext    remoting.ExtFields
		code   int32
		remark string
		body   []byte
	}{
		{"record", (&remoting.ViewMessageRequestHeader{Offset: phys}).AppendExt(nil), remoting.Success, "", rec},
		{"5.x fields", (&remoting.ViewMessageRequestHeader{Offset: phys, Topic: remoting.Ptr("VT"), BrokerName: remoting.Ptr("broker-a")}).AppendExt(nil), remoting.Success, "", rec},
		{"inside a record", (&remoting.ViewMessageRequestHeader{Offset: phys + 1}).AppendExt(nil), remoting.SystemError, fmt.Sprintf("can not find message by the offset, %d", phys+1), nil},
		{"beyond the end", (&remoting.ViewMessageRequestHeader{Offset: 1 << 40}).AppendExt(nil), remoting.SystemError, "can not find message by the offset, 1099511627776", nil},
		{"negative", (&remoting.ViewMessageRequestHeader{Offset: -5}).AppendExt(nil), remoting.SystemError, "can not find message by the offset, -5", nil},
		{"no offset", nil, remoting.SystemError, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.invoke(t, remoting.NewRequest(remoting.ViewMessageByID, tt.ext, nil))
			if resp.Code != tt.code || (tt.ext != nil && resp.Remark != tt.remark) {
				t.Errorf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tt.code, tt.remark)
			}
			if !bytes.Equal(resp.Body, tt.body) {
				t.Errorf("body %d bytes, want %d", len(resp.Body), len(tt.body))
			}
		})
	}
}

// TestQueryMessageAfterRestart finds messages by key and views them by
// offset after a clean stop and after a crash, across index files.
func TestQueryMessageAfterRestart(t *testing.T) {
	eachStop(t, func(t *testing.T, clean bool) {
		cfg := sendTestConfig(t)
		cfg.IndexSlots, cfg.IndexEntries = 8, 10
		e := &sendEnv{b: startBroker(t, cfg), cli: newTestClient(t)}
		offs := make([]int64, 12)
		for i := range offs {
			offs[i] = querySend(t, e, "QRestart", int32(i%2), []byte("r"+strconv.Itoa(i)), "KEYS", fmt.Sprintf("rk-%d", i))
		}
		if clean {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := e.b.Close(ctx)
			cancel()
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
		} else if err := e.b.Crash(); err != nil {
			t.Fatalf("Crash: %v", err)
		}
		e.cli.CloseConn(e.b.Addr())
		e.b = startBroker(t, cfg)
		// One more after the restart, under a key used before it.
		last := querySend(t, e, "QRestart", 0, []byte("after"), "KEYS", "rk-3")
		far := time.Now().Add(time.Hour).UnixMilli()
		for i, off := range offs {
			want := []int64{off}
			if i == 3 {
				want = []int64{last, off}
			}
			var got []int64
			for _, m := range queryDecode(t, e.invoke(t, queryReq("QRestart", fmt.Sprintf("rk-%d", i), 32, 0, far, nil))) {
				got = append(got, m.CommitLogOffset)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rk-%d: offsets %v, want %v", i, got, want)
			}
			vh := remoting.ViewMessageRequestHeader{Offset: off}
			vr := e.invoke(t, remoting.NewRequest(remoting.ViewMessageByID, vh.AppendExt(nil), nil))
			if m := queryDecode(t, vr); len(m) != 1 || string(m[0].Body) != "r"+strconv.Itoa(i) {
				t.Errorf("view %d: code %d remark %q", off, vr.Code, vr.Remark)
			}
		}
	})
}
