package mqclient

import (
	"context"
	"errors"
	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func TestParseNameServers(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		bad      bool
	}{
		{"one", "127.0.0.1:9876", []string{"127.0.0.1:9876"}, false},
		{"java list", "a:1;b:2", []string{"a:1", "b:2"}, false},
		{"commas and spaces", " a:1, b:2 ;", []string{"a:1", "b:2"}, false},
		{"host name", "namesrv.local:9876", []string{"namesrv.local:9876"}, false},
		{"ipv6", "[::1]:9876", []string{"[::1]:9876"}, false},
		{"no port", "a", nil, true},
		{"bad port", "a:x", nil, true},
		{"port zero", "a:0", nil, true},
		{"empty", "", []string{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNameServers(tc.in)
			if (err != nil) != tc.bad {
				t.Fatalf("err = %v, want bad=%v", err, tc.bad)
			}
			if !tc.bad && (len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0])) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConfigNameServersFromEnv(t *testing.T) {
	t.Setenv(EnvNameServer, "h1:1;h2:2")
	cfg := DefaultConfig()
	got, err := cfg.ResolveNameServers()
	if err != nil || len(got) != 2 || got[1] != "h2:2" {
		t.Fatalf("got %q, %v", got, err)
	}
	cfg.NameServers = []string{"x:3"}
	if got, _ := cfg.ResolveNameServers(); len(got) != 1 || got[0] != "x:3" {
		t.Fatalf("options must win over the environment: %q", got)
	}
	t.Setenv(EnvNameServer, "")
	cfg.NameServers = nil
	if err := cfg.Validate(); !errors.Is(err, ErrNoNameServer) {
		t.Fatalf("err = %v, want ErrNoNameServer", err)
	}
}

func route(brokers map[string]string, qds ...remoting.QueueData) *remoting.TopicRouteData {
	r := &remoting.TopicRouteData{QueueDatas: qds, FilterServerTable: map[string][]string{}}
	for name, addr := range brokers {
		r.BrokerDatas = append(r.BrokerDatas, remoting.BrokerData{Cluster: "c", BrokerName: name, BrokerAddrs: map[int64]string{0: addr}})
	}
	return r
}

func mq(b string, id int) rocketmq.MessageQueue {
	return rocketmq.MessageQueue{Topic: "T", BrokerName: b, QueueID: id}
}

func TestPublishQueues(t *testing.T) {
	r := route(map[string]string{"broker-b": "b:1", "broker-a": "a:1", "broker-c": "c:1"},
		remoting.QueueData{BrokerName: "broker-b", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6},
		remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 1, Perm: 6},
		remoting.QueueData{BrokerName: "broker-c", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 4}, // read only
		remoting.QueueData{BrokerName: "broker-d", ReadQueueNums: 3, WriteQueueNums: 3, Perm: 6}, // no broker data
	)
	r.BrokerDatas = append(r.BrokerDatas, remoting.BrokerData{BrokerName: "broker-e", BrokerAddrs: map[int64]string{1: "slave:1"}})
	r.QueueDatas = append(r.QueueDatas, remoting.QueueData{BrokerName: "broker-e", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}) // no master
	got, ordered := PublishQueues("T", r)
	want := []rocketmq.MessageQueue{mq("broker-a", 0), mq("broker-b", 0), mq("broker-b", 1)}
	if ordered || !slices.Equal(got, want) {
		t.Fatalf("publish = %v, want %v", got, want)
	}
	subs := SubscribeQueues("T", r)
	if len(subs) != 4+2+3+3+1 || subs[0] != mq("broker-a", 0) {
		t.Fatalf("subscribe = %v", subs)
	}
	r.OrderTopicConf = "broker-b:2;broker-a:1"
	got, ordered = PublishQueues("T", r)
	want = []rocketmq.MessageQueue{mq("broker-b", 0), mq("broker-b", 1), mq("broker-a", 0)}
	if !ordered || !slices.Equal(got, want) {
		t.Fatalf("ordered publish = %v, want %v", got, want)
	}
}

// namesrvHandler answers routes from a table; unknown topics get
// TOPIC_NOT_EXIST.
func namesrvHandler(routes map[string]*remoting.TopicRouteData) func(*remoting.Command) *remoting.Command {
	return func(req *remoting.Command) *remoting.Command {
		if req.Code != remoting.GetRouteInfoByTopic {
			return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
		}
		var h remoting.GetRouteInfoRequestHeader
		_ = h.FromExt(req.Ext)
		r, ok := routes[h.Topic]
		if !ok {
			return remoting.NewResponse(remoting.TopicNotExist, "No topic route info in name server for the topic: "+h.Topic)
		}
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = r.AppendJSON(nil, remoting.JSONStandard)
		return resp
	}
}

func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

func newTestClient(t *testing.T, ns ...string) *Client {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NameServers = ns
	cfg.RequestTimeout = time.Second
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestRouteFailoverAndTemplate(t *testing.T) {
	broker := fakepeer.New(t, func(req *remoting.Command) *remoting.Command { return remoting.NewResponse(remoting.Success, "") })
	routes := map[string]*remoting.TopicRouteData{
		"T":      route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}),
		"TBW102": route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7}),
	}
	ns := fakepeer.New(t, namesrvHandler(routes))
	c := newTestClient(t, deadAddr(t), ns.Addr())
	ctx := context.Background()

	pi, err := c.PublishInfo(ctx, "T", "TBW102", 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(pi.Queues) != 8 || pi.FromDefault {
		t.Fatalf("publish info %+v", pi)
	}
	if a, ok := c.BrokerAddr("broker-a"); !ok || a != broker.Addr() {
		t.Fatalf("broker addr %q %v", a, ok)
	}
	// The failed NameServer is skipped from now on.
	if got := c.nsIdx.Load(); got != 1 {
		t.Fatalf("namesrv index %d, want 1", got)
	}

	pi, err = c.PublishInfo(ctx, "NEW", "TBW102", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !pi.FromDefault || len(pi.Queues) != 4 {
		t.Fatalf("template publish info %+v", pi)
	}
	if _, err := c.PublishInfo(ctx, "NEW2", "", 4); !errors.Is(err, remoting.ErrTopicNotExist) {
		t.Fatalf("err = %v, want TOPIC_NOT_EXIST", err)
	}
	// Once the real route exists, a refresh replaces the template one.
	routes["NEW"] = route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6})
	c.refreshTopics([]string{"NEW"})
	pi, _ = c.PublishInfo(ctx, "NEW", "TBW102", 4)
	if pi.FromDefault || len(pi.Queues) != 2 {
		t.Fatalf("refreshed publish info %+v", pi)
	}
}

func TestAllNameServersDown(t *testing.T) {
	c := newTestClient(t, deadAddr(t), deadAddr(t))
	if _, err := c.FetchRoute(context.Background(), "T"); err == nil {
		t.Fatal("no error with every NameServer down")
	}
}

func TestHeartbeatUnregisterReply(t *testing.T) {
	var lastHB remoting.HeartbeatData
	hbc := make(chan remoting.HeartbeatData, 16)
	broker := fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Version = 413
		if req.Code == remoting.HeartBeat {
			var hb remoting.HeartbeatData
			_ = hb.DecodeJSON(req.Body)
			hbc <- hb
		}
		return resp
	})
	routes := map[string]*remoting.TopicRouteData{
		"T": route(map[string]string{"broker-a": broker.Addr()}, remoting.QueueData{BrokerName: "broker-a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}),
	}
	ns := fakepeer.New(t, namesrvHandler(routes))
	c := newTestClient(t, ns.Addr())
	if err := c.RegisterProducer("pg", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterProducer("pg", nil); !errors.Is(err, ErrGroupTaken) {
		t.Fatalf("second register: %v", err)
	}
	replies := make(chan *rocketmq.MessageExt, 1)
	c.SetReplyHandler(func(m *rocketmq.MessageExt) { replies <- m })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A new broker address triggers a heartbeat at once.
	if _, err := c.PublishInfo(context.Background(), "T", "", 4); err != nil {
		t.Fatal(err)
	}
	select {
	case lastHB = <-hbc:
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
	if lastHB.ClientID != c.ClientID() || len(lastHB.ProducerDataSet) != 2 || lastHB.ProducerDataSet[1].GroupName != "pg" {
		t.Fatalf("heartbeat %+v", lastHB)
	}
	testutil.WaitFor(t, 0, "broker version", func() bool { v, ok := c.BrokerVersion(broker.Addr()); return ok && v == 413 })

	props := message.EncodeProperties(map[string]string{rocketmq.PropertyCorrelationID: "corr-1", rocketmq.PropertyUniqKey: "U1"})
	h := remoting.ReplyMessageRequestHeader{ProducerGroup: "resp", Topic: "c_REPLY_TOPIC", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		BornTimestamp: 1, Properties: &props, BornHost: "127.0.0.1:1", StoreHost: "127.0.0.1:2", StoreTimestamp: 2}
	push := remoting.NewRequest(remoting.PushReplyMessageToClient, h.AppendExt(nil), []byte("reply body"))
	push.Opaque = 77
	if err := broker.Push(push); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-replies:
		if string(m.Body) != "reply body" || m.Property(rocketmq.PropertyCorrelationID) != "corr-1" || m.MsgID != "U1" || m.StoreHost.Port() != 2 {
			t.Fatalf("reply %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reply not delivered")
	}

	c.UnregisterProducer(context.Background(), "pg")
	if n := broker.Count(remoting.UnregisterClient); n != 1 {
		t.Fatalf("%d UNREGISTER_CLIENT, want 1", n)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
}

func TestClientIDs(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		c := newTestClient(t, "127.0.0.1:9876")
		if seen[c.ClientID()] {
			t.Fatalf("duplicate client id %s", c.ClientID())
		}
		seen[c.ClientID()] = true
	}
	if got := BuildClientID("1.2.3.4", "9#1", "u"); got != "1.2.3.4@9#1@u" {
		t.Fatal(got)
	}
	if _, err := strconv.Atoi(DefaultInstanceName()[:1]); err != nil {
		t.Fatal("instance name must start with the pid")
	}
}
