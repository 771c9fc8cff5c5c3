package broker

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// adminTestBroker is a broker whose calls to consumers give up after
// 300 ms, with an admin client.
func adminTestBroker(t *testing.T) (*Broker, *clientsPeer) {
	t.Helper()
	b := clientsTestBroker(t, func(c *Config) { c.ClientCallTimeout = 300 * time.Millisecond })
	return b, clientsNewPeer(t, b, "admin")
}

// consumerAt registers a consumer of group (subscribing to topic) whose
// answers to the broker's requests come from handlers.
func consumerAt(t *testing.T, b *Broker, id, group, topic string, handlers map[int32]func(*remoting.Command) *remoting.Command) *clientsPeer {
	t.Helper()
	p := clientsNewPeer(t, b, id)
	for code, h := range handlers {
		p.cli.RegisterHandler(code, func(_ context.Context, _ string, req *remoting.Command) *remoting.Command { return h(req) })
	}
	p.heartbeat(t, group, remoting.MessageModelClustering, map[string]string{topic: "*"})
	return p
}

func TestGetConsumerRunningInfoRelay(t *testing.T) {
	b, admin := adminTestBroker(t)
	got := make(chan *remoting.Command, 1)
	consumerAt(t, b, "10.0.0.1@c1", "RunG", "RunT", map[int32]func(*remoting.Command) *remoting.Command{
		remoting.GetConsumerRunningInfo: func(req *remoting.Command) *remoting.Command {
			got <- req
			resp := remoting.NewResponse(remoting.Success, "from c1")
			resp.Body = []byte(`{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"},"subscriptionSet":[]}`)
			return resp
		},
	})
	release := make(chan struct{})
	consumerAt(t, b, "10.0.0.2@silent", "RunG", "RunT", map[int32]func(*remoting.Command) *remoting.Command{
		remoting.GetConsumerRunningInfo: func(*remoting.Command) *remoting.Command {
			<-release // answers only at the end of the test, long after the broker gave up
			return remoting.NewResponse(remoting.Success, "")
		},
	})
	t.Cleanup(func() { close(release) })
	ask := func(client string) *remoting.Command {
		h := remoting.GetConsumerRunningInfoRequestHeader{ConsumerGroup: "RunG", ClientID: client, JstackEnable: true}
		return admin.invoke(t, remoting.NewRequest(remoting.GetConsumerRunningInfo, h.AppendExt(nil), nil))
	}

	resp := ask("10.0.0.1@c1")
	if resp.Code != remoting.Success || resp.Remark != "from c1" || !strings.Contains(string(resp.Body), "CONSUME_PASSIVELY") {
		t.Fatalf("relayed answer: code %d remark %q body %s", resp.Code, resp.Remark, resp.Body)
	}
	if resp.Language != remoting.LanguageGo {
		t.Errorf("relayed answer says language %v, want the consumer's", resp.Language)
	}
	req := <-got
	if h := respHeader[remoting.GetConsumerRunningInfoRequestHeader](t, req); h.ConsumerGroup != "RunG" || h.ClientID != "10.0.0.1@c1" || !h.JstackEnable {
		t.Errorf("consumer got header %+v", h)
	}

	tests := []struct {
		client string
		code   int32
		remark string // prefix
	}{
		{"10.0.0.9@nobody", remoting.SystemError, "The Consumer <RunG> <10.0.0.9@nobody> not online"},
		{"10.0.0.2@silent", remoting.ConsumeMsgTimeout, "consumer <RunG> <10.0.0.2@silent> Timeout: "},
	}
	for _, tt := range tests {
		resp := ask(tt.client)
		if resp.Code != tt.code || !strings.HasPrefix(resp.Remark, tt.remark) || resp.Language != remoting.LanguageJava {
			t.Errorf("%s: code %d remark %q language %v, want %d %q…", tt.client, resp.Code, resp.Remark, resp.Language, tt.code, tt.remark)
		}
	}
}

func TestConsumeMessageDirectlyRelay(t *testing.T) {
	b, admin := adminTestBroker(t)
	id := retrySend(t, admin, "DirectT", sendTestProps("TAGS", "TagD", "KEYS", "kd"), []byte("direct body"))
	got := make(chan *remoting.Command, 1)
	consumerAt(t, b, "10.0.0.1@c1", "DirectG", "DirectT", map[int32]func(*remoting.Command) *remoting.Command{
		remoting.ConsumeMessageDirectly: func(req *remoting.Command) *remoting.Command {
			got <- req
			res := remoting.ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: remoting.ConsumeResultSuccess, SpentTimeMills: 3}
			resp := remoting.NewResponse(remoting.Success, "")
			resp.Body = res.AppendJSON(nil, remoting.JSONFastjson)
			return resp
		},
	})
	ask := func(msgID string) *remoting.Command {
		h := remoting.ConsumeMessageDirectlyResultRequestHeader{ConsumerGroup: "DirectG", ClientID: remoting.Ptr("10.0.0.1@c1"), MsgID: &msgID}
		return admin.invoke(t, remoting.NewRequest(remoting.ConsumeMessageDirectly, h.AppendExt(nil), nil))
	}

	resp := ask(id)
	var res remoting.ConsumeMessageDirectlyResult
	if resp.Code != remoting.Success {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
	if err := res.DecodeJSON(resp.Body); err != nil || res.ConsumeResult != remoting.ConsumeResultSuccess || res.SpentTimeMills != 3 {
		t.Fatalf("relayed result %+v (%v)", res, err)
	}
	req := <-got
	h := respHeader[remoting.ConsumeMessageDirectlyResultRequestHeader](t, req)
	if orZero(h.BrokerName) != "broker-a" || orZero(h.MsgID) != id || h.ConsumerGroup != "DirectG" {
		t.Errorf("consumer got header %+v", h)
	}
	m, _, err := message.DecodeRecord(req.Body)
	if err != nil || string(m.Body) != "direct body" || m.Topic != "DirectT" || m.Properties["KEYS"] != "kd" || m.OffsetMsgID != id {
		t.Errorf("consumer got message %+v (%v)", m, err)
	}

	// An id naming no stored message.
	ap, _, _ := rocketmq.DecodeOffsetMsgID(id)
	resp = ask(rocketmq.EncodeOffsetMsgID(ap, 1<<20))
	if resp.Code != remoting.SystemError || !strings.HasPrefix(resp.Remark, "look message by offset failed") {
		t.Errorf("unknown id: code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestInvokeBrokerToResetOffset(t *testing.T) {
	b, admin := adminTestBroker(t)
	b.topics.ensure("ResetT", 2, rocketmq.PermRead|rocketmq.PermWrite)
	before := time.Now().UnixMilli() - 1000
	for i := range 3 {
		retrySend(t, admin, "ResetT", "", []byte{byte('a' + i)})
	}
	resp := admin.invoke(t, sendV2Req(sendTestHeader("ResetT", 1, ""), []byte("q1")))
	if resp.Code != remoting.Success {
		t.Fatalf("send: %d %q", resp.Code, resp.Remark)
	}
	reset := func(lang remoting.LanguageCode, group, topic string, ts int64, force bool) *remoting.Command {
		h := remoting.ResetOffsetRequestHeader{Topic: topic, Group: group, Timestamp: ts, IsForce: force}
		req := remoting.NewRequest(remoting.InvokeBrokerToResetOffset, h.AppendExt(nil), nil)
		if lang == remoting.LanguageGo {
			return admin.invoke(t, req)
		}
		req.Language = lang
		return rawframe.Dial(t, b.Addr()).CallNext(req)
	}
	mq := func(q int) rocketmq.MessageQueue {
		return rocketmq.MessageQueue{Topic: "ResetT", BrokerName: "broker-a", QueueID: q}
	}

	// Errors before any consumer or offset exists.
	for _, tt := range []struct {
		group, topic string
		code         int32
		remark       string
	}{
		{"ResetG", "NoSuchTopic", remoting.SystemError, "[reset-offset] reset offset failed, no topic in this broker. topic=NoSuchTopic"},
		{"ResetG", "ResetT", remoting.SystemError, "THe consumer group <ResetG> not exist"},
	} {
		if resp := reset(remoting.LanguageGo, tt.group, tt.topic, -1, false); resp.Code != tt.code || resp.Remark != tt.remark {
			t.Errorf("%s/%s: code %d remark %q, want %d %q", tt.group, tt.topic, resp.Code, resp.Remark, tt.code, tt.remark)
		}
	}
	b.offsets.commit("ResetG", "ResetT", 0, 2)
	b.offsets.commit("ResetG", "ResetT", 1, 0)
	if resp := reset(remoting.LanguageGo, "ResetG", "ResetT", -1, false); resp.Code != remoting.ConsumerNotOnline ||
		resp.Remark != "Consumer not online, so can not reset offset, Group: ResetG Topic: ResetT Timestamp: -1" {
		t.Errorf("no consumer: code %d remark %q", resp.Code, resp.Remark)
	}

	notices := make(chan *remoting.Command, 8)
	onReset := map[int32]func(*remoting.Command) *remoting.Command{
		remoting.ResetConsumerClientOffset: func(req *remoting.Command) *remoting.Command {
			if !req.IsOneway() {
				t.Errorf("RESET_CONSUMER_CLIENT_OFFSET is not oneway")
			}
			notices <- req
			return nil
		},
	}
	consumerAt(t, b, "10.0.0.1@c1", "ResetG", "ResetT", onReset)
	consumerAt(t, b, "10.0.0.2@c2", "ResetG", "ResetT", onReset)

	tests := []struct {
		name  string
		lang  remoting.LanguageCode
		ts    int64
		force bool
		want  map[rocketmq.MessageQueue]int64
	}{
		{"to the end, not forced: committed offsets stay", remoting.LanguageGo, -1, false, map[rocketmq.MessageQueue]int64{mq(0): 2, mq(1): 0}},
		{"to the end, forced", remoting.LanguageGo, -1, true, map[rocketmq.MessageQueue]int64{mq(0): 3, mq(1): 1}},
		{"to a time before every message", remoting.LanguageGo, before, false, map[rocketmq.MessageQueue]int64{mq(0): 0, mq(1): 0}},
		// 4.9.8 finds the last message for a time after it.
		{"to a time after every message, forced", remoting.LanguageGo, time.Now().Add(time.Hour).UnixMilli(), true, map[rocketmq.MessageQueue]int64{mq(0): 2, mq(1): 0}},
		{"a C++ admin: the list form", remoting.LanguageCPP, -1, true, map[rocketmq.MessageQueue]int64{mq(0): 3, mq(1): 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := reset(tt.lang, "ResetG", "ResetT", tt.ts, tt.force)
			if resp.Code != remoting.Success {
				t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
			}
			var body remoting.ResetOffsetBody
			if err := body.DecodeJSON(resp.Body); err != nil || !maps.Equal(body.OffsetTable, tt.want) {
				t.Fatalf("answer %v (%v), want %v", body.OffsetTable, err, tt.want)
			}
			for range 2 {
				var n *remoting.Command
				select {
				case n = <-notices:
				case <-time.After(5 * time.Second):
					t.Fatal("a consumer was not told")
				}
				h := respHeader[remoting.ResetOffsetRequestHeader](t, n)
				if h.Topic != "ResetT" || h.Group != "ResetG" || h.Timestamp != tt.ts || h.IsForce {
					t.Errorf("notice header %+v", h)
				}
				got := map[rocketmq.MessageQueue]int64{}
				if tt.lang == remoting.LanguageCPP {
					var c remoting.ResetOffsetBodyForC
					if err := c.DecodeJSON(n.Body); err != nil {
						t.Fatalf("C++ notice %s: %v", n.Body, err)
					}
					for _, e := range c.OffsetTable {
						got[rocketmq.MessageQueue{Topic: e.Topic, BrokerName: e.BrokerName, QueueID: int(e.QueueID)}] = e.Offset
					}
				} else {
					var nb remoting.ResetOffsetBody
					if err := nb.DecodeJSON(n.Body); err != nil {
						t.Fatalf("notice %s: %v", n.Body, err)
					}
					got = nb.OffsetTable
				}
				if !maps.Equal(got, tt.want) {
					t.Errorf("notice table %v, want %v", got, tt.want)
				}
			}
			for mq, want := range tt.want {
				if off, _ := b.offsets.query("ResetG", "ResetT", int32(mq.QueueID)); off != want {
					t.Errorf("stored offset of queue %d = %d, want %d", mq.QueueID, off, want)
				}
			}
		})
	}
}

func TestInvokeBrokerToResetOffsetOldClient(t *testing.T) {
	b, admin := adminTestBroker(t)
	b.topics.ensure("OldT", 1, rocketmq.PermRead|rocketmq.PermWrite)
	b.offsets.commit("OldG", "OldT", 0, 0)
	hb := remoting.HeartbeatData{ClientID: "old@1", ConsumerDataSet: []remoting.ConsumerData{clientsConsumerData("OldG", remoting.MessageModelClustering, map[string]string{"OldT": "*"}, 1)}}
	req := remoting.NewRequest(remoting.HeartBeat, nil, hb.AppendJSON(nil, remoting.JSONFastjson))
	req.Version = 20
	old := rawframe.Dial(t, b.Addr())
	if resp := old.Call(req); resp.Code != remoting.Success {
		t.Fatalf("heartbeat: %d %q", resp.Code, resp.Remark)
	}
	h := remoting.ResetOffsetRequestHeader{Topic: "OldT", Group: "OldG", Timestamp: -1}
	resp := admin.invoke(t, remoting.NewRequest(remoting.InvokeBrokerToResetOffset, h.AppendExt(nil), nil))
	if resp.Code != remoting.SystemError || resp.Remark != "the client does not support this feature. version=V3_0_3_SNAPSHOT" {
		t.Errorf("code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestInvokeBrokerToGetConsumerStatus(t *testing.T) {
	b, admin := adminTestBroker(t)
	mq := rocketmq.MessageQueue{Topic: "StatT", BrokerName: "broker-a", QueueID: 0}
	answer := func(off int64) func(*remoting.Command) *remoting.Command {
		return func(req *remoting.Command) *remoting.Command {
			if h := respHeader[remoting.GetConsumerStatusRequestHeader](t, req); h.Topic != "StatT" || h.Group != "StatG" {
				t.Errorf("consumer asked with %+v", h)
			}
			body := remoting.GetConsumerStatusBody{MessageQueueTable: map[rocketmq.MessageQueue]int64{mq: off}}
			resp := remoting.NewResponse(remoting.Success, "")
			resp.Body = body.AppendJSON(nil, remoting.JSONFastjson)
			return resp
		}
	}
	ask := func(group, only string) *remoting.Command {
		h := remoting.GetConsumerStatusRequestHeader{Topic: "StatT", Group: group}
		if only != "" {
			h.ClientAddr = &only
		}
		return admin.invoke(t, remoting.NewRequest(remoting.InvokeBrokerToGetConsumerStatus, h.AppendExt(nil), nil))
	}
	if resp := ask("StatG", ""); resp.Code != remoting.SystemError || resp.Remark != "No Any Consumer online in the consumer group: [StatG]" {
		t.Errorf("no consumer: code %d remark %q", resp.Code, resp.Remark)
	}
	consumerAt(t, b, "c1", "StatG", "StatT", map[int32]func(*remoting.Command) *remoting.Command{remoting.GetConsumerStatusFromClient: answer(5)})
	consumerAt(t, b, "c2", "StatG", "StatT", map[int32]func(*remoting.Command) *remoting.Command{remoting.GetConsumerStatusFromClient: answer(7)})
	consumerAt(t, b, "c3", "StatG", "StatT", map[int32]func(*remoting.Command) *remoting.Command{
		remoting.GetConsumerStatusFromClient: func(*remoting.Command) *remoting.Command {
			return remoting.NewResponse(remoting.SystemError, "no")
		},
	})
	tests := []struct {
		only string
		want map[string]int64
	}{
		{"", map[string]int64{"c1": 5, "c2": 7}},
		{"c2", map[string]int64{"c2": 7}},
	}
	for _, tt := range tests {
		resp := ask("StatG", tt.only)
		var body remoting.GetConsumerStatusBody
		if resp.Code != remoting.Success {
			t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
		}
		if err := body.DecodeJSON(resp.Body); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for id, table := range body.ConsumerTable {
			got[id] = table[mq]
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("only %q: consumer table %v, want %v", tt.only, got, tt.want)
		}
	}
}

// TestGetConsumerRunningInfoCapturedFrames plays the captured 4.9.8
// exchange: the Java admin's request (0148) goes to our broker, the
// consumer answers with the Java consumer's captured answer (0150), and
// the request the consumer got and the answer the admin got are compared
// with what the 4.9.8 broker forwarded (0149) and relayed (0151).
func TestGetConsumerRunningInfoCapturedFrames(t *testing.T) {
	frames, load := clientsReadWire(t)
	byN := map[int]*remoting.Command{}
	for _, f := range frames {
		if f.N >= 148 && f.N <= 151 {
			c, _, err := remoting.DecodeFrame(load(f), remoting.DefaultMaxFrameSize)
			if err != nil {
				t.Fatalf("%s: %v", f.File, err)
			}
			if c.Code != remoting.GetConsumerRunningInfo && !c.IsResponse() {
				t.Fatalf("%s: code %d, not GET_CONSUMER_RUNNING_INFO", f.File, c.Code)
			}
			byN[f.N] = c
		}
	}
	adminReq, fwdWant, consumerResp, relayWant := byN[148], byN[149], byN[150], byN[151]
	if adminReq == nil || fwdWant == nil || consumerResp == nil || relayWant == nil {
		t.Fatal("captured GET_CONSUMER_RUNNING_INFO exchange incomplete")
	}
	group, _ := adminReq.Ext.Get("consumerGroup")
	client, _ := adminReq.Ext.Get("clientId")

	b := clientsTestBroker(t, nil)
	admin := clientsNewPeer(t, b, "admin")
	got := make(chan *remoting.Command, 1)
	consumerAt(t, b, client, group, "CapturedT", map[int32]func(*remoting.Command) *remoting.Command{
		remoting.GetConsumerRunningInfo: func(req *remoting.Command) *remoting.Command {
			got <- req
			resp := remoting.NewResponse(consumerResp.Code, consumerResp.Remark)
			resp.Body = consumerResp.Body
			return resp
		},
	})
	req := remoting.NewRequest(remoting.GetConsumerRunningInfo, adminReq.Ext, nil)
	resp := admin.invoke(t, req)
	if resp.Code != relayWant.Code || resp.Remark != relayWant.Remark || string(resp.Body) != string(relayWant.Body) {
		t.Errorf("relayed code %d remark %q body %d bytes; captured %d %q %d bytes", resp.Code, resp.Remark, len(resp.Body),
			relayWant.Code, relayWant.Remark, len(relayWant.Body))
	}
	fwd := <-got
	gotExt, wantExt := map[string]string{}, map[string]string{}
	for _, kv := range fwd.Ext {
		gotExt[kv.Key] = kv.Value
	}
	for _, kv := range fwdWant.Ext {
		wantExt[kv.Key] = kv.Value
	}
	if fwd.Code != fwdWant.Code || fwd.IsOneway() || !maps.Equal(gotExt, wantExt) {
		t.Errorf("forwarded code %d oneway %v ext %v; captured %d %v", fwd.Code, fwd.IsOneway(), gotExt, fwdWant.Code, wantExt)
	}
}
