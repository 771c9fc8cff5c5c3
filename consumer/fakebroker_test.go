package consumer

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// fakeCluster is a scripted NameServer and one broker ("broker-a") that
// serve what a push consumer uses, from memory: routes, heartbeats, the
// consumer list, offsets, pulls (held up to 100 ms when there is nothing
// new), send-backs (re-put to the retry topic at once) and sends. The
// end-to-end behaviour against the real servers is tested in
// consumer/e2e.
type fakeCluster struct {
	t      *testing.T
	ns, br *fakepeer.Server

	mu        sync.Mutex
	queues    map[string]int // topic → queue count
	msgs      map[rocketmq.MessageQueue][]*rocketmq.MessageExt
	offsets   map[string]int64 // group/topic/queue → committed offset
	clients   map[string][]string
	sendBacks []remoting.ConsumerSendMsgBackRequestHeader
	sends     int
	commitLog int64
	arrived   chan struct{}   // closed and replaced when a message is stored
	failCode  map[int32]int32 // request code → response code to answer instead
	mute      map[int32]bool  // request codes never answered
	checks    bool            // CHECK_CLIENT_CONFIG is served

	// Queue locks (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ): holder per group and
	// queue, with no expiry; refuse makes a lock request leave the queue
	// out of the answer.
	locks  map[string]string
	refuse map[rocketmq.MessageQueue]bool
	events []string // "lock T/0", "pull T/0", "offset T/0=5", "unlock T/0", "unregister"
}

func lockKey(group string, mq rocketmq.MessageQueue) string {
	return group + "/" + mq.Topic + "/" + strconv.Itoa(mq.QueueID)
}

func (f *fakeCluster) event(kind, topic string, qid int, suffix string) {
	f.events = append(f.events, kind+" "+topic+"/"+strconv.Itoa(qid)+suffix)
}

// eventsSnapshot returns the recorded events.
func (f *fakeCluster) eventsSnapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

func (f *fakeCluster) setRefuse(mq rocketmq.MessageQueue, v bool) {
	f.mu.Lock()
	f.refuse[mq] = v
	f.mu.Unlock()
}

func (f *fakeCluster) lockHolder(group string, mq rocketmq.MessageQueue) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.locks[lockKey(group, mq)]
}

func (f *fakeCluster) lockBatch(req *remoting.Command) *remoting.Command {
	var b remoting.LockBatchRequestBody
	if err := b.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, err.Error())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var got []rocketmq.MessageQueue
	for _, mq := range b.MQSet {
		k := lockKey(b.ConsumerGroup, mq)
		if req.Code == remoting.UnlockBatchMQ {
			f.event("unlock", mq.Topic, mq.QueueID, "")
			if f.locks[k] == b.ClientID {
				delete(f.locks, k)
			}
			continue
		}
		f.event("lock", mq.Topic, mq.QueueID, "")
		if f.refuse[mq] {
			continue
		}
		if h := f.locks[k]; h == "" || h == b.ClientID {
			f.locks[k] = b.ClientID
			got = append(got, mq)
		}
	}
	resp := ok()
	if req.Code == remoting.LockBatchMQ {
		body := remoting.LockBatchResponseBody{LockOKMQSet: got}
		resp.Body = body.AppendJSON(nil, remoting.JSONFastjson)
	}
	return resp
}

var fakeHost = netip.MustParseAddrPort("127.0.0.1:10911")

func newFakeCluster(t *testing.T) *fakeCluster {
	f := &fakeCluster{
		t:        t,
		queues:   map[string]int{},
		msgs:     map[rocketmq.MessageQueue][]*rocketmq.MessageExt{},
		offsets:  map[string]int64{},
		clients:  map[string][]string{},
		arrived:  make(chan struct{}),
		failCode: map[int32]int32{},
		mute:     map[int32]bool{},
		locks:    map[string]string{},
		refuse:   map[rocketmq.MessageQueue]bool{},
	}
	f.br = fakepeer.New(t, f.broker)
	f.ns = fakepeer.New(t, f.nameServer)
	return f
}

func (f *fakeCluster) addr() string { return f.ns.Addr() }

func (f *fakeCluster) createTopic(topic string, queues int) {
	f.mu.Lock()
	f.queues[topic] = queues
	f.mu.Unlock()
}

// put stores n messages in queue qid of topic with bodies "<prefix>-<i>".
func (f *fakeCluster) put(topic string, qid, n int, prefix, tag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.putLocked(topic, qid, []byte(fmt.Sprintf("%s-%d", prefix, i)), tag, nil, 0)
	}
}

func (f *fakeCluster) putLocked(topic string, qid int, body []byte, tag string, props map[string]string, reconsume int32) {
	mq := rocketmq.MessageQueue{Topic: topic, BrokerName: "broker-a", QueueID: qid}
	p := map[string]string{rocketmq.PropertyUniqKey: fmt.Sprintf("7F00000100002A9F00000000%08d", f.commitLog)}
	for k, v := range props {
		p[k] = v
	}
	if tag != "" {
		p[rocketmq.PropertyTags] = tag
	}
	m := &rocketmq.MessageExt{
		Message:         rocketmq.Message{Topic: topic, Body: body, Properties: p},
		QueueID:         int32(qid),
		QueueOffset:     int64(len(f.msgs[mq])),
		CommitLogOffset: f.commitLog,
		BornHost:        fakeHost,
		StoreHost:       fakeHost,
		BornTimestamp:   time.Now().UnixMilli(),
		StoreTimestamp:  time.Now().UnixMilli(),
		ReconsumeTimes:  reconsume,
	}
	f.commitLog += 100
	f.msgs[mq] = append(f.msgs[mq], m)
	close(f.arrived)
	f.arrived = make(chan struct{})
}

func (f *fakeCluster) committed(group, topic string, qid int) (int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.offsets[offsetKey(group, topic, qid)]
	return v, ok
}

func (f *fakeCluster) setOffset(group, topic string, qid int, off int64) {
	f.mu.Lock()
	f.offsets[offsetKey(group, topic, qid)] = off
	f.mu.Unlock()
}

func (f *fakeCluster) fail(code, with int32) {
	f.mu.Lock()
	f.failCode[code] = with
	f.mu.Unlock()
}

func offsetKey(group, topic string, qid int) string {
	return group + "/" + topic + "/" + strconv.Itoa(qid)
}

func (f *fakeCluster) nameServer(req *remoting.Command) *remoting.Command {
	if req.Code != remoting.GetRouteInfoByTopic {
		return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
	}
	var h remoting.GetRouteInfoRequestHeader
	_ = h.FromExt(req.Ext)
	f.mu.Lock()
	n, ok := f.queues[h.Topic]
	f.mu.Unlock()
	if !ok {
		return remoting.NewResponse(remoting.TopicNotExist, "No topic route info in name server for the topic: "+h.Topic)
	}
	r := &remoting.TopicRouteData{
		QueueDatas:  []remoting.QueueData{{BrokerName: "broker-a", ReadQueueNums: int32(n), WriteQueueNums: int32(n), Perm: 6}},
		BrokerDatas: []remoting.BrokerData{{Cluster: "c1", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: f.br.Addr()}}},
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = r.AppendJSON(nil, remoting.JSONStandard)
	return resp
}

func ok() *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Version = 409
	return resp
}

func (f *fakeCluster) broker(req *remoting.Command) *remoting.Command {
	f.mu.Lock()
	code, failing := f.failCode[req.Code]
	mute := f.mute[req.Code]
	f.mu.Unlock()
	if mute {
		return nil
	}
	if failing {
		return remoting.NewResponse(code, "injected")
	}
	switch req.Code {
	case remoting.HeartBeat:
		var hb remoting.HeartbeatData
		if err := hb.DecodeJSON(req.Body); err != nil {
			return remoting.NewResponse(remoting.SystemError, err.Error())
		}
		f.mu.Lock()
		for _, cd := range hb.ConsumerDataSet {
			if !slices.Contains(f.clients[cd.GroupName], hb.ClientID) {
				f.clients[cd.GroupName] = append(f.clients[cd.GroupName], hb.ClientID)
			}
			if cd.MessageModel == remoting.MessageModelClustering {
				rt := rocketmq.RetryTopic(cd.GroupName)
				if _, ok := f.queues[rt]; !ok {
					f.queues[rt] = 1
				}
			}
		}
		f.mu.Unlock()
		return ok()
	case remoting.UnregisterClient:
		var h remoting.UnregisterClientRequestHeader
		_ = h.FromExt(req.Ext)
		f.mu.Lock()
		f.events = append(f.events, "unregister")
		if h.ConsumerGroup != nil {
			g := *h.ConsumerGroup
			f.clients[g] = slices.DeleteFunc(f.clients[g], func(id string) bool { return id == h.ClientID })
		}
		f.mu.Unlock()
		return ok()
	case remoting.GetConsumerListByGroup:
		var h remoting.GetConsumerListByGroupRequestHeader
		_ = h.FromExt(req.Ext)
		f.mu.Lock()
		ids := slices.Clone(f.clients[h.ConsumerGroup])
		f.mu.Unlock()
		if len(ids) == 0 {
			return remoting.NewResponse(remoting.SystemError, "no consumer")
		}
		resp := ok()
		body := remoting.ConsumerListByGroupBody{ConsumerIDList: ids}
		resp.Body = body.AppendJSON(nil, remoting.JSONFastjson)
		return resp
	case remoting.QueryConsumerOffset:
		var h remoting.QueryConsumerOffsetRequestHeader
		_ = h.FromExt(req.Ext)
		off, found := f.committed(h.ConsumerGroup, h.Topic, int(h.QueueID))
		if !found {
			return remoting.NewResponse(remoting.QueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
		}
		resp := ok()
		rh := remoting.OffsetResponseHeader{Offset: off}
		resp.Ext = rh.AppendExt(nil)
		return resp
	case remoting.UpdateConsumerOffset:
		var h remoting.UpdateConsumerOffsetRequestHeader
		_ = h.FromExt(req.Ext)
		f.setOffset(h.ConsumerGroup, h.Topic, int(h.QueueID), h.CommitOffset)
		f.mu.Lock()
		f.event("offset", h.Topic, int(h.QueueID), "="+strconv.FormatInt(h.CommitOffset, 10))
		f.mu.Unlock()
		return ok()
	case remoting.GetMaxOffset:
		var h remoting.GetMaxOffsetRequestHeader
		_ = h.FromExt(req.Ext)
		f.mu.Lock()
		n := len(f.msgs[rocketmq.MessageQueue{Topic: h.Topic, BrokerName: "broker-a", QueueID: int(h.QueueID)}])
		f.mu.Unlock()
		resp := ok()
		rh := remoting.OffsetResponseHeader{Offset: int64(n)}
		resp.Ext = rh.AppendExt(nil)
		return resp
	case remoting.SearchOffsetByTimestamp:
		var h remoting.SearchOffsetRequestHeader
		_ = h.FromExt(req.Ext)
		f.mu.Lock()
		msgs := f.msgs[rocketmq.MessageQueue{Topic: h.Topic, BrokerName: "broker-a", QueueID: int(h.QueueID)}]
		i := slices.IndexFunc(msgs, func(m *rocketmq.MessageExt) bool { return m.StoreTimestamp >= h.Timestamp })
		if i < 0 {
			i = len(msgs)
		}
		f.mu.Unlock()
		resp := ok()
		rh := remoting.OffsetResponseHeader{Offset: int64(i)}
		resp.Ext = rh.AppendExt(nil)
		return resp
	case remoting.PullMessage:
		return f.pull(req)
	case remoting.LockBatchMQ, remoting.UnlockBatchMQ:
		return f.lockBatch(req)
	case remoting.CheckClientConfig:
		var b remoting.CheckClientRequestBody
		if err := b.DecodeJSON(req.Body); err != nil {
			return remoting.NewResponse(remoting.SystemError, err.Error())
		}
		f.mu.Lock()
		supported := f.checks
		f.mu.Unlock()
		switch {
		case !supported:
			return remoting.NewResponse(remoting.RequestCodeNotSupported, "request type 46 not supported")
		case strings.Contains(b.SubscriptionData.SubString, "bad"):
			return remoting.NewResponse(remoting.SystemError, "CheckClientConfig error: "+b.SubscriptionData.SubString)
		}
		return ok()
	case remoting.ConsumerSendMsgBack:
		var h remoting.ConsumerSendMsgBackRequestHeader
		_ = h.FromExt(req.Ext)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sendBacks = append(f.sendBacks, h)
		var orig *rocketmq.MessageExt
		for _, l := range f.msgs {
			for _, m := range l {
				if m.CommitLogOffset == h.Offset {
					orig = m
				}
			}
		}
		if orig == nil {
			return remoting.NewResponse(remoting.SystemError, "no message at offset")
		}
		uniq := orig.Properties[rocketmq.PropertyUniqKey]
		props := map[string]string{rocketmq.PropertyRetryTopic: orig.Topic, rocketmq.PropertyOriginMessageID: uniq, rocketmq.PropertyUniqKey: uniq}
		if rt := orig.Properties[rocketmq.PropertyRetryTopic]; rt != "" {
			props[rocketmq.PropertyRetryTopic] = rt
		}
		to := rocketmq.RetryTopic(h.Group)
		if h.DelayLevel < 0 {
			to = "%DLQ%" + h.Group // as Java's broker: straight to the DLQ
		}
		f.putLocked(to, 0, orig.Body, orig.Properties[rocketmq.PropertyTags], props, orig.ReconsumeTimes+1)
		return ok()
	case remoting.SendMessageV2:
		f.mu.Lock()
		f.sends++
		f.mu.Unlock()
		resp := ok()
		resp.Ext = remoting.ExtFields{{Key: "msgId", Value: "X"}, {Key: "queueId", Value: "0"}, {Key: "queueOffset", Value: "0"}}
		return resp
	}
	return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
}

func (f *fakeCluster) pull(req *remoting.Command) *remoting.Command {
	var h remoting.PullMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return remoting.NewResponse(remoting.SystemError, err.Error())
	}
	if h.SysFlag&remoting.PullFlagCommitOffset != 0 {
		f.setOffset(h.ConsumerGroup, h.Topic, int(h.QueueID), h.CommitOffset)
	}
	mq := rocketmq.MessageQueue{Topic: h.Topic, BrokerName: "broker-a", QueueID: int(h.QueueID)}
	f.mu.Lock()
	f.event("pull", h.Topic, int(h.QueueID), "")
	f.mu.Unlock()
	deadline := time.After(100 * time.Millisecond)
	for {
		f.mu.Lock()
		msgs := f.msgs[mq]
		arrived := f.arrived
		if h.QueueOffset < int64(len(msgs)) {
			end := min(int64(len(msgs)), h.QueueOffset+int64(h.MaxMsgNums))
			var body []byte
			for _, m := range msgs[h.QueueOffset:end] {
				var err error
				if body, err = message.AppendMessageExt(body, m); err != nil {
					f.mu.Unlock()
					return remoting.NewResponse(remoting.SystemError, err.Error())
				}
			}
			f.mu.Unlock()
			resp := ok()
			rh := remoting.PullMessageResponseHeader{NextBeginOffset: end, MaxOffset: int64(len(msgs))}
			resp.Ext = rh.AppendExt(nil)
			resp.Body = body
			return resp
		}
		f.mu.Unlock()
		if h.QueueOffset > int64(len(msgs)) {
			resp := remoting.NewResponse(remoting.PullOffsetMoved, "")
			rh := remoting.PullMessageResponseHeader{NextBeginOffset: int64(len(msgs)), MaxOffset: int64(len(msgs))}
			resp.Ext = rh.AppendExt(nil)
			return resp
		}
		select {
		case <-arrived:
		case <-deadline:
			resp := remoting.NewResponse(remoting.PullNotFound, "")
			rh := remoting.PullMessageResponseHeader{NextBeginOffset: h.QueueOffset, MaxOffset: int64(len(msgs))}
			resp.Ext = rh.AppendExt(nil)
			return resp
		}
	}
}

// newConsumer makes a consumer of the fake cluster with test-friendly
// periods; its logs are shown when the test fails.
func (f *fakeCluster) newConsumer(t *testing.T, group string, opts ...Option) *PushConsumer {
	t.Helper()
	logs := &testlog.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("consumer %s logs:\n%s", group, logs.String())
		}
	})
	base := []Option{
		WithNameServers(f.addr()), WithGroup(group), WithConsumeFrom(FromFirst),
		WithRebalanceInterval(time.Second), WithOffsetPersistInterval(100 * time.Millisecond),
		WithLogger(logs.Logger()),
	}
	c, err := NewPush(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func start(t *testing.T, c *PushConsumer) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
}

// runState returns the running state (tests).
func (c *PushConsumer) runState() *runState {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	return c.run
}

// held counts the messages held for topic and the flow-control pauses.
func held(r *runState, topic string) (n int, paused int64) {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	for mq, q := range r.queues {
		if mq.Topic == topic {
			cnt, _, _ := q.pq.stats()
			n += cnt
			paused += q.flowCtl.Load()
		}
	}
	return n, paused
}

// recorder collects consumed bodies.
type recorder struct {
	mu     sync.Mutex
	bodies map[string]int
	msgs   []*rocketmq.MessageExt
}

func newRecorder() *recorder { return &recorder{bodies: map[string]int{}} }

func (r *recorder) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.bodies[string(m.Body)]++
		r.msgs = append(r.msgs, m)
	}
	return Success, nil
}

func (r *recorder) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

func (r *recorder) count(body string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies[body]
}
