package broker

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// sendEnv is a started broker and a client talking to it.
type sendEnv struct {
	b   *Broker
	cli *transport.Client
}

// sendTestConfig is a small broker config on a random loopback port.
func sendTestConfig(t testing.TB) Config {
	return Config{
		StoreDir:             t.TempDir(),
		ListenAddr:           "127.0.0.1:0",
		CommitLogSegmentSize: 16 << 20,
		ConsumeQueueEntries:  1024,
		IndexSlots:           1024,
		IndexEntries:         4096,
		FlushInterval:        50 * time.Millisecond,
	}
}

// sendTestBroker starts a broker with cfg (sendTestConfig if nil is given
// through mod) and a client; both stop at cleanup.
func sendTestBroker(t testing.TB, mod func(*Config)) *sendEnv {
	t.Helper()
	cfg := sendTestConfig(t)
	if mod != nil {
		mod(&cfg)
	}
	b := startBroker(t, cfg)
	cli := newTestClient(t)
	return &sendEnv{b: b, cli: cli}
}

func (e *sendEnv) invoke(t testing.TB, req *remoting.Command) *remoting.Command {
	t.Helper()
	return invokeBroker(t, e.cli, e.b, req)
}

// sendProps joins pairs into a 4.9.8 properties string.
func sendTestProps(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(message.PropertySeparator)
		}
		b.WriteString(kv[i])
		b.WriteByte(message.NameValueSeparator)
		b.WriteString(kv[i+1])
	}
	return b.String()
}

// sendTestHeader is a send header for topic with Java client defaults.
func sendTestHeader(topic string, queue int32, props string) *remoting.SendMessageRequestHeader {
	return &remoting.SendMessageRequestHeader{
		ProducerGroup:         "PG",
		Topic:                 topic,
		DefaultTopic:          rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4,
		QueueID:               queue,
		BornTimestamp:         1700000000000,
		Properties:            &props,
		ReconsumeTimes:        remoting.Ptr(int32(0)),
		BrokerName:            remoting.Ptr("broker-a"),
	}
}

func sendV2Req(h *remoting.SendMessageRequestHeader, body []byte) *remoting.Command {
	return remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), body)
}

// sendReadBack reads every message of a queue from the store.
func sendReadBack(t testing.TB, b *Broker, topic string, queue int32) []*rocketmq.MessageExt {
	t.Helper()
	res, err := b.store.GetMessages(nil, &store.GetRequest{Topic: topic, QueueID: queue, Offset: 0, MaxMessages: 32})
	if err != nil {
		t.Fatalf("GetMessages %s/%d: %v", topic, queue, err)
	}
	if res.Messages == 0 {
		return nil
	}
	msgs, err := message.DecodeRecords(res.Data)
	if err != nil {
		t.Fatalf("DecodeRecords: %v\n%s", err, hex.Dump(res.Data))
	}
	return msgs
}

// sendCheckResp checks code, remark and the extFields every send response
// carries.
func sendCheckResp(t testing.TB, resp *remoting.Command, code int32, remark string) {
	t.Helper()
	if resp.Code != code || resp.Remark != remark {
		t.Fatalf("response code %d remark %q, want %d %q", resp.Code, resp.Remark, code, remark)
	}
	if v, _ := resp.Ext.Get("MSG_REGION"); v != "DefaultRegion" {
		t.Errorf("MSG_REGION = %q", v)
	}
	if resp.Language != remoting.LanguageJava || resp.Version != brokerVersion {
		t.Errorf("language %d version %d, want JAVA and our broker version (413)", resp.Language, resp.Version)
	}
	if v, _ := resp.Ext.Get("TRACE_ON"); v != "true" {
		t.Errorf("TRACE_ON = %q", v)
	}
}

func TestSendV2StoredFields(t *testing.T) {
	e := sendTestBroker(t, nil)
	raw := rawframe.Dial(t, e.b.Addr())
	uniq := "C0A8000A30391B6D358600A1B2C30001"
	props := sendTestProps("KEYS", "k1 k2", "goldenProp", "v1", "UNIQ_KEY", uniq, "WAIT", "true", "TAGS", "TagA")
	h := sendTestHeader("SendFields", 2, props)
	h.Flag = 7
	h.SysFlag = 0
	body := []byte("hello broker")
	resp := raw.CallNext(sendV2Req(h, body))
	sendCheckResp(t, resp, remoting.Success, "")
	rh := sendRespHeader(t, resp)
	if rh.QueueID != 2 || rh.QueueOffset != 0 {
		t.Errorf("queueId %d queueOffset %d, want 2 0", rh.QueueID, rh.QueueOffset)
	}
	if rh.TransactionID != nil {
		t.Errorf("transactionId %q: 4.9.8 sends none", *rh.TransactionID)
	}

	msgs := sendReadBack(t, e.b, "SendFields", 2)
	if len(msgs) != 1 {
		t.Fatalf("%d messages stored, want 1", len(msgs))
	}
	m := msgs[0]
	client := raw.NetConn().LocalAddr().(*net.TCPAddr).AddrPort()
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	checks := []struct {
		name      string
		got, want any
	}{
		{"topic", m.Topic, "SendFields"},
		{"body", string(m.Body), string(body)},
		{"flag", m.Flag, int32(7)},
		{"queueId", m.QueueID, int32(2)},
		{"queueOffset", m.QueueOffset, int64(0)},
		{"sysFlag", m.SysFlag, int32(0)},
		{"bornTimestamp", m.BornTimestamp, int64(1700000000000)},
		{"bornHost", m.BornHost, client},
		{"storeHost", m.StoreHost, e.b.storeHost},
		{"TAGS", m.Properties["TAGS"], "TagA"},
		{"KEYS", m.Properties["KEYS"], "k1 k2"},
		{"user property", m.Properties["goldenProp"], "v1"},
		{"UNIQ_KEY", m.Properties["UNIQ_KEY"], uniq},
		{"CLUSTER", m.Properties["CLUSTER"], "DefaultCluster"},
		{"WAIT removed", m.Properties["WAIT"], ""},
		{"msgId", m.MsgID, uniq},
		{"response msgId", rh.MsgID, m.OffsetMsgID},
		{"property count", len(m.Properties), 5},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	host, off, err := rocketmq.DecodeOffsetMsgID(rh.MsgID)
	if err != nil || host != e.b.storeHost || off != m.CommitLogOffset {
		t.Errorf("msgId %s decodes to %v %d (%v), want %v %d", rh.MsgID, host, off, err, e.b.storeHost, m.CommitLogOffset)
	}
	ts, err := e.b.store.MessageStoreTime("SendFields", 2, 0)
	if err != nil || ts != m.StoreTimestamp {
		t.Errorf("store time %d (%v), record says %d", ts, err, m.StoreTimestamp)
	}
	entry, err := e.b.store.ConsumeQueueEntry("SendFields", 2, 0)
	if err != nil || entry.TagsCode != message.TagHash("TagA") {
		t.Errorf("tags code %d (%v), want %d", entry.TagsCode, err, message.TagHash("TagA"))
	}
	// The stored string is 4.9.8's form: no final separator.
	rec, err := e.b.store.MessageAt(m.CommitLogOffset)
	if err != nil {
		t.Fatal(err)
	}
	if rec[len(rec)-1] == message.PropertySeparator {
		t.Errorf("stored properties end with 0x02:\n%s", hex.Dump(rec))
	}
}

func TestSendV1AddsUniqKey(t *testing.T) {
	e := sendTestBroker(t, nil)
	// The official Go client's form: long keys, trailing separator, no WAIT.
	props := sendTestProps("TAGS", "TagGo", "KEYS", "gk") + "\x02"
	h := sendTestHeader("SendV1", 1, props)
	h.MaxReconsumeTimes = remoting.Ptr(int32(0))
	req := remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte("v1 body"))
	resp := e.invoke(t, req)
	sendCheckResp(t, resp, remoting.Success, "")
	rh := sendRespHeader(t, resp)
	msgs := sendReadBack(t, e.b, "SendV1", 1)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	m := msgs[0]
	uniq := m.Properties["UNIQ_KEY"]
	if len(uniq) != 32 && len(uniq) != 56 {
		t.Fatalf("broker UNIQ_KEY %q: want 32 or 56 hex digits", uniq)
	}
	if _, err := hex.DecodeString(uniq); err != nil {
		t.Errorf("UNIQ_KEY %q is not hex", uniq)
	}
	if m.Properties["TAGS"] != "TagGo" || m.Properties["KEYS"] != "gk" || m.Properties["CLUSTER"] != "DefaultCluster" {
		t.Errorf("properties %v", m.Properties)
	}
	if rh.MsgID != m.OffsetMsgID || rh.QueueID != 1 {
		t.Errorf("response %+v, record offset id %s", rh, m.OffsetMsgID)
	}
	// The broker-made id is indexed like a client one.
	q, err := e.b.store.QueryByKey("SendV1", uniq, 0, 0, time.Now().Add(time.Hour).UnixMilli())
	if err != nil || q.Messages != 1 {
		t.Errorf("QueryByKey(UNIQ_KEY) = %d messages, %v", q.Messages, err)
	}
}

func TestSendBatch(t *testing.T) {
	e := sendTestBroker(t, nil)
	raw := rawframe.Dial(t, e.b.Addr())
	var msgs []*rocketmq.Message
	for i := range 3 {
		m := &rocketmq.Message{Topic: "SendBatch", Body: []byte("batch body " + strconv.Itoa(i))}
		m.Flag = int32(i)
		m.SetTag("TagBatch")
		m.SetKeys("bk" + strconv.Itoa(i))
		if i != 1 { // element 1 has no UNIQ_KEY, like the Go client's
			m.SetUniqKey(fmt.Sprintf("C0A8000A30391B6D358600A1B2C3000%d", i))
		}
		m.SetWaitStoreMsgOK(true)
		msgs = append(msgs, m)
	}
	body, err := message.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	h := sendTestHeader("SendBatch", 3, sendTestProps("WAIT", "true"))
	h.Batch = true
	req := remoting.NewRequest(remoting.SendBatchMessage, h.V2().AppendExt(nil), body)
	resp := raw.CallNext(req)
	sendCheckResp(t, resp, remoting.Success, "")
	rh := sendRespHeader(t, resp)
	if rh.QueueID != 3 || rh.QueueOffset != 0 {
		t.Errorf("queueId %d queueOffset %d", rh.QueueID, rh.QueueOffset)
	}
	stored := sendReadBack(t, e.b, "SendBatch", 3)
	if len(stored) != 3 {
		t.Fatalf("%d stored, want 3", len(stored))
	}
	ids := strings.Split(rh.MsgID, ",")
	if len(ids) != 3 {
		t.Fatalf("msgId %q: want 3 ids", rh.MsgID)
	}
	client := raw.NetConn().LocalAddr().(*net.TCPAddr).AddrPort()
	for i, m := range stored {
		if m.QueueOffset != int64(i) {
			t.Errorf("message %d queue offset %d", i, m.QueueOffset)
		}
		if string(m.Body) != "batch body "+strconv.Itoa(i) || m.Flag != int32(i) {
			t.Errorf("message %d body %q flag %d", i, m.Body, m.Flag)
		}
		if m.Properties["TAGS"] != "TagBatch" || m.Properties["KEYS"] != "bk"+strconv.Itoa(i) ||
			m.Properties["CLUSTER"] != "DefaultCluster" || m.Properties["WAIT"] != "true" {
			t.Errorf("message %d properties %v", i, m.Properties)
		}
		if i != 1 && m.Properties["UNIQ_KEY"] != msgs[i].UniqKey() {
			t.Errorf("message %d UNIQ_KEY %q, sent %q", i, m.Properties["UNIQ_KEY"], msgs[i].UniqKey())
		}
		if u := m.Properties["UNIQ_KEY"]; len(u) != 32 && len(u) != 56 {
			t.Errorf("message %d UNIQ_KEY %q", i, u)
		}
		if ids[i] != m.OffsetMsgID {
			t.Errorf("msgId[%d] %s, record %s", i, ids[i], m.OffsetMsgID)
		}
		if m.StoreHost != e.b.storeHost || m.BornHost.Port() != client.Port() || m.BornTimestamp != h.BornTimestamp {
			t.Errorf("message %d hosts %v %v born %d", i, m.BornHost, m.StoreHost, m.BornTimestamp)
		}
		entry, err := e.b.store.ConsumeQueueEntry("SendBatch", 3, int64(i))
		if err != nil || entry.TagsCode != message.TagHash("TagBatch") {
			t.Errorf("message %d tags code %d (%v)", i, entry.TagsCode, err)
		}
	}
	// The batch-level pairs follow the element's own, as 4.9.8 stores them.
	rec, _ := e.b.store.MessageAt(stored[0].CommitLogOffset)
	if !bytes.HasSuffix(rec, []byte("CLUSTER\x01DefaultCluster")) {
		t.Errorf("record does not end with the batch properties:\n%s", hex.Dump(rec))
	}
}

func TestSendValidation(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.MaxMessageSize = 1024 })
	e.b.topics.put(func() remoting.TopicConfig {
		tc := remoting.NewTopicConfig("ReadOnly")
		tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = 4, 4, rocketmq.PermRead
		return tc
	}())
	ok := func(topic string) *remoting.SendMessageRequestHeader { return sendTestHeader(topic, 0, "TAGS\x01a") }
	long := strings.Repeat("t", 128)
	tests := []struct {
		name   string
		code   int32
		h      *remoting.SendMessageRequestHeader
		body   []byte
		req    *remoting.Command // instead of h/body
		status int32
		remark string
	}{
		{name: "illegal characters", h: ok("bad topic!"), status: remoting.SystemError,
			remark: "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{name: "blank topic", h: ok(""), status: remoting.SystemError, remark: "The specified topic is blank."},
		{name: "topic too long", h: ok(long), status: remoting.SystemError,
			remark: "The specified topic is longer than topic max length."},
		{name: "forbidden schedule topic", h: ok("SCHEDULE_TOPIC_XXXX"), status: remoting.NoPermission,
			remark: "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
		{name: "forbidden half topic", h: ok("RMQ_SYS_TRANS_HALF_TOPIC"), status: remoting.NoPermission,
			remark: "Sending message to topic[RMQ_SYS_TRANS_HALF_TOPIC] is forbidden."},
		{name: "no template", h: func() *remoting.SendMessageRequestHeader {
			h := ok("NoTemplate")
			h.DefaultTopic = "NoSuchTemplate"
			return h
		}(), status: remoting.TopicNotExist,
			remark: "topic[NoTemplate] not exist, apply first please!\nSee http://rocketmq.apache.org/docs/faq/ for further details."},
		{name: "template without inherit", h: func() *remoting.SendMessageRequestHeader {
			h := ok("NoInherit")
			h.DefaultTopic = "ReadOnly"
			return h
		}(), status: remoting.TopicNotExist,
			remark: "topic[NoInherit] not exist, apply first please!\nSee http://rocketmq.apache.org/docs/faq/ for further details."},
		{name: "queue id out of range", h: func() *remoting.SendMessageRequestHeader {
			h := ok("Ranged")
			h.QueueID = 4
			return h
		}(), status: remoting.SystemError,
			remark: "request queueId[4] is illegal, TopicConfig [topicName=Ranged, readQueueNums=4, writeQueueNums=4, perm=RW-, topicFilterType=SINGLE_TAG, topicSysFlag=0, order=false] Producer: "},
		{name: "topic not writable", h: ok("ReadOnly"), status: remoting.NoPermission,
			remark: "the topic[ReadOnly] sending message is forbidden"},
		{name: "body too large", h: ok("Big"), body: make([]byte, 1025), status: remoting.MessageIllegal, remark: msgIllegalRemark(1024)},
		{name: "properties too long", h: sendTestHeader("BigProps", 0, sendTestProps("p", strings.Repeat("x", 32767))),
			status: remoting.MessageIllegal, remark: msgIllegalRemark(1024)},
		{name: "unparsable timer", h: sendTestHeader("Timer", 0, sendTestProps("TIMER_DELAY_SEC", "ten")),
			status: remoting.MessageIllegal, remark: fmt.Sprintf(remarkTimerIllegal, (72 * time.Hour).Milliseconds())},
		{name: "missing topic", req: remoting.NewRequest(remoting.SendMessageV2,
			remoting.ExtFields{{Key: "a", Value: "PG"}, {Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"},
				{Key: "e", Value: "0"}, {Key: "f", Value: "0"}, {Key: "g", Value: "0"}, {Key: "h", Value: "0"}}, []byte("x")),
			status: remoting.SystemError, remark: "the custom field <b> is null"},
		{name: "bad queue id", req: remoting.NewRequest(remoting.SendMessage,
			remoting.ExtFields{{Key: "producerGroup", Value: "PG"}, {Key: "topic", Value: "T"}, {Key: "defaultTopic", Value: "TBW102"},
				{Key: "defaultTopicQueueNums", Value: "4"}, {Key: "queueId", Value: "x"}, {Key: "sysFlag", Value: "0"},
				{Key: "bornTimestamp", Value: "0"}, {Key: "flag", Value: "0"}}, []byte("x")),
			status: remoting.SystemError, remark: `the custom field <queueId> has an invalid value: "x"`},
		{name: "batch of retry topic", code: remoting.SendBatchMessage, h: func() *remoting.SendMessageRequestHeader {
			h := ok("%RETRY%G1")
			h.Batch = true
			return h
		}(), body: sendTestBatchBody(t, 1), status: remoting.MessageIllegal, remark: "batch request does not support retry group %RETRY%G1"},
		{name: "corrupt batch", code: remoting.SendBatchMessage, h: func() *remoting.SendMessageRequestHeader {
			h := ok("BatchCorrupt")
			h.Batch = true
			return h
		}(), body: []byte{0, 0, 0, 99, 1, 2, 3}, status: remoting.MessageIllegal,
			remark: "rocketmq: batch element 0 at offset 0: rocketmq: corrupt batch body: 7 bytes left, an element needs at least 22"},
		{name: "delayed batch", code: remoting.SendBatchMessage, h: func() *remoting.SendMessageRequestHeader {
			h := sendTestHeader("BatchDelay", 0, sendTestProps("DELAY", "3"))
			h.Batch = true
			return h
		}(), body: sendTestBatchBody(t, 2), status: remoting.MessageIllegal, remark: msgIllegalRemark(1024)},
		{name: "transactional batch", code: remoting.SendBatchMessage, h: func() *remoting.SendMessageRequestHeader {
			h := ok("BatchTx")
			h.Batch = true
			h.SysFlag = message.FlagTransactionPrep
			return h
		}(), body: sendTestBatchBody(t, 2), status: remoting.MessageIllegal, remark: msgIllegalRemark(1024)},
		{name: "batch element properties too long", code: remoting.SendBatchMessage, h: func() *remoting.SendMessageRequestHeader {
			h := ok("BatchBigProps")
			h.Batch = true
			return h
		}(), body: func() []byte {
			m := &rocketmq.Message{Topic: "BatchBigProps", Body: []byte("x")}
			m.SetProperty("p", strings.Repeat("y", 32740))
			b, _ := message.AppendBatch(nil, []*rocketmq.Message{m})
			return b
		}(), status: remoting.MessageIllegal, remark: msgIllegalRemark(1024)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			if req == nil {
				body := tt.body
				if body == nil {
					body = []byte("body")
				}
				code := tt.code
				if code == 0 {
					code = remoting.SendMessageV2
				}
				req = remoting.NewRequest(code, tt.h.V2().AppendExt(nil), body)
			}
			resp := e.invoke(t, req)
			if resp.Code != tt.status || !strings.HasPrefix(resp.Remark, tt.remark) || (tt.remark == "" && resp.Remark != "") {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tt.status, tt.remark)
			}
			sendCheckResp(t, resp, tt.status, resp.Remark)
			if _, ok := resp.Ext.Get("msgId"); ok {
				t.Errorf("failed send carries msgId: %v", resp.Ext)
			}
		})
	}
	if got := e.b.stats.put.Load(); got != 0 {
		t.Errorf("%d messages counted as stored", got)
	}
}

// sendTestBatchBody is a batch of n small messages.
func sendTestBatchBody(t testing.TB, n int) []byte {
	var msgs []*rocketmq.Message
	for i := range n {
		m := &rocketmq.Message{Topic: "", Body: []byte("m" + strconv.Itoa(i))}
		m.SetTag("T")
		msgs = append(msgs, m)
	}
	b, err := message.AppendBatch(nil, msgs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSendBrokerNotWritableOrderTopic(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.BrokerPermission = rocketmq.PermRead })
	tc := remoting.NewTopicConfig("Ordered")
	tc.ReadQueueNums, tc.WriteQueueNums, tc.Order = 2, 2, true
	e.b.topics.put(tc)
	resp := e.invoke(t, sendV2Req(sendTestHeader("Ordered", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.NoPermission, "the broker[127.0.0.1] sending message is forbidden")
	// A normal topic is still accepted, as by 4.9.8.
	resp = e.invoke(t, sendV2Req(sendTestHeader("Unordered", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.Success, "")
}

func TestSendRegionAndTraceConfig(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.RegionID, c.TraceOff = "Mars", true })
	for _, h := range []*remoting.SendMessageRequestHeader{sendTestHeader("Region", 0, ""), sendTestHeader("bad topic", 0, "")} {
		resp := e.invoke(t, sendV2Req(h, []byte("x")))
		if v, _ := resp.Ext.Get("MSG_REGION"); v != "Mars" {
			t.Errorf("code %d: MSG_REGION %q", resp.Code, v)
		}
		if v, _ := resp.Ext.Get("TRACE_ON"); v != "false" {
			t.Errorf("code %d: TRACE_ON %q", resp.Code, v)
		}
	}
}

func TestSendAutoCreateTopic(t *testing.T) {
	ns := startNameServer(t)
	e := sendTestBroker(t, func(c *Config) { c.NameServers = []string{ns} })

	tests := []struct {
		topic  string
		queues int32 // requested
		want   int32
	}{
		{"AutoFour", 4, 4},
		{"AutoCapped", 16, 8}, // TBW102 has 8
		{"%RETRY%AutoGroup", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			h := sendTestHeader(tt.topic, -1, "")
			h.DefaultTopicQueueNums = tt.queues
			resp := e.invoke(t, sendV2Req(h, []byte("auto")))
			sendCheckResp(t, resp, remoting.Success, "")
			tc, ok := e.b.topics.get(tt.topic)
			if !ok || tc.ReadQueueNums != tt.want || tc.WriteQueueNums != tt.want || tc.Perm != 6 {
				t.Fatalf("topic config %+v (%v), want %d queues perm 6", tc, ok, tt.want)
			}
			if q := sendRespHeader(t, resp).QueueID; q < 0 || q >= tt.want {
				t.Errorf("random queue %d outside [0,%d)", q, tt.want)
			}
			// Persisted.
			data, err := store.ReadConfigFile(filepath.Join(e.b.cfg.StoreDir, "config", "topics.json"))
			if err != nil || !bytes.Contains(data, []byte(`"`+tt.topic+`"`)) {
				t.Errorf("topics.json lacks %s (%v)", tt.topic, err)
			}
			// Registered: the NameServer routes the topic.
			sendWaitRoute(t, e.cli, ns, tt.topic, tt.want)
		})
	}
}

// sendWaitRoute polls the NameServer until topic has a route with queues
// write queues.
func sendWaitRoute(t *testing.T, cli *transport.Client, ns, topic string, queues int32) {
	t.Helper()
	var last string
	if !testutil.Poll(0, func() bool {
		h := remoting.GetRouteInfoRequestHeader{Topic: topic}
		resp, err := cli.Invoke(context.Background(), ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
		if err == nil && resp.Code == remoting.Success {
			var rd remoting.TopicRouteData
			if err := rd.DecodeJSON(resp.Body); err == nil && len(rd.QueueDatas) == 1 && rd.QueueDatas[0].WriteQueueNums == queues {
				return true
			}
			last = string(resp.Body)
		} else if err == nil {
			last = resp.Remark
		}
		return false
	}) {
		t.Fatalf("no route for %s with %d queues: %s", topic, queues, last)
	}
}

func TestSendAutoCreateDisabled(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.DisableAutoCreateTopic = true })
	resp := e.invoke(t, sendV2Req(sendTestHeader("NoAuto", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.TopicNotExist,
		"topic[NoAuto] not exist, apply first please!\nSee http://rocketmq.apache.org/docs/faq/ for further details.")
	// A %RETRY% topic is still created, with one queue.
	resp = e.invoke(t, sendV2Req(sendTestHeader("%RETRY%G", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.Success, "")
	if tc, _ := e.b.topics.get("%RETRY%G"); tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Errorf("retry topic %+v", tc)
	}
}

func TestSendRetryAndDLQ(t *testing.T) {
	e := sendTestBroker(t, nil)
	topic := "%RETRY%RG"
	send := func(reconsume, maxTimes int32, version int32, props string) *remoting.Command {
		h := sendTestHeader(topic, 0, props)
		h.ReconsumeTimes = &reconsume
		h.MaxReconsumeTimes = &maxTimes
		req := sendV2Req(h, []byte("retry body"))
		if version == 0 {
			return e.invoke(t, req)
		}
		// The transport stamps its own version; use a raw connection.
		req.Version = version
		return rawframe.Dial(t, e.b.Addr()).CallNext(req)
	}
	resp := send(2, 3, 0, sendTestProps("DELAY", "5", "TAGS", "r"))
	sendCheckResp(t, resp, remoting.Success, "")
	// Not yet at the maximum: a delayed retry, parked in the schedule topic.
	if got := e.b.store.MaxOffset(rocketmq.TopicSchedule, 4); got != 1 {
		t.Errorf("schedule queue 4 has %d messages, want 1", got)
	}
	// At the maximum with a delay level (a Java consumer's fallback send):
	// DLQ-bound, but parked first, as Java keeps the client's DELAY.
	resp = send(3, 3, 0, sendTestProps("DELAY", "6", "TAGS", "r"))
	sendCheckResp(t, resp, remoting.Success, "")
	if q := sendRespHeader(t, resp).QueueID; q != 0 {
		t.Errorf("response queue %d", q)
	}
	parked := sendReadBack(t, e.b, rocketmq.TopicSchedule, 5)
	if len(parked) != 1 || parked[0].Properties["REAL_TOPIC"] != "%DLQ%RG" || parked[0].Properties["REAL_QID"] != "0" ||
		parked[0].Properties["DELAY"] != "6" || parked[0].ReconsumeTimes != 3 {
		t.Fatalf("schedule queue 5 holds %d messages (%+v), want the DLQ-bound one", len(parked), parked)
	}
	// Without a delay level it is stored in the DLQ at once.
	resp = send(4, 3, 0, sendTestProps("TAGS", "r"))
	sendCheckResp(t, resp, remoting.Success, "")
	dlq := sendReadBack(t, e.b, "%DLQ%RG", 0)
	if len(dlq) != 1 {
		t.Fatalf("DLQ holds %d messages, want 1", len(dlq))
	}
	if _, ok := dlq[0].Properties["DELAY"]; ok || dlq[0].ReconsumeTimes != 4 || dlq[0].Topic != "%DLQ%RG" {
		t.Errorf("DLQ message %+v props %v", dlq[0], dlq[0].Properties)
	}
	if tc, _ := e.b.topics.get("%DLQ%RG"); tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Errorf("DLQ topic %+v", tc)
	}
	// A client older than 3.4.9 gets the group's retryMaxTimes (16).
	resp = send(5, 3, 100, "")
	sendCheckResp(t, resp, remoting.Success, "")
	if n := len(sendReadBack(t, e.b, "%DLQ%RG", 0)); n != 1 {
		t.Errorf("old client's retry went to the DLQ (%d)", n)
	}
	if n := len(sendReadBack(t, e.b, topic, 0)); n != 1 {
		t.Errorf("retry queue 0 holds %d, want 1", n)
	}
}

// The official Go client's fallback uses SEND_MESSAGE (V1 header), with
// the same reconsumeTimes and maxReconsumeTimes fields.
func TestSendRetryV1ToDLQ(t *testing.T) {
	e := sendTestBroker(t, nil)
	h := sendTestHeader("%RETRY%GoG", -1, sendTestProps("TAGS", "g", "RETRY_TOPIC", "GoT"))
	h.ReconsumeTimes = remoting.Ptr(int32(1))
	h.MaxReconsumeTimes = remoting.Ptr(int32(1))
	resp := e.invoke(t, remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), []byte("go retry")))
	sendCheckResp(t, resp, remoting.Success, "")
	dlq := sendReadBack(t, e.b, "%DLQ%GoG", 0)
	if len(dlq) != 1 || dlq[0].ReconsumeTimes != 1 || dlq[0].Properties["RETRY_TOPIC"] != "GoT" || string(dlq[0].Body) != "go retry" {
		t.Fatalf("DLQ %+v", dlq)
	}
}

func TestSendRetryGroupMissing(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.DisableAutoCreateGroup = true })
	resp := e.invoke(t, sendV2Req(sendTestHeader("%RETRY%Nobody", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.SubscriptionGroupNotExist,
		"subscription group not exist, Nobody \nSee http://rocketmq.apache.org/docs/faq/ for further details.")
}

func TestSendDelayRewrite(t *testing.T) {
	e := sendTestBroker(t, nil)
	tests := []struct {
		name  string
		delay string
		level int
	}{
		{"level 2", "2", 2},
		{"clamped", "99", 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().UnixMilli()
			props := sendTestProps("DELAY", tt.delay, "TAGS", "TagDelay", "WAIT", "true")
			resp := e.invoke(t, sendV2Req(sendTestHeader("Delayed", 3, props), []byte("later")))
			sendCheckResp(t, resp, remoting.Success, "")
			rh := sendRespHeader(t, resp)
			if rh.QueueID != 3 {
				t.Errorf("response queueId %d, want the requested 3", rh.QueueID)
			}
			if n := e.b.store.MaxOffset("Delayed", 3); n != 0 {
				t.Fatalf("delayed message delivered early: queue holds %d", n)
			}
			q := int32(tt.level - 1)
			msgs := sendReadBack(t, e.b, rocketmq.TopicSchedule, q)
			if len(msgs) != 1 {
				t.Fatalf("schedule queue %d holds %d", q, len(msgs))
			}
			m := msgs[0]
			p := m.Properties
			if p["REAL_TOPIC"] != "Delayed" || p["REAL_QID"] != "3" || p["DELAY"] != strconv.Itoa(tt.level) ||
				p["WAIT"] != "true" || p["TAGS"] != "TagDelay" || p["CLUSTER"] != "DefaultCluster" {
				t.Errorf("properties %v", p)
			}
			if rh.MsgID != m.OffsetMsgID || rh.QueueOffset != m.QueueOffset {
				t.Errorf("response %+v, record %s/%d", rh, m.OffsetMsgID, m.QueueOffset)
			}
			entry, err := e.b.store.ConsumeQueueEntry(rocketmq.TopicSchedule, q, m.QueueOffset)
			if err != nil {
				t.Fatal(err)
			}
			delay := DefaultDelayLevels()[tt.level-1].Milliseconds()
			if entry.TagsCode < before+delay || entry.TagsCode > m.StoreTimestamp+delay {
				t.Errorf("tags code %d, want delivery time ~%d", entry.TagsCode, m.StoreTimestamp+delay)
			}
			// Recovery computes the same from the stored record.
			if got := e.b.recoveredTagsCode(rocketmq.TopicSchedule, []byte(message.EncodeProperties(p)), m.StoreTimestamp); got != m.StoreTimestamp+delay {
				t.Errorf("recovered tags code %d, want %d", got, m.StoreTimestamp+delay)
			}
		})
	}
	if got := e.b.recoveredTagsCode("T", []byte("TAGS\x01TagA"), 1); got != message.TagHash("TagA") {
		t.Errorf("recovered tags code of a plain message %d", got)
	}
}

func TestSendStoreFailures(t *testing.T) {
	e := sendTestBroker(t, nil)
	resp := e.invoke(t, sendV2Req(sendTestHeader("BeforeClose", 0, ""), []byte("x")))
	sendCheckResp(t, resp, remoting.Success, "")
	if err := e.b.store.Close(); err != nil {
		t.Fatal(err)
	}
	resp = e.invoke(t, sendV2Req(sendTestHeader("BeforeClose", 0, ""), []byte("x")))
	if resp.Code != remoting.ServiceNotAvailable || !strings.HasPrefix(resp.Remark,
		"service not available now. It may be caused by one of the following reasons: the broker's disk is full [CL: ") {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestSendOKResponseFlushTimeout(t *testing.T) {
	b := &Broker{cfg: Config{RegionID: "DefaultRegion"}, traceOn: "true",
		storeHost: netip.MustParseAddrPort("192.168.0.2:10911")}
	resp := b.sendOKResponse(&store.PutResult{Status: store.PutFlushDiskTimeout, PhysicalOffset: 0x12345, QueueOffset: 9}, 2, nil)
	stampResponse(resp) // what handle does on the way out
	sendCheckResp(t, resp, remoting.FlushDiskTimeout, "")
	h := sendRespHeader(t, resp)
	if h.MsgID != "C0A8000200002A9F0000000000012345" || h.QueueID != 2 || h.QueueOffset != 9 {
		t.Errorf("header %+v", h)
	}
}

func TestSendSyncFlush(t *testing.T) {
	e := sendTestBroker(t, func(c *Config) { c.FlushMode = store.FlushSync })
	for _, wait := range []string{"true", "false"} {
		resp := e.invoke(t, sendV2Req(sendTestHeader("SyncFlush", 0, sendTestProps("WAIT", wait)), []byte("x")))
		sendCheckResp(t, resp, remoting.Success, "")
	}
	if n := e.b.store.MaxOffset("SyncFlush", 0); n != 2 {
		t.Errorf("%d stored", n)
	}
}

func TestSendClientDisconnectMidFrame(t *testing.T) {
	e := sendTestBroker(t, nil)
	frame, err := sendV2Req(sendTestHeader("Half", 0, ""), []byte("half frame body")).AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{2, 4, 8, len(frame) / 2, len(frame) - 1} {
		c := rawframe.Dial(t, e.b.Addr())
		c.Write(frame[:cut])
		c.NetConn().Close()
	}
	resp := e.invoke(t, sendV2Req(sendTestHeader("Half", 0, ""), []byte("whole")))
	sendCheckResp(t, resp, remoting.Success, "")
	if msgs := sendReadBack(t, e.b, "Half", 0); len(msgs) != 1 || string(msgs[0].Body) != "whole" {
		t.Errorf("stored %d messages", len(msgs))
	}
}

func TestSendFaults(t *testing.T) {
	e := sendTestBroker(t, nil)
	req := func() *remoting.Command { return sendV2Req(sendTestHeader("Faulty", 0, ""), []byte("x")) }

	t.Run("respond", func(t *testing.T) {
		e.b.SetFault(remoting.SendMessageV2, &Fault{Respond: true, Code: remoting.SystemBusy, Remark: "busy", Times: 2})
		for i := range 2 {
			if resp := e.invoke(t, req()); resp.Code != remoting.SystemBusy || resp.Remark != "busy" {
				t.Fatalf("call %d: code %d %q", i, resp.Code, resp.Remark)
			}
		}
		sendCheckResp(t, e.invoke(t, req()), remoting.Success, "")
	})
	t.Run("delay", func(t *testing.T) {
		e.b.SetFault(remoting.SendMessageV2, &Fault{Delay: 200 * time.Millisecond, Times: 1})
		start := time.Now()
		sendCheckResp(t, e.invoke(t, req()), remoting.Success, "")
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("answered after %v", d)
		}
	})
	t.Run("drop", func(t *testing.T) {
		e.b.SetFault(remoting.SendMessageV2, &Fault{Drop: true, Times: 1})
		before := e.b.store.MaxOffset("Faulty", 0)
		_, err := e.cli.InvokeTimeout(context.Background(), e.b.Addr(), req(), 300*time.Millisecond)
		if !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("dropped request: %v", err)
		}
		if after := e.b.store.MaxOffset("Faulty", 0); after != before {
			t.Errorf("dropped request was stored")
		}
		sendCheckResp(t, e.invoke(t, req()), remoting.Success, "")
	})
	t.Run("clear", func(t *testing.T) {
		e.b.SetFault(remoting.SendMessageV2, &Fault{Respond: true, Code: remoting.SystemBusy})
		e.b.SetFault(remoting.SendMessageV2, nil)
		sendCheckResp(t, e.invoke(t, req()), remoting.Success, "")
	})
}

// sendWireFrame is one captured frame of testdata/wire.
type sendWireFrame struct {
	N         int    `json:"n"`
	File      string `json:"file"`
	Direction string `json:"direction"`
	Code      int32  `json:"code"`
	Oneway    bool   `json:"oneway"`
	Pair      *int   `json:"pair"`
	Messages  []struct {
		Topic      string            `json:"topic"`
		SysFlag    int32             `json:"sysFlag"`
		Properties map[string]string `json:"properties"`
	} `json:"messages"`
}

func sendParseIndex(data []byte) ([]sendWireFrame, error) {
	var idx struct {
		Frames []sendWireFrame `json:"frames"`
	}
	err := json.Unmarshal(data, &idx)
	return idx.Frames, err
}

func TestSendCapturedFrames(t *testing.T) {
	idx, err := os.ReadFile("../../testdata/wire/index.json")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := sendParseIndex(idx)
	if err != nil {
		t.Fatal(err)
	}
	byN := map[int]sendWireFrame{}
	for _, f := range frames {
		byN[f.N] = f
	}
	e := sendTestBroker(t, nil)
	raw := rawframe.Dial(t, e.b.Addr())
	n := 0
	var oneway []sendWireFrame
	for _, f := range frames {
		if f.Direction != "req" || (f.Code != remoting.SendMessage && f.Code != remoting.SendMessageV2 && f.Code != remoting.SendBatchMessage) {
			continue
		}
		if f.Oneway {
			oneway = append(oneway, f)
			continue
		}
		if f.Pair == nil {
			continue
		}
		n++
		t.Run(f.File, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../testdata/wire", f.File))
			if err != nil {
				t.Fatal(err)
			}
			want := byN[*f.Pair]
			wantData, err := os.ReadFile(filepath.Join("../../testdata/wire", want.File))
			if err != nil {
				t.Fatal(err)
			}
			wantResp, _, err := remoting.DecodeFrame(wantData, remoting.DefaultMaxFrameSize)
			if err != nil {
				t.Fatal(err)
			}
			req, _, err := remoting.DecodeFrame(data, remoting.DefaultMaxFrameSize)
			if err != nil {
				t.Fatal(err)
			}
			resp := raw.Replay(data)
			if resp.Opaque != req.Opaque || !resp.IsResponse() || resp.Serialize != req.Serialize {
				t.Errorf("response opaque %d flag %d serialize %d, request %d / %d", resp.Opaque, resp.Flag, resp.Serialize, req.Opaque, req.Serialize)
			}
			if resp.Code != wantResp.Code || resp.Remark != wantResp.Remark {
				t.Fatalf("code %d remark %q, captured %d %q", resp.Code, resp.Remark, wantResp.Code, wantResp.Remark)
			}
			if got, want := sendExtKeys(resp.Ext), sendExtKeys(wantResp.Ext); got != want {
				t.Errorf("response keys %s, captured %s", got, want)
			}
			gotIDs := strings.Count(sendExtValue(resp.Ext, "msgId"), ",")
			wantIDs := strings.Count(sendExtValue(wantResp.Ext, "msgId"), ",")
			if gotIDs != wantIDs || sendExtValue(resp.Ext, "queueId") != sendExtValue(wantResp.Ext, "queueId") {
				t.Errorf("msgId %q queueId %q, captured %q %q", sendExtValue(resp.Ext, "msgId"), sendExtValue(resp.Ext, "queueId"),
					sendExtValue(wantResp.Ext, "msgId"), sendExtValue(wantResp.Ext, "queueId"))
			}
		})
	}
	if n < 15 {
		t.Errorf("replayed %d captured sends, expected more", n)
	}
	// A oneway send (wire 0111) is stored and never answered.
	if len(oneway) == 0 {
		t.Error("no oneway send in the capture")
	}
	for _, f := range oneway {
		data, err := os.ReadFile(filepath.Join("../../testdata/wire", f.File))
		if err != nil {
			t.Fatal(err)
		}
		req, _, err := remoting.DecodeFrame(data, remoting.DefaultMaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		var h remoting.SendMessageRequestHeaderV2
		if err := h.FromExt(req.Ext); err != nil {
			t.Fatal(err)
		}
		before := e.b.store.MaxOffset(h.Topic, h.QueueID)
		raw.Write(data)
		testutil.WaitFor(t, 0, f.File+" stored", func() bool { return e.b.store.MaxOffset(h.Topic, h.QueueID) == before+1 })
		raw.ExpectNothing(300 * time.Millisecond) // a oneway send is never answered
	}

	// What we stored has the properties the 4.9.8 broker stored for the
	// same sends (matched by UNIQ_KEY, else by topic and KEYS), apart from
	// the UNIQ_KEY we add to batch elements that lack one. Not every
	// stored message of the capture has its send captured too.
	ours := map[string]*rocketmq.MessageExt{}
	for _, q := range e.b.store.Queues() {
		for _, m := range sendReadBack(t, e.b, q.Topic, q.QueueID) {
			ours[m.Properties["UNIQ_KEY"]] = m
			ours[m.Topic+"/"+m.Properties["KEYS"]] = m
		}
	}
	compared := 0
	for _, f := range frames {
		for _, cm := range f.Messages {
			p := cm.Properties
			if p["TRAN_MSG"] != "" || p["RETRY_TOPIC"] != "" || p["KEYS"] == "" {
				continue // transactions and retries are not replayed here
			}
			m := ours[p["UNIQ_KEY"]]
			if p["UNIQ_KEY"] == "" {
				m = ours[cm.Topic+"/"+p["KEYS"]]
			}
			if m == nil {
				continue
			}
			got := maps.Clone(m.Properties)
			if _, ok := p["UNIQ_KEY"]; !ok {
				delete(got, "UNIQ_KEY")
			}
			if !maps.Equal(got, p) {
				t.Errorf("frame %d KEYS %q: stored %v, 4.9.8 stored %v", f.N, p["KEYS"], got, p)
			}
			if m.SysFlag != cm.SysFlag {
				t.Errorf("frame %d KEYS %q: sysFlag %d, 4.9.8 %d", f.N, p["KEYS"], m.SysFlag, cm.SysFlag)
			}
			compared++
		}
	}
	t.Logf("compared %d stored messages with the capture", compared)
	if compared < 15 {
		t.Errorf("compared %d stored messages with the capture", compared)
	}
}

func sendExtKeys(ext remoting.ExtFields) string {
	m := ext.Map()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func sendExtValue(ext remoting.ExtFields, k string) string {
	v, _ := ext.Get(k)
	return v
}

// sendBenchConfig uses the store's production file sizes (sparse files).
func sendBenchConfig(c *Config) {
	c.CommitLogSegmentSize, c.ConsumeQueueEntries, c.IndexSlots, c.IndexEntries = 1<<30, 0, 0, 0
}

// BenchmarkSendV2Parallel64 sends 1 KiB messages from 64 concurrent
// callers over one client connection (async flush), like 64 sync senders
// of one producer. Allocations are the process's: client and broker.
func BenchmarkSendV2Parallel64(b *testing.B) {
	e := sendTestBroker(b, sendBenchConfig)
	body := bytes.Repeat([]byte("x"), 1024)
	props := sendTestProps("TAGS", "TagA", "KEYS", "k1", "UNIQ_KEY", "C0A8000A30391B6D358600A1B2C30001", "WAIT", "true")
	h := sendTestHeader("Bench", 0, props)
	// Warm up: create the topic and connect.
	if resp := e.invoke(b, sendV2Req(h, body)); resp.Code != remoting.Success {
		b.Fatalf("warm-up: %d %s", resp.Code, resp.Remark)
	}
	const callers = 64
	var next, failed atomic.Int64
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hh := *h
			hh.QueueID = int32(w % 4)
			for next.Inc() <= int64(b.N) {
				resp, err := e.cli.Invoke(context.Background(), e.b.Addr(), sendV2Req(&hh, body))
				if err != nil || resp.Code != remoting.Success {
					failed.Inc()
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d sends failed", f)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
}

// BenchmarkSendV2Handler runs the broker's side alone: header decode,
// checks, properties, store append, response (async flush).
func BenchmarkSendV2Handler(b *testing.B) {
	e := sendTestBroker(b, sendBenchConfig)
	body := bytes.Repeat([]byte("x"), 1024)
	props := sendTestProps("TAGS", "TagA", "KEYS", "k1", "UNIQ_KEY", "C0A8000A30391B6D358600A1B2C30001", "WAIT", "true")
	req := sendV2Req(sendTestHeader("BenchHandler", 0, props), body)
	c := &server.Conn{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if resp := e.b.handleSendMessageV2(ctx, c, req); resp.Code != remoting.Success {
			b.Fatalf("%d %s", resp.Code, resp.Remark)
		}
	}
}

// BenchmarkSendBatchHandler32x1KiB is BenchmarkSendV2Handler for a batch of
// 32 × 1 KiB, each element with its own UNIQ_KEY, as our producer sends.
func BenchmarkSendBatchHandler32x1KiB(b *testing.B) {
	e := sendTestBroker(b, sendBenchConfig)
	body := bytes.Repeat([]byte("x"), 1024)
	msgs := make([]*rocketmq.Message, 32)
	for i := range msgs {
		m := &rocketmq.Message{Topic: "BenchBatch", Body: body}
		m.SetUniqKey(fmt.Sprintf("C0A8000A30391B6D358600A1B2C3%04X", i))
		m.SetWaitStoreMsgOK(true)
		msgs[i] = m
	}
	batch, err := message.AppendBatch(nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	h := sendTestHeader("BenchBatch", 0, sendTestProps("WAIT", "true"))
	h.Batch = true
	req := remoting.NewRequest(remoting.SendBatchMessage, h.V2().AppendExt(nil), batch)
	c := &server.Conn{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if resp := e.b.handleSendBatchMessage(ctx, c, req); resp.Code != remoting.Success {
			b.Fatalf("%d %s", resp.Code, resp.Remark)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(32*b.N), "ns/msg")
}

// The event-loop fast path serves a send only when nothing in it can wait:
// it declines unknown topics (auto-creation writes config and registers)
// and %RETRY% topics before touching anything, and answers a header that
// does not decode at once.
func TestSendInlineDecisions(t *testing.T) {
	e := sendTestBroker(t, nil)
	c := &server.Conn{}
	ctx := context.Background()
	body := []byte("inline")

	newTopic := sendV2Req(sendTestHeader("InlineTopic", 0, sendTestProps("WAIT", "true")), body)
	if resp, ok := e.b.sendMessageV2Inline(ctx, c, newTopic); ok {
		t.Fatalf("send to an unknown topic served inline: code %d", resp.Code)
	}
	if _, ok := e.b.topics.get("InlineTopic"); ok {
		t.Fatal("a declined send created its topic")
	}
	if resp := e.invoke(t, newTopic); resp.Code != remoting.Success {
		t.Fatalf("worker send: %d %s", resp.Code, resp.Remark)
	}
	resp, ok := e.b.sendMessageV2Inline(ctx, c, sendV2Req(sendTestHeader("InlineTopic", 0, sendTestProps("WAIT", "true")), body))
	if !ok || resp.Code != remoting.Success {
		t.Fatalf("send to an existing topic: served inline %v, code %d", ok, resp.Code)
	}
	if got := len(sendReadBack(t, e.b, "InlineTopic", 0)); got != 2 {
		t.Fatalf("%d messages stored, want 2", got)
	}

	retry := sendV2Req(sendTestHeader(rocketmq.RetryGroupTopicPrefix+"G", 0, ""), body)
	if _, ok := e.b.sendMessageV2Inline(ctx, c, retry); ok {
		t.Fatal("%RETRY% send served inline")
	}

	bad := remoting.NewRequest(remoting.SendMessageV2, remoting.ExtFields{{Key: "b", Value: "InlineTopic"}}, body)
	if resp, ok := e.b.sendMessageV2Inline(ctx, c, bad); !ok || resp.Code != remoting.SystemError {
		t.Fatalf("bad header: served inline %v, code %v", ok, resp)
	}
}
