package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// adminCall sends one request to the topic's broker as the Java admin tool
// does and returns the successful response.
func (e *env) adminCall(t *testing.T, code int32, h remoting.CustomHeader) *remoting.Command {
	t.Helper()
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, e.brokerAddr, remoting.NewRequest(code, h.AppendExt(nil), nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		t.Fatalf("request %d to %s: %v", code, e.broker, err)
	}
	return resp
}

// consumerIDs lists the client ids of group's live members
// (GET_CONSUMER_LIST_BY_GROUP).
func (e *env) consumerIDs(t *testing.T, group string) []string {
	t.Helper()
	resp := e.adminCall(t, remoting.GetConsumerListByGroup, &remoting.GetConsumerListByGroupRequestHeader{ConsumerGroup: group})
	var body remoting.ConsumerListByGroupBody
	if err := body.DecodeJSON(resp.Body); err != nil {
		t.Fatal(err)
	}
	return body.ConsumerIDList
}

// runningInfo asks the broker for the running info of group's only member
// (GET_CONSUMER_RUNNING_INFO, which the broker passes to the consumer).
func (e *env) runningInfo(t *testing.T, group string) *remoting.ConsumerRunningInfo {
	t.Helper()
	ids := e.consumerIDs(t, group)
	if len(ids) != 1 {
		t.Fatalf("group %s has members %v, want one", group, ids)
	}
	resp := e.adminCall(t, remoting.GetConsumerRunningInfo, &remoting.GetConsumerRunningInfoRequestHeader{ConsumerGroup: group, ClientID: ids[0]})
	var info remoting.ConsumerRunningInfo
	if err := info.DecodeJSON(resp.Body); err != nil {
		t.Fatal(err)
	}
	return &info
}

// TestRunningInfo: the admin tool's consumerStatus reaches the consumer
// through the broker and shows its settings, subscriptions, the queues it
// holds with their offsets and the topic's consume statistics.
func TestRunningInfo(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	c := e.startConsumer(t, g, topic, consumer.Tags("A || B"), rec.handler("c", nil), consumer.WithConsumeFrom(consumer.FromFirst))
	testutil.WaitFor(t, wait, "the topic's queues assigned", func() bool { return len(assigned(c, topic)) == 4 })
	ids := send(t, e.newProducer(t), topic, 8, producerTag("A")...)
	rec.waitAll(t, ids, 1)
	e.waitConsumed(t, g, topic, 8)

	info := e.runningInfo(t, g)
	for key, want := range map[string]string{
		remoting.PropConsumeType:        "CONSUME_PASSIVELY",
		"messageModel":                  "CLUSTERING",
		"consumeFromWhere":              "CONSUME_FROM_FIRST_OFFSET",
		"consumerGroup":                 g,
		"pullThresholdSizeForQueue":     "100",
		"consumeConcurrentlyMaxSpan":    "2000",
		remoting.PropConsumeOrderly:     "false",
		remoting.PropNamesrvAddr:        e.ns,
		remoting.PropThreadPoolCoreSize: "20",
	} {
		if got := info.Properties[key]; got != want {
			t.Errorf("property %s = %q, want %q", key, got, want)
		}
	}
	subs := map[string]string{}
	for _, s := range info.SubscriptionSet {
		subs[s.Topic] = s.SubString
	}
	if subs[topic] != "A || B" || subs[retryTopic(g)] != "*" {
		t.Errorf("subscriptions %v", subs)
	}
	var held []int
	var committed int64
	for mq, pq := range info.MQTable {
		if mq.Topic == topic {
			held = append(held, mq.QueueID)
			committed += pq.CommitOffset
		}
	}
	slices.Sort(held)
	if !slices.Equal(held, []int{0, 1, 2, 3}) || committed != 8 {
		t.Errorf("process queues of %s: %v, commit offsets adding up to %d, want 0..3 and 8", topic, held, committed)
	}
	if st, ok := info.StatusTable[topic]; !ok || st.ConsumeOKTPS <= 0 && st.PullTPS <= 0 {
		t.Errorf("status of %s: %+v (present %v)", topic, st, ok)
	}
}

// TestResetOffset: the admin tool's resetOffsetByTime for a running group
// (INVOKE_BROKER_TO_RESET_OFFSET) moves the live consumer back: what it
// had consumed since that time comes again.
func TestResetOffset(t *testing.T) {
	e := start(t)
	topic := e.newTopic(t, 4)
	g := group(t, "")
	rec := newRecorder()
	e.startConsumer(t, g, topic, consumer.All, rec.handler("c", nil), consumer.WithConsumeFrom(consumer.FromFirst))
	since := time.Now().Add(-time.Second)
	ids := send(t, e.newProducer(t), topic, 20)
	rec.waitAll(t, ids, 1)
	e.waitConsumed(t, g, topic, 20)

	resp := e.adminCall(t, remoting.InvokeBrokerToResetOffset, &remoting.ResetOffsetRequestHeader{Topic: topic, Group: g,
		Timestamp: since.UnixMilli(), IsForce: true})
	var body remoting.ResetOffsetBody
	if err := body.DecodeJSON(resp.Body); err != nil {
		t.Fatal(err)
	}
	for mq, off := range body.OffsetTable {
		if off != 0 {
			t.Errorf("reset %v to %d, want 0", mq, off)
		}
	}
	if len(body.OffsetTable) != 4 {
		t.Errorf("reset table %v, want the 4 queues", body.OffsetTable)
	}
	rec.waitAll(t, ids, 2)
	e.waitConsumed(t, g, topic, 20)
	for _, id := range ids {
		if ds := rec.deliveries(id); len(ds) != 2 || ds[1].msg.ReconsumeTimes != 0 {
			t.Errorf("message %s: %d deliveries %v after the reset, want 2", id, len(ds), reconsumeTimes(ds))
		}
	}
}
