package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestTopicLifecycle: a topic created in the cluster is listed, routed with
// the queues and permission asked for, shows its messages in its stats, and
// is gone from the list and the NameServer's routes once deleted.
func TestTopicLifecycle(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := name(t, "AE2E")
	if err := e.adm.CreateTopicInCluster(ctx, e.cluster, admin.TopicConfig{Name: topic, ReadQueues: 4, WriteQueues: 4}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "the topic listed", func() bool {
		ts, err := e.adm.Topics(ctx)
		return err == nil && slices.Contains(ts, topic)
	})
	r, err := e.adm.TopicRoute(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var qd *remoting.QueueData
	for i := range r.QueueDatas {
		if r.QueueDatas[i].BrokerName == e.broker {
			qd = &r.QueueDatas[i]
		}
	}
	if qd == nil || qd.ReadQueueNums != 4 || qd.WriteQueueNums != 4 || qd.Perm != rocketmq.PermRead|rocketmq.PermWrite {
		t.Fatalf("route of %s: %+v", topic, r.QueueDatas)
	}

	e.send(t, topic, 10)
	stats, err := e.adm.TopicStats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, mq := range admin.SortedQueues(stats) {
		o := stats[mq]
		if mq.Topic != topic || o.MinOffset != 0 || o.MaxOffset < 0 {
			t.Fatalf("stats %v: %+v", mq, o)
		}
		if o.MaxOffset > 0 && o.LastUpdateTimestamp == 0 {
			t.Fatalf("stats %v: no last update time: %+v", mq, o)
		}
		if mq.BrokerName == e.broker {
			total += o.MaxOffset
		}
	}
	if n := len(stats); n%4 != 0 || n == 0 || total == 0 {
		t.Fatalf("stats of %d queues, %d messages on %s", n, total, e.broker)
	}

	if err := e.adm.DeleteTopic(ctx, e.cluster, topic); err != nil {
		t.Fatal(err)
	}
	if _, err := e.adm.TopicRoute(ctx, topic); !errors.Is(err, rocketmq.ErrNoRoute) || !errors.Is(err, remoting.ErrTopicNotExist) {
		t.Fatalf("route after delete: %v", err)
	}
	ts, err := e.adm.Topics(ctx)
	if err != nil || slices.Contains(ts, topic) {
		t.Fatalf("topics after delete: %v %v", err, ts)
	}
}

// TestTopicErrors: bad names and unknown topics fail with errors matching
// the module's sentinels, before or from the servers.
func TestTopicErrors(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	tests := []struct {
		name string
		call func() error
		is   error
	}{
		{"create bad name", func() error {
			return e.adm.CreateTopic(ctx, e.brokerAddr, admin.TopicConfig{Name: "bad topic!"})
		}, rocketmq.ErrIllegalName},
		{"create blank", func() error {
			return e.adm.CreateTopicInCluster(ctx, e.cluster, admin.TopicConfig{Name: " "})
		}, rocketmq.ErrBlankName},
		{"create system topic", func() error {
			return e.adm.CreateTopic(ctx, e.brokerAddr, admin.TopicConfig{Name: rocketmq.TopicAutoCreate})
		}, rocketmq.ErrIllegalName},
		{"unknown cluster", func() error {
			return e.adm.CreateTopicInCluster(ctx, "NoSuchCluster", admin.TopicConfig{Name: name(t, "AE2E")})
		}, admin.ErrNoBroker},
		{"route of unknown", func() error {
			_, err := e.adm.TopicRoute(ctx, name(t, "Missing"))
			return err
		}, remoting.ErrTopicNotExist},
		{"stats of unknown", func() error {
			_, err := e.adm.TopicStats(ctx, name(t, "Missing"))
			return err
		}, rocketmq.ErrNoRoute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
		})
	}
}

// TestClusterInfo: the cluster lists the broker, whose runtime info counts
// the messages put.
func TestClusterInfo(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	ci, err := e.adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bd, ok := ci.BrokerAddrTable[e.broker]; !ok || bd.MasterAddr() != e.brokerAddr || bd.Cluster != e.cluster {
		t.Fatalf("cluster info: %+v", ci)
	}
	topic := e.newTopic(t, 2)
	e.send(t, topic, 3)
	info, err := e.adm.BrokerRuntimeInfo(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if info["brokerVersionDesc"] == "" || info["msgPutTotalTodayNow"] == "" || info["msgPutTotalTodayNow"] == "0" {
		t.Fatalf("runtime info: %v", info)
	}
}

// TestOrderedTopic: an ordered topic created in the cluster leaves its
// order conf, every broker of the cluster with its write queues, in the
// NameServer's KV config, as mqadmin updateTopic -o does.
func TestOrderedTopic(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := name(t, "AE2E")
	if err := e.adm.CreateTopicInCluster(ctx, e.cluster, admin.TopicConfig{Name: topic, ReadQueues: 3, WriteQueues: 3, Order: true}); err != nil {
		t.Fatal(err)
	}
	ci, err := e.adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(slices.Values(ci.ClusterAddrTable[e.cluster]))
	var want []string
	for _, n := range names {
		want = append(want, n+":3")
	}
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	h := remoting.GetKVConfigRequestHeader{Namespace: admin.OrderTopicConfigNamespace, Key: topic}
	resp, err := cli.Invoke(ctx, e.ns, remoting.NewRequest(remoting.GetKVConfig, h.AppendExt(nil), nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		t.Fatal(err)
	}
	var kv remoting.GetKVConfigResponseHeader
	if err := kv.FromExt(resp.Ext); err != nil || kv.Value == nil || *kv.Value != strings.Join(want, ";") {
		t.Fatalf("order conf %v, want %q (%v)", kv.Value, strings.Join(want, ";"), err)
	}
	r, err := e.adm.TopicRoute(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.QueueDatas) != len(names) {
		t.Fatalf("route %+v", r.QueueDatas)
	}
}

// TestProducerConnection: a running producer is listed under its group on
// the topic's broker; an unknown group is refused typed.
func TestProducerConnection(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 2)
	pg := name(t, "pg")
	p, err := producer.New(producer.WithGroup(pg), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	m, err := producer.NewMessage(topic, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	var conns []remoting.Connection
	testutil.WaitFor(t, wait, "the producer listed", func() bool {
		conns, err = e.adm.ProducerConnection(ctx, pg, topic)
		return err == nil && len(conns) == 1
	})
	if conns[0].ClientID == "" || conns[0].Language != "GO" || conns[0].ClientAddr == "" {
		t.Fatalf("producer connection %+v", conns[0])
	}
	if _, err := e.adm.ProducerConnection(ctx, name(t, "nopg"), topic); !errors.Is(err, remoting.ErrSystemError) {
		t.Fatalf("unknown producer group: %v", err)
	}
}
