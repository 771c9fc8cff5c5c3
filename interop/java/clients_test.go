package java

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// fastLevels makes every delay level one second, so a retry (level 3 on)
// and a delayed send come back within the test.
const fastLevels = "1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s 1s"

const wait = 60 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	t.Cleanup(cancel)
	return ctx
}

// TestJavaProducer: every send kind of the Java producer reaches our
// broker, and our consumer reads what it sent: bodies (one the client
// compressed), tags, keys, user properties, msgIds, queues and offsets,
// order within queue 0, and the delay.
func TestJavaProducer(t *testing.T) {
	j := javaClients(t)
	c := rmqtest.StartCluster(t, rmqtest.WithDelayLevels(fastLevels))
	ns := c.NameServerAddr()
	ctx := ctxT(t)
	const topic = "JavaSend"
	if err := rmqtest.CreateTopic(ctx, ns, topic, 4); err != nil {
		t.Fatal(err)
	}
	lines := j.run(t, 2*wait, "JavaProducer", ns, "JavaPG", topic)
	kinds := map[string]int{}
	sent := map[string]map[string]any{} // body → send line
	for _, l := range lines {
		kinds[str(l, "kind")]++
		sent[str(l, "body")] = l
		if k := str(l, "kind"); k != "oneway" && (str(l, "status") != "SEND_OK" || len(str(l, "msgId")) < 32) {
			t.Errorf("send: %v", l)
		}
	}
	want := map[string]int{"sync": 3, "async": 2, "oneway": 1, "batch": 3, "delay": 1, "compressed": 1, "orderly": 3}
	if !maps.Equal(kinds, want) {
		t.Fatalf("sends %v, want %v", kinds, want)
	}
	tagOf := map[string]string{"sync": "TagA", "async": "TagB", "oneway": "TagB", "batch": "TagC", "delay": "TagD", "compressed": "TagE", "orderly": "TagF"}
	big := "big-0:"
	for len(big) < 8000 {
		big += "abcdefghij"
	}

	pc, err := consumer.NewPull(consumer.WithGroup("JavaSendReader"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.All); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown(context.Background()) })
	got := map[string]*rocketmq.MessageExt{}
	var order []*rocketmq.MessageExt
	testutil.WaitFor(t, wait, "our consumer to read the 14 messages", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		msgs, err := pc.Poll(pctx)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if _, dup := got[string(m.Body)]; dup {
				t.Errorf("%.20q delivered twice", m.Body)
			}
			got[string(m.Body)] = m
			order = append(order, m)
		}
		return len(got) >= len(lines)
	})
	for body, l := range sent {
		m := got[body]
		kind := str(l, "kind")
		if m == nil {
			t.Errorf("%s %.20q not read", kind, body)
			continue
		}
		if m.Tag() != tagOf[kind] || m.Topic != topic {
			t.Errorf("%s %.20q: topic %q tag %q", kind, body, m.Topic, m.Tag())
		}
		if kind == "oneway" {
			continue
		}
		if m.MsgID != str(l, "msgId") {
			t.Errorf("%s %.20q: msgId %q, the producer reported %q", kind, body, m.MsgID, str(l, "msgId"))
		}
		if kind != "delay" && (int64(m.QueueID) != num(l, "queueId") || m.QueueOffset != num(l, "queueOffset")) {
			t.Errorf("%s %.20q: queue %d offset %d, the producer reported %d %d", kind, body, m.QueueID, m.QueueOffset, num(l, "queueId"), num(l, "queueOffset"))
		}
		// A delayed message is stored again when due, under a new offset id.
		if off := str(l, "offsetMsgId"); kind != "delay" && off != "" && m.OffsetMsgID != off {
			t.Errorf("%s %.20q: offsetMsgId %q, the producer reported %q", kind, body, m.OffsetMsgID, off)
		}
	}
	for i := range 3 {
		if m := got["sync-"+strconv.Itoa(i)]; m != nil && (!slices.Equal(m.Keys(), []string{"k-sync-" + strconv.Itoa(i)}) || m.Property("idx") != strconv.Itoa(i)) {
			t.Errorf("sync-%d: keys %q idx %q", i, m.Keys(), m.Property("idx"))
		}
		if m := got["batch-"+strconv.Itoa(i)]; m != nil && !slices.Equal(m.Keys(), []string{"k-batch-" + strconv.Itoa(i)}) {
			t.Errorf("batch-%d: keys %q", i, m.Keys())
		}
	}
	if _, ok := got[big]; !ok {
		t.Errorf("the compressed body did not come back whole")
	}
	if m := got["delay-0"]; m != nil && (m.Property("REAL_TOPIC") != topic || m.StoreTimestamp < m.BornTimestamp+900) {
		t.Errorf("delay-0: REAL_TOPIC %q, stored %d ms after born", m.Property("REAL_TOPIC"), m.StoreTimestamp-m.BornTimestamp)
	}
	var orderly []int64
	for _, m := range order {
		if strings.HasPrefix(string(m.Body), "order-") {
			if m.QueueID != 0 {
				t.Errorf("%s on queue %d, the selector chose 0", m.Body, m.QueueID)
			}
			orderly = append(orderly, m.QueueOffset)
			if want := "order-" + strconv.Itoa(len(orderly)-1); string(m.Body) != want {
				t.Errorf("orderly message %d is %s, want %s", len(orderly)-1, m.Body, want)
			}
		}
	}
	if len(orderly) != 3 || !slices.IsSorted(orderly) {
		t.Errorf("orderly offsets %v", orderly)
	}
}

// sentMsg is a message our producer sent, as the Java consumers must see it.
type sentMsg struct {
	body, tag, key, msgID string
}

// TestJavaConsumers: the Java push consumer (concurrent with one retry,
// orderly on two tags, broadcasting) and lite pull consumer read what our
// producer sent through our broker, each message once (the retried one
// twice), with its tag, key, property and msgId, in queue order where
// orderly; their offsets reach the broker.
func TestJavaConsumers(t *testing.T) {
	j := javaClients(t)
	c := rmqtest.StartCluster(t, rmqtest.WithDelayLevels(fastLevels))
	ns := c.NameServerAddr()
	ctx := ctxT(t)
	const topic = "JavaRead"
	if err := rmqtest.CreateTopic(ctx, ns, topic, 4); err != nil {
		t.Fatal(err)
	}
	p := goProducer(ctx, t, ns)
	var sent []sentMsg
	var retryQueue rocketmq.MessageQueue
	send := func(body, tag string) {
		key := "key-" + body
		m, err := producer.NewMessage(topic, []byte(body), producer.Tag(tag), producer.Keys(key), producer.Property("from", "go"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Send(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, sentMsg{body, tag, key, r.MsgID})
		if tag == "TagR" {
			retryQueue = r.Queue
		}
	}
	for i := range 8 {
		send("go-"+strconv.Itoa(i), []string{"TagA", "TagB"}[i%2])
	}
	send("retry-0", "TagR")

	type run struct {
		name  string
		args  []string
		lines []map[string]any
		err   error
	}
	n := strconv.Itoa(len(sent))
	runs := []*run{
		{name: "concurrent", args: []string{"JavaPushConsumer", ns, "JavaCG", topic, "*", "concurrent", strconv.Itoa(len(sent) + 1), "90"}},
		{name: "orderly", args: []string{"JavaPushConsumer", ns, "JavaOG", topic, "TagA || TagB", "orderly", "8", "90"}},
		{name: "broadcast", args: []string{"JavaPushConsumer", ns, "JavaBG", topic, "*", "broadcast", n, "90"}},
		{name: "litepull", args: []string{"JavaLitePull", ns, "JavaLG", topic, n, "90"}},
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.lines, r.err = j.exec(t, 2*wait, r.args[0], r.args[1:]...)
		}()
	}
	wg.Wait()
	for _, r := range runs {
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
			continue
		}
		seen := map[string][]map[string]any{}
		lastOffset := map[int64]int64{}
		for _, l := range r.lines {
			seen[str(l, "body")] = append(seen[str(l, "body")], l)
			if r.name == "orderly" {
				q, off := num(l, "queueId"), num(l, "queueOffset")
				if last, ok := lastOffset[q]; ok && off <= last {
					t.Errorf("orderly: queue %d offset %d after %d", q, off, last)
				}
				lastOffset[q] = off
			}
		}
		for _, s := range sent {
			ls := seen[s.body]
			wantN := 1
			switch {
			case r.name == "orderly" && s.tag == "TagR":
				wantN = 0
			case r.name == "concurrent" && s.tag == "TagR":
				wantN = 2
			}
			if len(ls) != wantN {
				t.Errorf("%s: %s delivered %d times, want %d", r.name, s.body, len(ls), wantN)
				continue
			}
			for i, l := range ls {
				props, _ := l["properties"].(map[string]any)
				if str(l, "topic") != topic || str(l, "tags") != s.tag || str(l, "keys") != s.key || str(l, "msgId") != s.msgID || props["from"] != "go" {
					t.Errorf("%s: %s delivery %d: %v", r.name, s.body, i, l)
				}
				if num(l, "reconsumeTimes") != int64(i) {
					t.Errorf("%s: %s delivery %d: reconsumeTimes %d", r.name, s.body, i, num(l, "reconsumeTimes"))
				}
			}
		}
	}

	adm, err := admin.New(admin.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close(context.Background()) })
	for _, g := range []string{"JavaCG", "JavaOG", "JavaLG"} {
		testutil.WaitFor(t, wait, g+"'s offsets at the end of "+topic, func() bool {
			cs, err := adm.ConsumeStats(ctx, g, topic)
			if err != nil || len(cs.Queues) != 4 {
				return false
			}
			for mq, w := range cs.Queues {
				// The orderly group, which filters TagR out, may stop
				// before pulling past the last message of its queue.
				if lag := w.BrokerOffset - w.ConsumerOffset; lag != 0 && (g != "JavaOG" || mq != retryQueue || lag != 1) {
					return false
				}
			}
			return true
		})
	}
}

// TestJavaAdmin: DefaultMQAdminExt against our broker reports what our
// admin client reports for the same cluster, topic and group, and its
// create and delete calls take effect.
func TestJavaAdmin(t *testing.T) {
	j := javaClients(t)
	c := rmqtest.StartCluster(t)
	ns := c.NameServerAddr()
	ctx := ctxT(t)
	const topic, group, key = "JavaAdminT", "JavaAdminG", "adminKey"
	if err := rmqtest.CreateTopic(ctx, ns, topic, 4); err != nil {
		t.Fatal(err)
	}
	p := goProducer(ctx, t, ns)
	ids := map[string]string{} // msgId → body
	for i := range 6 {
		var opts []producer.MessageOption
		if i%2 == 0 {
			opts = append(opts, producer.Keys(key))
		}
		m, _ := producer.NewMessage(topic, []byte("admin-"+strconv.Itoa(i)), opts...)
		r, err := p.Send(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			ids[r.MsgID] = string(m.Body)
		}
	}
	adm, err := admin.New(admin.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close(context.Background()) })
	stats, err := adm.TopicStats(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	// The group commits every queue's end but queue 0's.
	pc, err := consumer.NewPull(consumer.WithGroup(group), consumer.WithNameServers(ns), consumer.WithAutoCommit(false))
	if err != nil {
		t.Fatal(err)
	}
	queues := slices.Collect(maps.Keys(stats))
	if err := pc.Assign(ctx, queues); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	commit := map[rocketmq.MessageQueue]int64{}
	for mq, o := range stats {
		commit[mq] = o.MaxOffset
		if mq.QueueID == 0 {
			commit[mq] = 0
		}
	}
	if err := pc.Commit(ctx, commit); err != nil {
		t.Fatal(err)
	}
	if err := pc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := adm.ConsumeStats(ctx, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := adm.ClusterInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	route, err := adm.TopicRoute(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}

	lines := j.run(t, 2*wait, "JavaAdmin", ns, topic, group, key)
	calls := map[string]map[string]any{}
	for _, l := range lines {
		calls[str(l, "call")] = l
	}
	list := func(call, field string) []map[string]any {
		var out []map[string]any
		v, _ := calls[call][field].([]any)
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}

	// clusterList
	var javaBrokers []string
	for _, b := range list("clusterList", "brokers") {
		addrs, _ := b["addrs"].(map[string]any)
		javaBrokers = append(javaBrokers, fmt.Sprintf("%s/%s/%v", str(b, "cluster"), str(b, "brokerName"), addrs["0"]))
	}
	var ourBrokers []string
	for cl, names := range ci.ClusterAddrTable {
		for _, bn := range names {
			ourBrokers = append(ourBrokers, fmt.Sprintf("%s/%s/%s", cl, bn, ci.BrokerAddrTable[bn].MasterAddr()))
		}
	}
	slices.Sort(javaBrokers)
	slices.Sort(ourBrokers)
	if !slices.Equal(javaBrokers, ourBrokers) {
		t.Errorf("clusterList: Java %v, ours %v", javaBrokers, ourBrokers)
	}

	// topicRoute
	var javaQD, ourQD []string
	for _, q := range list("topicRoute", "queueDatas") {
		javaQD = append(javaQD, fmt.Sprintf("%s r%d w%d p%d", str(q, "brokerName"), num(q, "readQueueNums"), num(q, "writeQueueNums"), num(q, "perm")))
	}
	for _, q := range route.QueueDatas {
		ourQD = append(ourQD, fmt.Sprintf("%s r%d w%d p%d", q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm))
	}
	if slices.Sort(javaQD); !slices.Equal(javaQD, ourQD) || num(calls["topicRoute"], "brokers") != int64(len(route.BrokerDatas)) {
		t.Errorf("topicRoute: Java %v, ours %v", calls["topicRoute"], ourQD)
	}

	// topicStatus
	javaTS := map[rocketmq.MessageQueue][2]int64{}
	for _, q := range list("topicStatus", "queues") {
		javaTS[rocketmq.MessageQueue{Topic: topic, BrokerName: str(q, "brokerName"), QueueID: int(num(q, "queueId"))}] = [2]int64{num(q, "minOffset"), num(q, "maxOffset")}
	}
	ourTS := map[rocketmq.MessageQueue][2]int64{}
	for mq, o := range stats {
		ourTS[mq] = [2]int64{o.MinOffset, o.MaxOffset}
	}
	if !maps.Equal(javaTS, ourTS) {
		t.Errorf("topicStatus: Java %v, ours %v", javaTS, ourTS)
	}

	// consumerProgress
	javaCS := map[rocketmq.MessageQueue][2]int64{}
	for _, q := range list("consumerProgress", "queues") {
		javaCS[rocketmq.MessageQueue{Topic: str(q, "topic"), BrokerName: str(q, "brokerName"), QueueID: int(num(q, "queueId"))}] = [2]int64{num(q, "brokerOffset"), num(q, "consumerOffset")}
	}
	ourCS := map[rocketmq.MessageQueue][2]int64{}
	for mq, w := range cs.Queues {
		ourCS[mq] = [2]int64{w.BrokerOffset, w.ConsumerOffset}
	}
	if !maps.Equal(javaCS, ourCS) || num(calls["consumerProgress"], "diffTotal") != cs.Lag() || cs.Lag() == 0 {
		t.Errorf("consumerProgress: Java %v (diff %d), ours %v (diff %d)", javaCS, num(calls["consumerProgress"], "diffTotal"), ourCS, cs.Lag())
	}

	// getBrokerConfig
	bc := calls["getBrokerConfig"]
	ours, err := adm.GetBrokerConfig(ctx, str(bc, "addr"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"brokerName", "brokerClusterName", "brokerId", "autoCreateTopicEnable"} {
		if str(bc, k) != ours[k] || ours[k] == "" {
			t.Errorf("getBrokerConfig %s: Java %q, ours %q", k, str(bc, k), ours[k])
		}
	}
	if num(bc, "count") != int64(len(ours)) {
		t.Errorf("getBrokerConfig: Java has %d entries, ours %d", num(bc, "count"), len(ours))
	}

	// queryMsgByKey and queryMsgById
	found := map[string]string{}
	for _, m := range list("queryMsgByKey", "messages") {
		found[str(m, "msgId")] = str(m, "body")
	}
	if !maps.Equal(found, ids) {
		t.Errorf("queryMsgByKey: Java %v, sent %v", found, ids)
	}
	if m, _ := calls["queryMsgById"]["message"].(map[string]any); m == nil || ids[str(m, "msgId")] != str(m, "body") || str(m, "topic") != topic {
		t.Errorf("queryMsgById: %v", calls["queryMsgById"])
	}

	// updateTopic, deleteTopic, updateSubGroup, deleteSubGroup
	if u := calls["updateTopic"]; u["routed"] != true || num(u, "writeQueueNums") != 3 || num(u, "queueDatas") != int64(len(ci.BrokerAddrTable)) {
		t.Errorf("updateTopic: %v", u)
	}
	if d := calls["deleteTopic"]; d == nil || d["listed"] != false {
		t.Errorf("deleteTopic: %v", d)
	}
	topics, err := adm.Topics(ctx)
	if err != nil || slices.Contains(topics, topic+"_NEW") {
		t.Errorf("our topic list after Java's deleteTopic: %v %v", topics, err)
	}
	if g := calls["updateSubGroup"]; str(g, "groupName") != group+"_NEW" || num(g, "retryMaxTimes") != 5 || g["consumeBroadcastEnable"] != false || num(g, "retryQueueNums") != 1 {
		t.Errorf("updateSubGroup: %v", g)
	}
	if d := calls["deleteSubGroup"]; d == nil || d["gone"] != true {
		t.Errorf("deleteSubGroup: %v", d)
	}
}

// goProducer starts a producer of group GoPG on ns, shut down with the test.
func goProducer(ctx context.Context, t *testing.T, ns string) *producer.Producer {
	t.Helper()
	p, err := producer.New(producer.WithGroup("GoPG"), producer.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}
