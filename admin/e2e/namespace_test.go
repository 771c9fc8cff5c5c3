package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
)

// TestNamespace: with a namespace, topics and groups are created under
// "ns%name" on the servers and shown without the prefix; names outside the
// namespace are not listed.
func TestNamespace(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	ns := "adminns"
	a, err := admin.New(admin.WithNameServers(e.ns), admin.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close(context.Background()) }()

	topic, g := name(t, "NsT"), name(t, "nsg")
	if err := a.CreateTopicInCluster(ctx, e.cluster, admin.TopicConfig{Name: topic, ReadQueues: 2, WriteQueues: 2}); err != nil {
		t.Fatal(err)
	}
	other := e.newTopic(t, 1)
	testutil.WaitFor(t, wait, "both topics listed", func() bool {
		all, err := e.adm.Topics(ctx)
		return err == nil && slices.Contains(all, ns+"%"+topic) && slices.Contains(all, other)
	})
	mine, err := a.Topics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(mine, topic) || slices.Contains(mine, other) || slices.Contains(mine, ns+"%"+topic) {
		t.Fatalf("topics in the namespace: %v", mine)
	}
	if _, err := e.adm.TopicRoute(ctx, ns+"%"+topic); err != nil {
		t.Fatalf("route of the wire name: %v", err)
	}

	if err := a.CreateGroup(ctx, e.brokerAddr, admin.NewGroupConfig(g)); err != nil {
		t.Fatal(err)
	}
	groups, err := a.Groups(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if gc, ok := groups[g]; !ok || gc.GroupName != g {
		t.Fatalf("groups in the namespace: %v", groups)
	}
	all, err := e.adm.Groups(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := all[ns+"%"+g]; !ok {
		t.Fatalf("group %s not on the broker under its wire name", g)
	}
	for name := range all {
		if _, ok := groups[name]; ok && !strings.HasPrefix(name, ns+"%") {
			t.Fatalf("group %s outside the namespace listed in it", name)
		}
	}
	if err := a.DeleteGroup(ctx, e.brokerAddr, g, true); err != nil {
		t.Fatal(err)
	}

	p, err := producer.New(producer.WithGroup("pg_admin_ns"), producer.WithNameServers(e.ns), producer.WithNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	m, err := producer.NewMessage(topic, []byte("in ns"), producer.Keys("nskey"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Send(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*rocketmq.MessageExt
	testutil.WaitFor(t, wait, "the message found by key", func() bool {
		msgs, err = a.QueryMessage(ctx, topic, "nskey", 0, time.Time{}, time.Time{})
		return err == nil && len(msgs) == 1
	})
	if msgs[0].Topic != topic || msgs[0].MsgID != res.MsgID {
		t.Fatalf("found %+v", msgs[0])
	}
	stats, err := a.TopicStats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for mq := range stats {
		if mq.Topic != topic {
			t.Fatalf("stats queue %v", mq)
		}
	}
}
