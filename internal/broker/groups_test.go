package broker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// groupsUpdate sends UPDATE_AND_CREATE_SUBSCRIPTIONGROUP with body.
func groupsUpdate(t testing.TB, p *clientsPeer, body []byte) *remoting.Command {
	t.Helper()
	return p.invoke(t, remoting.NewRequest(remoting.UpdateAndCreateSubscriptionGroup, nil, body))
}

func groupsDelete(t testing.TB, p *clientsPeer, group string, cleanOffset bool) {
	t.Helper()
	h := remoting.DeleteSubscriptionGroupRequestHeader{GroupName: group, CleanOffset: cleanOffset}
	resp := p.invoke(t, remoting.NewRequest(remoting.DeleteSubscriptionGroup, h.AppendExt(nil), nil))
	if resp.Code != remoting.Success {
		t.Fatalf("DELETE_SUBSCRIPTIONGROUP %s: code %d remark %q", group, resp.Code, resp.Remark)
	}
}

func groupsGetAll(t testing.TB, p *clientsPeer) remoting.SubscriptionGroupWrapper {
	t.Helper()
	resp := p.invoke(t, remoting.NewRequest(remoting.GetAllSubscriptionGroupConfig, nil, nil))
	if resp.Code != remoting.Success {
		t.Fatalf("GET_ALL_SUBSCRIPTIONGROUP_CONFIG: code %d remark %q", resp.Code, resp.Remark)
	}
	var w remoting.SubscriptionGroupWrapper
	if err := w.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("body %q: %v", resp.Body, err)
	}
	return w
}

func groupsClose(t testing.TB, b *Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestGroupsPersistReload(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{StoreDir: dir, ListenAddr: "127.0.0.1:0", CommitLogSegmentSize: 4 << 20, ConsumeQueueEntries: 1024, IndexSlots: 1024, IndexEntries: 4096}
	b := startBroker(t, cfg)
	p := clientsNewPeer(t, b, "admin@1")

	custom := remoting.NewSubscriptionGroupConfig("customGroup")
	custom.RetryQueueNums = 2
	custom.RetryMaxTimes = 3
	custom.ConsumeBroadcastEnable = false
	custom.WhichBrokerWhenConsumeSlowly = 7
	if resp := groupsUpdate(t, p, custom.AppendJSON(nil, remoting.JSONFastjson)); resp.Code != remoting.Success || resp.Ext != nil {
		t.Fatalf("update: code %d remark %q ext %v", resp.Code, resp.Remark, resp.Ext)
	}
	p.heartbeat(t, "autoGroup", remoting.MessageModelClustering, map[string]string{"T": "*"})
	p.heartbeat(t, "customGroup", remoting.MessageModelClustering, map[string]string{"T": "*"})
	if tc, ok := b.topics.get("%RETRY%customGroup"); !ok || tc.ReadQueueNums != 2 || tc.WriteQueueNums != 2 {
		t.Errorf("retry topic of customGroup %+v (exists %v), want 2 queues from retryQueueNums", tc, ok)
	}
	b.offsets.commit("customGroup", "T", 0, 42)
	b.offsets.commit("autoGroup", "T", 0, 7)

	w := groupsGetAll(t, p)
	if got := w.SubscriptionGroupTable["customGroup"]; !reflect.DeepEqual(got, custom) {
		t.Errorf("served customGroup %+v, want %+v", got, custom)
	}
	for _, g := range []string{"autoGroup", GroupToolsConsumer, GroupSelfTestConsumer, GroupONSAPIOwner} {
		if _, ok := w.SubscriptionGroupTable[g]; !ok {
			t.Errorf("GET_ALL_SUBSCRIPTIONGROUP_CONFIG lacks %s", g)
		}
	}
	if w.DataVersion.Counter < 2 || w.DataVersion.Timestamp == 0 {
		t.Errorf("data version %+v after two changes", w.DataVersion)
	}
	groupsClose(t, b)

	path := filepath.Join(dir, "config", "subscriptionGroup.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(data) {
		t.Fatalf("%s is not strict JSON:\n%s", path, data)
	}

	b = startBroker(t, cfg)
	p = clientsNewPeer(t, b, "admin@2")
	if got, ok := b.groups.get("customGroup"); !ok || !reflect.DeepEqual(got, custom) {
		t.Errorf("after restart customGroup %+v (exists %v), want %+v", got, ok, custom)
	}
	if _, ok := b.groups.get("autoGroup"); !ok {
		t.Error("auto-created group lost at restart")
	}
	if got := groupsGetAll(t, p).DataVersion; got != w.DataVersion {
		t.Errorf("data version %+v after restart, want %+v", got, w.DataVersion)
	}

	groupsDelete(t, p, "customGroup", true)
	groupsDelete(t, p, "autoGroup", false)
	groupsDelete(t, p, "neverExisted", true) // Java answers SUCCESS
	if _, ok := b.groups.get("customGroup"); ok {
		t.Error("customGroup still there after DELETE_SUBSCRIPTIONGROUP")
	}
	if _, ok := b.offsets.query("customGroup", "T", 0); ok {
		t.Error("customGroup offsets kept despite cleanOffset")
	}
	if off, ok := b.offsets.query("autoGroup", "T", 0); !ok || off != 7 {
		t.Errorf("autoGroup offset %d (exists %v), want 7 kept without cleanOffset", off, ok)
	}
	groupsClose(t, b)

	b = startBroker(t, cfg)
	for g, want := range map[string]bool{"customGroup": false, "autoGroup": false, GroupToolsConsumer: true} {
		if _, ok := b.groups.get(g); ok != want {
			t.Errorf("after the second restart group %s exists=%v, want %v", g, ok, want)
		}
	}
}

// TestGroupsLoadJavaFile reads a subscriptionGroup.json the way a Java
// broker writes it (pretty fastjson with tabs, 5.x keys), with a group
// that leaves keys out.
func TestGroupsLoadJavaFile(t *testing.T) {
	dir := t.TempDir()
	const file = "{\n\t\"dataVersion\":{\n\t\t\"counter\":5,\n\t\t\"stateVersion\":0,\n\t\t\"timestamp\":1700000000000\n\t},\n" +
		"\t\"forbiddenTable\":{},\n" +
		"\t\"subscriptionGroupTable\":{\n" +
		"\t\t\"javaGroup\":{\n\t\t\t\"attributes\":{},\n\t\t\t\"brokerId\":1,\n\t\t\t\"consumeBroadcastEnable\":false,\n\t\t\t\"consumeEnable\":false,\n" +
		"\t\t\t\"consumeFromMinEnable\":true,\n\t\t\t\"consumeMessageOrderly\":false,\n\t\t\t\"consumeTimeoutMinute\":15,\n\t\t\t\"groupName\":\"javaGroup\",\n" +
		"\t\t\t\"groupRetryPolicy\":{\"type\":\"CUSTOMIZED\"},\n\t\t\t\"groupSysFlag\":0,\n\t\t\t\"notifyConsumerIdsChangedEnable\":false,\n" +
		"\t\t\t\"retryMaxTimes\":5,\n\t\t\t\"retryQueueNums\":4,\n\t\t\t\"whichBrokerWhenConsumeSlowly\":1\n\t\t},\n" +
		"\t\t\"sparseGroup\":{\n\t\t\t\"groupName\":\"sparseGroup\",\n\t\t\t\"retryMaxTimes\":2\n\t\t}\n" +
		"\t}\n}"
	if err := store.WriteConfigFile(filepath.Join(dir, "config", "subscriptionGroup.json"), []byte(file)); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, Config{StoreDir: dir, ListenAddr: "127.0.0.1:0", CommitLogSegmentSize: 4 << 20})
	g, ok := b.groups.get("javaGroup")
	if !ok {
		t.Fatal("javaGroup not loaded")
	}
	if g.BrokerID != 1 || g.ConsumeBroadcastEnable || g.ConsumeEnable || g.NotifyConsumerIdsChangedEnable ||
		g.RetryMaxTimes != 5 || g.RetryQueueNums != 4 || g.ConsumeTimeoutMinute != 15 || string(g.GroupRetryPolicy) != `{"type":"CUSTOMIZED"}` {
		t.Errorf("javaGroup %+v", g)
	}
	want := remoting.NewSubscriptionGroupConfig("sparseGroup")
	want.RetryMaxTimes = 2
	if g, _ := b.groups.get("sparseGroup"); !reflect.DeepEqual(g, want) {
		t.Errorf("sparseGroup %+v, want defaults with retryMaxTimes 2: %+v", g, want)
	}
	if _, ok := b.groups.get(GroupFilterSrvConsumer); !ok {
		t.Error("built-in group missing when a file was loaded")
	}
	if v := b.groups.wrapper().DataVersion; v.Counter != 5 || v.Timestamp != 1700000000000 {
		t.Errorf("data version %+v", v)
	}
}

func TestGroupsAutoCreateOff(t *testing.T) {
	b := clientsTestBroker(t, func(c *Config) { c.DisableAutoCreateGroup = true })
	p := clientsNewPeer(t, b, "10.0.0.1@1")

	p.heartbeat(t, "manualGroup", remoting.MessageModelClustering, map[string]string{"T": "*"}, "anyProducer")
	p.expectQuiet(t)
	if _, ok := b.groups.get("manualGroup"); ok {
		t.Fatal("group auto-created although DisableAutoCreateGroup")
	}
	if _, ok := b.groups.findOrCreate("manualGroup"); ok {
		t.Error("findOrCreate created a group although DisableAutoCreateGroup")
	}
	if _, ok := b.topics.get("%RETRY%manualGroup"); ok {
		t.Error("retry topic created for an unknown group")
	}
	if _, _, known := b.clients.subscription("manualGroup", "T"); known {
		t.Error("consumer of an unknown group registered")
	}
	if got := p.consumerList(t, "manualGroup"); got != nil {
		t.Errorf("consumer list %v", got)
	}
	if b.clients.producerConn("anyProducer") == nil {
		t.Error("producer groups need no config, but the producer was not registered")
	}
	// CID_RMQ_SYS_ groups are created regardless.
	if g, ok := b.groups.findOrCreate(GroupSysRMQTrans); !ok || g.GroupName != GroupSysRMQTrans {
		t.Errorf("system group: %+v, %v", g, ok)
	}

	// Created by the admin, the group is served.
	g := remoting.NewSubscriptionGroupConfig("manualGroup")
	g.RetryQueueNums = 3
	if resp := groupsUpdate(t, p, g.AppendJSON(nil, remoting.JSONStandard)); resp.Code != remoting.Success {
		t.Fatalf("update: code %d remark %q", resp.Code, resp.Remark)
	}
	p.heartbeat(t, "manualGroup", remoting.MessageModelClustering, map[string]string{"T": "*"})
	p.expectNotify(t, "manualGroup")
	if tc, ok := b.topics.get("%RETRY%manualGroup"); !ok || tc.WriteQueueNums != 3 || tc.Perm != 6 {
		t.Errorf("retry topic %+v (exists %v)", tc, ok)
	}
	if _, ok, _ := b.clients.subscription("manualGroup", "T"); !ok {
		t.Error("subscription not recorded once the group exists")
	}
}

func TestGroupsAdminErrors(t *testing.T) {
	b := clientsTestBroker(t, nil)
	p := clientsNewPeer(t, b, "admin@1")
	before := b.groups.wrapper()
	for _, tt := range []struct {
		name string
		body string
		code int32
	}{
		{"empty body", "", remoting.Success},
		{"malformed", `{"groupName":`, remoting.SystemError},
		{"no name", `{"retryMaxTimes":3}`, remoting.SystemError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := groupsUpdate(t, p, []byte(tt.body))
			if resp.Code != tt.code || (tt.code != remoting.Success) == (resp.Remark == "") {
				t.Errorf("code %d remark %q, want %d", resp.Code, resp.Remark, tt.code)
			}
		})
	}
	if after := b.groups.wrapper(); !reflect.DeepEqual(before, after) {
		t.Errorf("rejected updates changed the table: %+v", after)
	}
	resp := p.invoke(t, remoting.NewRequest(remoting.DeleteSubscriptionGroup, nil, nil))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "groupName") {
		t.Errorf("delete without groupName: code %d remark %q", resp.Code, resp.Remark)
	}
}
