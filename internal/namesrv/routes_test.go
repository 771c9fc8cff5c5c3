package namesrv

import (
	"reflect"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

var t0 = time.Unix(1_700_000_000, 0)

func reg(cluster, name, addr string, id int64, v int64, topics ...topicConfig) *registration {
	return &registration{
		Cluster: cluster, Name: name, Addr: addr, ID: id,
		HAServerAddr: addr + "-ha",
		Version:      remoting.DataVersion{Counter: v, Timestamp: v},
		Topics:       topics,
		Now:          t0,
	}
}

func tc(name string, queues, perm int32) topicConfig {
	return topicConfig{Name: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm}
}

func TestRouteTableRegister(t *testing.T) {
	rt := newRouteTable()
	if _, ok := rt.register(reg("c1", "b1", "10.0.0.1:10911", 0, 1, tc("T", 4, 6))); !ok {
		t.Fatal("register refused")
	}
	// A slave's topic table is ignored; it learns its master.
	res, _ := rt.register(reg("c1", "b1", "10.0.0.2:10911", 1, 1, tc("SlaveOnly", 4, 6)))
	if res.MasterAddr != "10.0.0.1:10911" || res.HAServerAddr != "10.0.0.1:10911-ha" {
		t.Fatalf("slave result %+v", res)
	}
	if _, ok := rt.route("SlaveOnly"); ok {
		t.Fatal("slave topic table was applied")
	}
	rs, ok := rt.route("T")
	if !ok {
		t.Fatal("route T missing")
	}
	want := remoting.TopicRouteData{
		QueueDatas:  []remoting.QueueData{{BrokerName: "b1", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []remoting.BrokerData{{Cluster: "c1", BrokerName: "b1", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}}},
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("route\n got %+v\nwant %+v", rs, want)
	}

	// Same data version: the (different) topic table is not re-read.
	rt.register(reg("c1", "b1", "10.0.0.1:10911", 0, 1, tc("T", 8, 6)))
	if rs, _ := rt.route("T"); rs.QueueDatas[0].ReadQueueNums != 4 {
		t.Fatalf("unchanged data version updated queues: %+v", rs.QueueDatas)
	}
	// New data version: it is.
	rt.register(reg("c1", "b1", "10.0.0.1:10911", 0, 2, tc("T", 8, 6)))
	if rs, _ := rt.route("T"); rs.QueueDatas[0].ReadQueueNums != 8 {
		t.Fatalf("changed data version ignored: %+v", rs.QueueDatas)
	}

	// The slave is promoted: its address moves from id 1 to id 0.
	rt.register(reg("c1", "b1", "10.0.0.2:10911", 0, 3))
	if got := rt.brokers["b1"].BrokerAddrs; !reflect.DeepEqual(got, map[int64]string{0: "10.0.0.2:10911"}) {
		t.Fatalf("addresses after promotion: %v", got)
	}
}

func TestRouteTableRemoval(t *testing.T) {
	setup := func() *routeTable {
		rt := newRouteTable()
		rt.register(reg("c1", "b1", "a1", 0, 1, tc("T", 4, 6), tc("Only1", 4, 6)))
		rt.register(reg("c1", "b1", "a1s", 1, 1))
		rt.register(reg("c2", "b2", "a2", 0, 1, tc("T", 2, 6)))
		return rt
	}
	type state struct {
		topics   []string
		brokers  []string
		clusters []string
	}
	snap := func(rt *routeTable) state {
		return state{rt.allTopics(), sortedKeys(rt.brokers), sortedKeys(rt.clusters)}
	}
	tests := []struct {
		name string
		do   func(rt *routeTable)
		want state
	}{
		{"unregister slave keeps broker", func(rt *routeTable) { rt.unregister("c1", "a1s", "b1", 1) },
			state{[]string{"Only1", "T"}, []string{"b1", "b2"}, []string{"c1", "c2"}}},
		{"unregister all of b1", func(rt *routeTable) {
			rt.unregister("c1", "a1", "b1", 0)
			rt.unregister("c1", "a1s", "b1", 1)
		}, state{[]string{"T"}, []string{"b2"}, []string{"c2"}}},
		{"expire everything", func(rt *routeTable) {
			if n := len(rt.expire(t0.Add(time.Minute+time.Nanosecond), time.Minute)); n != 3 {
				t.Errorf("expired %d, want 3", n)
			}
		}, state{[]string{}, []string{}, []string{}}},
		{"nothing expires at the limit", func(rt *routeTable) {
			if n := len(rt.expire(t0.Add(time.Minute), time.Minute)); n != 0 {
				t.Errorf("expired %d, want 0", n)
			}
		}, state{[]string{"Only1", "T"}, []string{"b1", "b2"}, []string{"c1", "c2"}}},
		{"delete topic", func(rt *routeTable) { rt.deleteTopic("T", "") },
			state{[]string{"Only1"}, []string{"b1", "b2"}, []string{"c1", "c2"}}},
		{"delete topic in one cluster", func(rt *routeTable) { rt.deleteTopic("T", "c2"); rt.deleteTopic("Only1", "c2") },
			state{[]string{"Only1", "T"}, []string{"b1", "b2"}, []string{"c1", "c2"}}},
		{"delete topic in its only cluster", func(rt *routeTable) { rt.deleteTopic("Only1", "c1") },
			state{[]string{"T"}, []string{"b1", "b2"}, []string{"c1", "c2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := setup()
			tt.do(rt)
			if got := snap(rt); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRouteTableExpiryHonoursBrokerTimeout(t *testing.T) {
	rt := newRouteTable()
	r := reg("c1", "b1", "a1", 0, 1, tc("T", 4, 6))
	r.Timeout = time.Hour
	rt.register(r)
	rt.register(reg("c1", "b2", "a2", 0, 1, tc("T", 4, 6)))
	gone := rt.expire(t0.Add(2*time.Minute), time.Minute)
	if len(gone) != 1 || gone[0].Addr != "a2" {
		t.Fatalf("expired %+v, want only a2", gone)
	}
}

func TestRouteTableWritePerm(t *testing.T) {
	rt := newRouteTable()
	rt.register(reg("c1", "b1", "a1", 0, 1, tc("T1", 4, 6), tc("T2", 4, 7)))
	rt.register(reg("c1", "b2", "a2", 0, 1, tc("T1", 4, 6)))
	if n := rt.setWritePerm("b1", false); n != 2 {
		t.Fatalf("wiped %d topics, want 2", n)
	}
	perms := func(topic string) map[string]int32 {
		rs, _ := rt.route(topic)
		m := map[string]int32{}
		for _, q := range rs.QueueDatas {
			m[q.BrokerName] = q.Perm
		}
		return m
	}
	if got := perms("T1"); !reflect.DeepEqual(got, map[string]int32{"b1": 4, "b2": 6}) {
		t.Fatalf("T1 perms after wipe %v", got)
	}
	if got := perms("T2"); got["b1"] != 5 {
		t.Fatalf("T2 perm after wipe %v, want 5 (inherit bit kept)", got)
	}
	if n := rt.setWritePerm("b1", true); n != 2 {
		t.Fatalf("added %d topics, want 2", n)
	}
	if got := perms("T2"); got["b1"] != 6 {
		t.Fatalf("T2 perm after add %v, want 6", got)
	}
}

func TestRouteTableTopicQueries(t *testing.T) {
	rt := newRouteTable()
	unit := tc("Unit", 1, 6)
	unit.TopicSysFlag = topicFlagUnit
	unitSub := tc("UnitSub", 1, 6)
	unitSub.TopicSysFlag = topicFlagUnitSub
	rt.register(reg("c1", "b1", "a1", 0, 1, tc("T1", 4, 6), unit, unitSub))
	rt.register(reg("c2", "b2", "a2", 0, 1, tc("T2", 4, 6)))

	if got := rt.topicsByCluster("c2"); !reflect.DeepEqual(got, []string{"T2"}) {
		t.Errorf("topicsByCluster(c2) = %v", got)
	}
	if got := rt.topicsByCluster("none"); len(got) != 0 {
		t.Errorf("topicsByCluster(none) = %v", got)
	}
	topics, addr := rt.systemTopics()
	if !reflect.DeepEqual(topics, []string{"b1", "b2", "c1", "c2"}) || addr != "a1" {
		t.Errorf("systemTopics = %v %q", topics, addr)
	}
	if got := rt.topicsBySysFlag(func(f int32) bool { return f&topicFlagUnit != 0 }); !reflect.DeepEqual(got, []string{"Unit"}) {
		t.Errorf("unit topics = %v", got)
	}
	if ok := rt.registerTopic("New", []remoting.QueueData{{BrokerName: "b9", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}); ok {
		t.Error("registerTopic accepted an unknown broker")
	}
	if ok := rt.registerTopic("New", []remoting.QueueData{{BrokerName: "b2", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}); !ok {
		t.Error("registerTopic refused a known broker")
	}
	if _, ok := rt.route("New"); !ok {
		t.Error("registered topic has no route")
	}
}

func TestRouteTableQueryDataVersion(t *testing.T) {
	rt := newRouteTable()
	rt.register(reg("c1", "b1", "a1", 0, 5))
	later := t0.Add(time.Minute)
	same := remoting.DataVersion{Counter: 5, Timestamp: 5}
	changed, got := rt.queryDataVersion("a1", &same, later)
	if changed || got == nil || *got != same {
		t.Fatalf("same version: changed=%v registered=%v", changed, got)
	}
	if rt.live["a1"].lastUpdate != later {
		t.Fatal("unchanged query did not refresh liveness")
	}
	other := remoting.DataVersion{Counter: 6, Timestamp: 6}
	if changed, _ := rt.queryDataVersion("a1", &other, later.Add(time.Minute)); !changed {
		t.Fatal("different version not reported as changed")
	}
	if rt.live["a1"].lastUpdate != later {
		t.Fatal("changed query refreshed liveness")
	}
	if changed, got := rt.queryDataVersion("nope", &same, later); !changed || got != nil {
		t.Fatalf("unknown broker: changed=%v registered=%v", changed, got)
	}
}
