package producer

import (
	"bytes"
	"context"
	"errors"
	"github.com/go-rocketmq/rocketmq/internal/fakepeer"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// cluster is a fake NameServer and one fake broker on loopback, driven by
// the real client instance (no mock).
type cluster struct {
	ns, broker *fakepeer.Server
	mu         sync.Mutex
	sends      []*remoting.Command
	hold       chan struct{} // when set, SEND requests are not answered until closed
	pushes     sync.WaitGroup
	noReply    bool
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{}
	c.broker = fakepeer.New(t, c.handleBroker)
	c.ns = fakepeer.New(t, func(req *remoting.Command) *remoting.Command {
		var h remoting.GetRouteInfoRequestHeader
		_ = h.FromExt(req.Ext)
		r := &remoting.TopicRouteData{
			QueueDatas:  []remoting.QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
			BrokerDatas: []remoting.BrokerData{{Cluster: "c1", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: c.broker.Addr()}}},
		}
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = r.AppendJSON(nil, remoting.JSONStandard)
		return resp
	})
	t.Cleanup(c.pushes.Wait)
	return c
}

func (c *cluster) handleBroker(req *remoting.Command) *remoting.Command {
	switch req.Code {
	case remoting.HeartBeat, remoting.UnregisterClient:
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Version = 409
		return resp
	case remoting.SendMessageV2, remoting.SendBatchMessage, remoting.SendReplyMessageV2:
	default:
		return remoting.NewResponse(remoting.RequestCodeNotSupported, "")
	}
	c.mu.Lock()
	c.sends = append(c.sends, req)
	hold, noReply := c.hold, c.noReply
	c.mu.Unlock()
	if hold != nil {
		<-hold
		return nil
	}
	var h remoting.SendMessageRequestHeaderV2
	_ = h.FromExt(req.Ext)
	props := message.DecodeProperties(*h.Properties)
	if corr := props[rocketmq.PropertyCorrelationID]; corr != "" && !noReply {
		// Play the responder and the broker: push the reply to the client.
		body := append([]byte("re:"), req.Body...)
		rp := message.EncodeProperties(map[string]string{
			rocketmq.PropertyCorrelationID: corr, rocketmq.PropertyMessageType: "reply",
			rocketmq.PropertyReplyToClient: props[rocketmq.PropertyReplyToClient], rocketmq.PropertyUniqKey: "R1"})
		rh := remoting.ReplyMessageRequestHeader{ProducerGroup: "responder", Topic: "c1_REPLY_TOPIC", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, Properties: &rp, BornHost: "127.0.0.1:1", StoreHost: c.broker.Addr(), StoreTimestamp: 1}
		push := remoting.NewRequest(remoting.PushReplyMessageToClient, rh.AppendExt(nil), body)
		push.Opaque = 1000
		c.pushes.Add(1)
		go func() {
			defer c.pushes.Done()
			time.Sleep(10 * time.Millisecond)
			_ = c.broker.Push(push)
		}()
	}
	return okResp(remoting.Success, h.QueueID, 1)
}

func (c *cluster) producer(t *testing.T, opts ...Option) *Producer {
	t.Helper()
	p, err := New(append([]Option{WithGroup("pg"), WithNameServers(c.ns.Addr())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRealClientSendAndUnregister(t *testing.T) {
	c := newCluster(t)
	p := c.producer(t)
	ctx := context.Background()
	res, err := p.Send(ctx, &rocketmq.Message{Topic: "T", Body: []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != rocketmq.SendOK || res.Queue.BrokerName != "broker-a" {
		t.Fatalf("result %+v", res)
	}
	if err := p.SendOneway(ctx, &rocketmq.Message{Topic: "T", Body: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "oneway frame", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.sends) == 2 })
	c.mu.Lock()
	one := c.sends[1]
	c.mu.Unlock()
	if !one.IsOneway() || string(one.Body) != "one" {
		t.Fatalf("oneway frame flag %d body %q", one.Flag, one.Body)
	}
	testutil.WaitFor(t, 5*time.Second, "heartbeat", func() bool { return c.broker.Count(remoting.HeartBeat) > 0 })
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if c.broker.Count(remoting.UnregisterClient) != 1 {
		t.Fatal("no UNREGISTER_CLIENT on shutdown")
	}
}

func TestRequestReply(t *testing.T) {
	c := newCluster(t)
	p := c.producer(t)
	defer p.Shutdown(context.Background())
	body := []byte{0, 1, 2, 0xff, 'x'}
	reply, err := p.Request(context.Background(), &rocketmq.Message{Topic: "T", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(reply.Body, append([]byte("re:"), body...)) || reply.Property(rocketmq.PropertyMessageType) != "reply" {
		t.Fatalf("reply %q %v", reply.Body, reply.Properties)
	}
	c.mu.Lock()
	req := c.sends[0]
	c.mu.Unlock()
	props := reqProps(t, req)
	if props[rocketmq.PropertyReplyToClient] != p.ClientID() || props[rocketmq.PropertyMessageTTL] == "" || len(props[rocketmq.PropertyCorrelationID]) != 36 {
		t.Fatalf("request properties %q", props)
	}

	async := make(chan error, 1)
	if err := p.RequestAsync(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("a")}, func(m *rocketmq.MessageExt, err error) {
		if err == nil && string(m.Body) != "re:a" {
			err = errors.New("wrong reply " + string(m.Body))
		}
		async <- err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-async; err != nil {
		t.Fatal(err)
	}

	c.mu.Lock()
	c.noReply = true
	c.mu.Unlock()
	p2 := c.producer(t, WithRequestTimeout(100*time.Millisecond), WithGroup("pg2"))
	defer p2.Shutdown(context.Background())
	start := time.Now()
	if _, err := p2.Request(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrRequestTimeout) {
		t.Fatalf("err = %v, want ErrRequestTimeout", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("request timeout not honoured")
	}

	// The responder side: NewReply + Send goes out as SEND_REPLY_MESSAGE_V2.
	reqMsg := &rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T", Properties: map[string]string{
		rocketmq.PropertyCluster: "c1", rocketmq.PropertyCorrelationID: "corr", rocketmq.PropertyReplyToClient: "cid", rocketmq.PropertyMessageTTL: "3000"}}}
	rm, err := NewReply(reqMsg, []byte("answer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	last := c.sends[len(c.sends)-1]
	c.mu.Unlock()
	if last.Code != remoting.SendReplyMessageV2 || reqHeader(t, last).Topic != "c1_REPLY_TOPIC" || reqProps(t, last)["REPLY_TO_CLIENT"] != "cid" {
		t.Fatalf("reply frame %d %v", last.Code, last.Ext)
	}
	if _, err := NewReply(&rocketmq.MessageExt{}, nil); !errors.Is(err, ErrNotRequest) {
		t.Fatal(err)
	}
}

// TestShutdownWithInflight: sends the broker never answers are cut off by
// Shutdown's ctx; Shutdown returns in time, every callback runs, and no
// goroutine is left behind.
func TestShutdownWithInflight(t *testing.T) {
	c := newCluster(t)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	defer release()
	runtime.GC()
	before := runtime.NumGoroutine()
	p := c.producer(t, WithSendTimeout(time.Minute))
	ctx := context.Background()
	// Warm the route so that the sends below reach the broker.
	if _, err := p.Send(ctx, &rocketmq.Message{Topic: "T", Body: []byte("warm")}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
	const n = 10
	var wg sync.WaitGroup
	wg.Add(n)
	var emu sync.Mutex
	var errs []error
	for i := 0; i < n; i++ {
		if err := p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) {
			emu.Lock()
			errs = append(errs, err)
			emu.Unlock()
			wg.Done()
		}, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, "sends at the broker", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.sends) == n+1 })
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Shutdown(sctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shutdown err = %v", err)
	}
	if took > 10*time.Second { // the sends' timeout is a minute
		t.Fatalf("shutdown took %v with a 200ms ctx", took)
	}
	wg.Wait()
	for _, e := range errs {
		if e == nil {
			t.Fatal("an unanswered send succeeded")
		}
	}
	release() // let the fake broker's held handlers go; they are not ours
	testutil.WaitFor(t, 5*time.Second, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
}

func TestShutdownDrains(t *testing.T) {
	c := newCluster(t)
	p := c.producer(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var failed sync.Map
	for i := 0; i < 50; i++ {
		wg.Add(1)
		if err := p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) {
			if err != nil {
				failed.Store(i, err)
			}
			wg.Done()
		}, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait() // already done: Shutdown waited for every callback
	failed.Range(func(k, v any) bool { t.Errorf("send %v failed: %v", k, v); return true })
}

func TestTwoProducersDoNotShareCallbacks(t *testing.T) {
	c := newCluster(t)
	p1 := c.producer(t, WithGroup("g1"))
	p2 := c.producer(t, WithGroup("g2"))
	defer p1.Shutdown(context.Background())
	defer p2.Shutdown(context.Background())
	if p1.ClientID() == p2.ClientID() {
		t.Fatalf("shared client id %s", p1.ClientID())
	}
	var wg sync.WaitGroup
	for _, p := range []*Producer{p1, p2} {
		wg.Add(1)
		go func(p *Producer) {
			defer wg.Done()
			m, err := p.Request(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte(p.Group())})
			if err != nil {
				t.Error(err)
				return
			}
			if string(m.Body) != "re:"+p.Group() {
				t.Errorf("%s got %q", p.Group(), m.Body)
			}
		}(p)
	}
	wg.Wait()
}
