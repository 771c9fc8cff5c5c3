package mqclient

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// testMember is a consumer and a producer that records what it is asked.
// Each call also reads the client's registry (HeartbeatData): with a lock
// of the client held that would deadlock.
type testMember struct {
	c     *Client
	group string

	mu    sync.Mutex
	calls []string
	msgs  []*rocketmq.MessageExt
	reset map[rocketmq.MessageQueue]int64
}

func (m *testMember) record(call string, msg *rocketmq.MessageExt) {
	_ = m.c.HeartbeatData()
	m.mu.Lock()
	m.calls = append(m.calls, call)
	if msg != nil {
		m.msgs = append(m.msgs, msg)
	}
	m.mu.Unlock()
}

func (m *testMember) called(call string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.calls {
		if c == call {
			return true
		}
	}
	return false
}

func (m *testMember) ConsumerData() remoting.ConsumerData {
	return remoting.ConsumerData{GroupName: m.group}
}
func (m *testMember) SubscribeQueuesChanged(string, []rocketmq.MessageQueue) {}
func (m *testMember) RebalanceSoon()                                         { m.record("rebalance", nil) }
func (m *testMember) RunningInfo() *remoting.ConsumerRunningInfo {
	m.record("running", nil)
	return &remoting.ConsumerRunningInfo{Properties: map[string]string{"PROP_CONSUME_TYPE": "CONSUME_PASSIVELY"}}
}
func (m *testMember) ConsumeDirectly(_ context.Context, msg *rocketmq.MessageExt, broker string) *remoting.ConsumeMessageDirectlyResult {
	m.record("direct "+broker, msg)
	return &remoting.ConsumeMessageDirectlyResult{AutoCommit: true, ConsumeResult: remoting.ConsumeResultSuccess, SpentTimeMills: 3}
}
func (m *testMember) ResetOffset(topic string, offsets map[rocketmq.MessageQueue]int64) {
	m.record("reset "+topic, nil)
	m.mu.Lock()
	m.reset = offsets
	m.mu.Unlock()
}
func (m *testMember) Offsets(topic string) map[rocketmq.MessageQueue]int64 {
	m.record("offsets "+topic, nil)
	return map[rocketmq.MessageQueue]int64{{Topic: topic, BrokerName: "b", QueueID: 1}: 42}
}
func (m *testMember) CheckTransactionState(_ context.Context, addr string, msg *rocketmq.MessageExt, h *remoting.CheckTransactionStateRequestHeader) {
	m.record("check", msg)
}

func record(t *testing.T, topic string, props map[string]string) []byte {
	t.Helper()
	m := &rocketmq.MessageExt{Message: rocketmq.Message{Topic: topic, Body: []byte("body"), Properties: props}}
	b, err := message.AppendMessageExt(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMemberDispatch pushes each server-initiated code from a peer and
// checks which member gets it and what the client answers.
func TestMemberDispatch(t *testing.T) {
	peer := fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
		return remoting.NewResponse(remoting.Success, "")
	})
	c := newTestClient(t, peer.Addr())
	c.cfg.Namespace = "ns"
	cons := &testMember{c: c, group: "cg"}
	other := &testMember{c: c, group: "other"}
	prod := &testMember{c: c, group: "pg"}
	for _, err := range []error{c.RegisterConsumer("cg", cons), c.RegisterConsumer("other", other), c.RegisterProducer("pg", prod), c.RegisterAdmin("cg")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Connect, so that the peer can push to us.
	if _, err := c.Invoke(context.Background(), peer.Addr(), remoting.NewRequest(remoting.HeartBeat, nil, nil), 0); err != nil {
		t.Fatal(err)
	}
	group := func(g string) remoting.ExtFields {
		h := remoting.ConsumerGroupRequestHeader{ConsumerGroup: g}
		return h.AppendExt(nil)
	}
	directHdr := func(g string) remoting.ExtFields {
		h := remoting.ConsumeMessageDirectlyResultRequestHeader{ConsumerGroup: g, BrokerName: remoting.Ptr("broker-a")}
		return h.AppendExt(nil)
	}
	runningHdr := func(g string) remoting.ExtFields {
		h := remoting.GetConsumerRunningInfoRequestHeader{ConsumerGroup: g, ClientID: c.ClientID()}
		return h.AppendExt(nil)
	}
	statusHdr := func(g string) remoting.ExtFields {
		h := remoting.GetConsumerStatusRequestHeader{Topic: "T", Group: g}
		return h.AppendExt(nil)
	}
	resetHdr := func(g string) remoting.ExtFields {
		h := remoting.ResetOffsetRequestHeader{Topic: "T", Group: g, Timestamp: 1}
		return h.AppendExt(nil)
	}
	checkHdr := remoting.CheckTransactionStateRequestHeader{TranStateTableOffset: 1, CommitLogOffset: 2, MsgID: remoting.Ptr("id")}
	resetBody := (&remoting.ResetOffsetBody{OffsetTable: map[rocketmq.MessageQueue]int64{{Topic: "T", BrokerName: "b", QueueID: 0}: 7}}).AppendJSON(nil, remoting.JSONFastjson)
	noGroup := "The Consumer Group <nope> not exist in this consumer"

	tests := []struct {
		name    string
		code    int32
		ext     remoting.ExtFields
		body    []byte
		oneway  bool
		member  *testMember // nil: none is called
		call    string
		resp    int32 // expected response code; -1: none
		remark  string
		respChk func(t *testing.T, resp *remoting.Command)
	}{
		{name: "ids changed", code: remoting.NotifyConsumerIDsChanged, ext: group("cg"), oneway: true, member: cons, call: "rebalance", resp: -1},
		{name: "running info", code: remoting.GetConsumerRunningInfo, ext: runningHdr("cg"), member: cons, call: "running", resp: remoting.Success,
			respChk: func(t *testing.T, resp *remoting.Command) {
				var info remoting.ConsumerRunningInfo
				if err := info.DecodeJSON(resp.Body); err != nil || info.Properties["PROP_CONSUME_TYPE"] != "CONSUME_PASSIVELY" {
					t.Fatalf("running info %+v, %v", info, err)
				}
			}},
		{name: "running info, unknown group", code: remoting.GetConsumerRunningInfo, ext: runningHdr("nope"), resp: remoting.SystemError, remark: noGroup},
		{name: "consume directly", code: remoting.ConsumeMessageDirectly, ext: directHdr("cg"), body: record(t, "T", nil), member: cons, call: "direct broker-a", resp: remoting.Success,
			respChk: func(t *testing.T, resp *remoting.Command) {
				var r remoting.ConsumeMessageDirectlyResult
				if err := r.DecodeJSON(resp.Body); err != nil || r.ConsumeResult != remoting.ConsumeResultSuccess || r.SpentTimeMills != 3 {
					t.Fatalf("result %+v, %v", r, err)
				}
			}},
		{name: "consume directly, unknown group", code: remoting.ConsumeMessageDirectly, ext: directHdr("nope"), body: record(t, "T", nil), resp: remoting.SystemError, remark: noGroup},
		{name: "reset offset", code: remoting.ResetConsumerClientOffset, ext: resetHdr("cg"), body: resetBody, member: cons, call: "reset T", resp: -1},
		{name: "consumer status", code: remoting.GetConsumerStatusFromClient, ext: statusHdr("cg"), member: cons, call: "offsets T", resp: remoting.Success,
			respChk: func(t *testing.T, resp *remoting.Command) {
				var b remoting.GetConsumerStatusBody
				if err := b.DecodeJSON(resp.Body); err != nil || b.MessageQueueTable[rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}] != 42 {
					t.Fatalf("status %+v, %v", b, err)
				}
			}},
		{name: "consumer status, unknown group", code: remoting.GetConsumerStatusFromClient, ext: statusHdr("nope"), resp: remoting.Success,
			respChk: func(t *testing.T, resp *remoting.Command) {
				var b remoting.GetConsumerStatusBody
				if err := b.DecodeJSON(resp.Body); err != nil || len(b.MessageQueueTable) != 0 {
					t.Fatalf("status %+v, %v", b, err)
				}
			}},
		{name: "check transaction", code: remoting.CheckTransactionState, ext: checkHdr.AppendExt(nil), oneway: true,
			body: record(t, "ns%T", map[string]string{rocketmq.PropertyProducerGroup: "pg", rocketmq.PropertyUniqKey: "id"}), member: prod, call: "check", resp: -1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := remoting.NewRequest(tc.code, tc.ext, tc.body)
			req.Opaque = int32(1000 + i)
			if tc.oneway {
				req.Flag |= remoting.FlagOneway
			}
			if err := peer.Push(req); err != nil {
				t.Fatal(err)
			}
			if tc.member != nil {
				testutil.WaitFor(t, 5*time.Second, tc.call, func() bool { return tc.member.called(tc.call) })
			}
			if tc.resp < 0 {
				return
			}
			testutil.WaitFor(t, 5*time.Second, "response", func() bool { return peer.Response(req.Opaque) != nil })
			resp := peer.Response(req.Opaque)
			if resp.Code != tc.resp || tc.remark != "" && resp.Remark != tc.remark {
				t.Fatalf("response %d %q, want %d %q", resp.Code, resp.Remark, tc.resp, tc.remark)
			}
			if tc.respChk != nil {
				tc.respChk(t, resp)
			}
		})
	}
	// NOTIFY_CONSUMER_IDS_CHANGED rebalances every consumer, as Java does.
	testutil.WaitFor(t, 5*time.Second, "rebalance of the other group", func() bool { return other.called("rebalance") })
	cons.mu.Lock()
	if cons.reset[rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}] != 7 {
		t.Errorf("reset offsets %v", cons.reset)
	}
	cons.mu.Unlock()
	prod.mu.Lock()
	if len(prod.msgs) != 1 || prod.msgs[0].Topic != "T" || prod.msgs[0].Property(rocketmq.PropertyProducerGroup) != "pg" {
		t.Errorf("checked message %+v", prod.msgs)
	}
	prod.mu.Unlock()
	for _, m := range []*testMember{other, prod} {
		m.mu.Lock()
		for _, call := range m.calls {
			if call != "rebalance" && m != prod || call != "check" && m == prod {
				t.Errorf("group %s got %q", m.group, call)
			}
		}
		m.mu.Unlock()
	}
}

// lockingMember's ConsumerData takes the client's registry lock, as a
// consumer that registers another group from it would.
type lockingMember struct {
	testMember
}

func (m *lockingMember) ConsumerData() remoting.ConsumerData {
	_ = m.c.RegisterAdmin("probe")
	m.c.UnregisterAdmin("probe")
	return remoting.ConsumerData{GroupName: m.group, SubscriptionDataSet: []remoting.SubscriptionData{{Topic: "T"}}}
}

// TestMembersCalledUnlocked: the heartbeat body and the topics in use ask
// the members with no lock of the client held.
func TestMembersCalledUnlocked(t *testing.T) {
	c := newTestClient(t, "127.0.0.1:1")
	m := &lockingMember{testMember{c: c, group: "cg"}}
	if err := c.RegisterConsumer("cg", m); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		hb := c.HeartbeatData()
		if len(hb.ConsumerDataSet) != 1 {
			done <- nil
			return
		}
		done <- c.topicsInUse()
	}()
	select {
	case topics := <-done:
		if len(topics) != 1 || topics[0] != "T" {
			t.Fatalf("topics in use %v", topics)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a member was called with the registry lock held")
	}
}
