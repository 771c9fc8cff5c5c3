package broker

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// clientsTestBroker starts a broker on a random loopback port; mod may
// change the config first. The broker closes at cleanup.
func clientsTestBroker(t testing.TB, mod func(*Config)) *Broker {
	t.Helper()
	cfg := Config{
		StoreDir:             t.TempDir(),
		ListenAddr:           "127.0.0.1:0",
		CommitLogSegmentSize: 4 << 20,
		ConsumeQueueEntries:  1024,
		IndexSlots:           1024,
		IndexEntries:         4096,
	}
	if mod != nil {
		mod(&cfg)
	}
	return startBroker(t, cfg)
}

// clientsPeer is one client connection to the broker that records the
// NOTIFY_CONSUMER_IDS_CHANGED requests it receives.
type clientsPeer struct {
	id     string
	addr   string
	cli    *transport.Client
	notify chan string // consumerGroup of each notification
}

func clientsNewPeer(t testing.TB, b *Broker, id string) *clientsPeer {
	t.Helper()
	cli := newTestClient(t)
	p := &clientsPeer{id: id, addr: b.Addr(), cli: cli, notify: make(chan string, 64)}
	cli.RegisterHandler(remoting.NotifyConsumerIDsChanged, func(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
		var h remoting.NotifyConsumerIdsChangedRequestHeader
		if err := h.FromExt(req.Ext); err != nil || !req.IsOneway() {
			p.notify <- "bad notification: " + req.Ext.Map()["consumerGroup"]
			return nil
		}
		p.notify <- h.ConsumerGroup
		return nil
	})
	return p
}

func (p *clientsPeer) invoke(t testing.TB, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := p.cli.Invoke(ctx, p.addr, req)
	if err != nil {
		t.Fatalf("%s: invoke code %d: %v", p.id, req.Code, err)
	}
	return resp
}

// heartbeat sends a heartbeat with one consumer group (if group is not
// empty) in model, subscribing to subs (topic → expression), and the
// producer groups.
func (p *clientsPeer) heartbeat(t testing.TB, group, model string, subs map[string]string, producers ...string) {
	t.Helper()
	hb := remoting.HeartbeatData{ClientID: p.id}
	if group != "" {
		hb.ConsumerDataSet = []remoting.ConsumerData{clientsConsumerData(group, model, subs, 1000)}
	}
	for _, g := range producers {
		hb.ProducerDataSet = append(hb.ProducerDataSet, remoting.ProducerData{GroupName: g})
	}
	p.sendHeartbeat(t, &hb)
}

func (p *clientsPeer) sendHeartbeat(t testing.TB, hb *remoting.HeartbeatData) {
	t.Helper()
	resp := p.invoke(t, remoting.NewRequest(remoting.HeartBeat, nil, hb.AppendJSON(nil, remoting.JSONFastjson)))
	if resp.Code != remoting.Success || resp.Remark != "" || resp.Ext != nil || len(resp.Body) != 0 {
		t.Fatalf("%s: heartbeat answered code %d remark %q ext %v body %q", p.id, resp.Code, resp.Remark, resp.Ext, resp.Body)
	}
}

func clientsConsumerData(group, model string, subs map[string]string, subVersion int64) remoting.ConsumerData {
	cd := remoting.ConsumerData{
		GroupName:        group,
		ConsumeType:      remoting.ConsumeTypePassively,
		MessageModel:     model,
		ConsumeFromWhere: remoting.ConsumeFromLastOffset,
	}
	topics := make([]string, 0, len(subs))
	for topic := range subs {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		s := message.BuildSubscription(subs[topic])
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, remoting.SubscriptionData{
			Topic:          topic,
			SubString:      s.Expression,
			TagsSet:        s.Tags,
			CodeSet:        s.Codes,
			SubVersion:     subVersion,
			ExpressionType: remoting.ExpressionTypeTag,
		})
	}
	return cd
}

func (p *clientsPeer) unregister(t testing.TB, producerGroup, consumerGroup string) {
	t.Helper()
	h := remoting.UnregisterClientRequestHeader{ClientID: p.id}
	if producerGroup != "" {
		h.ProducerGroup = &producerGroup
	}
	if consumerGroup != "" {
		h.ConsumerGroup = &consumerGroup
	}
	resp := p.invoke(t, remoting.NewRequest(remoting.UnregisterClient, h.AppendExt(nil), nil))
	if resp.Code != remoting.Success || resp.Ext == nil || len(resp.Ext) != 0 {
		t.Fatalf("%s: unregister answered code %d remark %q ext %#v", p.id, resp.Code, resp.Remark, resp.Ext)
	}
}

// consumerList is GET_CONSUMER_LIST_BY_GROUP: the sorted ids, or nil
// after the SYSTEM_ERROR answer for a group without consumers.
func (p *clientsPeer) consumerList(t testing.TB, group string) []string {
	t.Helper()
	h := remoting.GetConsumerListByGroupRequestHeader{ConsumerGroup: group}
	resp := p.invoke(t, remoting.NewRequest(remoting.GetConsumerListByGroup, h.AppendExt(nil), nil))
	if resp.Ext == nil || len(resp.Ext) != 0 {
		t.Errorf("GET_CONSUMER_LIST_BY_GROUP ext %#v, want {}", resp.Ext)
	}
	switch resp.Code {
	case remoting.Success:
		var body remoting.ConsumerListByGroupBody
		if err := body.DecodeJSON(resp.Body); err != nil {
			t.Fatalf("consumer list body %q: %v", resp.Body, err)
		}
		sort.Strings(body.ConsumerIDList)
		return body.ConsumerIDList
	case remoting.SystemError:
		if want := "no consumer for this group, " + group; resp.Remark != want {
			t.Errorf("remark %q, want %q", resp.Remark, want)
		}
		return nil
	default:
		t.Fatalf("GET_CONSUMER_LIST_BY_GROUP code %d remark %q", resp.Code, resp.Remark)
		return nil
	}
}

// expectNotify waits for a notification of group.
func (p *clientsPeer) expectNotify(t testing.TB, group string) {
	t.Helper()
	select {
	case g := <-p.notify:
		if g != group {
			t.Fatalf("%s notified for %q, want %q", p.id, g, group)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no NOTIFY_CONSUMER_IDS_CHANGED for %s", p.id, group)
	}
}

// expectQuiet checks that no notification arrives for a while. The broker
// queues its notifications before the response of the request that caused
// them, so a short wait covers the handler goroutine of the client.
func (p *clientsPeer) expectQuiet(t testing.TB) {
	t.Helper()
	select {
	case g := <-p.notify:
		t.Fatalf("%s: unexpected notification for %q", p.id, g)
	case <-time.After(150 * time.Millisecond):
	}
}

func TestClientsHeartbeatRegisters(t *testing.T) {
	b := clientsTestBroker(t, nil)
	p := clientsNewPeer(t, b, "10.0.0.1@1")

	// The client's codes are ignored: "标签" is hashed over UTF-16 units
	// (Java), not over its UTF-8 bytes as the official Go client does.
	cd := clientsConsumerData("hbGroup", remoting.MessageModelClustering, map[string]string{"TopicA": "TagA || TagB", "TopicB": "标签"}, 1234)
	cd.SubscriptionDataSet[1].CodeSet = []int32{1, 2}
	hb := remoting.HeartbeatData{
		ClientID:        p.id,
		ConsumerDataSet: []remoting.ConsumerData{cd},
		ProducerDataSet: []remoting.ProducerData{{GroupName: "hbProducer"}, {GroupName: rocketmq.GroupClientInnerProducer}},
	}
	p.sendHeartbeat(t, &hb)
	p.expectNotify(t, "hbGroup") // a new member: the group (just itself) is told

	gc, ok := b.groups.get("hbGroup")
	if !ok {
		t.Fatal("subscription group not auto-created")
	}
	if want := remoting.NewSubscriptionGroupConfig("hbGroup"); !reflect.DeepEqual(gc, want) {
		t.Errorf("group config %+v, want Java defaults %+v", gc, want)
	}
	tc, ok := b.topics.get("%RETRY%hbGroup")
	if !ok || tc.ReadQueueNums != 1 || tc.WriteQueueNums != 1 || tc.Perm != 6 {
		t.Errorf("retry topic %+v (exists %v), want 1/1 queues perm 6", tc, ok)
	}

	for _, tt := range []struct {
		topic string
		tags  []string
		codes []int32
	}{
		{"TopicA", []string{"TagA", "TagB"}, []int32{2598919, 2598920}},
		{"TopicB", []string{"标签"}, []int32{message.JavaHashCode("标签")}},
	} {
		t.Run(tt.topic, func(t *testing.T) {
			sd, ok, known := b.clients.subscription("hbGroup", tt.topic)
			if !ok || !known {
				t.Fatalf("subscription ok=%v known=%v", ok, known)
			}
			if !slices.Equal(sd.TagsSet, tt.tags) || !slices.Equal(sd.CodeSet, tt.codes) || sd.SubVersion != 1234 || sd.Topic != tt.topic {
				t.Errorf("subscription %+v, want tags %v codes %v subVersion 1234", sd, tt.tags, tt.codes)
			}
		})
	}
	if message.JavaHashCode("标签") == 1 || message.JavaHashCode("标签") == 2 {
		t.Fatal("test tag hash collides with the bogus client codes")
	}
	if _, ok, known := b.clients.subscription("hbGroup", "Other"); ok || !known {
		t.Errorf("unsubscribed topic: ok=%v known=%v, want false/true", ok, known)
	}
	if _, ok, known := b.clients.subscription("noSuchGroup", "TopicA"); ok || known {
		t.Errorf("unknown group: ok=%v known=%v", ok, known)
	}
	if m, ok := b.clients.consumeType("hbGroup"); !ok || m != remoting.MessageModelClustering {
		t.Errorf("consumeType = %q, %v", m, ok)
	}
	if _, ok := b.clients.consumeType("noSuchGroup"); ok {
		t.Error("consumeType of an unknown group reported ok")
	}
	for _, g := range []string{"hbProducer", rocketmq.GroupClientInnerProducer} {
		if c := b.clients.producerConn(g); c == nil || c.IsClosed() {
			t.Errorf("producerConn(%s) = %v", g, c)
		}
	}
	if c := b.clients.producerConn("noSuchProducer"); c != nil {
		t.Errorf("producerConn of an unknown group = %v", c)
	}
	if c := b.clients.consumerConn("hbGroup", p.id); c == nil {
		t.Error("consumerConn of the member is nil")
	}
	if c := b.clients.consumerConn("hbGroup", "other@1"); c != nil {
		t.Error("consumerConn of an unknown client id is not nil")
	}
	if got := p.consumerList(t, "hbGroup"); !slices.Equal(got, []string{p.id}) {
		t.Errorf("consumer list %v", got)
	}

	// Same heartbeat again: nothing changed, nobody is told.
	p.sendHeartbeat(t, &hb)
	p.expectQuiet(t)
}

func TestClientsHeartbeatBadBody(t *testing.T) {
	b := clientsTestBroker(t, nil)
	p := clientsNewPeer(t, b, "x@1")
	for _, body := range [][]byte{nil, []byte("{"), []byte(`{"consumerDataSet":7}`)} {
		resp := p.invoke(t, remoting.NewRequest(remoting.HeartBeat, nil, body))
		if resp.Code != remoting.SystemError || resp.Remark == "" {
			t.Errorf("body %q: code %d remark %q, want SYSTEM_ERROR with a reason", body, resp.Code, resp.Remark)
		}
	}
}

func TestClientsNotifyMembership(t *testing.T) {
	b := clientsTestBroker(t, nil)
	const group = "notifyGroup"
	subs := map[string]string{"TopicN": "*"}
	admin := clientsNewPeer(t, b, "admin@1")
	c1 := clientsNewPeer(t, b, "10.0.0.1@1")
	c1.heartbeat(t, group, remoting.MessageModelClustering, subs)
	c1.expectNotify(t, group)

	join := func(t *testing.T) *clientsPeer {
		c2 := clientsNewPeer(t, b, "10.0.0.2@2")
		c2.heartbeat(t, group, remoting.MessageModelClustering, subs)
		c1.expectNotify(t, group)
		c2.expectNotify(t, group)
		if got := admin.consumerList(t, group); !slices.Equal(got, []string{c1.id, c2.id}) {
			t.Fatalf("consumer list %v, want both", got)
		}
		return c2
	}
	left := func(t *testing.T) {
		c1.expectNotify(t, group)
		if got := admin.consumerList(t, group); !slices.Equal(got, []string{c1.id}) {
			t.Fatalf("consumer list %v, want only %s", got, c1.id)
		}
	}

	t.Run("close", func(t *testing.T) {
		c2 := join(t)
		c2.cli.Close()
		left(t)
	})
	t.Run("unregister", func(t *testing.T) {
		c2 := join(t)
		c2.unregister(t, "", group)
		left(t)
		c2.expectQuiet(t) // it left; only the remaining members are told
		// Closing its connection afterwards changes nothing.
		c2.cli.Close()
		c1.expectQuiet(t)
	})
	t.Run("refresh", func(t *testing.T) {
		c2 := join(t)
		c2.heartbeat(t, group, remoting.MessageModelClustering, subs)
		c1.expectQuiet(t)
		c2.unregister(t, "", group)
		left(t)
	})
	t.Run("last leaves", func(t *testing.T) {
		c1.unregister(t, "", group)
		if got := admin.consumerList(t, group); got != nil {
			t.Fatalf("consumer list %v after the last member left", got)
		}
		if _, _, known := b.clients.subscription(group, "TopicN"); known {
			t.Error("group still known without members")
		}
		c1.expectQuiet(t)
	})
}

func TestClientsNotifySubscriptionChange(t *testing.T) {
	b := clientsTestBroker(t, nil)
	const group = "subGroup"
	c := clientsNewPeer(t, b, "10.0.0.1@1")
	send := func(subVersion int64, subs map[string]string) {
		hb := remoting.HeartbeatData{ClientID: c.id, ConsumerDataSet: []remoting.ConsumerData{
			clientsConsumerData(group, remoting.MessageModelClustering, subs, subVersion)}}
		c.sendHeartbeat(t, &hb)
	}
	expr := func(topic string) string {
		sd, ok, _ := b.clients.subscription(group, topic)
		if !ok {
			return "<none>"
		}
		return sd.SubString
	}

	send(100, map[string]string{"T1": "a"})
	c.expectNotify(t, group)

	// A newer version of a subscribed topic replaces it quietly (Java
	// counts only added and dropped topics as a change).
	send(200, map[string]string{"T1": "b"})
	c.expectQuiet(t)
	if got := expr("T1"); got != "b" {
		t.Errorf("T1 expression %q after a newer subVersion, want b", got)
	}
	// An older version is ignored.
	send(150, map[string]string{"T1": "c"})
	if got := expr("T1"); got != "b" {
		t.Errorf("T1 expression %q after an older subVersion, want b", got)
	}
	c.expectQuiet(t)

	send(300, map[string]string{"T1": "b", "T2": "*"})
	c.expectNotify(t, group)
	send(400, map[string]string{"T2": "*"})
	c.expectNotify(t, group)
	if got := expr("T1"); got != "<none>" {
		t.Errorf("dropped topic T1 still subscribed: %q", got)
	}
}

func TestClientsNotifyDisabledForGroup(t *testing.T) {
	b := clientsTestBroker(t, nil)
	g := remoting.NewSubscriptionGroupConfig("quietGroup")
	g.NotifyConsumerIdsChangedEnable = false
	b.groups.put(g)
	c1 := clientsNewPeer(t, b, "a@1")
	c2 := clientsNewPeer(t, b, "b@1")
	c1.heartbeat(t, "quietGroup", remoting.MessageModelClustering, map[string]string{"T": "*"})
	c2.heartbeat(t, "quietGroup", remoting.MessageModelClustering, map[string]string{"T": "*"})
	c2.unregister(t, "", "quietGroup")
	c1.expectQuiet(t)
	c2.expectQuiet(t)
}

func TestClientsBroadcastingNotNotified(t *testing.T) {
	b := clientsTestBroker(t, nil)
	const group = "bcastGroup"
	subs := map[string]string{"TopicB": "*"}
	c1 := clientsNewPeer(t, b, "10.0.0.1@1")
	c2 := clientsNewPeer(t, b, "10.0.0.2@2")
	c1.heartbeat(t, group, remoting.MessageModelBroadcasting, subs)
	c2.heartbeat(t, group, remoting.MessageModelBroadcasting, subs)
	if got := c1.consumerList(t, group); !slices.Equal(got, []string{c1.id, c2.id}) {
		t.Fatalf("consumer list %v", got)
	}
	c2.unregister(t, "", group)
	c3 := clientsNewPeer(t, b, "10.0.0.3@3")
	c3.heartbeat(t, group, remoting.MessageModelBroadcasting, subs)
	c3.cli.Close()
	testutil.WaitFor(t, 0, "c3 dropped", func() bool { return len(c1.consumerList(t, group)) == 1 })
	c1.expectQuiet(t)
	c2.expectQuiet(t)
	if m, ok := b.clients.consumeType(group); !ok || m != remoting.MessageModelBroadcasting {
		t.Errorf("consumeType = %q, %v", m, ok)
	}
}

func TestClientsProducerRegistry(t *testing.T) {
	b := clientsTestBroker(t, nil)
	p1 := clientsNewPeer(t, b, "p@1")
	p2 := clientsNewPeer(t, b, "p@2")
	p1.heartbeat(t, "", "", nil, "pg")
	p2.heartbeat(t, "", "", nil, "pg")

	seen := map[uint64]bool{}
	for range 4 {
		c := b.clients.producerConn("pg")
		if c == nil {
			t.Fatal("producerConn = nil")
		}
		seen[c.ID()] = true
	}
	if len(seen) != 2 {
		t.Errorf("producerConn rotated over %d connections, want 2", len(seen))
	}

	conns := func() []string {
		h := remoting.GetProducerConnectionListRequestHeader{ProducerGroup: "pg"}
		resp := p1.invoke(t, remoting.NewRequest(remoting.GetProducerConnectionList, h.AppendExt(nil), nil))
		if resp.Code != remoting.Success {
			if resp.Code != remoting.SystemError || resp.Remark != "the producer group[pg] not exist" {
				t.Fatalf("GET_PRODUCER_CONNECTION_LIST code %d remark %q", resp.Code, resp.Remark)
			}
			return nil
		}
		var pc remoting.ProducerConnection
		if err := pc.DecodeJSON(resp.Body); err != nil {
			t.Fatalf("body %q: %v", resp.Body, err)
		}
		var ids []string
		for _, c := range pc.ConnectionSet {
			if c.Language != "GO" || c.Version != remoting.DefaultVersion {
				t.Errorf("connection %+v: want language GO version %d", c, remoting.DefaultVersion)
			}
			if _, err := net.ResolveTCPAddr("tcp", c.ClientAddr); err != nil || !strings.HasPrefix(c.ClientAddr, "127.0.0.1:") {
				t.Errorf("clientAddr %q", c.ClientAddr)
			}
			ids = append(ids, c.ClientID)
		}
		return ids
	}
	if got := conns(); !slices.Equal(got, []string{"p@1", "p@2"}) {
		t.Fatalf("producer connections %v", got)
	}
	p2.unregister(t, "pg", "")
	if got := conns(); !slices.Equal(got, []string{"p@1"}) {
		t.Fatalf("producer connections %v after unregister", got)
	}
	p1.cli.Close()
	testutil.WaitFor(t, 0, "producer group gone", func() bool { return b.clients.producerConn("pg") == nil })
	// p1's connection is closed; ask through p2.
	h := remoting.GetProducerConnectionListRequestHeader{ProducerGroup: "pg"}
	resp := p2.invoke(t, remoting.NewRequest(remoting.GetProducerConnectionList, h.AppendExt(nil), nil))
	if resp.Code != remoting.SystemError || resp.Remark != "the producer group[pg] not exist" {
		t.Errorf("empty producer group: code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestClientsConsumerConnectionList(t *testing.T) {
	b := clientsTestBroker(t, nil)
	c1 := clientsNewPeer(t, b, "10.0.0.1@1")
	c2 := clientsNewPeer(t, b, "10.0.0.2@2")
	subs := map[string]string{"TopicC": "TagA || TagB", "%RETRY%connGroup": "*"}
	c1.heartbeat(t, "connGroup", remoting.MessageModelClustering, subs)
	c2.heartbeat(t, "connGroup", remoting.MessageModelClustering, subs)

	list := func(group string) *remoting.Command {
		h := remoting.GetConsumerConnectionListRequestHeader{ConsumerGroup: group}
		return c1.invoke(t, remoting.NewRequest(remoting.GetConsumerConnectionList, h.AppendExt(nil), nil))
	}
	resp := list("connGroup")
	if resp.Code != remoting.Success {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
	var cc remoting.ConsumerConnection
	if err := cc.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("body %q: %v", resp.Body, err)
	}
	if cc.ConsumeType != remoting.ConsumeTypePassively || cc.MessageModel != remoting.MessageModelClustering || cc.ConsumeFromWhere != remoting.ConsumeFromLastOffset {
		t.Errorf("consume type/model/where %q %q %q", cc.ConsumeType, cc.MessageModel, cc.ConsumeFromWhere)
	}
	if len(cc.ConnectionSet) != 2 || cc.ConnectionSet[0].ClientID != c1.id || cc.ConnectionSet[1].ClientID != c2.id {
		t.Fatalf("connections %+v", cc.ConnectionSet)
	}
	for _, c := range cc.ConnectionSet {
		if c.Language != "GO" || c.Version != remoting.DefaultVersion || !strings.HasPrefix(c.ClientAddr, "127.0.0.1:") {
			t.Errorf("connection %+v", c)
		}
	}
	sd := cc.SubscriptionTable["TopicC"]
	if len(cc.SubscriptionTable) != 2 || sd.SubString != "TagA || TagB" || !slices.Equal(sd.CodeSet, []int32{2598919, 2598920}) {
		t.Errorf("subscription table %+v", cc.SubscriptionTable)
	}

	resp = list("offlineGroup")
	if resp.Code != remoting.ConsumerNotOnline || resp.Remark != "the consumer group[offlineGroup] not online" || len(resp.Body) != 0 {
		t.Errorf("offline group: code %d remark %q body %q", resp.Code, resp.Remark, resp.Body)
	}
	resp = c1.invoke(t, remoting.NewRequest(remoting.GetConsumerConnectionList, nil, nil))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "consumerGroup") {
		t.Errorf("missing header field: code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestClientsUnregisterBadHeader(t *testing.T) {
	b := clientsTestBroker(t, nil)
	p := clientsNewPeer(t, b, "x@1")
	resp := p.invoke(t, remoting.NewRequest(remoting.UnregisterClient, nil, nil))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "clientID") {
		t.Errorf("code %d remark %q, want SYSTEM_ERROR naming clientID", resp.Code, resp.Remark)
	}
	resp = p.invoke(t, remoting.NewRequest(remoting.GetConsumerListByGroup, nil, nil))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "consumerGroup") {
		t.Errorf("code %d remark %q, want SYSTEM_ERROR naming consumerGroup", resp.Code, resp.Remark)
	}
}

func TestClientsChannelExpiry(t *testing.T) {
	b := clientsTestBroker(t, func(c *Config) {
		c.ChannelExpiry = time.Second
		c.ClientScanInterval = 50 * time.Millisecond
	})
	const group = "expGroup"
	subs := map[string]string{"TopicE": "*"}
	admin := clientsNewPeer(t, b, "admin@1")
	stale := clientsNewPeer(t, b, "stale@1")
	live := clientsNewPeer(t, b, "live@1")
	live.heartbeat(t, group, remoting.MessageModelClustering, subs)
	live.expectNotify(t, group)
	stale.heartbeat(t, group, remoting.MessageModelClustering, subs, "expProducer")
	stale.expectNotify(t, group)
	live.expectNotify(t, group)

	// live keeps heartbeating; stale goes silent.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		hb := remoting.HeartbeatData{ClientID: live.id, ConsumerDataSet: []remoting.ConsumerData{
			clientsConsumerData(group, remoting.MessageModelClustering, subs, 1000)}}
		body := hb.AppendJSON(nil, remoting.JSONFastjson)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				live.cli.Invoke(ctx, live.addr, remoting.NewRequest(remoting.HeartBeat, nil, body))
				cancel()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	testutil.WaitFor(t, 0, "stale channel expired", func() bool {
		return slices.Equal(admin.consumerList(t, group), []string{live.id})
	})
	testutil.WaitFor(t, 0, "stale connection closed by the broker", func() bool { return !stale.cli.Connected(stale.addr) })
	if c := b.clients.producerConn("expProducer"); c != nil {
		t.Error("expired producer channel still registered")
	}
	// Expiry is silent, and so is the close that follows it.
	live.expectQuiet(t)
	if got := admin.consumerList(t, group); !slices.Equal(got, []string{live.id}) {
		t.Errorf("consumer list %v, want the live member only", got)
	}
}

// clientsRoundTrip writes frame and reads up to its response; requests
// the broker sends meanwhile are returned too.
func clientsRoundTrip(t testing.TB, c *rawframe.Conn, frame []byte, opaque int32) (*remoting.Command, []*remoting.Command) {
	t.Helper()
	c.Write(frame)
	var pushed []*remoting.Command
	for {
		cmd := c.Read()
		if cmd.IsResponse() && cmd.Opaque == opaque {
			return cmd, pushed
		}
		pushed = append(pushed, cmd)
	}
}

type clientsWireFrame struct {
	N           int             `json:"n"`
	File        string          `json:"file"`
	Client      string          `json:"client"`
	Direction   string          `json:"direction"`
	Connection  string          `json:"connection"`
	Code        int32           `json:"code"`
	RequestCode int32           `json:"requestCode"`
	Serialize   string          `json:"serializeType"`
	ExtFields   json.RawMessage `json:"extFields"`
	Pair        *int            `json:"pair"`
}

func clientsReadWire(t testing.TB) ([]clientsWireFrame, func(clientsWireFrame) []byte) {
	t.Helper()
	const dir = "../../testdata/wire"
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Frames []clientsWireFrame `json:"frames"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	return idx.Frames, func(f clientsWireFrame) []byte {
		b, err := os.ReadFile(filepath.Join(dir, f.File))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestClientsCapturedFrames replays, in capture order and each on its own
// connection, every captured client request of the registry codes (Java
// JSON and ROCKETMQ headers, official Go client) and compares the answers
// and the notifications with what the 4.9.8 broker did.
func TestClientsCapturedFrames(t *testing.T) {
	frames, load := clientsReadWire(t)
	byN := map[int]clientsWireFrame{}
	for _, f := range frames {
		byN[f.N] = f
	}
	b := clientsTestBroker(t, nil)
	codes := map[int32]bool{remoting.HeartBeat: true, remoting.UnregisterClient: true,
		remoting.GetConsumerListByGroup: true, remoting.GetConsumerConnectionList: true}
	keep := func(f clientsWireFrame) bool { return f.Client != "broker" && codes[f.Code] }
	replayed := clientsReplay(t, b, frames, load, keep, func(i int, req, resp, wantResp *remoting.Command, pushed []*remoting.Command) {
		f := frames[i]
		want := byN[*f.Pair]
		if resp.Code != wantResp.Code || resp.Remark != wantResp.Remark || resp.Serialize != req.Serialize {
			t.Errorf("%s: code %d remark %q serialize %d, captured %d %q %d", f.File, resp.Code, resp.Remark, resp.Serialize,
				wantResp.Code, wantResp.Remark, wantResp.Serialize)
		}
		if req.Serialize == remoting.SerializeJSON && (resp.Ext == nil) != (wantResp.Ext == nil) {
			t.Errorf("%s: extFields %#v, captured %#v", f.File, resp.Ext, wantResp.Ext)
		}
		switch f.Code {
		case remoting.GetConsumerListByGroup:
			if string(resp.Body) != string(wantResp.Body) {
				t.Errorf("%s: body %s, captured %s", f.File, resp.Body, wantResp.Body)
			}
		case remoting.GetConsumerConnectionList:
			var got, exp remoting.ConsumerConnection
			if err := got.DecodeJSON(resp.Body); err != nil {
				t.Fatalf("%s: %v", f.File, err)
			}
			if err := exp.DecodeJSON(wantResp.Body); err != nil {
				t.Fatal(err)
			}
			for i := range exp.ConnectionSet {
				exp.ConnectionSet[i].ClientAddr = ""
			}
			for i := range got.ConnectionSet {
				got.ConnectionSet[i].ClientAddr = ""
			}
			// Java keeps the tag codes in a hash set; compare them as sets.
			for _, m := range []map[string]remoting.SubscriptionData{got.SubscriptionTable, exp.SubscriptionTable} {
				for k, sd := range m {
					sd.CodeSet = slices.Sorted(slices.Values(sd.CodeSet))
					m[k] = sd
				}
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("%s: connection list\n got %+v\nwant %+v", f.File, got, exp)
			}
		}

		// The notifications the 4.9.8 broker sent on this connection
		// between the request and its response.
		var wantPushed []string
		for _, g := range frames[i+1:] {
			if g.N == want.N {
				break
			}
			if g.Client == "broker" && g.Code == remoting.NotifyConsumerIDsChanged && g.Connection == f.Connection {
				var ext map[string]string
				json.Unmarshal(g.ExtFields, &ext)
				wantPushed = append(wantPushed, ext["consumerGroup"])
			}
		}
		var gotPushed []string
		for _, p := range pushed {
			if p.Code != remoting.NotifyConsumerIDsChanged || !p.IsOneway() || p.Serialize != remoting.SerializeJSON {
				t.Errorf("%s: broker sent code %d flag %d serialize %d", f.File, p.Code, p.Flag, p.Serialize)
				continue
			}
			g, _ := p.Ext.Get("consumerGroup")
			gotPushed = append(gotPushed, g)
		}
		// The lite pull consumers' first heartbeats (0071, 0243) brought a
		// new channel, which makes Java notify too, but the capture holds
		// no notification for them; accept ours.
		if !slices.Equal(gotPushed, wantPushed) && !(len(wantPushed) == 0 && (f.N == 71 || f.N == 243)) {
			t.Errorf("%s: notifications %v, captured %v", f.File, gotPushed, wantPushed)
		}
	})
	for code, min := range map[int32]int{remoting.HeartBeat: 20, remoting.UnregisterClient: 4, remoting.GetConsumerListByGroup: 5, remoting.GetConsumerConnectionList: 2} {
		if replayed[code] < min {
			t.Errorf("replayed %d frames of code %d, want at least %d", replayed[code], code, min)
		}
	}

	// What the heartbeats registered.
	for _, tt := range []struct {
		group, topic string
		tags         []string
		subVersion   int64
	}{
		{"GoldenPushJava", "GoldenTopicJava", []string{"TagA", "TagBatch", "TagTxCheck", "TagDelay", "TagBig", "TagRetry", "TagTxCommit"}, 0},
		{"GoldenPushJavaBin", "GoldenTopicJavaBin", nil, 0},
		{"GoldenPushGo", "GoldenTopicGo", []string{"TagA", "TagAsync", "TagBatch", "TagBig", "TagRetry"}, 1795957097804277807},
		{"GoldenPushGo", "%RETRY%GoldenPushGo", []string{}, 1795957117797104125},
	} {
		t.Run(tt.group+"/"+tt.topic, func(t *testing.T) {
			sd, ok, known := b.clients.subscription(tt.group, tt.topic)
			if !ok || !known {
				t.Fatalf("no subscription (group known %v)", known)
			}
			if tt.tags != nil && !slices.Equal(sd.TagsSet, tt.tags) && !(len(tt.tags) == 0 && len(sd.TagsSet) == 0) {
				t.Errorf("tags %v, want %v", sd.TagsSet, tt.tags)
			}
			if len(sd.CodeSet) != len(sd.TagsSet) {
				t.Fatalf("codes %v for tags %v", sd.CodeSet, sd.TagsSet)
			}
			for i, tag := range sd.TagsSet {
				if sd.CodeSet[i] != message.JavaHashCode(tag) {
					t.Errorf("code of %q = %d, want %d", tag, sd.CodeSet[i], message.JavaHashCode(tag))
				}
			}
			if tt.subVersion != 0 && sd.SubVersion != tt.subVersion {
				t.Errorf("subVersion %d, want %d", sd.SubVersion, tt.subVersion)
			}
			if _, ok := b.topics.get(rocketmq.RetryTopic(tt.group)); !ok {
				t.Errorf("retry topic of %s missing", tt.group)
			}
		})
	}
	for _, g := range []string{"GoldenProducerGo", "GoldenProducerJava", "GoldenTxProducerJava", rocketmq.GroupClientInnerProducer} {
		if b.clients.producerConn(g) == nil {
			t.Errorf("producer group %s not registered", g)
		}
	}
	// The lite pull consumers unregistered at shutdown.
	for _, g := range []string{"GoldenLiteJava", "GoldenLiteJavaBin"} {
		if _, _, known := b.clients.subscription(g, "GoldenTopicJava"); known {
			t.Errorf("group %s still registered after UNREGISTER_CLIENT", g)
		}
	}
}

// clientsReplay sends, in capture order and each on a connection of its
// own captured connection, every captured request that keep accepts and
// that has a captured answer, and hands check the request, our answer,
// the captured answer and what the broker pushed meanwhile. It returns
// how many frames of each code it replayed.
func clientsReplay(t *testing.T, b *Broker, frames []clientsWireFrame, load func(clientsWireFrame) []byte,
	keep func(clientsWireFrame) bool, check func(i int, req, resp, want *remoting.Command, pushed []*remoting.Command)) map[int32]int {
	t.Helper()
	byN := map[int]clientsWireFrame{}
	for _, f := range frames {
		byN[f.N] = f
	}
	conns := map[string]*rawframe.Conn{}
	replayed := map[int32]int{}
	for i, f := range frames {
		if f.Direction != "req" || f.Pair == nil || !keep(f) {
			continue
		}
		rc := conns[f.Connection]
		if rc == nil {
			rc = rawframe.Dial(t, b.Addr())
			conns[f.Connection] = rc
		}
		raw := load(f)
		req, _, err := remoting.DecodeFrame(raw, remoting.DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("%s: %v", f.File, err)
		}
		resp, pushed := clientsRoundTrip(t, rc, raw, req.Opaque)
		replayed[f.Code]++
		want, _, err := remoting.DecodeFrame(load(byN[*f.Pair]), remoting.DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("%s: %v", byN[*f.Pair].File, err)
		}
		check(i, req, resp, want, pushed)
	}
	return replayed
}
