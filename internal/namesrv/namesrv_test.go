package namesrv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// topic is a TopicConfig with queues read and write queues, perm RW.
func topic(name string, queues int32) remoting.TopicConfig {
	tc := remoting.NewTopicConfig(name)
	tc.ReadQueueNums, tc.WriteQueueNums = queues, queues
	return tc
}

func newRegisterBody(version int64, topics ...remoting.TopicConfig) *remoting.RegisterBrokerBody {
	rb := &remoting.RegisterBrokerBody{FilterServerList: []string{}}
	rb.TopicConfigSerializeWrapper.DataVersion = remoting.DataVersion{Counter: version, Timestamp: 1_700_000_000_000 + version}
	rb.TopicConfigSerializeWrapper.TopicConfigTable = map[string]remoting.TopicConfig{}
	for _, tc := range topics {
		rb.TopicConfigSerializeWrapper.TopicConfigTable[tc.TopicName] = tc
	}
	return rb
}

func bodyCRC(b []byte) int32 { return int32(crc32.ChecksumIEEE(b) & 0x7FFFFFFF) }

// registerReq is a 4.9.8 broker's REGISTER_BROKER with a JSON body.
func registerReq(cluster, name, addr string, id, version int64, topics ...remoting.TopicConfig) *remoting.Command {
	body := newRegisterBody(version, topics...).AppendJSON(nil, remoting.JSONFastjson)
	h := remoting.RegisterBrokerRequestHeader{
		BrokerName: name, BrokerAddr: addr, ClusterName: cluster,
		HAServerAddr: addr + "-ha", BrokerID: id, BodyCRC32: bodyCRC(body),
	}
	return headerReq(remoting.RegisterBroker, &h, body)
}

// routeReq asks for topic's route claiming version, optionally with
// acceptStandardJsonOnly.
func routeReq(topic string, version int32, accept *bool) *remoting.Command {
	h := remoting.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: accept}
	return request(remoting.GetRouteInfoByTopic, version, h.AppendExt(nil), nil)
}

// route fetches and decodes a route, failing unless it exists.
func route(t *testing.T, c *rawframe.Conn, topic string) remoting.TopicRouteData {
	t.Helper()
	resp := c.Call(routeReq(topic, remoting.DefaultVersion, nil))
	wantCode(t, resp, remoting.Success, "")
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("decode route: %v\n%s", err, resp.Body)
	}
	return rd
}

// hasRoute reports whether topic has a route; any other answer than
// SUCCESS or TOPIC_NOT_EXIST fails the test.
func hasRoute(t *testing.T, c *rawframe.Conn, topic string) bool {
	t.Helper()
	resp := c.Call(routeReq(topic, remoting.DefaultVersion, nil))
	switch resp.Code {
	case remoting.Success:
		return true
	case remoting.TopicNotExist:
		return false
	}
	t.Fatalf("route %s: %s %q", topic, remoting.ResponseCodeName(resp.Code), resp.Remark)
	return false
}

func brokerNames(rd remoting.TopicRouteData) []string {
	var out []string
	for _, bd := range rd.BrokerDatas {
		out = append(out, bd.BrokerName)
	}
	return out
}

func clusterInfo(t *testing.T, c *rawframe.Conn) remoting.ClusterInfo {
	t.Helper()
	resp := c.Call(headerReq(remoting.GetBrokerClusterInfo, nil, nil))
	wantCode(t, resp, remoting.Success, "")
	var ci remoting.ClusterInfo
	if err := ci.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("decode cluster info: %v\n%s", err, resp.Body)
	}
	return ci
}

func TestRouteJSONForms(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("DefaultCluster", "broker-a", "10.0.0.1:10911", 0, 1, topic("T", 4))), remoting.Success, "")
	wantCode(t, c.Call(registerReq("DefaultCluster", "broker-a", "10.0.0.2:10911", 1, 1)), remoting.Success, "")

	yes, no := true, false
	tests := []struct {
		name     string
		version  int32
		accept   *bool
		standard bool
	}{
		{"go client 317", 317, nil, false},
		{"just below 4.9.4", 400, nil, false},
		{"4.9.4", 401, nil, true},
		{"java 4.9.8", 409, nil, true},
		{"317 accepting standard only", 317, &yes, true},
		{"317 accept false", 317, &no, false},
	}
	var first remoting.TopicRouteData
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.Call(routeReq("T", tt.version, tt.accept))
			wantCode(t, resp, remoting.Success, "")
			nonStd := bytes.Contains(resp.Body, []byte(`{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}`))
			std := bytes.Contains(resp.Body, []byte(`{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}`))
			if std != tt.standard || nonStd == tt.standard {
				t.Fatalf("standard=%v body %s", tt.standard, resp.Body)
			}
			if tt.standard && !json.Valid(resp.Body) {
				t.Fatalf("standard body is not valid JSON: %s", resp.Body)
			}
			var rd remoting.TopicRouteData
			if err := rd.DecodeJSON(resp.Body); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = rd
			} else if !reflect.DeepEqual(rd, first) {
				t.Fatalf("route differs between forms:\n%+v\n%+v", rd, first)
			}
		})
	}
}

func TestTopicNotExist(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	resp := c.Call(routeReq("NoSuchTopic", 317, nil))
	wantCode(t, resp, remoting.TopicNotExist,
		"No topic route info in name server for the topic: NoSuchTopic\nSee http://rocketmq.apache.org/docs/faq/ for further details.")
	if len(resp.Body) != 0 {
		t.Fatalf("body %q", resp.Body)
	}
}

func TestUnregisterBroker(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	for _, r := range []*remoting.Command{
		registerReq("c1", "b1", "a1", 0, 1, topic("Shared", 4), topic("OnlyB1", 4)),
		registerReq("c1", "b1", "a1s", 1, 1),
		registerReq("c2", "b2", "a2", 0, 1, topic("Shared", 2)),
	} {
		wantCode(t, c.Call(r), remoting.Success, "")
	}
	unregister := func(cluster, name, addr string, id int64) {
		h := remoting.UnregisterBrokerRequestHeader{ClusterName: cluster, BrokerName: name, BrokerAddr: addr, BrokerID: id}
		wantCode(t, c.Call(headerReq(remoting.UnregisterBroker, &h, nil)), remoting.Success, "")
	}

	unregister("c1", "b1", "a1", 0)
	rd := route(t, c, "OnlyB1")
	if got := rd.BrokerDatas[0].BrokerAddrs; !reflect.DeepEqual(got, map[int64]string{1: "a1s"}) {
		t.Fatalf("b1 addresses after master left: %v", got)
	}

	unregister("c1", "b1", "a1s", 1)
	if hasRoute(t, c, "OnlyB1") {
		t.Fatal("topic of an unregistered broker name still routed")
	}
	if got := brokerNames(route(t, c, "Shared")); !reflect.DeepEqual(got, []string{"b2"}) {
		t.Fatalf("Shared brokers %v", got)
	}
	ci := clusterInfo(t, c)
	if _, ok := ci.BrokerAddrTable["b1"]; ok || ci.ClusterAddrTable["c1"] != nil {
		t.Fatalf("b1 still in cluster info: %+v", ci)
	}
}

// fakeClock is an adjustable Config.Now.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Unix(1_700_000_000, 0).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// waitScans waits until the scanner has run n more times.
func waitScans(t *testing.T, ns *NameServer, n int64) {
	t.Helper()
	target := ns.scans.Load() + n
	testutil.WaitFor(t, 5*time.Second, "expiry scans", func() bool { return ns.scans.Load() >= target })
}

func TestBrokerExpiry(t *testing.T) {
	clock := newFakeClock()
	ns := startNS(t, Config{BrokerExpiry: time.Minute, ScanInterval: 5 * time.Millisecond, Now: clock.now})
	c1 := rawframe.Dial(t, ns.Addr())
	c2 := rawframe.Dial(t, ns.Addr())
	q := rawframe.Dial(t, ns.Addr())
	wantCode(t, c1.Call(registerReq("c", "b1", "a1", 0, 1, topic("T1", 4))), remoting.Success, "")
	wantCode(t, c2.Call(registerReq("c", "b2", "a2", 0, 1, topic("T2", 4))), remoting.Success, "")

	clock.advance(time.Minute) // exactly at the limit: still alive
	waitScans(t, ns, 2)
	if !hasRoute(t, q, "T1") || !hasRoute(t, q, "T2") {
		t.Fatal("broker expired at the limit")
	}
	// b2 re-registers (same data version: a heartbeat), b1 does not.
	wantCode(t, c2.Call(registerReq("c", "b2", "a2", 0, 1, topic("T2", 4))), remoting.Success, "")
	clock.advance(time.Millisecond)
	testutil.WaitFor(t, 5*time.Second, "b1 to expire", func() bool { return !hasRoute(t, q, "T1") })
	if !hasRoute(t, q, "T2") {
		t.Fatal("refreshed broker expired")
	}
	if !c1.WaitClosed(5 * time.Second) {
		t.Fatal("connection of the expired broker was not closed")
	}
	if got := clusterInfo(t, q).ClusterAddrTable["c"]; !reflect.DeepEqual(got, []string{"b2"}) {
		t.Fatalf("cluster members %v", got)
	}
}

func TestBrokerExpiryRealClock(t *testing.T) {
	ns := startNS(t, Config{BrokerExpiry: 200 * time.Millisecond, ScanInterval: 20 * time.Millisecond})
	c := rawframe.Dial(t, ns.Addr())
	q := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T1", 4))), remoting.Success, "")
	if !hasRoute(t, q, "T1") {
		t.Fatal("no route right after registration")
	}
	testutil.WaitFor(t, 5*time.Second, "b1 to expire", func() bool { return !hasRoute(t, q, "T1") })
}

func TestExpiryOnConnClose(t *testing.T) {
	ns := startNS(t, Config{})
	q := rawframe.Dial(t, ns.Addr())

	c1 := rawframe.Dial(t, ns.Addr())
	wantCode(t, c1.Call(registerReq("c", "b1", "a1", 0, 1, topic("T1", 4))), remoting.Success, "")
	// b2 registered first over c2, then over c3: only c3 counts.
	c2 := rawframe.Dial(t, ns.Addr())
	c3 := rawframe.Dial(t, ns.Addr())
	wantCode(t, c2.Call(registerReq("c", "b2", "a2", 0, 1, topic("T2", 4))), remoting.Success, "")
	wantCode(t, c3.Call(registerReq("c", "b2", "a2", 0, 1, topic("T2", 4))), remoting.Success, "")

	c1.NetConn().Close()
	c2.NetConn().Close()
	testutil.WaitFor(t, 5*time.Second, "b1 to go with its connection", func() bool { return !hasRoute(t, q, "T1") })
	if !hasRoute(t, q, "T2") {
		t.Fatal("broker removed when an older connection closed")
	}
	c3.NetConn().Close()
	testutil.WaitFor(t, 5*time.Second, "b2 to go with its connection", func() bool { return !hasRoute(t, q, "T2") })
}

func TestDeleteTopic(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c1", "b1", "a1", 0, 1, topic("T", 4), topic("U", 4))), remoting.Success, "")
	wantCode(t, c.Call(registerReq("c2", "b2", "a2", 0, 1, topic("T", 4), topic("U", 4))), remoting.Success, "")
	del := func(topic string, cluster *string) {
		h := remoting.DeleteTopicFromNamesrvRequestHeader{Topic: topic, ClusterName: cluster}
		wantCode(t, c.Call(headerReq(remoting.DeleteTopicInNamesrv, &h, nil)), remoting.Success, "")
	}
	c2 := "c2"
	del("T", &c2)
	if got := brokerNames(route(t, c, "T")); !reflect.DeepEqual(got, []string{"b1"}) {
		t.Fatalf("T brokers after deleting in c2: %v", got)
	}
	empty := ""
	del("U", &empty) // empty cluster name: everywhere
	if hasRoute(t, c, "U") {
		t.Fatal("U still routed")
	}
	del("T", nil)
	if hasRoute(t, c, "T") {
		t.Fatal("T still routed")
	}
}

func TestClusterInfoAndTopicLists(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	unit := topic("Unit", 1)
	unit.TopicSysFlag = topicFlagUnit
	wantCode(t, c.Call(registerReq("c1", "b1", "a1", 0, 1, topic("T1", 4), unit)), remoting.Success, "")
	wantCode(t, c.Call(registerReq("c1", "b1", "a1s", 1, 1)), remoting.Success, "")
	wantCode(t, c.Call(registerReq("c2", "b2", "a2", 0, 1, topic("T2", 4))), remoting.Success, "")

	resp := c.Call(headerReq(remoting.GetBrokerClusterInfo, nil, nil))
	wantCode(t, resp, remoting.Success, "")
	if !bytes.Contains(resp.Body, []byte(`"brokerAddrs":{0:"a1",1:"a1s"}`)) {
		t.Fatalf("cluster info not in fastjson form: %s", resp.Body)
	}
	ci := clusterInfo(t, c)
	want := remoting.ClusterInfo{
		BrokerAddrTable: map[string]remoting.BrokerData{
			"b1": {Cluster: "c1", BrokerName: "b1", BrokerAddrs: map[int64]string{0: "a1", 1: "a1s"}},
			"b2": {Cluster: "c2", BrokerName: "b2", BrokerAddrs: map[int64]string{0: "a2"}},
		},
		ClusterAddrTable: map[string][]string{"c1": {"b1"}, "c2": {"b2"}},
	}
	if !reflect.DeepEqual(ci, want) {
		t.Fatalf("cluster info\n got %+v\nwant %+v", ci, want)
	}

	list := func(req *remoting.Command) remoting.TopicList {
		t.Helper()
		resp := c.Call(req)
		wantCode(t, resp, remoting.Success, "")
		var tl remoting.TopicList
		if err := tl.DecodeJSON(resp.Body); err != nil {
			t.Fatal(err)
		}
		return tl
	}
	tests := []struct {
		name string
		req  *remoting.Command
		want remoting.TopicList
	}{
		{"all", headerReq(remoting.GetAllTopicListFromNameServer, nil, nil),
			remoting.TopicList{TopicList: []string{"T1", "T2", "Unit"}}},
		{"by cluster", headerReq(remoting.GetTopicsByCluster, &remoting.GetTopicsByClusterRequestHeader{Cluster: "c1"}, nil),
			remoting.TopicList{TopicList: []string{"T1", "Unit"}}},
		{"unknown cluster", headerReq(remoting.GetTopicsByCluster, &remoting.GetTopicsByClusterRequestHeader{Cluster: "x"}, nil),
			remoting.TopicList{TopicList: []string{}}},
		{"system", headerReq(remoting.GetSystemTopicListFromNS, nil, nil),
			remoting.TopicList{TopicList: []string{"b1", "b2", "c1", "c2"}, BrokerAddr: "a1"}},
		{"unit", headerReq(remoting.GetUnitTopicList, nil, nil),
			remoting.TopicList{TopicList: []string{"Unit"}}},
		{"has unit sub", headerReq(remoting.GetHasUnitSubTopicList, nil, nil),
			remoting.TopicList{TopicList: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := list(tt.req)
			if got.TopicList == nil {
				got.TopicList = []string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKVConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv", "kvConfig.json")
	ns := startNS(t, Config{KVConfigPath: path})
	c := rawframe.Dial(t, ns.Addr())
	put := func(nsp, k, v string) {
		h := remoting.PutKVConfigRequestHeader{Namespace: nsp, Key: k, Value: v}
		wantCode(t, c.Call(headerReq(remoting.PutKVConfig, &h, nil)), remoting.Success, "")
	}
	get := func(nsp, k string) *remoting.Command {
		return c.Call(headerReq(remoting.GetKVConfig, &remoting.GetKVConfigRequestHeader{Namespace: nsp, Key: k}, nil))
	}

	wantCode(t, get("ns1", "k1"), remoting.QueryNotFound, "No config item, Namespace: ns1 Key: k1")
	put("ns1", "k1", "v1")
	put("ns1", "k2", "v<2>")
	put("ns2", "k", "v")
	resp := get("ns1", "k1")
	wantCode(t, resp, remoting.Success, "")
	if v, _ := resp.Ext.Get("value"); v != "v1" {
		t.Fatalf("value %q", v)
	}

	resp = c.Call(headerReq(remoting.GetKVListByNamespace, &remoting.GetKVListByNamespaceRequestHeader{Namespace: "ns1"}, nil))
	wantCode(t, resp, remoting.Success, "")
	sameBytes(t, "kv list", resp.Body, []byte(`{"table":{"k1":"v1","k2":"v<2>"}}`))
	resp = c.Call(headerReq(remoting.GetKVListByNamespace, &remoting.GetKVListByNamespaceRequestHeader{Namespace: "none"}, nil))
	wantCode(t, resp, remoting.QueryNotFound, "No config item, Namespace: none")

	wantCode(t, c.Call(headerReq(remoting.DeleteKVConfig, &remoting.DeleteKVConfigRequestHeader{Namespace: "ns1", Key: "k1"}, nil)),
		remoting.Success, "")
	wantCode(t, get("ns1", "k1"), remoting.QueryNotFound, "")

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "kvConfig.json", b, []byte(`{"configTable":{"ns1":{"k2":"v<2>"},"ns2":{"k":"v"}}}`))

	// A new NameServer loads the file.
	ns2 := startNS(t, Config{KVConfigPath: path})
	c2 := rawframe.Dial(t, ns2.Addr())
	resp = c2.Call(headerReq(remoting.GetKVConfig, &remoting.GetKVConfigRequestHeader{Namespace: "ns2", Key: "k"}, nil))
	wantCode(t, resp, remoting.Success, "")
	if v, _ := resp.Ext.Get("value"); v != "v" {
		t.Fatalf("reloaded value %q", v)
	}
}

func TestKVConfigBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{KVConfigPath: path}); err == nil {
		t.Fatal("New accepted a corrupt kv config file")
	}
}

func TestOrderTopicConfig(t *testing.T) {
	ns := startNS(t, Config{OrderMessageEnable: true})
	c := rawframe.Dial(t, ns.Addr())
	resp := c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4)))
	wantCode(t, resp, remoting.Success, "")
	if len(resp.Body) != 0 || resp.Ext == nil || len(resp.Ext) != 0 {
		t.Fatalf("register response ext %#v body %q, want {} and none", resp.Ext, resp.Body)
	}
	h := remoting.PutKVConfigRequestHeader{Namespace: "ORDER_TOPIC_CONFIG", Key: "T", Value: "b1:4"}
	wantCode(t, c.Call(headerReq(remoting.PutKVConfig, &h, nil)), remoting.Success, "")

	resp = c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4)))
	wantCode(t, resp, remoting.Success, "")
	sameBytes(t, "register response body", resp.Body, []byte(`{"table":{"T":"b1:4"}}`))
	if rd := route(t, c, "T"); rd.OrderTopicConf != "b1:4" {
		t.Fatalf("orderTopicConf %q", rd.OrderTopicConf)
	}
}

func TestSlaveRegistration(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	resp := c.Call(registerReq("c", "b1", "a1s", 1, 1))
	wantCode(t, resp, remoting.Success, "")
	if len(resp.Ext) != 0 {
		t.Fatalf("slave without master got %v", resp.Ext)
	}
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4))), remoting.Success, "")
	resp = c.Call(registerReq("c", "b1", "a1s", 1, 1))
	wantCode(t, resp, remoting.Success, "")
	var rh remoting.RegisterBrokerResponseHeader
	if err := rh.FromExt(resp.Ext); err != nil {
		t.Fatal(err)
	}
	if rh.MasterAddr == nil || *rh.MasterAddr != "a1" || rh.HAServerAddr == nil || *rh.HAServerAddr != "a1-ha" {
		t.Fatalf("slave response header %v", resp.Ext)
	}
}

func TestCompressedRegistration(t *testing.T) {
	for _, version := range []int32{409, 475} { // 5.x adds the mapping section
		t.Run(strconv.Itoa(int(version)), func(t *testing.T) {
			ns := startNS(t, Config{})
			c := rawframe.Dial(t, ns.Addr())
			body, err := newRegisterBody(1, topic("T", 4), topic("U", 2)).AppendCompressed(nil, version)
			if err != nil {
				t.Fatal(err)
			}
			h := remoting.RegisterBrokerRequestHeader{
				BrokerName: "b1", BrokerAddr: "a1", ClusterName: "c", HAServerAddr: "ha",
				Compressed: true, BodyCRC32: bodyCRC(body),
			}
			req := headerReq(remoting.RegisterBroker, &h, body)
			req.Version = version
			wantCode(t, c.Call(req), remoting.Success, "")
			rd := route(t, c, "U")
			if q := rd.QueueDatas[0]; q.ReadQueueNums != 2 || q.WriteQueueNums != 2 || q.Perm != 6 {
				t.Fatalf("U queues %+v", q)
			}
			if !hasRoute(t, c, "T") {
				t.Fatal("T missing")
			}
		})
	}
}

func TestRegisterBrokerErrors(t *testing.T) {
	good := registerReq("c", "b1", "a1", 0, 1, topic("T", 4))
	tests := []struct {
		name   string
		mutate func(r *remoting.Command)
		remark string
	}{
		{"crc mismatch", func(r *remoting.Command) { r.Ext.Set("bodyCrc32", "12345") }, "crc32 not match"},
		{"missing broker name", func(r *remoting.Command) { r.Ext.Del("brokerName") }, "the custom field <brokerName> is null"},
		{"bad body", func(r *remoting.Command) {
			r.Body = []byte("{oops")
			r.Ext.Set("bodyCrc32", strconv.Itoa(int(bodyCRC(r.Body))))
		}, ""},
		{"bad compressed body", func(r *remoting.Command) {
			r.Ext.Set("compressed", "true")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := startNS(t, Config{})
			c := rawframe.Dial(t, ns.Addr())
			req := *good
			req.Ext = good.Ext.Clone()
			tt.mutate(&req)
			wantCode(t, c.Call(&req), remoting.SystemError, tt.remark)
			if hasRoute(t, c, "T") {
				t.Fatal("failed registration left a route")
			}
		})
	}
}

func TestRegisterWithoutCRCAndOldVersion(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	// bodyCrc32 absent: not checked.
	req := registerReq("c", "b1", "a1", 0, 1, topic("T", 4))
	req.Ext.Del("bodyCrc32")
	wantCode(t, c.Call(req), remoting.Success, "")
	// Before V3_0_11 (37) the body is a bare TopicConfigSerializeWrapper.
	w := newRegisterBody(1, topic("Old", 3)).TopicConfigSerializeWrapper
	body := w.AppendJSON(nil, remoting.JSONFastjson)
	h := remoting.RegisterBrokerRequestHeader{BrokerName: "b2", BrokerAddr: "a2", ClusterName: "c", HAServerAddr: "ha", BodyCRC32: bodyCRC(body)}
	wantCode(t, c.Call(request(remoting.RegisterBroker, 36, h.AppendExt(nil), body)), remoting.Success, "")
	if rd := route(t, c, "Old"); rd.QueueDatas[0].ReadQueueNums != 3 {
		t.Fatalf("old-style registration: %+v", rd)
	}
	// No body at all: the broker is registered without topics.
	h = remoting.RegisterBrokerRequestHeader{BrokerName: "b3", BrokerAddr: "a3", ClusterName: "c", HAServerAddr: "ha"}
	wantCode(t, c.Call(headerReq(remoting.RegisterBroker, &h, nil)), remoting.Success, "")
	if _, ok := clusterInfo(t, c).BrokerAddrTable["b3"]; !ok {
		t.Fatal("body-less registration not recorded")
	}
}

func TestQueryDataVersion(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 5)), remoting.Success, "")
	query := func(addr string, v remoting.DataVersion) (bool, []byte) {
		t.Helper()
		h := remoting.QueryDataVersionRequestHeader{BrokerName: "b1", BrokerAddr: addr, ClusterName: "c"}
		resp := c.Call(headerReq(remoting.QueryDataVersion, &h, v.AppendJSON(nil, remoting.JSONFastjson)))
		wantCode(t, resp, remoting.Success, "")
		var rh remoting.QueryDataVersionResponseHeader
		if err := rh.FromExt(resp.Ext); err != nil {
			t.Fatal(err)
		}
		return rh.Changed, resp.Body
	}
	registered := newRegisterBody(5).TopicConfigSerializeWrapper.DataVersion
	changed, body := query("a1", registered)
	if changed {
		t.Fatal("same version reported changed")
	}
	sameBytes(t, "registered version", body, registered.AppendJSON(nil, remoting.JSONFastjson))
	if changed, _ := query("a1", remoting.DataVersion{Counter: 6}); !changed {
		t.Fatal("other version reported unchanged")
	}
	if changed, body := query("nope", registered); !changed || len(body) != 0 {
		t.Fatalf("unknown broker: changed=%v body %q", changed, body)
	}
}

func TestWritePermOfBroker(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4), topic("U", 4))), remoting.Success, "")
	resp := c.Call(headerReq(remoting.WipeWritePermOfBroker, &remoting.WipeWritePermOfBrokerRequestHeader{BrokerName: "b1"}, nil))
	wantCode(t, resp, remoting.Success, "")
	if v, _ := resp.Ext.Get("wipeTopicCount"); v != "2" {
		t.Fatalf("wipeTopicCount %q", v)
	}
	if p := route(t, c, "T").QueueDatas[0].Perm; p != 4 {
		t.Fatalf("perm after wipe %d", p)
	}
	resp = c.Call(headerReq(remoting.AddWritePermOfBroker, &remoting.AddWritePermOfBrokerRequestHeader{BrokerName: "b1"}, nil))
	wantCode(t, resp, remoting.Success, "")
	if v, _ := resp.Ext.Get("addTopicCount"); v != "2" {
		t.Fatalf("addTopicCount %q", v)
	}
	if p := route(t, c, "T").QueueDatas[0].Perm; p != 6 {
		t.Fatalf("perm after add %d", p)
	}
}

func TestRegisterTopicInNamesrv(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 1)), remoting.Success, "")
	body := (&remoting.TopicRouteData{QueueDatas: []remoting.QueueData{
		{BrokerName: "b1", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
	}}).AppendJSON(nil, remoting.JSONFastjson)
	ext := remoting.ExtFields{{Key: "topic", Value: "Static"}}
	wantCode(t, c.Call(request(remoting.RegisterTopicInNamesrv, remoting.DefaultVersion, ext, body)), remoting.Success, "")
	if rd := route(t, c, "Static"); rd.QueueDatas[0].WriteQueueNums != 2 {
		t.Fatalf("registered topic %+v", rd)
	}
}

func TestUnknownCode(t *testing.T) {
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
		req := request(9999, remoting.DefaultVersion, nil, nil)
		req.Serialize = st
		resp := c.Call(req)
		wantCode(t, resp, remoting.RequestCodeNotSupported, " request type 9999 not supported")
		if resp.Serialize != st {
			t.Fatalf("answered in serialize type %d, want %d", resp.Serialize, st)
		}
	}
}

// TestMalformedFramesIsolated: a client sending garbage loses its own
// connection; other clients keep working.
func TestMalformedFramesIsolated(t *testing.T) {
	ns := startNS(t, Config{})
	good := rawframe.Dial(t, ns.Addr())
	wantCode(t, good.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4))), remoting.Success, "")
	tests := []struct {
		name  string
		frame []byte
	}{
		{"huge length", []byte{0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}},
		{"negative length", []byte{0xFF, 0xFF, 0xFF, 0xF0}},
		{"bad serialize type", []byte{0, 0, 0, 8, 7, 0, 0, 0, 'x', 'x', 'x', 'x'}},
		{"header longer than frame", []byte{0, 0, 0, 8, 0, 0, 0, 0x40, '{', '}', 0, 0}},
		{"broken json header", append([]byte{0, 0, 0, 12, 0, 0, 0, 8}, []byte(`{"code":`)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := rawframe.Dial(t, ns.Addr())
			bad.Write(tt.frame)
			if !bad.WaitClosed(5 * time.Second) {
				t.Fatal("server kept the connection that sent garbage")
			}
			if !hasRoute(t, good, "T") {
				t.Fatal("good client lost its route")
			}
		})
	}
	// A half-written frame from another client does not block anyone.
	partial := rawframe.Dial(t, ns.Addr())
	frame, _ := routeReq("T", 409, nil).AppendFrame(nil)
	partial.Write(frame[:len(frame)-3])
	if !hasRoute(t, good, "T") {
		t.Fatal("good client blocked by a partial frame")
	}
	partial.Write(frame[len(frame)-3:])
	wantCode(t, partial.Read(), remoting.Success, "")
}

func TestLifecycle(t *testing.T) {
	ns, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ns.Close(ctx); err != nil {
		t.Fatalf("Close before Start: %v", err)
	}
	if err := ns.Start("127.0.0.1:0"); err == nil {
		t.Fatal("Start after Close succeeded")
	}

	ns, err = New(Config{ScanInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := ns.Start("127.0.0.1:0"); err == nil {
		t.Fatal("second Start succeeded")
	}
	c := rawframe.Dial(t, ns.Addr())
	wantCode(t, c.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4))), remoting.Success, "")
	if err := ns.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := ns.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if !c.WaitClosed(5 * time.Second) {
		t.Fatal("connection open after Close")
	}
	if _, err := New(Config{BrokerExpiry: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative expiry: %v", err)
	}
}

// TestRegisterRacingClose: a broker that registers and disconnects at once
// must not stay registered, whichever of the handler and the close callback
// runs first.
func TestRegisterRacingClose(t *testing.T) {
	ns := startNS(t, Config{})
	for i := range 30 {
		c := rawframe.Dial(t, ns.Addr())
		req := registerReq("c", "b"+strconv.Itoa(i), "a"+strconv.Itoa(i), 0, 1, topic("T"+strconv.Itoa(i), 1))
		req.Flag |= remoting.FlagOneway
		c.Send(req)
		c.NetConn().Close()
	}
	q := rawframe.Dial(t, ns.Addr())
	testutil.WaitFor(t, 5*time.Second, "every broker to be gone", func() bool {
		return len(clusterInfo(t, q).BrokerAddrTable) == 0
	})
}
