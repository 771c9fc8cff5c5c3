package producer

import (
	"context"
	"slices"

	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// withAPI replaces the client instance with a mock.
func withAPI(a brokerAPI) Option { return func(c *config) { c.api = a } }

// fakeRoute builds publish info for topic with n queues on each broker.
func fakeRoute(topic string, n int, brokers ...string) *mqclient.PublishInfo {
	r := &remoting.TopicRouteData{}
	for _, b := range brokers {
		r.QueueDatas = append(r.QueueDatas, remoting.QueueData{BrokerName: b, ReadQueueNums: int32(n), WriteQueueNums: int32(n), Perm: 6})
		r.BrokerDatas = append(r.BrokerDatas, remoting.BrokerData{BrokerName: b, BrokerAddrs: map[int64]string{0: "addr-" + b}})
	}
	q, _ := mqclient.PublishQueues(topic, r)
	return &mqclient.PublishInfo{Topic: topic, Queues: q, Route: r}
}

type mockEnv struct {
	api     *MockbrokerAPI
	async   sync.WaitGroup // goroutines answering invokeAsync
	p       *Producer
	mu      sync.Mutex
	reply   func(*rocketmq.MessageExt)
	member  mqclient.Producer // registered by the last start
	version int32             // 0: unknown
}

// newMockProducer returns a started producer over a mocked brokerAPI whose
// routes come from routes (topic → publish info; default: 4 queues on
// broker-a and broker-b). Invoke expectations are the test's.
func newMockProducer(t *testing.T, routes map[string]*mqclient.PublishInfo, opts ...Option) *mockEnv {
	t.Helper()
	env := newMockAPI(t, routes)
	p, err := New(append([]Option{withAPI(env.api), WithGroup("pg")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	env.start(t, p)
	return env
}

// start starts p and shuts it down at the end of the test.
func (env *mockEnv) start(t *testing.T, p *Producer) {
	t.Helper()
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	env.p = p
}

// newMockAPI returns the mocked brokerAPI of newMockProducer.
func newMockAPI(t *testing.T, routes map[string]*mqclient.PublishInfo) *mockEnv {
	t.Helper()
	ctrl := gomock.NewController(t)
	api := NewMockbrokerAPI(ctrl)
	env := &mockEnv{api: api}
	api.EXPECT().start(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, _ string, m mqclient.Producer) error {
		env.mu.Lock()
		env.member = m
		env.mu.Unlock()
		return nil
	}).AnyTimes()
	api.EXPECT().shutdown(gomock.Any(), gomock.Any()).Return(nil).AnyTimes()
	api.EXPECT().clientID().Return("127.0.0.1@test").AnyTimes()
	api.EXPECT().refreshRoute(gomock.Any()).AnyTimes()
	api.EXPECT().readSoon(gomock.Any()).AnyTimes()
	api.EXPECT().ensureHeartbeat(gomock.Any(), gomock.Any()).Return(nil).AnyTimes()
	api.EXPECT().setReplyHandler(gomock.Any()).Do(func(h func(*rocketmq.MessageExt)) {
		env.mu.Lock()
		env.reply = h
		env.mu.Unlock()
	}).AnyTimes()
	api.EXPECT().brokerVersion(gomock.Any()).DoAndReturn(func(string) (int32, bool) {
		env.mu.Lock()
		defer env.mu.Unlock()
		return env.version, env.version != 0
	}).AnyTimes()
	api.EXPECT().brokerAddr(gomock.Any()).DoAndReturn(func(name string) (string, bool) {
		return "addr-" + name, true
	}).AnyTimes()
	// Async sends go through invokeAsync; answer it with whatever the test
	// expects of invoke, on a goroutine, like the transport does.
	api.EXPECT().invokeAsync(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration, cb func(*remoting.Command, error)) error {
			env.async.Add(1)
			go func() {
				defer env.async.Done()
				cb(api.invoke(ctx, addr, req, timeout))
			}()
			return nil
		}).AnyTimes()
	t.Cleanup(env.async.Wait)
	api.EXPECT().publishInfo(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, topic string) (*mqclient.PublishInfo, error) {
		if pi, ok := routes[topic]; ok {
			return pi, nil
		}
		if routes == nil {
			return fakeRoute(topic, 4, "broker-a", "broker-b"), nil
		}
		return nil, remoting.ErrTopicNotExist
	}).AnyTimes()
	return env
}

// okResp is a SUCCESS send response for queue id.
func okResp(code int32, queueID int32, offset int64) *remoting.Command {
	h := remoting.SendMessageResponseHeader{MsgID: "7F00000100002A9F0000000000000001", QueueID: queueID, QueueOffset: offset, MsgRegion: remoting.Ptr("DefaultRegion"), TraceOn: remoting.Ptr(true)}
	resp := remoting.NewResponse(code, "")
	resp.Ext = h.AppendExt(nil)
	return resp
}

// captured copies a request handed to the broker API, as the transport
// encodes it during the call: the producer reuses the request's storage
// once the call is over.
func captured(req *remoting.Command) *remoting.Command {
	c := *req
	c.Ext = slices.Clone(req.Ext)
	return &c
}

// reqHeader decodes the V2 send header of a captured request.
func reqHeader(t *testing.T, req *remoting.Command) remoting.SendMessageRequestHeaderV2 {
	t.Helper()
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		t.Fatalf("send header: %v (%v)", err, req.Ext)
	}
	return h
}

func reqProps(t *testing.T, req *remoting.Command) map[string]string {
	h := reqHeader(t, req)
	if h.Properties == nil {
		return map[string]string{}
	}
	return message.DecodeProperties(*h.Properties)
}

// timeoutErr looks like a network timeout (retriable).
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Retriable() bool { return true }
