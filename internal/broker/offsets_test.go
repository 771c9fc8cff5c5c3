package broker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func offsetUpdateReq(group, topic string, queue int32, off int64) *remoting.Command {
	h := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queue, CommitOffset: off}
	return remoting.NewRequest(remoting.UpdateConsumerOffset, h.AppendExt(nil), nil)
}

func offsetQueryReq(group, topic string, queue int32, setZero *bool) *remoting.Command {
	h := remoting.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: queue, SetZeroIfNotFound: setZero}
	return remoting.NewRequest(remoting.QueryConsumerOffset, h.AppendExt(nil), nil)
}

// offsetOf answers QUERY_CONSUMER_OFFSET; ok is false on QUERY_NOT_FOUND.
func (e *pullEnv) offsetOf(t testing.TB, group, topic string, queue int32) (int64, bool) {
	t.Helper()
	resp := e.invoke(t, offsetQueryReq(group, topic, queue, nil))
	switch resp.Code {
	case remoting.Success:
		var h remoting.OffsetResponseHeader
		if err := h.FromExt(resp.Ext); err != nil {
			t.Fatalf("query header: %v", err)
		}
		return h.Offset, true
	case remoting.QueryNotFound:
		return 0, false
	}
	t.Fatalf("query: code %d %q", resp.Code, resp.Remark)
	return 0, false
}

func TestOffsetUpdateAndQuery(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("OffT", 4, rocketmq.PermRead|rocketmq.PermWrite)
	e.put(t, "OffT", 2, "", []byte("m"))

	resp := e.invoke(t, offsetUpdateReq("g1", "OffT", 0, 12))
	if resp.Code != remoting.Success || resp.Remark != "" || resp.Ext == nil || len(resp.Ext) != 0 {
		t.Fatalf("update: code %d remark %q ext %#v, want SUCCESS with an empty header", resp.Code, resp.Remark, resp.Ext)
	}
	if off, ok := e.offsetOf(t, "g1", "OffT", 0); !ok || off != 12 {
		t.Fatalf("offset %d %v, want 12", off, ok)
	}
	// A smaller value overwrites (Java only logs it).
	e.invoke(t, offsetUpdateReq("g1", "OffT", 0, 5))
	if off, _ := e.offsetOf(t, "g1", "OffT", 0); off != 5 {
		t.Fatalf("offset %d after moving back, want 5", off)
	}
	// Oneway, as the Java client's periodic persist sends it.
	if err := e.cli.InvokeOneway(context.Background(), e.b.Addr(), offsetUpdateReq("g1", "OffT", 1, 7)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 0, "the oneway update", func() bool { off, ok := e.b.offsets.query("g1", "OffT", 1); return ok && off == 7 })

	t.Run("not committed", func(t *testing.T) {
		// Empty queue and a queue whose first message is in memory: 0.
		for _, q := range []int32{2, 3} {
			if off, ok := e.offsetOf(t, "g1", "OffT", q); !ok || off != 0 {
				t.Errorf("queue %d: %d %v, want 0", q, off, ok)
			}
		}
		// Unknown topic and queue too (Java creates the queue).
		if off, ok := e.offsetOf(t, "g1", "NoSuchTopic", 9); !ok || off != 0 {
			t.Errorf("unknown queue: %d %v, want 0", off, ok)
		}
		no := false
		resp := e.invoke(t, offsetQueryReq("g1", "OffT", 2, &no))
		if resp.Code != remoting.QueryNotFound || resp.Remark != "Not found, do not set to zero, maybe this group boot first" {
			t.Errorf("setZeroIfNotFound=false: code %d %q", resp.Code, resp.Remark)
		}
		yes := true
		if resp := e.invoke(t, offsetQueryReq("g1", "OffT", 2, &yes)); resp.Code != remoting.Success {
			t.Errorf("setZeroIfNotFound=true: code %d %q", resp.Code, resp.Remark)
		}
		// A committed -1 is "none", as in Java.
		e.b.offsets.commit("g1", "OffT", 3, -1)
		if off, ok := e.offsetOf(t, "g1", "OffT", 3); !ok || off != 0 {
			t.Errorf("committed -1: %d %v, want 0", off, ok)
		}
	})

	t.Run("first message not cached", func(t *testing.T) {
		// Java answers QUERY_NOT_FOUND when the queue's first message lies
		// more than 40% of RAM behind the commit-log tip.
		e.b.offsets.memOnce.Do(func() {})
		e.b.offsets.memHot.Store(0)
		t.Cleanup(func() { e.b.offsets.memHot.Store(1 << 62) })
		e.put(t, "OffT", 2, "", []byte("later"))
		resp := e.invoke(t, offsetQueryReq("g2", "OffT", 2, nil))
		if resp.Code != remoting.QueryNotFound || resp.Remark != "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first" {
			t.Errorf("code %d %q", resp.Code, resp.Remark)
		}
	})

	t.Run("bad header", func(t *testing.T) {
		resp := e.invoke(t, remoting.NewRequest(remoting.UpdateConsumerOffset, remoting.ExtFields{{Key: "topic", Value: "OffT"}}, nil))
		if resp.Code != remoting.SystemError {
			t.Errorf("code %d %q", resp.Code, resp.Remark)
		}
	})
}

func TestOffsetPersistAndReload(t *testing.T) {
	dir := t.TempDir()
	cfg := pullTestConfig(dir)
	b := startBroker(t, cfg)
	e := &pullEnv{b: b, cli: newTestClient(t), cfg: cfg}
	e.invoke(t, offsetUpdateReq("g1", "OffP", 0, 12))
	e.invoke(t, offsetUpdateReq("g1", "OffP", 3, 9))
	e.invoke(t, offsetUpdateReq("g2", "%RETRY%g2", 0, 1))
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(filepath.Join(dir, "config", "consumerOffset.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) {
		t.Fatalf("consumerOffset.json is not strict JSON:\n%s", data)
	}
	var doc struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OffsetTable["OffP@g1"]["0"] != 12 || doc.OffsetTable["OffP@g1"]["3"] != 9 || doc.OffsetTable["%RETRY%g2@g2"]["0"] != 1 {
		t.Fatalf("file content:\n%s", data)
	}

	b2 := startBroker(t, cfg)
	e.b = b2
	for _, c := range []struct {
		group, topic string
		queue        int32
		want         int64
	}{{"g1", "OffP", 0, 12}, {"g1", "OffP", 3, 9}, {"g2", "%RETRY%g2", 0, 1}} {
		if off, ok := b2.offsets.query(c.group, c.topic, c.queue); !ok || off != c.want {
			t.Errorf("after restart %s@%s/%d: %d %v, want %d", c.topic, c.group, c.queue, off, ok, c.want)
		}
	}
	if off, ok := e.offsetOf(t, "g1", "OffP", 3); !ok || off != 9 {
		t.Errorf("query after restart: %d %v", off, ok)
	}
}

// TestOffsetCrash shows Java's behaviour after a crash: offsets committed
// since the last periodic persist are lost (the consumer re-consumes from
// the persisted ones); persisted ones survive.
func TestOffsetCrash(t *testing.T) {
	dir := t.TempDir()
	cfg := pullTestConfig(dir)
	cfg.OffsetFlushInterval = 50 * time.Millisecond
	b := startBroker(t, cfg)
	b.offsets.commit("g", "OffC", 0, 100)
	path := filepath.Join(dir, "config", "consumerOffset.json")
	var data []byte
	if !testutil.Poll(0, func() bool { data, _ = os.ReadFile(path); return strings.Contains(string(data), "100") }) {
		t.Fatalf("offset not persisted periodically: %q", data)
	}
	if err := b.Crash(); err != nil {
		t.Fatal(err)
	}
	b2 := startBroker(t, cfg)
	if off, ok := b2.offsets.query("g", "OffC", 0); !ok || off != 100 {
		t.Fatalf("persisted offset after crash: %d %v", off, ok)
	}

	// With the flush far off, a commit before the crash is lost.
	cfg.OffsetFlushInterval = time.Hour
	b2.Crash()
	b3 := startBroker(t, cfg)
	b3.offsets.commit("g", "OffC", 0, 150)
	b3.Crash()
	b4 := startBroker(t, cfg)
	if off, _ := b4.offsets.query("g", "OffC", 0); off != 100 {
		t.Fatalf("offset after crash %d, want the persisted 100", off)
	}
}

func TestOffsetLoadJavaFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What a 4.9.8 broker writes: pretty fastjson with bare integer keys.
	java := "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@g1\":{0:12,1:7,2:9,3:10\n\t\t},\n\t\t\"%RETRY%g1@g1\":{0:0\n\t\t}\n\t}\n}"
	if err := os.WriteFile(filepath.Join(dir, "config", "consumerOffset.json"), []byte(java), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(pullTestConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	for q, want := range []int64{12, 7, 9, 10} {
		if off, ok := b.offsets.query("g1", "TopicTest", int32(q)); !ok || off != want {
			t.Errorf("queue %d: %d %v, want %d", q, off, ok, want)
		}
	}
	if off, ok := b.offsets.query("g1", "%RETRY%g1", 0); !ok || off != 0 {
		t.Errorf("retry: %d %v", off, ok)
	}
	// Unchanged since load: nothing to write.
	if b.offsets.version != b.offsets.persisted {
		t.Errorf("loaded table counts as changed")
	}
}

func TestOffsetLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "config"), 0o755)
	os.WriteFile(filepath.Join(dir, "config", "consumerOffset.json"), []byte(`{"offsetTable":{"a@b":{0:"x"}}}`), 0o644)
	if b, err := New(pullTestConfig(dir)); err == nil {
		b.Close(context.Background())
		t.Fatal("New accepted a consumerOffset.json with a string offset")
	}
}

func TestOffsetRemove(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("OffR1", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for _, k := range [][2]string{{"g1", "OffR1"}, {"g1", "OffR2"}, {"g2", "OffR1"}, {"g2", "OffR2"}} {
		e.b.offsets.commit(k[0], k[1], 0, 3)
	}
	e.b.offsets.gets.add("g1", "OffR1", 5, time.Now())
	e.b.offsets.removeGroup("g2")
	if _, ok := e.b.offsets.query("g2", "OffR1", 0); ok {
		t.Error("g2 offsets left after removeGroup")
	}
	if got := strings.Join(e.b.offsets.topicsOf("g1"), ","); got != "OffR1,OffR2" {
		t.Errorf("topics of g1: %s", got)
	}
	// DELETE_TOPIC_IN_BROKER drops the topic's offsets for every group.
	h := remoting.DeleteTopicRequestHeader{Topic: "OffR1"}
	if resp := e.invoke(t, remoting.NewRequest(remoting.DeleteTopicInBroker, h.AppendExt(nil), nil)); resp.Code != remoting.Success {
		t.Fatalf("delete topic: %d %q", resp.Code, resp.Remark)
	}
	if _, ok := e.b.offsets.query("g1", "OffR1", 0); ok {
		t.Error("OffR1 offsets left after topic deletion")
	}
	if _, ok := e.b.offsets.query("g1", "OffR2", 0); !ok {
		t.Error("OffR2 offsets lost")
	}
	if tps := e.b.offsets.gets.tps("g1", "OffR1", time.Now()); tps != 0 {
		t.Errorf("get rate of a deleted topic: %v", tps)
	}
}

func TestOffsetQueueCodes(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("OffQ", 2, rocketmq.PermRead|rocketmq.PermWrite)
	var puts []store.PutResult
	for i := range 3 {
		puts = append(puts, e.put(t, "OffQ", 0, "", []byte{byte(i)}))
		time.Sleep(3 * time.Millisecond) // distinct store times
	}
	offset := func(code int32, ext remoting.ExtFields) int64 {
		t.Helper()
		resp := e.invoke(t, remoting.NewRequest(code, ext, nil))
		if resp.Code != remoting.Success {
			t.Fatalf("code %d: %d %q", code, resp.Code, resp.Remark)
		}
		var h remoting.OffsetResponseHeader
		if err := h.FromExt(resp.Ext); err != nil {
			t.Fatal(err)
		}
		return h.Offset
	}
	maxReq := func(topic string, q int32) remoting.ExtFields {
		h := remoting.GetMaxOffsetRequestHeader{Topic: topic, QueueID: q}
		return h.AppendExt(nil)
	}
	tq := func(topic string, q int32) remoting.ExtFields {
		h := remoting.TopicQueueRequestHeader{Topic: topic, QueueID: q}
		return h.AppendExt(nil)
	}
	if got := offset(remoting.GetMaxOffset, maxReq("OffQ", 0)); got != 3 {
		t.Errorf("max offset %d", got)
	}
	if got := offset(remoting.GetMaxOffset, maxReq("OffQ", 1)); got != 0 {
		t.Errorf("max offset of an empty queue %d", got)
	}
	if got := offset(remoting.GetMaxOffset, maxReq("NoSuch", 0)); got != 0 {
		t.Errorf("max offset of an unknown topic %d", got)
	}
	if got := offset(remoting.GetMinOffset, tq("OffQ", 0)); got != 0 {
		t.Errorf("min offset %d", got)
	}

	earliest := func(topic string, q int32) int64 {
		resp := e.invoke(t, remoting.NewRequest(remoting.GetEarliestMsgStoreTime, tq(topic, q), nil))
		var h remoting.GetEarliestMsgStoretimeResponseHeader
		if resp.Code != remoting.Success || h.FromExt(resp.Ext) != nil {
			t.Fatalf("earliest: %d %q %v", resp.Code, resp.Remark, resp.Ext)
		}
		return h.Timestamp
	}
	if got := earliest("OffQ", 0); got != puts[0].StoreTimestamp {
		t.Errorf("earliest %d, want %d", got, puts[0].StoreTimestamp)
	}
	if got := earliest("OffQ", 1); got != -1 {
		t.Errorf("earliest of an empty queue %d, want -1", got)
	}

	search := func(ts int64, boundary string) int64 {
		h := remoting.SearchOffsetRequestHeader{Topic: "OffQ", QueueID: 0, Timestamp: ts}
		if boundary != "" {
			h.BoundaryType = &boundary
		}
		return offset(remoting.SearchOffsetByTimestamp, h.AppendExt(nil))
	}
	for _, c := range []struct {
		ts       int64
		boundary string
		want     int64
	}{
		{0, "", 0},
		{puts[1].StoreTimestamp, "", 1},
		{puts[1].StoreTimestamp, "LOWER", 1},
		{puts[1].StoreTimestamp, "upper", 1},
		{puts[2].StoreTimestamp + 1000, "", 2}, // 4.9.8: the last message
		{puts[2].StoreTimestamp + 1000, "LOWER", 3},
		{puts[2].StoreTimestamp + 1000, "UPPER", 2},
	} {
		if got := search(c.ts, c.boundary); got != c.want {
			t.Errorf("search %d %q: %d, want %d", c.ts, c.boundary, got, c.want)
		}
	}
}

// TestSearchOffsetNearTime: without boundaryType the search answers as
// 4.9.8's ConsumeQueue.getOffsetInQueueByTime does.
func TestSearchOffsetNearTime(t *testing.T) {
	var mu sync.Mutex
	base := time.Now().Truncate(time.Hour).UnixMilli()
	now := base
	e := pullTestBroker(t, func(c *Config) {
		c.RetentionClock = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return time.UnixMilli(now)
		}
	})
	e.b.topics.ensure("OffN", 2, rocketmq.PermRead|rocketmq.PermWrite)
	// Offsets 0..4 stored at base+1000, +2000, +4000, +4000, +8000.
	for i, at := range []int64{1000, 2000, 4000, 4000, 8000} {
		mu.Lock()
		now = base + at
		mu.Unlock()
		if p := e.put(t, "OffN", 0, "", []byte{byte(i)}); p.StoreTimestamp != base+at || p.QueueOffset != int64(i) {
			t.Fatalf("put %d: %+v", i, p)
		}
	}
	search := func(topic string, q int32, ts int64) int64 {
		t.Helper()
		h := remoting.SearchOffsetRequestHeader{Topic: topic, QueueID: q, Timestamp: ts}
		resp := e.invoke(t, remoting.NewRequest(remoting.SearchOffsetByTimestamp, h.AppendExt(nil), nil))
		var oh remoting.OffsetResponseHeader
		if resp.Code != remoting.Success || oh.FromExt(resp.Ext) != nil {
			t.Fatalf("search: %d %q %v", resp.Code, resp.Remark, resp.Ext)
		}
		return oh.Offset
	}
	for _, c := range []struct {
		at, want int64
	}{
		{0, 0},       // before the first
		{1000, 0},    // exact
		{1400, 0},    // nearer the earlier
		{1500, 0},    // a tie: the earlier
		{1600, 1},    // nearer the later
		{2000, 1},    // exact
		{3500, 2},    // nearer the later, the first of two at 4000
		{4000, 2},    // exact: the first of two
		{5000, 3},    // nearer the earlier, the last of two at 4000
		{7999, 4},    // nearer the later
		{8000, 4},    // exact: the last
		{99_000, 4},  // after the last: the last, not the max offset 5
		{-99_000, 0}, // long before
	} {
		if got := search("OffN", 0, base+c.at); got != c.want {
			t.Errorf("search base+%d: %d, want %d", c.at, got, c.want)
		}
	}
	if got := search("OffN", 1, base+1000); got != 0 {
		t.Errorf("search an empty queue: %d", got)
	}
	if got := search("NoSuch", 0, base+1000); got != 0 {
		t.Errorf("search an unknown topic: %d", got)
	}

}

func TestOffsetConsumeStats(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("OffS", 2, rocketmq.PermRead|rocketmq.PermWrite)
	e.b.topics.ensure("%RETRY%gS", 1, rocketmq.PermRead|rocketmq.PermWrite)
	var puts []store.PutResult
	for i := range 3 {
		puts = append(puts, e.put(t, "OffS", 0, "", []byte{byte(i)}))
	}
	e.put(t, "%RETRY%gS", 0, "", []byte("r"))
	e.invoke(t, offsetUpdateReq("gS", "OffS", 0, 2))
	e.invoke(t, offsetUpdateReq("gS", "%RETRY%gS", 0, 0))
	resp := e.invoke(t, pullArgs{group: "gS", topic: "OffS", sub: pstr("*")}.req())
	pullExpect(t, resp, remoting.Success, "FOUND", 3, 0, 3)

	stats := func(topic *string) remoting.ConsumeStats {
		t.Helper()
		h := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: "gS", Topic: topic}
		resp := e.invoke(t, remoting.NewRequest(remoting.GetConsumeStats, h.AppendExt(nil), nil))
		if resp.Code != remoting.Success {
			t.Fatalf("consume stats: %d %q", resp.Code, resp.Remark)
		}
		if !strings.Contains(string(resp.Body), `{"brokerName":"broker-a","queueId":0,"topic":"OffS"}:`) {
			t.Errorf("body does not use Java's object map keys: %s", resp.Body)
		}
		var cs remoting.ConsumeStats
		if err := cs.DecodeJSON(resp.Body); err != nil {
			t.Fatalf("decode %s: %v", resp.Body, err)
		}
		return cs
	}
	mq := func(topic string, q int) rocketmq.MessageQueue {
		return rocketmq.MessageQueue{Topic: topic, BrokerName: "broker-a", QueueID: q}
	}
	cs := stats(nil)
	want := map[rocketmq.MessageQueue]remoting.OffsetWrapper{
		mq("OffS", 0):      {BrokerOffset: 3, ConsumerOffset: 2, LastTimestamp: puts[1].StoreTimestamp},
		mq("OffS", 1):      {},
		mq("%RETRY%gS", 0): {BrokerOffset: 1},
	}
	if len(cs.OffsetTable) != len(want) {
		t.Fatalf("offset table %v", cs.OffsetTable)
	}
	for k, w := range want {
		if cs.OffsetTable[k] != w {
			t.Errorf("%v: %+v, want %+v", k, cs.OffsetTable[k], w)
		}
	}
	if cs.ConsumeTps <= 0 {
		t.Errorf("consumeTps %v after a pull of 3 messages", cs.ConsumeTps)
	}
	topic := "OffS"
	if cs := stats(&topic); len(cs.OffsetTable) != 2 {
		t.Errorf("one topic: %v", cs.OffsetTable)
	}
}

func TestOffsetGetAll(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.invoke(t, offsetUpdateReq("g1", "OffA", 0, 12))
	e.invoke(t, offsetUpdateReq("g1", "OffA", 1, 7))
	resp := e.invoke(t, remoting.NewRequest(remoting.GetAllConsumerOffset, nil, nil))
	if resp.Code != remoting.Success {
		t.Fatalf("code %d %q", resp.Code, resp.Remark)
	}
	if want := `{"offsetTable":{"OffA@g1":{0:12,1:7}}}`; string(resp.Body) != want {
		t.Errorf("body %s, want %s", resp.Body, want)
	}
	var w remoting.ConsumerOffsetSerializeWrapper
	if err := w.DecodeJSON(resp.Body); err != nil || w.OffsetTable["OffA@g1"][1] != 7 {
		t.Errorf("decode: %v %v", err, w.OffsetTable)
	}
}

func TestGetRates(t *testing.T) {
	var g getRates
	g.m = make(map[offsetKey]*getRate)
	t0 := time.Unix(1000, 0)
	if tps := g.tps("g", "t", t0); tps != 0 {
		t.Fatalf("no pulls: %v", tps)
	}
	// 10 messages a second for two minutes.
	for s := range 120 {
		g.add("g", "t", 10, t0.Add(time.Duration(s)*time.Second))
	}
	tps := g.tps("g", "t", t0.Add(120*time.Second))
	if tps < 9 || tps > 11 {
		t.Errorf("rate %v, want about 10", tps)
	}
	// Long idle: the window holds no sample, the rate is 0.
	if tps := g.tps("g", "t", t0.Add(time.Hour)); tps != 0 {
		t.Errorf("rate after an idle hour: %v", tps)
	}
}
