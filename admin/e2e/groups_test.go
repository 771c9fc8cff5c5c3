package e2e

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestGroupLifecycle: a group created in the cluster is on the broker with
// the settings given; deleted, it is gone, and deleting it again fails
// typed. In a cluster of several masters it fails typed only once no
// master has it.
func TestGroupLifecycle(t *testing.T) {
	for _, brokers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d brokers", brokers), func(t *testing.T) {
			e := start(t, rmqtest.WithBrokers(brokers))
			if e.local == nil && brokers > 1 {
				t.Skipf("the external cluster (%s is set) is checked once, by the first case", envExternal)
			}
			groupLifecycle(t, e)
		})
	}
}

func groupLifecycle(t *testing.T, e *env) {
	ctx := ctxT(t)
	g := name(t, "cg")
	gc := admin.NewGroupConfig(g)
	gc.RetryMaxTimes = 3
	gc.ConsumeBroadcastEnable = false
	if err := e.adm.CreateGroupInCluster(ctx, e.cluster, gc); err != nil {
		t.Fatal(err)
	}
	groups, err := e.adm.Groups(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := groups[g]
	if !ok || got.GroupName != g || got.RetryMaxTimes != 3 || got.ConsumeBroadcastEnable || !got.ConsumeEnable || got.RetryQueueNums != 1 {
		t.Fatalf("group on the broker: %+v (found %v)", got, ok)
	}
	if err := e.adm.DeleteGroup(ctx, e.brokerAddr, g, true); err != nil {
		t.Fatal(err)
	}
	groups, err = e.adm.Groups(ctx, e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := groups[g]; ok {
		t.Fatalf("group %s still on the broker", g)
	}
	if err := e.adm.DeleteGroup(ctx, e.brokerAddr, g, false); !errors.Is(err, remoting.ErrSubscriptionGroupNotExist) {
		t.Fatalf("second delete: %v", err)
	}
	// The other masters of the cluster still have it: deleting in the
	// cluster removes it there, and only then is it missing everywhere.
	masters, err := rmqtest.MasterBrokers(ctx, e.ns)
	if err != nil {
		t.Fatal(err)
	}
	for bn, addr := range masters {
		groups, err := e.adm.Groups(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := groups[g]; ok != (bn != e.broker) {
			t.Fatalf("group %s on %s after deleting it on %s: %v", g, bn, e.broker, ok)
		}
	}
	err = e.adm.DeleteGroupInCluster(ctx, e.cluster, g, false)
	if len(masters) > 1 && err != nil {
		t.Fatalf("delete in cluster of a group the other masters have: %v", err)
	}
	if len(masters) == 1 && !errors.Is(err, remoting.ErrSubscriptionGroupNotExist) {
		t.Fatalf("delete in cluster of a missing group: %v", err)
	}
	for bn, addr := range masters {
		groups, err := e.adm.Groups(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := groups[g]; ok {
			t.Fatalf("group %s still on %s after deleting it in the cluster", g, bn)
		}
	}
	if err := e.adm.DeleteGroupInCluster(ctx, e.cluster, g, false); !errors.Is(err, remoting.ErrSubscriptionGroupNotExist) {
		t.Fatalf("delete in cluster of a missing group: %v", err)
	}
	if err := e.adm.CreateGroup(ctx, e.brokerAddr, admin.NewGroupConfig("bad group")); !errors.Is(err, rocketmq.ErrIllegalName) {
		t.Fatalf("create with a bad name: %v", err)
	}
}

// TestConsumerProgress: with a live consumer the admin calls show its
// connection and subscription, its progress and lag, and its running info;
// a reset to before the first message makes it consume everything again.
func TestConsumerProgress(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 4)
	g := name(t, "cg")
	before := time.Now().Add(-time.Second)
	e.send(t, topic, 10)
	var count atomic.Int64
	e.startConsumer(t, g, topic, &count)
	testutil.WaitFor(t, wait, "10 consumed and committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, g, topic)
		return err == nil && count.Load() >= 10 && len(cs.Queues) == 4 && cs.Lag() == 0
	})
	cs, err := e.adm.ConsumeStats(ctx, g, "")
	if err != nil {
		t.Fatal(err)
	}
	var broker, committed int64
	for mq, w := range cs.Queues {
		if mq.Topic != topic {
			continue
		}
		broker += w.BrokerOffset
		committed += w.ConsumerOffset
	}
	if broker != 10 || committed != 10 {
		t.Fatalf("consume stats: broker %d committed %d: %+v", broker, committed, cs.Queues)
	}

	cc, err := e.adm.ConsumerConnection(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID == "" || cc.ConnectionSet[0].Language != "GO" {
		t.Fatalf("connections: %+v", cc.ConnectionSet)
	}
	if sd, ok := cc.SubscriptionTable[topic]; !ok || sd.SubString != "*" || cc.MessageModel != "CLUSTERING" {
		t.Fatalf("subscriptions: %+v, model %s", cc.SubscriptionTable, cc.MessageModel)
	}
	if groups, err := e.adm.TopicConsumers(ctx, topic); err != nil || !slices.Contains(groups, g) {
		t.Fatalf("consumers of the topic: %v %v", groups, err)
	}
	info, err := e.adm.ConsumerRunningInfo(ctx, g, cc.ConnectionSet[0].ClientID)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.SubscriptionSet) == 0 || info.Properties[remoting.PropConsumeType] != "CONSUME_PASSIVELY" {
		t.Fatalf("running info: %+v", info)
	}

	status, err := e.adm.ConsumerStatus(ctx, g, topic, "")
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for _, off := range status[cc.ConnectionSet[0].ClientID] {
		held += off
	}
	if len(status) != 1 || len(status[cc.ConnectionSet[0].ClientID]) != 4 || held != 10 {
		t.Fatalf("consumer status: %v", status)
	}

	table, err := e.adm.ResetOffsetByTime(ctx, g, topic, before, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 4 {
		t.Fatalf("reset table: %v", table)
	}
	for mq, off := range table {
		if mq.Topic != topic || off != 0 {
			t.Fatalf("reset table: %v", table)
		}
	}
	testutil.WaitFor(t, wait, "the 10 messages consumed again", func() bool { return count.Load() >= 20 })
}

// TestResetOffline: with no member online the offsets are searched and
// committed from the admin client; without force a later point leaves the
// committed offsets alone.
func TestResetOffline(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 2)
	g := name(t, "cg")
	e.send(t, topic, 6)
	var count atomic.Int64
	c := e.startConsumer(t, g, topic, &count)
	testutil.WaitFor(t, wait, "6 consumed and committed", func() bool {
		cs, err := e.adm.ConsumeStats(ctx, g, topic)
		return err == nil && len(cs.Queues) == 2 && cs.Lag() == 0 && count.Load() >= 6
	})
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "the member gone", func() bool {
		_, err := e.adm.ConsumerConnection(ctx, g)
		return errors.Is(err, remoting.ErrConsumerNotOnline)
	})

	// The group has offsets but no member: its track of a message says so.
	msgs, err := e.adm.QueryMessage(ctx, topic, "key-0", 0, time.Time{}, time.Time{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("query: %d messages, %v", len(msgs), err)
	}
	tracks, err := e.adm.MessageTrack(ctx, msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 1 || tracks[0].Group != g || tracks[0].Type != admin.TrackNotOnline || !errors.Is(tracks[0].Err, remoting.ErrConsumerNotOnline) {
		t.Fatalf("track %+v", tracks)
	}

	// Not forced, the end of the queues is after the committed offsets.
	table, err := e.adm.ResetOffsetByTime(ctx, g, topic, time.Time{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, off := range table {
		sum += off
	}
	if len(table) != 2 || sum != 6 {
		t.Fatalf("unforced reset: %v", table)
	}
	table, err = e.adm.ResetOffsetByTime(ctx, g, topic, time.Now().Add(-time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	for mq, off := range table {
		if off != 0 {
			t.Fatalf("forced reset: %v: %d", mq, off)
		}
	}
	cs, err := e.adm.ConsumeStats(ctx, g, topic)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Lag() != 6 {
		t.Fatalf("lag after reset %d: %+v", cs.Lag(), cs.Queues)
	}
}

// TestGroupErrors: what the brokers refuse comes back matching the
// response code, and bad names are refused before anything is sent.
func TestGroupErrors(t *testing.T) {
	e := start(t)
	ctx := ctxT(t)
	topic := e.newTopic(t, 2)
	g := name(t, "cg")
	tests := []struct {
		name string
		call func() error
		is   error
		or   error // the other version's answer, where 4.9.8 and 5.x differ
	}{
		{"connections of a group never started", func() error {
			_, err := e.adm.ConsumerConnection(ctx, g)
			return err
		}, remoting.ErrConsumerNotOnline, nil},
		// 4.9.8 asks the group's members and answers SYSTEM_ERROR "the
		// consumer group not exist" for a group without offsets; 5.x
		// resets on the broker (useServerSideResetOffset) and refuses a
		// group it has no config of with SUBSCRIPTION_GROUP_NOT_EXIST.
		{"reset a group without offsets", func() error {
			_, err := e.adm.ResetOffsetByTime(ctx, g, topic, time.Now(), true)
			return err
		}, remoting.ErrSystemError, remoting.ErrSubscriptionGroupNotExist},
		{"reset on a topic without route", func() error {
			_, err := e.adm.ResetOffsetByTime(ctx, g, name(t, "Missing"), time.Now(), true)
			return err
		}, remoting.ErrTopicNotExist, nil},
		{"stats with a bad group name", func() error {
			_, err := e.adm.ConsumeStats(ctx, "bad group", topic)
			return err
		}, rocketmq.ErrIllegalName, nil},
		{"delete a blank group", func() error {
			return e.adm.DeleteGroupInCluster(ctx, e.cluster, "", false)
		}, rocketmq.ErrBlankName, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.is) && (tc.or == nil || !errors.Is(err, tc.or)) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
		})
	}
}
