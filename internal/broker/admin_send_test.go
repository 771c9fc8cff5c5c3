package broker

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func adminCreateReq(topic string, queues, perm int32, filter string) *remoting.Command {
	h := remoting.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate, ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: perm, TopicFilterType: filter, TopicSysFlag: remoting.Ptr(int32(0)),
	}
	return remoting.NewRequest(remoting.UpdateAndCreateTopic, h.AppendExt(nil), nil)
}

func TestAdminUpdateAndCreateTopic(t *testing.T) {
	ns := startNameServer(t)
	e := sendTestBroker(t, func(c *Config) { c.NameServers = []string{ns} })

	resp := e.invoke(t, adminCreateReq("AdminTopic", 3, 6, "SINGLE_TAG"))
	if resp.Code != remoting.Success || resp.Remark != "not set any response code" || resp.Ext != nil {
		t.Fatalf("create: code %d remark %q ext %v", resp.Code, resp.Remark, resp.Ext)
	}
	tc, ok := e.b.topics.get("AdminTopic")
	if !ok || tc.ReadQueueNums != 3 || tc.WriteQueueNums != 3 || tc.Perm != 6 || tc.TopicFilterType != "SINGLE_TAG" {
		t.Fatalf("topic config %+v", tc)
	}
	data, err := store.ReadConfigFile(filepath.Join(e.b.cfg.StoreDir, "config", "topics.json"))
	if err != nil || !bytes.Contains(data, []byte(`"AdminTopic"`)) {
		t.Errorf("topics.json lacks the topic (%v)", err)
	}
	sendWaitRoute(t, e.cli, ns, "AdminTopic", 3)

	// Update: more queues, MULTI_TAG; sends then carry the MULTI_TAGS flag.
	resp = e.invoke(t, adminCreateReq("AdminTopic", 5, 6, "MULTI_TAG"))
	if resp.Code != remoting.Success {
		t.Fatalf("update: %d %q", resp.Code, resp.Remark)
	}
	sendWaitRoute(t, e.cli, ns, "AdminTopic", 5)
	resp = e.invoke(t, sendV2Req(sendTestHeader("AdminTopic", 4, "TAGS\x01t"), []byte("x")))
	sendCheckResp(t, resp, remoting.Success, "")
	if m := sendReadBack(t, e.b, "AdminTopic", 4); len(m) != 1 || m[0].SysFlag&message.FlagMultiTags == 0 {
		t.Errorf("message on a MULTI_TAG topic: %+v", m)
	}

	tests := []struct {
		name   string
		req    *remoting.Command
		remark string
	}{
		{"illegal name", adminCreateReq("bad/topic", 1, 6, "SINGLE_TAG"),
			"The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"too long", adminCreateReq(strings.Repeat("x", 128), 1, 6, "SINGLE_TAG"),
			"The specified topic is longer than topic max length."},
		{"system topic", adminCreateReq("TBW102", 1, 6, "SINGLE_TAG"), "The topic[TBW102] is conflict with system topic."},
		{"system prefix", adminCreateReq("rmq_sys_x", 1, 6, "SINGLE_TAG"), "The topic[rmq_sys_x] is conflict with system topic."},
		{"filter type", adminCreateReq("BadFilter", 1, 6, "TAGS"),
			"java.lang.IllegalArgumentException: No enum constant org.apache.rocketmq.common.TopicFilterType.TAGS"},
		{"missing field", remoting.NewRequest(remoting.UpdateAndCreateTopic, remoting.ExtFields{{Key: "topic", Value: "T"}}, nil),
			"the custom field <defaultTopic> is null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.invoke(t, tt.req)
			if resp.Code != remoting.SystemError || resp.Remark != tt.remark {
				t.Errorf("code %d remark %q, want SYSTEM_ERROR %q", resp.Code, resp.Remark, tt.remark)
			}
		})
	}
	if _, ok := e.b.topics.get("BadFilter"); ok {
		t.Error("rejected topic was created")
	}
}

func TestAdminDeleteTopic(t *testing.T) {
	e := sendTestBroker(t, nil)
	for range 3 {
		sendCheckResp(t, e.invoke(t, sendV2Req(sendTestHeader("Doomed", 1, ""), []byte("x"))), remoting.Success, "")
	}
	e.b.offsets.commit("DoomedGroup", "Doomed", 1, 2)
	h := remoting.DeleteTopicRequestHeader{Topic: "Doomed"}
	resp := e.invoke(t, remoting.NewRequest(remoting.DeleteTopicInBroker, h.AppendExt(nil), nil))
	if resp.Code != remoting.Success || resp.Remark != "" {
		t.Fatalf("delete: %d %q", resp.Code, resp.Remark)
	}
	if _, ok := e.b.topics.get("Doomed"); ok {
		t.Error("topic config still present")
	}
	if off, ok := e.b.offsets.query("DoomedGroup", "Doomed", 1); ok {
		t.Errorf("committed offset %d survived the topic", off)
	}
	if n := e.b.store.MaxOffset("Doomed", 1); n != 0 {
		t.Errorf("consume queue still has %d entries", n)
	}
	data, err := store.ReadConfigFile(filepath.Join(e.b.cfg.StoreDir, "config", "topics.json"))
	if err != nil || bytes.Contains(data, []byte(`"Doomed"`)) {
		t.Errorf("topics.json still lists the topic (%v)", err)
	}
	// (A 4.9.8 NameServer keeps the route: the admin tool removes it with
	// DELETE_TOPIC_IN_NAMESRV; re-registration does not.)
	// Unknown topics are answered SUCCESS, like 4.9.8.
	h.Topic = "NeverWas"
	if resp := e.invoke(t, remoting.NewRequest(remoting.DeleteTopicInBroker, h.AppendExt(nil), nil)); resp.Code != remoting.Success {
		t.Errorf("delete unknown: %d %q", resp.Code, resp.Remark)
	}
	// A new send starts again at offset 0.
	resp = e.invoke(t, sendV2Req(sendTestHeader("Doomed", 1, ""), []byte("again")))
	sendCheckResp(t, resp, remoting.Success, "")
	if off := sendRespHeader(t, resp).QueueOffset; off != 0 {
		t.Errorf("queue offset after delete %d", off)
	}
}

func TestAdminGetAllTopicConfig(t *testing.T) {
	e := sendTestBroker(t, nil)
	e.invoke(t, adminCreateReq("Listed", 2, 6, "SINGLE_TAG"))
	resp := e.invoke(t, remoting.NewRequest(remoting.GetAllTopicConfig, nil, nil))
	if resp.Code != remoting.Success || resp.Remark != "" {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
	if resp.Ext == nil || len(resp.Ext) != 0 {
		t.Errorf("extFields %v, want present and empty", resp.Ext)
	}
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("body: %v\n%s", err, resp.Body)
	}
	want := e.b.topics.wrapper()
	if len(w.TopicConfigTable) != len(want.TopicConfigTable) || w.DataVersion != want.DataVersion {
		t.Errorf("got %d topics %+v, want %d %+v", len(w.TopicConfigTable), w.DataVersion, len(want.TopicConfigTable), want.DataVersion)
	}
	for _, name := range []string{"Listed", "TBW102", "SELF_TEST_TOPIC", "DefaultCluster", "broker-a", "SCHEDULE_TOPIC_XXXX"} {
		if _, ok := w.TopicConfigTable[name]; !ok {
			t.Errorf("topic %s missing", name)
		}
	}
	if tc := w.TopicConfigTable["Listed"]; tc.WriteQueueNums != 2 || tc.Perm != 6 {
		t.Errorf("Listed = %+v", tc)
	}
}

func TestAdminGetBrokerRuntimeInfo(t *testing.T) {
	e := sendTestBroker(t, nil)
	for range 5 {
		sendCheckResp(t, e.invoke(t, sendV2Req(sendTestHeader("Stats", 0, ""), []byte("x"))), remoting.Success, "")
	}
	e.b.stats.addGet(2)
	resp := e.invoke(t, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
	if resp.Code != remoting.Success {
		t.Fatalf("code %d %q", resp.Code, resp.Remark)
	}
	var kv remoting.KVTable
	if err := kv.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("body: %v\n%s", err, resp.Body)
	}
	m := kv.Table
	ints := map[string]int64{
		"msgPutTotalTodayNow": 5, "msgGetTotalTodayNow": 2,
		"msgPutTotalYesterdayMorning": 0, "msgPutTotalTodayMorning": 0,
		"msgGetTotalYesterdayMorning": 0, "msgGetTotalTodayMorning": 0,
		"brokerVersion": brokerVersion,
	}
	for k, want := range ints {
		if got, err := strconv.ParseInt(m[k], 10, 64); err != nil || got != want {
			t.Errorf("%s = %q, want %d", k, m[k], want)
		}
	}
	if m["brokerVersionDesc"] != "V5_0_0" {
		t.Errorf("brokerVersionDesc %q", m["brokerVersionDesc"])
	}
	// What the admin tool parses must parse.
	for _, k := range []string{"putTps", "getTransferedTps"} {
		parts := strings.Split(m[k], " ")
		if len(parts) != 3 {
			t.Errorf("%s = %q", k, m[k])
			continue
		}
		for _, p := range parts {
			if _, err := strconv.ParseFloat(p, 64); err != nil {
				t.Errorf("%s = %q: %v", k, m[k], err)
			}
		}
	}
	if v, err := strconv.ParseFloat(strings.Split(m["putTps"], " ")[0], 64); err != nil || v <= 0 {
		t.Errorf("putTps %q after 5 sends", m["putTps"])
	}
	for _, k := range []string{"commitLogDiskRatio"} {
		if v, err := strconv.ParseFloat(m[k], 64); err != nil || v < 0 || v > 1 {
			t.Errorf("%s = %q", k, m[k])
		}
	}
	now := time.Now().UnixMilli()
	for _, k := range []string{"earliestMessageTimeStamp", "bootTimestamp"} {
		if v, err := strconv.ParseInt(m[k], 10, 64); err != nil || v <= 0 || v > now {
			t.Errorf("%s = %q", k, m[k])
		}
	}
	if v, err := strconv.ParseInt(m["commitLogMaxOffset"], 10, 64); err != nil || v != e.b.store.CommitLogMaxOffset() || v == 0 {
		t.Errorf("commitLogMaxOffset %q", m["commitLogMaxOffset"])
	}
	for _, k := range []string{"commitLogMinOffset", "sendThreadPoolQueueSize", "pullThreadPoolQueueSize",
		"sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueHeadWaitTimeMills", "pageCacheLockTimeMills", "putMessageTimesTotal"} {
		if _, err := strconv.ParseInt(m[k], 10, 64); err != nil {
			t.Errorf("%s = %q", k, m[k])
		}
	}
	if !strings.HasPrefix(m["commitLogDirCapacity"], "Total : ") || !strings.HasPrefix(m["runtime"], "[ 0 days") {
		t.Errorf("commitLogDirCapacity %q runtime %q", m["commitLogDirCapacity"], m["runtime"])
	}
}

func TestAdminStatsSampling(t *testing.T) {
	boot := time.Unix(1700000000, 0)
	s := newBrokerStats(boot)
	for i := 1; i <= 20; i++ {
		s.addPut(10, 100)
		s.sample(boot.Add(time.Duration(i) * time.Second))
	}
	now := boot.Add(20 * time.Second)
	if got := s.tps(now, s.put.Load(), func(x statsSample) int64 { return x.put }); got != "10.00 10.00 10.00" {
		t.Errorf("tps %q", got)
	}
	// A day roll moves today's start total to yesterday.
	next := time.Date(boot.Year(), boot.Month(), boot.Day()+1, 0, 0, 1, 0, boot.Location())
	s.addPut(5, 0)
	s.sample(next)
	if y, td, _, _ := s.dayTotals(); y != 0 || td != 205 {
		t.Errorf("day totals %d %d", y, td)
	}
	if got := javaByteCount(1023); got != "1023 B" {
		t.Errorf("javaByteCount(1023) = %q", got)
	}
	if got := javaByteCount(1536); got != "1.5 KiB" {
		t.Errorf("javaByteCount(1536) = %q", got)
	}
	if got := javaRuntimeString(26*time.Hour + 61*time.Second); got != "[ 1 days, 2 hours, 1 minutes, 1 seconds ]" {
		t.Errorf("runtime %q", got)
	}
}

func TestAdminGetTopicStatsInfo(t *testing.T) {
	e := sendTestBroker(t, nil)
	h := remoting.GetTopicStatsInfoRequestHeader{Topic: "Unknown"}
	resp := e.invoke(t, remoting.NewRequest(remoting.GetTopicStatsInfo, h.AppendExt(nil), nil))
	if resp.Code != remoting.TopicNotExist || resp.Remark != "topic[Unknown] not exist" {
		t.Fatalf("unknown topic: %d %q", resp.Code, resp.Remark)
	}
	for range 3 {
		sendCheckResp(t, e.invoke(t, sendV2Req(sendTestHeader("Measured", 2, ""), []byte("x"))), remoting.Success, "")
	}
	h.Topic = "Measured"
	resp = e.invoke(t, remoting.NewRequest(remoting.GetTopicStatsInfo, h.AppendExt(nil), nil))
	if resp.Code != remoting.Success {
		t.Fatalf("%d %q", resp.Code, resp.Remark)
	}
	var st remoting.TopicStatsTable
	if err := st.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("body: %v\n%s", err, resp.Body)
	}
	if len(st.OffsetTable) != 4 {
		t.Fatalf("%d queues: %s", len(st.OffsetTable), resp.Body)
	}
	last, _ := e.b.store.MessageStoreTime("Measured", 2, 2)
	for q := range 4 {
		o, ok := st.OffsetTable[rocketmq.MessageQueue{Topic: "Measured", BrokerName: "broker-a", QueueID: q}]
		want := remoting.TopicOffset{}
		if q == 2 {
			want = remoting.TopicOffset{MinOffset: 0, MaxOffset: 3, LastUpdateTimestamp: last}
		}
		if !ok || o != want {
			t.Errorf("queue %d: %+v (%v), want %+v", q, o, ok, want)
		}
	}
}
