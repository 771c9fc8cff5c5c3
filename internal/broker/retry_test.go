package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// retryTestBroker is a broker with short delay levels and a fast delay
// check, so that a retried message comes back within a second.
func retryTestBroker(t testing.TB, mod func(*Config)) *Broker {
	t.Helper()
	return clientsTestBroker(t, func(c *Config) {
		c.DelayLevels = "50ms 100ms 150ms"
		c.DelayCheckInterval = 10 * time.Millisecond
		if mod != nil {
			mod(c)
		}
	})
}

// retrySend stores one message in topic queue 0 through SEND_MESSAGE_V2
// and returns its offset message id.
func retrySend(t testing.TB, p *clientsPeer, topic, props string, body []byte) string {
	t.Helper()
	resp := p.invoke(t, sendV2Req(sendTestHeader(topic, 0, props), body))
	if resp.Code != remoting.Success {
		t.Fatalf("send: code %d %q", resp.Code, resp.Remark)
	}
	return sendRespHeader(t, resp).MsgID
}

// sendBackReq is CONSUMER_SEND_MSG_BACK as a 4.9.8 consumer sends it.
func sendBackReq(group string, offset int64, delayLevel int32, maxTimes *int32) *remoting.Command {
	h := remoting.ConsumerSendMsgBackRequestHeader{
		Offset:            offset,
		Group:             group,
		DelayLevel:        delayLevel,
		OriginMsgID:       remoting.Ptr("ignored-by-the-broker"),
		OriginTopic:       remoting.Ptr("ignored"),
		MaxReconsumeTimes: maxTimes,
		BrokerName:        remoting.Ptr("broker-a"),
	}
	return remoting.NewRequest(remoting.ConsumerSendMsgBack, h.AppendExt(nil), nil)
}

// sendBack sends a message back and requires SUCCESS without a remark.
func (p *clientsPeer) sendBack(t testing.TB, group string, offset int64, delayLevel int32, maxTimes *int32) {
	t.Helper()
	resp := p.invoke(t, sendBackReq(group, offset, delayLevel, maxTimes))
	if resp.Code != remoting.Success || resp.Remark != "" {
		t.Fatalf("send back: code %d remark %q", resp.Code, resp.Remark)
	}
}

// pullOne pulls topic queue 0 from offset for group until a message comes
// (retried messages arrive after their delay) and returns it.
func (p *clientsPeer) pullOne(t testing.TB, group, topic string, offset int64) *rocketmq.MessageExt {
	t.Helper()
	var got []*rocketmq.MessageExt
	testutil.WaitFor(t, 5*time.Second, "a message in "+topic, func() bool {
		resp := p.invoke(t, pullArgs{group: group, topic: topic, offset: offset, sub: pstr("*")}.req())
		if resp.Code == remoting.Success {
			got = pullDecode(t, resp.Body)
		}
		return len(got) > 0
	})
	if len(got) != 1 {
		t.Fatalf("%s: %d messages from offset %d, want 1", topic, len(got), offset)
	}
	return got[0]
}

// With maxReconsumeTimes 1 and a consumer that always fails, a message is
// delivered twice (reconsume times 0 and 1), then lands in %DLQ%group,
// which has a route and serves it with the original body and properties.
func TestSendMsgBackRetryThenDLQ(t *testing.T) {
	ns := startNameServer(t)
	b := retryTestBroker(t, func(c *Config) { c.NameServers = []string{ns} })
	p := clientsNewPeer(t, b, "127.0.0.1@retry")
	const group = "RetryG"
	body := []byte("payload that fails")
	origID := retrySend(t, p, "RetryT", sendTestProps("TAGS", "TagA", "KEYS", "key1 key2", "UNIQ_KEY", "UNIQ-1", "user", "v"), body)
	p.heartbeat(t, group, remoting.MessageModelClustering, map[string]string{"RetryT": "*", "%RETRY%" + group: "*"})
	one := remoting.Ptr(int32(1))

	m0 := p.pullOne(t, group, "RetryT", 0)
	if m0.ReconsumeTimes != 0 || m0.OffsetMsgID != origID {
		t.Fatalf("first delivery: reconsume %d id %s, want 0 %s", m0.ReconsumeTimes, m0.OffsetMsgID, origID)
	}
	p.sendBack(t, group, m0.CommitLogOffset, 0, one)

	// Parked at level 3 + 0 for %RETRY%group.
	parked := sendReadBack(t, b, rocketmq.TopicSchedule, 2)
	if len(parked) != 1 || parked[0].Properties["REAL_TOPIC"] != "%RETRY%"+group || parked[0].Properties["DELAY"] != "3" {
		t.Fatalf("schedule queue 2: %+v", parked)
	}
	if tc, ok := b.topics.get("%RETRY%" + group); !ok || tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Errorf("retry topic %+v (%v)", tc, ok)
	}

	m1 := p.pullOne(t, group, "%RETRY%"+group, 0)
	wantProps := map[string]string{
		"RETRY_TOPIC": "RetryT", "ORIGIN_MESSAGE_ID": origID, "UNIQ_KEY": "UNIQ-1",
		"KEYS": "key1 key2", "TAGS": "TagA", "user": "v",
	}
	checkRetried(t, "redelivery", m1, "%RETRY%"+group, 1, body, wantProps)
	if _, ok := m1.Properties["DELAY"]; ok {
		t.Errorf("redelivered message keeps DELAY: %v", m1.Properties)
	}

	p.sendBack(t, group, m1.CommitLogOffset, 0, one)
	dlqTopic := "%DLQ%" + group
	dlq := sendReadBack(t, b, dlqTopic, 0)
	if len(dlq) != 1 {
		t.Fatalf("DLQ holds %d messages, want 1", len(dlq))
	}
	if tc, ok := b.topics.get(dlqTopic); !ok || tc.ReadQueueNums != 1 || tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Errorf("DLQ topic %+v (%v)", tc, ok)
	}
	sendWaitRoute(t, p.cli, ns, dlqTopic, 1)

	// A consumer of the DLQ reads it.
	r := clientsNewPeer(t, b, "127.0.0.1@dlqreader")
	r.heartbeat(t, "DLQReader", remoting.MessageModelClustering, map[string]string{dlqTopic: "*"})
	d := r.pullOne(t, "DLQReader", dlqTopic, 0)
	checkRetried(t, "dead letter", d, dlqTopic, 2, body, wantProps)
	if d.Properties["DELAY"] != "0" {
		t.Errorf("dead letter DELAY %q, want Java's 0", d.Properties["DELAY"])
	}
	// No third delivery.
	if n := b.store.MaxOffset("%RETRY%"+group, 0); n != 1 {
		t.Errorf("retry queue holds %d messages, want 1", n)
	}
}

func checkRetried(t testing.TB, what string, m *rocketmq.MessageExt, topic string, reconsume int32, body []byte, props map[string]string) {
	t.Helper()
	if m.Topic != topic || m.ReconsumeTimes != reconsume || string(m.Body) != string(body) {
		t.Errorf("%s: topic %s reconsume %d body %q, want %s %d %q", what, m.Topic, m.ReconsumeTimes, m.Body, topic, reconsume, body)
	}
	for k, v := range props {
		if m.Properties[k] != v {
			t.Errorf("%s: property %s = %q, want %q (all %v)", what, k, m.Properties[k], v, m.Properties)
		}
	}
}

func TestSendMsgBackCases(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*Config)
		prepare func(b *Broker)
		req     func(offset int64) *remoting.Command
		version int32 // 0: the transport's (409)
		code    int32
		remark  string
		topic   string // where the message went ("" when nowhere)
		queue   int32
		delay   string // its DELAY property
	}{
		{name: "group not exist", mod: func(c *Config) { c.DisableAutoCreateGroup = true },
			req:  func(off int64) *remoting.Command { return sendBackReq("NoGroup", off, 0, nil) },
			code: remoting.SubscriptionGroupNotExist, remark: "subscription group not exist, NoGroup \nSee http://rocketmq.apache.org/docs/faq/ for further details."},
		{name: "broker not writable", mod: func(c *Config) { c.BrokerPermission = rocketmq.PermRead },
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 0, nil) },
			code: remoting.NoPermission, remark: "the broker[127.0.0.1] sending message is forbidden"},
		{name: "retry topic not writable", prepare: func(b *Broker) {
			b.topics.put(remoting.TopicConfig{TopicName: "%RETRY%G", ReadQueueNums: 1, WriteQueueNums: 1, Perm: rocketmq.PermRead})
		},
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 0, nil) },
			code: remoting.NoPermission, remark: "the topic[%RETRY%G] sending message is forbidden"},
		{name: "no retry queues", prepare: func(b *Broker) {
			g := remoting.NewSubscriptionGroupConfig("G")
			g.RetryQueueNums = 0
			b.groups.put(g)
		},
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 0, nil) },
			code: remoting.Success},
		{name: "bad offset",
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off+7, 0, nil) },
			code: remoting.SystemError, remark: "look message by offset failed, 7"},
		{name: "explicit level",
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 2, nil) },
			code: remoting.Success, topic: rocketmq.TopicSchedule, queue: 1, delay: "2"},
		{name: "level past the table is clamped",
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 9, nil) },
			code: remoting.Success, topic: rocketmq.TopicSchedule, queue: 2, delay: "3"},
		{name: "negative level goes to the DLQ",
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, -1, nil) },
			code: remoting.Success, topic: "%DLQ%G", delay: "0"},
		{name: "max 0 goes to the DLQ",
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 0, remoting.Ptr(int32(0))) },
			code: remoting.Success, topic: "%DLQ%G", delay: "0"},
		{name: "group retryMaxTimes", prepare: func(b *Broker) {
			g := remoting.NewSubscriptionGroupConfig("G")
			g.RetryMaxTimes = 0
			b.groups.put(g)
		},
			req:  func(off int64) *remoting.Command { return sendBackReq("G", off, 0, nil) },
			code: remoting.Success, topic: "%DLQ%G", delay: "0"},
		{name: "client before 3.4.9: the group's 16",
			req:     func(off int64) *remoting.Command { return sendBackReq("G", off, 0, remoting.Ptr(int32(0))) },
			version: 100, code: remoting.Success, topic: rocketmq.TopicSchedule, queue: 2, delay: "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := retryTestBroker(t, tt.mod)
			b.topics.ensure("SB", 1, rocketmq.PermRead|rocketmq.PermWrite)
			p := clientsNewPeer(t, b, "127.0.0.1@sb")
			retrySend(t, p, "SB", sendTestProps("TAGS", "T"), []byte("x"))
			m := sendReadBack(t, b, "SB", 0)[0]
			if tt.prepare != nil {
				tt.prepare(b)
			}
			req := tt.req(m.CommitLogOffset)
			var resp *remoting.Command
			if tt.version != 0 {
				req.Version = tt.version
				resp = rawframe.Dial(t, b.Addr()).CallNext(req)
			} else {
				resp = p.invoke(t, req)
			}
			if resp.Code != tt.code || resp.Remark != tt.remark {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tt.code, tt.remark)
			}
			if tt.topic == "" {
				for _, topic := range []string{rocketmq.TopicSchedule, "%RETRY%G", "%DLQ%G"} {
					for q := int32(0); q < 3; q++ {
						if n := b.store.MaxOffset(topic, q); n != 0 {
							t.Errorf("%s/%d holds %d messages", topic, q, n)
						}
					}
				}
				return
			}
			got := sendReadBack(t, b, tt.topic, tt.queue)
			if len(got) != 1 {
				t.Fatalf("%s/%d holds %d messages, want 1", tt.topic, tt.queue, len(got))
			}
			if got[0].Properties["DELAY"] != tt.delay || got[0].ReconsumeTimes != 1 ||
				got[0].Properties["ORIGIN_MESSAGE_ID"] != m.OffsetMsgID || got[0].Properties["RETRY_TOPIC"] != "SB" {
				t.Errorf("stored %+v", got[0])
			}
		})
	}
}

// Without maxReconsumeTimes in the header the group's retryMaxTimes (16 by
// default) decides.
func TestSendMsgBackGroupDefaultMax(t *testing.T) {
	b := retryTestBroker(t, nil)
	p := clientsNewPeer(t, b, "127.0.0.1@max")
	for _, reconsume := range []int32{15, 16} {
		h := sendTestHeader("MaxT", 0, sendTestProps("TAGS", "T"))
		h.ReconsumeTimes = &reconsume
		if resp := p.invoke(t, sendV2Req(h, []byte("m"))); resp.Code != remoting.Success {
			t.Fatalf("send: %d %q", resp.Code, resp.Remark)
		}
	}
	msgs := sendReadBack(t, b, "MaxT", 0)
	if len(msgs) != 2 || msgs[0].ReconsumeTimes != 15 || msgs[1].ReconsumeTimes != 16 {
		t.Fatalf("stored %+v", msgs)
	}
	for _, m := range msgs {
		p.sendBack(t, "MaxG", m.CommitLogOffset, 0, nil)
	}
	if g, _ := b.groups.get("MaxG"); g.RetryMaxTimes != 16 {
		t.Errorf("auto-created group retryMaxTimes %d, want 16", g.RetryMaxTimes)
	}
	parked := sendReadBack(t, b, rocketmq.TopicSchedule, 2) // level 3 + 15, clamped
	if len(parked) != 1 || parked[0].ReconsumeTimes != 16 || parked[0].Properties["REAL_TOPIC"] != "%RETRY%MaxG" {
		t.Errorf("parked %+v", parked)
	}
	dlq := sendReadBack(t, b, "%DLQ%MaxG", 0)
	if len(dlq) != 1 || dlq[0].ReconsumeTimes != 17 {
		t.Errorf("DLQ %+v", dlq)
	}
}

// A stored message without any property (a reply stored as sent, or a
// record another broker wrote) is sent back like any other.
func TestSendMsgBackWithoutProperties(t *testing.T) {
	b := retryTestBroker(t, nil)
	p := clientsNewPeer(t, b, "127.0.0.1@bare")
	res, err := b.store.PutMessage(context.Background(), &store.PutRequest{RecordFields: message.RecordFields{
		Topic: "BareT", Body: []byte("bare"), BornHost: pullBornHost, StoreHost: b.storeHost,
	}})
	if err != nil {
		t.Fatal(err)
	}
	p.sendBack(t, "BareG", res.PhysicalOffset, -1, nil)
	dlq := sendReadBack(t, b, "%DLQ%BareG", 0)
	if len(dlq) != 1 || dlq[0].Properties["RETRY_TOPIC"] != "BareT" || string(dlq[0].Body) != "bare" {
		t.Fatalf("DLQ %+v", dlq)
	}
}

// TestSendMsgBackCapturedFrame sends the Java 4.9.8 consumer's captured
// CONSUMER_SEND_MSG_BACK (its offset pointed at a message stored here) and
// compares the answer with the 4.9.8 broker's: SUCCESS, no remark, no
// extFields, no body, JSON (the version is each broker's own).
func TestSendMsgBackCapturedFrame(t *testing.T) {
	frames, load := clientsReadWire(t)
	var reqRaw, respRaw []byte
	for _, f := range frames {
		switch {
		case f.Code == remoting.ConsumerSendMsgBack && f.Direction == "req" && f.Pair != nil && reqRaw == nil:
			reqRaw = load(f)
			for _, g := range frames {
				if g.N == *f.Pair {
					respRaw = load(g)
				}
			}
		}
	}
	if reqRaw == nil || respRaw == nil {
		t.Fatal("no captured CONSUMER_SEND_MSG_BACK exchange")
	}
	req, _, err := remoting.DecodeFrame(reqRaw, remoting.DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := remoting.DecodeFrame(respRaw, remoting.DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}

	b := retryTestBroker(t, nil)
	p := clientsNewPeer(t, b, "127.0.0.1@captured")
	topic, _ := req.Ext.Get("originTopic")
	retrySend(t, p, topic, sendTestProps("TAGS", "TagRetry"), []byte("captured"))
	m := p.pullOne(t, "CapturedReader", topic, 0)
	req.Ext.Set("offset", strconv.FormatInt(m.CommitLogOffset, 10))

	rc := rawframe.Dial(t, b.Addr())
	frame, err := req.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := clientsRoundTrip(t, rc, frame, req.Opaque)
	if resp.Code != want.Code || resp.Remark != want.Remark || resp.Serialize != want.Serialize ||
		(resp.Ext == nil) != (want.Ext == nil) || len(resp.Body) != len(want.Body) {
		t.Errorf("answered code %d remark %q serialize %d ext %v body %d; captured %d %q %d %v %d",
			resp.Code, resp.Remark, resp.Serialize, resp.Ext, len(resp.Body),
			want.Code, want.Remark, want.Serialize, want.Ext, len(want.Body))
	}
	// The send-back took effect: the message waits in the schedule topic
	// for %RETRY%<group>.
	group, _ := req.Ext.Get("group")
	parked := sendReadBack(t, b, rocketmq.TopicSchedule, 2)
	if len(parked) != 1 || parked[0].Properties["REAL_TOPIC"] != "%RETRY%"+group {
		t.Fatalf("schedule queue 2 after the captured send-back: %+v", parked)
	}
}
