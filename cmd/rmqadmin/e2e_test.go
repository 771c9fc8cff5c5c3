package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func TestClusterAndBroker(t *testing.T) {
	e := start(t)
	r := e.ok(t, "clusterList")
	has(t, r, "#Cluster", "Name", "#Broker", "Name", "#BID", "#Addr", "#Version", "#InTPS", "#OutTPS")
	has(t, r, e.cluster, e.broker, "0", e.brokerAddr)

	var cl struct {
		Brokers []struct {
			Cluster, Broker, Addr, Version, Error string
			ID                                    int64
		}
	}
	e.ok(t, "-o", "json", "clusterList").decode(t, &cl)
	i := slices.IndexFunc(cl.Brokers, func(b struct {
		Cluster, Broker, Addr, Version, Error string
		ID                                    int64
	}) bool {
		return b.Broker == e.broker && b.ID == 0
	})
	if i < 0 || cl.Brokers[i].Cluster != e.cluster || cl.Brokers[i].Addr != e.brokerAddr || cl.Brokers[i].Version == "" || cl.Brokers[i].Error != "" {
		t.Errorf("clusterList -o json: no master %s of %s at %s with a version: %+v", e.broker, e.cluster, e.brokerAddr, cl.Brokers)
	}

	r = e.ok(t, "brokerStatus", "-b", e.brokerAddr)
	if !strings.Contains(r.stdout, "brokerVersionDesc:") || !strings.Contains(r.stdout, "bootTimestamp:") {
		t.Errorf("brokerStatus -b: no brokerVersionDesc or bootTimestamp:\n%v", r)
	}
	var bs struct{ Brokers map[string]map[string]string }
	e.ok(t, "brokerStatus", "-c", e.cluster, "--output", "json").decode(t, &bs)
	if kv := bs.Brokers[e.brokerAddr]; kv["brokerVersionDesc"] == "" || kv["bootTimestamp"] == "" {
		t.Errorf("brokerStatus -c -o json: no runtime info of %s: %v", e.brokerAddr, bs.Brokers)
	}
	fails(t, e.run(t, "brokerStatus", "-c", "NoSuchCluster"), 1, "NoSuchCluster")
	fails(t, e.run(t, "brokerStatus"), 2, "-b", "-c")
}

// waitRoute waits until the NameServer serves topic with queues write
// queues on the first broker.
func (e *env) waitRoute(t *testing.T, topic string, queues int32) {
	t.Helper()
	testutil.WaitFor(t, wait, "the route of "+topic, func() bool {
		r, err := e.adm.TopicRoute(ctxT(t), topic)
		return err == nil && slices.ContainsFunc(r.QueueDatas, func(q remoting.QueueData) bool {
			return q.BrokerName == e.broker && q.WriteQueueNums == queues
		})
	})
}

func TestTopics(t *testing.T) {
	e := start(t)
	topic := name(t, "CLI")
	r := e.ok(t, "updateTopic", "-b", e.brokerAddr, "-t", topic, "-r", "2", "-w", "2", "-p", "6")
	has(t, r, "create", "topic", "to", e.brokerAddr, "success.")
	has(t, r, "Read", "Queues:", "2")
	e.waitRoute(t, topic, 2)

	// Update through the cluster, as JSON.
	var ut struct {
		Topic, Cluster          string
		ReadQueues, WriteQueues int32
		Perm                    int32
		Order                   bool
	}
	e.ok(t, "updateTopic", "-c", e.cluster, "-t", topic, "-r", "3", "-w", "3", "-output", "json").decode(t, &ut)
	if ut.Topic != topic || ut.Cluster != e.cluster || ut.ReadQueues != 3 || ut.WriteQueues != 3 || ut.Perm != 6 || ut.Order {
		t.Errorf("updateTopic -o json: %+v", ut)
	}
	e.waitRoute(t, topic, 3)

	has(t, e.ok(t, "topicList"), topic)
	var tl struct{ Topics []string }
	e.ok(t, "topicList", "--output", "json").decode(t, &tl)
	if !slices.Contains(tl.Topics, topic) || !slices.IsSorted(tl.Topics) {
		t.Errorf("topicList -o json lacks %s or is not sorted: %v", topic, tl.Topics)
	}

	r = e.ok(t, "topicRoute", "-t", topic)
	has(t, r, e.broker, e.cluster, "0", e.brokerAddr)
	has(t, r, e.broker, "3", "3", "6")
	var tr struct {
		Topic   string
		Brokers []struct {
			Broker, Cluster, Addr string
			ID                    int64
		}
		Queues []struct {
			Broker                  string
			ReadQueues, WriteQueues int32
			Perm                    int32
		}
	}
	e.ok(t, "topicRoute", "-t", topic, "--output", "json").decode(t, &tr)
	// Every master of the cluster has the topic now; the first broker
	// sorts first.
	if tr.Topic != topic || len(tr.Brokers) == 0 || len(tr.Queues) == 0 ||
		tr.Queues[0].Broker != e.broker || tr.Queues[0].ReadQueues != 3 || tr.Queues[0].WriteQueues != 3 || tr.Queues[0].Perm != 6 {
		t.Errorf("topicRoute -o json: %+v", tr)
	}
	if b := tr.Brokers[0]; b.Broker != e.broker || b.Cluster != e.cluster || b.Addr != e.brokerAddr || b.ID != 0 {
		t.Errorf("topicRoute -o json broker: %+v", b)
	}

	// Three messages in three queues.
	var sr struct {
		Topic   string
		Results []struct {
			Broker, Status, MsgID, OffsetMsgID string
			QueueID                            int
			QueueOffset                        int64
		}
	}
	e.ok(t, "send", "-t", topic, "-p", "hello", "-count", "3", "--output", "json").decode(t, &sr)
	if sr.Topic != topic || len(sr.Results) != 3 {
		t.Fatalf("send -o json: %+v", sr)
	}
	for _, res := range sr.Results {
		if res.Status != "SEND_OK" || res.Broker == "" || len(res.MsgID) != 32 || len(res.OffsetMsgID) != 32 {
			t.Errorf("send -o json result: %+v", res)
		}
	}

	var ts struct {
		Topic  string
		Queues []struct {
			Broker                            string
			QueueID                           int
			MinOffset, MaxOffset, LastUpdated int64
		}
	}
	// A Java broker dispatches to its queues after the send returns.
	var total int64
	testutil.WaitFor(t, wait, "topicStatus to count the 3 messages", func() bool {
		e.ok(t, "topicStatus", "-t", topic, "--output", "json").decode(t, &ts)
		total = 0
		for _, q := range ts.Queues {
			total += q.MaxOffset - q.MinOffset
		}
		return total >= 3
	})
	r = e.ok(t, "topicStatus", "-t", topic)
	has(t, r, "#Broker", "Name", "#QID", "#Min", "Offset", "#Max", "Offset", "#Last", "Updated")
	own := 0
	for _, q := range ts.Queues {
		if q.Broker == e.broker {
			own++
			if q.MaxOffset > 0 {
				has(t, r, e.broker, strconv.Itoa(q.QueueID), strconv.FormatInt(q.MinOffset, 10), strconv.FormatInt(q.MaxOffset, 10))
				if q.LastUpdated <= 0 {
					t.Errorf("topicStatus: queue %d has messages but no last update", q.QueueID)
				}
			}
		}
	}
	if ts.Topic != topic || own != 3 || total != 3 {
		t.Errorf("topicStatus -o json: want 3 queues on %s and 3 messages: %+v", e.broker, ts)
	}

	// A topic in a namespace is listed with its prefix without -namespace
	// and without it with.
	nsTopic := name(t, "NS")
	e.ok(t, "-namespace", "cli", "updateTopic", "-b", e.brokerAddr, "-t", nsTopic, "-r", "1", "-w", "1")
	e.waitRoute(t, "cli%"+nsTopic, 1)
	has(t, e.ok(t, "topicList"), "cli%"+nsTopic)
	has(t, e.ok(t, "topicList", "-namespace", "cli"), nsTopic)
	var dt struct {
		Topic, Cluster string
		Deleted        bool
	}
	e.ok(t, "-namespace", "cli", "deleteTopic", "-t", nsTopic, "-c", e.cluster, "--output", "json").decode(t, &dt)
	if dt.Topic != nsTopic || dt.Cluster != e.cluster || !dt.Deleted {
		t.Errorf("deleteTopic -o json: %+v", dt)
	}
	testutil.WaitFor(t, wait, "the namespaced topic's route to go", func() bool {
		_, err := e.adm.TopicRoute(ctxT(t), "cli%"+nsTopic)
		return err != nil
	})

	// deleteTopic, then the route is gone.
	r = e.ok(t, "deleteTopic", "-t", topic, "-c", e.cluster)
	has(t, r, "delete", "topic", "["+topic+"]", "from", "cluster", "["+e.cluster+"]", "success.")
	testutil.WaitFor(t, wait, "the route to go", func() bool {
		return e.run(t, "topicRoute", "-t", topic).code == 1
	})
	fails(t, e.run(t, "topicStatus", "-t", topic), 1, topic)
	fails(t, e.run(t, "topicRoute", "-t", "NoSuchTopic_CLI"), 1, "NoSuchTopic_CLI")

	fails(t, e.run(t, "updateTopic", "-t", topic), 2, "-b", "-c")
	fails(t, e.run(t, "updateTopic", "-c", e.cluster), 2, "-t")
	fails(t, e.run(t, "updateTopic", "-c", e.cluster, "-t", topic, "-p", "5"), 2, "-p 5")
	fails(t, e.run(t, "updateTopic", "-c", e.cluster, "-t", "bad topic"), 1, "bad topic")
	fails(t, e.run(t, "deleteTopic", "-t", topic), 2, "-c")
}

func TestGroups(t *testing.T) {
	e := start(t)
	group := name(t, "CLIG")
	r := e.ok(t, "updateSubGroup", "-c", e.cluster, "-g", group, "-r", "5", "-d", "false")
	has(t, r, "create", "subscription", "group", "to", e.cluster, "success.")
	has(t, r, "Retry", "Max", "Times:", "5")
	groups, err := e.adm.Groups(ctxT(t), e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if gc, ok := groups[group]; !ok || gc.RetryMaxTimes != 5 || gc.ConsumeBroadcastEnable || !gc.ConsumeEnable {
		t.Fatalf("after updateSubGroup the broker has %+v (found %v)", gc, ok)
	}
	var ug struct {
		Group, BrokerAddr string
		RetryMaxTimes     int32
		RetryQueueNums    int32
		ConsumeEnable     bool
	}
	e.ok(t, "updateSubGroup", "-b", e.brokerAddr, "-g", group, "-s", "false", "-q", "2", "--output", "json").decode(t, &ug)
	if ug.Group != group || ug.BrokerAddr != e.brokerAddr || ug.ConsumeEnable || ug.RetryQueueNums != 2 || ug.RetryMaxTimes != 16 {
		t.Errorf("updateSubGroup -o json: %+v", ug)
	}
	groups, err = e.adm.Groups(ctxT(t), e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	// mqadmin's defaults: -m and -d off.
	if gc := groups[group]; gc.ConsumeEnable || gc.RetryQueueNums != 2 || gc.ConsumeFromMinEnable || gc.ConsumeBroadcastEnable {
		t.Errorf("after updateSubGroup -s false -q 2 the broker has %+v", gc)
	}

	r = e.ok(t, "deleteSubGroup", "-c", e.cluster, "-g", group)
	has(t, r, "delete", "subscription", "group", "["+group+"]", "from", e.cluster, "success.")
	groups, err = e.adm.Groups(ctxT(t), e.brokerAddr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := groups[group]; ok {
		t.Errorf("deleteSubGroup left %s on the broker", group)
	}
	fails(t, e.run(t, "deleteSubGroup", "-c", e.cluster, "-g", group), 1, group, "SUBSCRIPTION_GROUP_NOT_EXIST")
	fails(t, e.run(t, "deleteSubGroup", "-b", e.brokerAddr, "-g", group, "--output", "json"), 1, group, "SUBSCRIPTION_GROUP_NOT_EXIST")
	other := name(t, "CLIG2")
	e.ok(t, "updateSubGroup", "-b", e.brokerAddr, "-g", other)
	var dg struct {
		Group, BrokerAddr     string
		RemoveOffset, Deleted bool
	}
	e.ok(t, "deleteSubGroup", "-b", e.brokerAddr, "-g", other, "-r", "true", "--output", "json").decode(t, &dg)
	if dg.Group != other || dg.BrokerAddr != e.brokerAddr || !dg.RemoveOffset || !dg.Deleted {
		t.Errorf("deleteSubGroup -o json: %+v", dg)
	}
	if groups, err = e.adm.Groups(ctxT(t), e.brokerAddr); err != nil {
		t.Fatal(err)
	} else if _, ok := groups[other]; ok {
		t.Errorf("deleteSubGroup -b left %s on the broker", other)
	}
	fails(t, e.run(t, "updateSubGroup", "-c", e.cluster, "-g", group, "-s", "maybe"), 2, "-s")
	fails(t, e.run(t, "updateSubGroup", "-g", group), 2, "-b", "-c")
}

// TestMessages sends, consumes, tracks and rewinds: send, consume,
// consumerProgress, resetOffsetByTime, queryMsgByKey, queryMsgById,
// consumerConnection and producerConnection.
func TestMessages(t *testing.T) {
	e := start(t)
	topic := name(t, "CLIM")
	e.ok(t, "updateTopic", "-b", e.brokerAddr, "-t", topic, "-r", "2", "-w", "2")
	e.waitRoute(t, topic, 2)
	key := name(t, "key")

	r := e.ok(t, "send", "-t", topic, "-p", "first body", "-k", key+" other", "-c", "TagA", "-count", "2")
	has(t, r, "#Broker", "Name", "#QID", "#Queue", "Offset", "#Send", "Result", "#MsgId", "#Offset", "MsgId")
	var sent []string // offset ids
	for _, line := range strings.Split(r.stdout, "\n")[1:] {
		if f := strings.Fields(line); len(f) == 6 {
			if f[0] != e.broker || f[3] != "SEND_OK" {
				t.Errorf("send: bad line %q", line)
			}
			sent = append(sent, f[5])
		}
	}
	if len(sent) != 2 {
		t.Fatalf("send: want 2 results:\n%v", r)
	}
	e.ok(t, "send", "-t", topic, "-p", "second body", "-c", "TagB", "-count", "2")

	// consume pulls the four messages as group cg and commits them.
	cg := name(t, "CLICG")
	var cm struct {
		Topic, Group string
		Messages     []struct {
			MsgID, OffsetMsgID, Topic, Tags, Body, Broker string
			Keys                                          []string
			QueueID                                       int32
			QueueOffset                                   int64
		}
	}
	e.ok(t, "consume", "-t", topic, "-g", cg, "-c", "4", "--output", "json").decode(t, &cm)
	if cm.Topic != topic || cm.Group != cg || len(cm.Messages) != 4 {
		t.Fatalf("consume -o json: %+v", cm)
	}
	bodies := map[string]int{}
	for _, m := range cm.Messages {
		bodies[m.Tags+":"+m.Body]++
		if m.Topic != topic || m.Broker != e.broker || len(m.MsgID) != 32 {
			t.Errorf("consume: bad message %+v", m)
		}
		if m.Tags == "TagA" && !slices.Equal(m.Keys, []string{key, "other"}) {
			t.Errorf("consume: keys %q, want %q", m.Keys, []string{key, "other"})
		}
	}
	if bodies["TagA:first body"] != 2 || bodies["TagB:second body"] != 2 {
		t.Errorf("consume: got %v", bodies)
	}

	type queueProgress struct {
		Topic, Broker                string
		QueueID                      int
		BrokerOffset, ConsumerOffset int64
		Diff                         int64
	}
	var cp struct {
		Group     string
		DiffTotal int64
		Queues    []queueProgress
	}
	progress := func() {
		t.Helper()
		cp.Queues = nil
		e.ok(t, "consumerProgress", "-g", cg, "-t", topic, "--output", "json").decode(t, &cp)
	}
	progress()
	if cp.Group != cg || cp.DiffTotal != 0 || len(cp.Queues) != 2 {
		t.Errorf("consumerProgress after consuming everything: %+v", cp)
	}
	for _, q := range cp.Queues {
		if q.Topic != topic || q.ConsumerOffset != q.BrokerOffset || q.Diff != 0 {
			t.Errorf("consumerProgress queue: %+v", q)
		}
	}
	r = e.ok(t, "consumerProgress", "-g", cg)
	has(t, r, "#Topic", "#Broker", "Name", "#QID", "#Broker", "Offset", "#Consumer", "Offset", "#Diff", "#LastTime")
	has(t, r, "Diff", "Total:", "0")
	for _, q := range cp.Queues {
		off := strconv.FormatInt(q.BrokerOffset, 10)
		has(t, r, topic, e.broker, strconv.Itoa(q.QueueID), off, off, "0")
	}

	// Back to the start: everything is to consume again.
	r = e.ok(t, "resetOffsetByTime", "-g", cg, "-t", topic, "-s", "0")
	has(t, r, "#Broker", "Name", "#QID", "#Offset")
	has(t, r, e.broker, "0", "0")
	has(t, r, e.broker, "1", "0")
	progress()
	if cp.DiffTotal != 4 {
		t.Errorf("consumerProgress after resetOffsetByTime -s 0: diff %d, want 4: %+v", cp.DiffTotal, cp)
	}
	// Forward to now.
	var ro struct {
		Group, Topic string
		Force        bool
		Timestamp    int64
		Queues       []struct {
			Broker  string
			QueueID int
			Offset  int64
		}
	}
	e.ok(t, "resetOffsetByTime", "-g", cg, "-t", topic, "-s", time.Now().Add(time.Minute).Format("2006-01-02#15:04:05")+":000", "--output", "json").decode(t, &ro)
	if ro.Group != cg || ro.Topic != topic || !ro.Force || len(ro.Queues) != 2 || ro.Timestamp <= time.Now().UnixMilli() {
		t.Errorf("resetOffsetByTime -o json: %+v", ro)
	}
	// For a time after the last message a 4.9.8 store finds the last
	// message (ours does too), 5.x the max offset: each queue is one
	// message short of its end, or at it.
	progress()
	short := int64(0)
	if cp.DiffTotal != 0 {
		short = 1
	}
	for _, q := range cp.Queues {
		if q.ConsumerOffset != q.BrokerOffset-short {
			t.Errorf("consumerProgress after resetOffsetByTime to the future: queue %d at %d of %d, want %d (diff total %d)",
				q.QueueID, q.ConsumerOffset, q.BrokerOffset, q.BrokerOffset-short, cp.DiffTotal)
		}
	}
	if short == 1 {
		// Consume the last message of each queue again.
		cm.Messages = nil
		e.ok(t, "consume", "-t", topic, "-g", cg, "-c", strconv.Itoa(len(cp.Queues)), "--output", "json").decode(t, &cm)
		if len(cm.Messages) != len(cp.Queues) {
			t.Fatalf("consume after resetOffsetByTime to the future: %+v", cm)
		}
		for _, m := range cm.Messages {
			if !slices.ContainsFunc(cp.Queues, func(q queueProgress) bool {
				return int32(q.QueueID) == m.QueueID && q.BrokerOffset-1 == m.QueueOffset
			}) {
				t.Errorf("consume after resetOffsetByTime to the future: not the last message of its queue: %+v", m)
			}
		}
		progress()
		if cp.DiffTotal != 0 {
			t.Errorf("consumerProgress after consuming the last messages: %+v", cp)
		}
	}

	// queryMsgByKey finds the two messages with the key (a broker indexes
	// them in the background).
	testutil.WaitFor(t, wait, "queryMsgByKey to find both messages", func() bool {
		r = e.ok(t, "queryMsgByKey", "-t", topic, "-k", key)
		return strings.Contains(r.stdout, sent[0]) && strings.Contains(r.stdout, sent[1])
	})
	has(t, r, "#Message", "ID", "#Offset", "Message", "ID", "#Broker", "Name", "#QID", "#Offset", "#Store", "Time")
	var qk struct {
		Topic, Key string
		Messages   []struct {
			OffsetMsgID, Body string
			Keys              []string
		}
	}
	e.ok(t, "queryMsgByKey", "-t", topic, "-k", key, "-b", "0", "-e", strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10), "--output", "json").decode(t, &qk)
	if qk.Topic != topic || qk.Key != key || len(qk.Messages) != 2 {
		t.Fatalf("queryMsgByKey -o json: %+v", qk)
	}
	for _, m := range qk.Messages {
		if m.Body != "first body" || !slices.Contains(sent, m.OffsetMsgID) || !slices.Contains(m.Keys, key) {
			t.Errorf("queryMsgByKey -o json message: %+v", m)
		}
	}
	var none struct{ Messages []any }
	e.ok(t, "queryMsgByKey", "-t", topic, "-k", "no-such-key", "--output", "json").decode(t, &none)
	if none.Messages == nil || len(none.Messages) != 0 {
		t.Errorf("queryMsgByKey of a missing key: want an empty list, got %v", none.Messages)
	}

	// A live push consumer and a live producer.
	pg := name(t, "CLIPG")
	p, err := producer.New(producer.WithGroup(pg), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	live := name(t, "CLILIVE")
	c, err := consumer.NewPush(consumer.WithGroup(live), consumer.WithNameServers(e.ns),
		consumer.WithOffsetPersistInterval(100*time.Millisecond), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	err = c.Subscribe(topic, consumer.Tags("TagA || TagB"), func(context.Context, []*rocketmq.MessageExt) (consumer.Result, error) {
		return consumer.Success, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "the live group to consume everything", func() bool {
		r := e.run(t, "consumerProgress", "-g", live, "-t", topic, "--output", "json")
		cp.Queues = nil
		if r.code != 0 {
			return false
		}
		r.decode(t, &cp)
		return len(cp.Queues) == 2 && cp.DiffTotal == 0
	})

	r = e.ok(t, "consumerConnection", "-g", live)
	has(t, r, "#ClientId", "#ClientAddr", "#Language", "#Version")
	has(t, r, topic, "TagA", "||", "TagB")
	has(t, r, "ConsumeType:", "CONSUME_PASSIVELY")
	has(t, r, "MessageModel:", "CLUSTERING")
	var cc struct {
		Group       string
		Connections []struct {
			ClientID, ClientAddr, Language string
		}
		Subscriptions []struct{ Topic, SubExpression string }
		ConsumeType   string
		MessageModel  string
	}
	e.ok(t, "consumerConnection", "-g", live, "--output", "json").decode(t, &cc)
	if cc.Group != live || len(cc.Connections) != 1 || cc.Connections[0].Language != "GO" || cc.ConsumeType != "CONSUME_PASSIVELY" ||
		!slices.ContainsFunc(cc.Subscriptions, func(s struct{ Topic, SubExpression string }) bool {
			return s.Topic == topic && s.SubExpression == "TagA || TagB"
		}) {
		t.Errorf("consumerConnection -o json: %+v", cc)
	}
	has(t, r, cc.Connections[0].ClientID, cc.Connections[0].ClientAddr, "GO")
	fails(t, e.run(t, "consumerConnection", "-g", cg), 1, cg, "CONSUMER_NOT_ONLINE")

	// consumerProgress -s true names the member holding each queue.
	r = e.ok(t, "consumerProgress", "-g", live, "-t", topic, "-s", "true")
	has(t, r, "#Topic", "#Broker", "Name", "#QID", "#Broker", "Offset", "#Consumer", "Offset", "#Client", "#Diff", "#LastTime")
	if n := strings.Count(r.stdout, cc.Connections[0].ClientID); n != 2 {
		t.Errorf("consumerProgress -s true: member %s named %d times, want 2:\n%v", cc.Connections[0].ClientID, n, r)
	}

	// queryMsgById: the message, and where each group stands.
	var qi struct {
		Message struct {
			MsgID, OffsetMsgID, Topic, Tags, Body, Broker string
		}
		Tracks []struct{ Group, TrackType, Error string }
	}
	testutil.WaitFor(t, wait, "the live group's track", func() bool {
		qi.Tracks = nil
		e.ok(t, "queryMsgById", "-i", sent[0], "--output", "json").decode(t, &qi)
		return slices.ContainsFunc(qi.Tracks, func(tr struct{ Group, TrackType, Error string }) bool {
			return tr.Group == live && tr.TrackType == "CONSUMED"
		})
	})
	if m := qi.Message; m.OffsetMsgID != sent[0] || m.Topic != topic || m.Tags != "TagA" || m.Body != "first body" || m.Broker != e.broker {
		t.Errorf("queryMsgById -o json: %+v", m)
	}
	if !slices.ContainsFunc(qi.Tracks, func(tr struct{ Group, TrackType, Error string }) bool {
		return tr.Group == cg && tr.TrackType == "NOT_ONLINE" && tr.Error != ""
	}) {
		t.Errorf("queryMsgById: no NOT_ONLINE track of the offline group %s: %+v", cg, qi.Tracks)
	}
	r = e.ok(t, "queryMsgById", "-t", topic, "-i", qi.Message.MsgID)
	has(t, r, "OffsetID:", sent[0])
	has(t, r, "Message", "Body:", "first", "body")
	has(t, r, "Tags:", "[TagA]")
	has(t, r, live, "CONSUMED")
	fails(t, e.run(t, "queryMsgById", "-i", "not-an-id"), 1, "not-an-id")

	// producerConnection sees the live producer.
	m, err := producer.NewMessage(topic, []byte("from the live producer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctxT(t), m); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "producerConnection to show the producer", func() bool {
		r = e.run(t, "producerConnection", "-g", pg, "-t", topic)
		return r.code == 0 && strings.Contains(r.stdout, p.ClientID())
	})
	has(t, r, "#ClientId", "#ClientAddr", "#Language", "#Version")
	has(t, r, p.ClientID())
	var pc struct {
		Group       string
		Connections []struct{ ClientID, Language string }
	}
	e.ok(t, "producerConnection", "-g", pg, "-t", topic, "--output", "json").decode(t, &pc)
	if pc.Group != pg || len(pc.Connections) != 1 || pc.Connections[0].ClientID != p.ClientID() || pc.Connections[0].Language != "GO" {
		t.Errorf("producerConnection -o json: %+v", pc)
	}
	fails(t, e.run(t, "producerConnection", "-g", name(t, "NOPG"), "-t", topic), 1)

	// consume as a table: the one new message, then nothing.
	r = e.ok(t, "consume", "-t", topic, "-g", cg, "-c", "1", "-d", "20s")
	has(t, r, "#MsgId", "#Broker", "Name", "#QID", "#Offset", "#Tags", "#Keys", "#Body")
	if !strings.Contains(r.stdout, "from the live producer") || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("consume -c 1: want the one new message:\n%v", r)
	}
	r = e.run(t, "consume", "-t", topic, "-g", cg, "-c", "1", "-d", "500ms")
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 1 messages") {
		t.Errorf("consume -c 1 with nothing to consume: want exit 1 and a count:\n%v", r)
	}
}

// TestErrors checks the exit statuses and messages of command lines that
// cannot run, and that credentials are never printed.
func TestErrors(t *testing.T) {
	e := start(t)
	fails(t, exe(t, nil, "topicList"), 2, "no NameServer address", "-n", envNameServer)
	has(t, exe(t, []string{envNameServer + "=" + e.ns}, "clusterList"), e.cluster, e.broker)
	fails(t, exe(t, nil, "-n", e.ns, "noSuchCommand"), 2, "unknown command", "noSuchCommand")
	fails(t, exe(t, nil, "-n", e.ns, "topicList", "-x"), 2, "-x")
	fails(t, exe(t, nil, "-n", e.ns, "topicList", "extra"), 2, "extra")
	fails(t, exe(t, nil, "-n", e.ns, "-o", "yaml", "topicList"), 2, "yaml")
	fails(t, exe(t, nil, "-n", e.ns, "topicStatus"), 2, "-t is required")
	fails(t, exe(t, nil, "-n", e.ns, "console", "-listen", "0.0.0.0:0"), 2, "-listen 0.0.0.0:0: not a loopback address; add -allow-remote")
	fails(t, exe(t, nil, "-n", e.ns, "resetOffsetByTime", "-g", "g", "-t", "t", "-s", "yesterday"), 2, "yesterday")
	fails(t, exe(t, nil, "-n", "127.0.0.1:1", "-timeout", "2s", "topicList"), 1)

	// Help goes to stdout with status 0.
	for _, args := range [][]string{{"help"}, {"-h"}, {"help", "updateTopic"}, {"updateTopic", "-h"}} {
		r := exe(t, nil, args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "updateTopic") {
			t.Errorf("want usage on stdout:\n%v", r)
		}
	}
	r := exe(t, nil, "help", "updateTopic")
	for _, f := range []string{"-b", "-c", "-t", "-r", "-w", "-p", "-o"} {
		if !strings.Contains(r.stdout, "  "+f+" ") {
			t.Errorf("help updateTopic lacks %s:\n%v", f, r)
		}
	}
	r = exe(t, nil)
	if r.code != 2 || !strings.Contains(r.stderr, "Commands:") {
		t.Errorf("no command: want usage on stderr and status 2:\n%v", r)
	}

	// Credentials: an access key without a secret is a usage error, and
	// no output ever shows a secret.
	const sk = "SecretValue-1234"
	fails(t, exe(t, []string{envAccessKey + "=ak"}, "-n", e.ns, "topicList"), 2, "secret key")
	outs := []result{
		exe(t, nil, "-n", e.ns, "-ak", "ak", "-sk", sk, "-token", sk, "help"),
		exe(t, nil, "-n", e.ns, "-ak", "ak", "-sk", sk, "-token", sk, "topicList", "-h"),
		exe(t, nil, "-n", e.ns, "-ak", "ak", "-sk", sk, "topicStatus", "-t", "NoSuchTopic_CLI"),
		exe(t, []string{envAccessKey + "=ak", envSecretKey + "=" + sk}, "-n", "127.0.0.1:1", "-timeout", "1s", "topicList"),
	}
	dir := t.TempDir()
	bad := dir + "/bad.acl"
	if err := writeFile(bad, "accessKey=ak\n"+sk+"\n"); err != nil {
		t.Fatal(err)
	}
	r = exe(t, nil, "-n", e.ns, "-acl-file", bad, "topicList")
	fails(t, r, 1, "line 2")
	outs = append(outs, r)
	unknown := dir + "/unknown.acl"
	if err := writeFile(unknown, sk+"=x\n"); err != nil {
		t.Fatal(err)
	}
	r = exe(t, nil, "-n", e.ns, "-acl-file", unknown, "topicList")
	fails(t, r, 1, "line 1", "unknown key")
	outs = append(outs, r)
	for _, r := range outs {
		if strings.Contains(r.stdout+r.stderr, sk) {
			t.Errorf("the secret is printed:\n%v", r)
		}
	}

	// TLS against a plain-TCP cluster fails cleanly.
	if e.local != nil {
		fails(t, exe(t, nil, "-n", e.ns, "-tls", "-tls-insecure", "-timeout", "3s", "topicList"), 1)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// TestBadInput runs odd command lines in-process (so that a panic fails
// the test with its stack): each must fail with one line on stderr and no
// output.
func TestBadInput(t *testing.T) {
	e := start(t)
	topic := name(t, "CLIB")
	e.ok(t, "updateTopic", "-b", e.brokerAddr, "-t", topic, "-r", "1", "-w", "1")
	e.waitRoute(t, topic, 1)
	noEnv := func(string) string { return "" }
	long := strings.Repeat("x", 300)
	beyond := rocketmq.EncodeOffsetMsgID(netip.MustParseAddrPort(e.brokerAddr), 1<<40)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "-t", topic, "-p", "x", "-b", "noSuchBroker", "-i", "0"}, "noSuchBroker"},
		{[]string{"send", "-t", topic, "-p", "x", "-b", e.broker, "-i", "99999"}, "99999"},
		{[]string{"send", "-t", long, "-p", "x"}, "topic"},
		{[]string{"queryMsgById", "-i", "0000000000000000000000000000000"}, "0000000000000000000000000000000"},
		{[]string{"queryMsgById", "-i", "ZZ000000000000000000000000000000"}, "ZZ000000000000000000000000000000"},
		// A well-formed offset id of a host that is no broker: refused
		// without dialing it.
		{[]string{"queryMsgById", "-i", "0A0B0C0D00002A9F0000000000000000"}, "no broker of the cluster"},
		{[]string{"queryMsgById", "-i", beyond}, beyond},
		{[]string{"queryMsgById", "-t", topic, "-i", "C0000202101C3D6D890D0660A18D0000"}, "QUERY_NOT_FOUND"},
		{[]string{"queryMsgByKey", "-t", "NoSuchTopic_CLI", "-k", "k"}, "NoSuchTopic_CLI"},
		{[]string{"topicStatus", "-t", long}, "topic"},
		{[]string{"updateTopic", "-c", e.cluster, "-t", "SCHEDULE_TOPIC_XXXX"}, "SCHEDULE_TOPIC_XXXX"},
		{[]string{"updateTopic", "-c", "NoSuchCluster", "-t", topic}, "NoSuchCluster"},
		{[]string{"updateSubGroup", "-c", e.cluster, "-g", long}, "group"},
		{[]string{"deleteSubGroup", "-b", e.brokerAddr, "-g", "bad group"}, "bad group"},
		{[]string{"resetOffsetByTime", "-g", "G", "-t", "NoSuchTopic_CLI", "-s", "now"}, "NoSuchTopic_CLI"},
		{[]string{"producerConnection", "-g", "NoSuchGroup_CLI", "-t", "NoSuchTopic_CLI"}, "NoSuchTopic_CLI"},
		{[]string{"consumerProgress", "-g", "NoSuchGroup_CLI"}, "NoSuchGroup_CLI has no consume progress"},
		{[]string{"brokerStatus", "-b", "127.0.0.1:1"}, "127.0.0.1:1"},
		{[]string{"brokerStatus", "-b", "not an address"}, "not an address"},
		{[]string{"consume", "-t", "NoSuchTopic_CLI", "-d", "200ms", "-c", "1"}, "NoSuchTopic_CLI"},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"-n", e.ns, "-timeout", "10s"}, tc.args...)
		code := run(context.Background(), args, &stdout, &stderr, noEnv)
		if code != exitError || stdout.String() != "" || !strings.HasPrefix(stderr.String(), "rmqadmin: ") ||
			strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run %q = %d, want 1 and one line with %q\nstdout: %s\nstderr: %s", tc.args, code, tc.want, stdout.String(), stderr.String())
		}
	}
}

// TestACL checks that the credentials from flags, the environment and the
// ACL file sign requests: the NameServer and the broker are made to reject
// requests that do not verify, as an ACL-enabled server does.
func TestACL(t *testing.T) {
	e := start(t)
	if e.local == nil {
		t.Skipf("needs the in-process cluster (%s is set): its servers are made to check signatures", envExternal)
	}
	const ak, sk = "rmqadminAK", "rmqadmin-Secret-5678"
	reject := rmqtest.Fault{Respond: true, Code: remoting.SystemError, Remark: "ACL check failed", Match: func(req *remoting.Command) bool {
		return remoting.VerifyACL(req, func(k string) (string, bool) { return sk, k == ak }) != nil
	}}
	e.local.InterceptNameServer(remoting.GetAllTopicListFromNameServer, reject)
	e.local.InterceptNameServer(remoting.GetBrokerClusterInfo, reject)
	if err := e.local.Intercept(e.broker, remoting.GetBrokerRuntimeInfo, reject); err != nil {
		t.Fatal(err)
	}
	fails(t, e.run(t, "topicList"), 1, "ACL check failed")
	fails(t, e.run(t, "-ak", ak, "-sk", "wrong", "topicList"), 1, "ACL check failed")

	file := t.TempDir() + "/acl"
	if err := os.WriteFile(file, []byte("accessKey="+ak+"\nsecretKey="+sk+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range []result{
		e.run(t, "-ak", ak, "-sk", sk, "topicList"),
		exe(t, []string{envAccessKey + "=" + ak, envSecretKey + "=" + sk}, "-n", e.ns, "topicList"),
		e.run(t, "-acl-file", file, "topicList"),
	} {
		if r.code != 0 || !strings.Contains(r.stdout, e.broker) {
			t.Errorf("signed topicList: want success listing %s:\n%v", e.broker, r)
		}
		if strings.Contains(r.stdout+r.stderr, sk) {
			t.Errorf("the secret is printed:\n%v", r)
		}
	}
	r := e.run(t, "-acl-file", file, "brokerStatus", "-b", e.brokerAddr)
	if r.code != 0 || !strings.Contains(r.stdout, "brokerVersionDesc:") {
		t.Errorf("signed brokerStatus: want success:\n%v", r)
	}
	fails(t, e.run(t, "brokerStatus", "-b", e.brokerAddr), 1, "ACL check failed")
}

// TestOutputAndBodies: the output format before and after the command,
// TPS as JSON numbers, updateTopic's own -o, bodies from a file and from
// standard input, and a broker given as the NameServer.
func TestOutputAndBodies(t *testing.T) {
	e := start(t)
	for _, args := range [][]string{{"-o", "json", "clusterList"}, {"--output", "json", "clusterList"}, {"clusterList", "--output", "json"}, {"clusterList", "-output=json"}} {
		var cl struct {
			Brokers []map[string]any
		}
		e.ok(t, args...).decode(t, &cl)
		i := slices.IndexFunc(cl.Brokers, func(b map[string]any) bool { return b["addr"] == e.brokerAddr })
		if i < 0 {
			t.Fatalf("%q: no broker %s: %v", args, e.brokerAddr, cl.Brokers)
		}
		for _, k := range []string{"inTPS", "outTPS"} {
			if _, ok := cl.Brokers[i][k].(float64); !ok {
				t.Errorf("%q: %s is %T %v, want a number", args, k, cl.Brokers[i][k], cl.Brokers[i][k])
			}
		}
	}

	// In updateTopic, -o is the order flag, as in mqadmin.
	topic := name(t, "CLIOrder")
	var ut struct {
		Topic string
		Order bool
	}
	e.ok(t, "updateTopic", "-c", e.cluster, "-t", topic, "-r", "1", "-w", "1", "-o", "true", "--output", "json").decode(t, &ut)
	if ut.Topic != topic || !ut.Order {
		t.Errorf("updateTopic -o true --output json: %+v", ut)
	}
	e.waitRoute(t, topic, 1)
	fails(t, e.run(t, "updateTopic", "-c", e.cluster, "-t", topic, "-o", "table"), 2, "-o is the order flag here", "--output table")
	fails(t, e.run(t, "topicRoute", "-t", topic, "-o", "table"), 2, "-o table after the command", "--output table")

	// A failure under JSON output is one JSON object on stderr.
	r := e.run(t, "--output", "json", "topicRoute", "-t", "NoSuchTopic_CLIJSON")
	var je struct {
		Error      string
		ExitStatus int
	}
	if err := json.Unmarshal([]byte(r.stderr), &je); err != nil || r.code != 1 || r.stdout != "" || je.ExitStatus != 1 ||
		!strings.HasPrefix(je.Error, "rmqadmin: ") || !strings.Contains(je.Error, `topic "NoSuchTopic_CLIJSON" does not exist`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("JSON error (%v):\n%v", err, r)
	}

	// Bodies from a file and from standard input, 1 MiB of any bytes.
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>8)
	}
	path := filepath.Join(t.TempDir(), "body.bin")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	e.ok(t, "send", "-t", topic, "-f", path, "-k", "from-file")
	r = exeIn(t, bytes.NewReader(body[:1000]), nil, "-n", e.ns, "send", "-t", topic, "-f", "-", "-k", "from-stdin")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("send -f -:\n%v", r)
	}
	got := map[string][]byte{}
	pc := newPull(t, e, topic)
	testutil.WaitFor(t, wait, "both messages", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		msgs, _ := pc.Poll(ctx)
		for _, m := range msgs {
			got[strings.Join(m.Keys(), " ")] = m.Body
		}
		return len(got) == 2
	})
	if !bytes.Equal(got["from-file"], body) || !bytes.Equal(got["from-stdin"], body[:1000]) {
		t.Errorf("bodies: from the file %d bytes (equal %v), from stdin %d bytes (equal %v)",
			len(got["from-file"]), bytes.Equal(got["from-file"], body), len(got["from-stdin"]), bytes.Equal(got["from-stdin"], body[:1000]))
	}
	r = exeIn(t, strings.NewReader(""), nil, "-n", e.ns, "send", "-t", topic, "-f", "-")
	fails(t, r, 1, "standard input is empty")

	// A broker's address given as the NameServer.
	for _, cmd := range [][]string{{"clusterList"}, {"topicList"}, {"topicRoute", "-t", topic}, {"send", "-t", topic, "-p", "x"}} {
		fails(t, exe(t, nil, append([]string{"-n", e.brokerAddr, "-timeout", "10s"}, cmd...)...), 1,
			e.brokerAddr+" is not a NameServer (it looks like a broker")
	}
}

// newPull is a started pull consumer of a new group on topic.
func newPull(t *testing.T, e *env, topic string) *consumer.PullConsumer {
	t.Helper()
	pc, err := consumer.NewPull(consumer.WithGroup(name(t, "CLIPull")), consumer.WithNameServers(e.ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.Tags("*")); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pc.Shutdown(ctx)
	})
	return pc
}
