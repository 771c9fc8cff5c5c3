// Package e2e runs the producer against an in-process cluster (rmqtest) or,
// with ROCKETMQ_NAMESRV=host:port, an external one. It is a package of its
// own so that the producer's unit tests never depend on the servers.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
	"github.com/go-rocketmq/rocketmq/rmqtest"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// EnvNameServer points the end-to-end tests at an external cluster
// instead of rmqtest; tests that need fault controls then skip.
const envExternal = "ROCKETMQ_NAMESRV"

type e2e struct {
	ns      string
	cluster *rmqtest.Cluster // nil for an external cluster
	reader  *mqclient.Client
}

func startE2E(t *testing.T, brokers int) *e2e {
	t.Helper()
	return startE2EWith(t, brokers)
}

// startE2EWith is startE2E with options for the in-process cluster.
func startE2EWith(t *testing.T, brokers int, opts ...rmqtest.Option) *e2e {
	t.Helper()
	e := &e2e{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		e.cluster = rmqtest.StartCluster(t, append([]rmqtest.Option{rmqtest.WithBrokers(brokers)}, opts...)...)
		e.ns = e.cluster.NameServerAddr()
	} else {
		masters, err := rmqtest.MasterBrokers(context.Background(), e.ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(masters) < brokers {
			t.Skipf("needs %d brokers; the external cluster at %s has %d (%v)", brokers, e.ns, len(masters), slices.Sorted(maps.Keys(masters)))
		}
	}
	cfg := mqclient.DefaultConfig()
	cfg.NameServers = []string{e.ns}
	r, err := mqclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	e.reader = r
	return e
}

func (e *e2e) needFaults(t *testing.T) {
	if e.cluster == nil {
		t.Skip("fault controls need the in-process cluster (" + envExternal + " is set)")
	}
}

func (e *e2e) newProducer(t *testing.T, opts ...producer.Option) *producer.Producer {
	t.Helper()
	p, err := producer.New(append([]producer.Option{producer.WithGroup("e2e_" + strings.ReplaceAll(t.Name(), "/", "_")), producer.WithNameServers(e.ns)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func uniqueTopic(t *testing.T) string {
	return fmt.Sprintf("E2E_%d", time.Now().UnixNano())
}

// pullAll reads every message of topic stored so far (a stand-in for a
// consumer, which lives in another package).
func (e *e2e) pullAll(t *testing.T, topic string) []*rocketmq.MessageExt {
	t.Helper()
	ctx := context.Background()
	// A topic created by a send reaches the NameServer with the broker's
	// next registration, which runs after the send is answered.
	var err error
	if !testutil.Poll(0, func() bool { err = e.reader.UpdateRoute(ctx, topic); return err == nil }) {
		t.Fatalf("route of %s: %v", topic, err)
	}
	queues, err := e.reader.SubscribeQueues(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []*rocketmq.MessageExt
	for _, q := range queues {
		addr, ok := e.reader.BrokerAddr(q.BrokerName)
		if !ok {
			t.Fatalf("no address for %s", q.BrokerName)
		}
		for off := int64(0); ; {
			sub := "*"
			h := remoting.PullMessageRequestHeader{ConsumerGroup: "e2e_reader", Topic: topic, QueueID: int32(q.QueueID),
				QueueOffset: off, MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription, Subscription: &sub,
				SubVersion: time.Now().UnixMilli(), ExpressionType: remoting.Ptr(remoting.ExpressionTypeTag)}
			resp, err := e.reader.Invoke(ctx, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil), 5*time.Second)
			if err != nil && remoting.IsRetriable(err) {
				// A connection closed by a broker restart fails the first
				// call on it; the next one dials again.
				resp, err = e.reader.Invoke(ctx, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil), 5*time.Second)
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != remoting.Success {
				if resp.Code != remoting.PullNotFound && resp.Code != remoting.PullOffsetMoved {
					t.Logf("pull %v at %d: %d %s", q, off, resp.Code, resp.Remark)
				}
				break
			}
			var rh remoting.PullMessageResponseHeader
			_ = rh.FromExt(resp.Ext)
			msgs, err := message.DecodeRecords(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				m.BrokerName = q.BrokerName
			}
			out = append(out, msgs...)
			if rh.NextBeginOffset <= off {
				break
			}
			off = rh.NextBeginOffset
		}
	}
	return out
}

func byID(msgs []*rocketmq.MessageExt) map[string]*rocketmq.MessageExt {
	m := make(map[string]*rocketmq.MessageExt, len(msgs))
	for _, x := range msgs {
		m[x.MsgID] = x
	}
	return m
}

func TestE2ESendKinds(t *testing.T) {
	for _, brokers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d brokers", brokers), func(t *testing.T) {
			e := startE2E(t, brokers)
			p := e.newProducer(t)
			ctx := context.Background()
			topic := uniqueTopic(t)
			if brokers > 1 {
				// Auto-creation creates a topic only on the broker that
				// takes its first message, and a Java broker's route then
				// lists that broker alone: spreading over both needs the
				// topic on both.
				if err := rmqtest.CreateTopic(ctx, e.ns, topic, 4); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string][]byte{}  // msg id → body
			tags := map[string]string{}  // msg id → tag
			oneways := map[string]bool{} // bodies sent oneway

			m, _ := producer.NewMessage(topic, []byte("sync"), producer.Tag("TagS"), producer.Keys("k1"), producer.Property("user", "v"))
			res, err := p.Send(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			want[res.MsgID], tags[res.MsgID] = []byte("sync"), "TagS"

			big := bytes.Repeat([]byte("compressible "), 1000)
			if res, err = p.Send(ctx, &rocketmq.Message{Topic: topic, Body: big}); err != nil {
				t.Fatal(err)
			}
			want[res.MsgID] = big

			batch := []*rocketmq.Message{&rocketmq.Message{Topic: topic, Body: []byte("b0")}, &rocketmq.Message{Topic: topic, Body: []byte("b1")}, &rocketmq.Message{Topic: topic, Body: []byte("b2")}}
			if res, err = p.Send(ctx, batch...); err != nil {
				t.Fatal(err)
			}
			ids := strings.Split(res.MsgID, ",")
			if len(ids) != 3 {
				t.Fatalf("batch ids %q", res.MsgID)
			}
			for i, id := range ids {
				want[id] = batch[i].Body
			}

			var wg sync.WaitGroup
			var mu sync.Mutex
			for i := 0; i < 20; i++ {
				body := []byte(fmt.Sprintf("async-%d", i))
				wg.Add(1)
				if err := p.SendAsync(ctx, func(r *rocketmq.SendResult, err error) {
					defer wg.Done()
					if err != nil {
						t.Errorf("async: %v", err)
						return
					}
					mu.Lock()
					want[r.MsgID] = body
					mu.Unlock()
				}, &rocketmq.Message{Topic: topic, Body: body}); err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			for i := 0; i < 3; i++ {
				b := fmt.Sprintf("oneway-%d", i)
				oneways[b] = true
				if err := p.SendOneway(ctx, &rocketmq.Message{Topic: topic, Body: []byte(b)}); err != nil {
					t.Fatal(err)
				}
			}

			var got []*rocketmq.MessageExt
			testutil.Poll(0, func() bool { got = e.pullAll(t, topic); return len(got) >= len(want)+len(oneways) })
			ids2 := byID(got)
			for id, body := range want {
				m := ids2[id]
				if m == nil {
					t.Fatalf("message %s (%q) not stored", id, body[:min(len(body), 16)])
				}
				if !bytes.Equal(m.Body, body) {
					t.Fatalf("message %s body %q, want %q", id, m.Body[:min(len(m.Body), 16)], body[:min(len(body), 16)])
				}
				if tg := tags[id]; tg != "" && (m.Tag() != tg || m.Property("KEYS") != "k1" || m.Property("user") != "v") {
					t.Fatalf("message %s properties %v", id, m.Properties)
				}
			}
			n := 0
			for _, m := range got {
				if oneways[string(m.Body)] {
					n++
				}
			}
			if n != len(oneways) {
				t.Fatalf("%d of %d oneway messages stored", n, len(oneways))
			}
			if brokers == 2 {
				seen := map[string]bool{}
				for _, m := range got {
					seen[m.BrokerName] = true
				}
				if len(seen) < 2 {
					t.Fatalf("messages only on %v", seen)
				}
			}
		})
	}
}

func TestE2EFailover(t *testing.T) {
	e := startE2E(t, 2)
	e.needFaults(t)
	ctx := context.Background()

	t.Run("busy broker", func(t *testing.T) {
		p := e.newProducer(t)
		topic := uniqueTopic(t)
		warmBoth(t, e, topic)
		if err := e.cluster.Intercept("broker-a", remoting.SendMessageV2, rmqtest.Fault{Respond: true, Code: remoting.SystemBusy, Remark: "[REJECTREQUEST]system busy"}); err != nil {
			t.Fatal(err)
		}
		defer e.cluster.ClearIntercept("broker-a", remoting.SendMessageV2)
		for i := 0; i < 10; i++ {
			res, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("x")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Queue.BrokerName != "broker-b" {
				t.Fatalf("stored on %s", res.Queue.BrokerName)
			}
		}
	})

	t.Run("timeout avoided", func(t *testing.T) {
		p := e.newProducer(t, producer.WithSendTimeout(2*time.Second))
		topic := uniqueTopic(t)
		warmBoth(t, e, topic)
		var reachedA atomic.Int32
		if err := e.cluster.Intercept("broker-a", remoting.SendMessageV2, rmqtest.Fault{Drop: true,
			Match: func(*remoting.Command) bool { reachedA.Add(1); return true }}); err != nil {
			t.Fatal(err)
		}
		defer e.cluster.ClearIntercept("broker-a", remoting.SendMessageV2)
		// Until a send hits broker-a: it times out (the budget is gone).
		timedOut := false
		for i := 0; i < 20 && !timedOut; i++ {
			_, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("x")})
			timedOut = err != nil
		}
		if !timedOut {
			t.Fatal("no send reached the dropping broker")
		}
		// Now broker-a is avoided for the fault window: no send is even
		// tried there first.
		before := reachedA.Load()
		for i := 0; i < 10; i++ {
			res, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("y")})
			if err != nil || res.Queue.BrokerName != "broker-b" {
				t.Fatalf("send %d: %+v %v", i, res, err)
			}
		}
		if n := reachedA.Load() - before; n != 0 {
			t.Fatalf("%d sends reached broker-a inside its fault window", n)
		}
	})

	t.Run("avoided broker recovers", func(t *testing.T) {
		// A short table: a failure keeps broker-a out for 1 s.
		p := e.newProducer(t, producer.WithSendTimeout(time.Second),
			producer.WithLatencyTable([]time.Duration{50 * time.Millisecond, 5 * time.Second}, []time.Duration{0, time.Second}))
		topic := uniqueTopic(t)
		warmBoth(t, e, topic)
		if err := e.cluster.Intercept("broker-a", remoting.SendMessageV2, rmqtest.Fault{Drop: true}); err != nil {
			t.Fatal(err)
		}
		failed := false
		var failedAt time.Time
		for i := 0; i < 20 && !failed; i++ {
			_, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("x")})
			failed, failedAt = err != nil, time.Now()
		}
		if !failed {
			t.Fatal("no send reached the dropping broker")
		}
		if err := e.cluster.ClearIntercept("broker-a", remoting.SendMessageV2); err != nil {
			t.Fatal(err)
		}
		// Once the window has passed, round robin reaches broker-a again.
		testutil.WaitFor(t, 5*time.Second, "broker-a used again after its fault window", func() bool {
			res, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("y")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Queue.BrokerName != "broker-a" {
				return false
			}
			if d := time.Since(failedAt); d < 900*time.Millisecond {
				t.Fatalf("broker-a used again %v after its failure, inside its 1 s window", d)
			}
			return true
		})
	})

	t.Run("broker down", func(t *testing.T) {
		p := e.newProducer(t)
		topic := uniqueTopic(t)
		warmBoth(t, e, topic)
		if err := e.cluster.CrashBroker("broker-a"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := e.cluster.StartBroker("broker-a"); err != nil {
				t.Error(err)
			}
		}()
		for i := 0; i < 10; i++ {
			if _, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte("z")}); err != nil {
				t.Fatalf("send %d with broker-a down: %v", i, err)
			}
		}
	})
}

// warmBoth creates topic on both brokers (auto-creation happens only on
// the broker that receives the first message) and waits until the
// NameServer routes it to both, so p's first lookup sees both.
func warmBoth(t *testing.T, e *e2e, topic string) {
	t.Helper()
	if err := e.cluster.CreateTopic(context.Background(), topic, 4); err != nil {
		t.Fatal(err)
	}
}

// waitFor pulls topic until a message with id arrives or d passes.
func (e *e2e) waitFor(t *testing.T, topic, id string, d time.Duration) (*rocketmq.MessageExt, time.Time) {
	var m *rocketmq.MessageExt
	var at time.Time
	if !testutil.Poll(d, func() bool { m, at = byID(e.pullAll(t, topic))[id], time.Now(); return m != nil }) {
		return nil, time.Time{}
	}
	return m, at
}

// autoCreatedTopic returns a new topic that a send from p created.
func autoCreatedTopic(t *testing.T, p *producer.Producer) string {
	t.Helper()
	topic := uniqueTopic(t)
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("create")}); err != nil {
		t.Fatal(err)
	}
	return topic
}

// external reports whether the tests run against a cluster we do not
// control; only there may a missing broker feature end a test with Skip.
func (e *e2e) external() bool { return e.cluster == nil }

func TestE2EDelayLevel(t *testing.T) {
	e := startE2E(t, 1)
	p := e.newProducer(t)
	topic := autoCreatedTopic(t, p)
	ctx := context.Background()
	m, _ := producer.NewMessage(topic, []byte("delayed"), producer.DelayLevel(2))
	sent := time.Now()
	res, err := p.Send(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	// Not before its time: nothing on the real topic during the first 4 s.
	if early, _ := e.waitFor(t, topic, res.MsgID, 4*time.Second); early != nil {
		t.Fatalf("level 2 delivered after %v, want >= 5 s", time.UnixMilli(early.StoreTimestamp).Sub(sent))
	}
	got, _ := e.waitFor(t, topic, res.MsgID, 12*time.Second)
	if got == nil {
		if e.external() {
			t.Skip("the external broker did not deliver level 2 within 16 s")
		}
		t.Fatal("level 2 not delivered within 16 s")
	}
	if d := time.UnixMilli(got.StoreTimestamp).Sub(sent); d < 5*time.Second-50*time.Millisecond || d > 10*time.Second {
		t.Fatalf("level 2 stored on the real topic %v after the send, want about 5 s", d)
	}
	if string(got.Body) != "delayed" || got.Property(rocketmq.PropertyRealTopic) != topic {
		t.Fatalf("delivered body %q, REAL_TOPIC %q", got.Body, got.Property(rocketmq.PropertyRealTopic))
	}
}

func TestE2ETimer(t *testing.T) {
	e := startE2E(t, 1)
	p := e.newProducer(t)
	topic := autoCreatedTopic(t, p)
	ctx := context.Background()
	sent := time.Now()
	m, _ := producer.NewMessage(topic, []byte("timer"), producer.DeliverAt(sent.Add(3*time.Second)))
	res, err := p.Send(ctx, m)
	if e.external() && (errors.Is(err, producer.ErrTimerNotSupported) || errors.Is(err, remoting.ErrSystemError)) {
		t.Skipf("the external broker does not support timer messages: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !e.external() {
		// The pending timer must survive a broker restart.
		name := e.cluster.BrokerNames()[0]
		if err := e.cluster.StopBroker(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := e.cluster.StartBroker(name); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := e.waitFor(t, topic, res.MsgID, 15*time.Second)
	if got == nil {
		t.Fatal("timer message not delivered within 15 s")
	}
	// Never early; late by at most a few seconds (a loaded machine, the
	// restart), not held until some later event.
	if d := time.UnixMilli(got.StoreTimestamp).Sub(sent); d < 3*time.Second || d > 8*time.Second {
		t.Fatalf("timer at +3 s stored on the real topic after %v, want within [3 s, 8 s]", d)
	}
	var n int
	for _, x := range e.pullAll(t, topic) {
		if x.MsgID == res.MsgID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("timer message delivered %d times", n)
	}
}

func TestE2ERequestReply(t *testing.T) {
	e := startE2E(t, 1)
	requester := e.newProducer(t)
	responder := e.newProducer(t, producer.WithGroup("e2e_responder"))
	topic := autoCreatedTopic(t, responder)
	ctx := context.Background()
	body := []byte{0, 1, 2, 0xfe, 'q'}
	type out struct {
		m   *rocketmq.MessageExt
		err error
	}
	done := make(chan out, 1)
	if err := requester.RequestAsync(ctx, &rocketmq.Message{Topic: topic, Body: body}, func(m *rocketmq.MessageExt, err error) { done <- out{m, err} }); err != nil {
		t.Fatal(err)
	}
	// Play the consumer: find the request, answer it.
	var req *rocketmq.MessageExt
	testutil.Poll(0, func() bool {
		for _, m := range e.pullAll(t, topic) {
			if m.Property(rocketmq.PropertyCorrelationID) != "" {
				req = m
			}
		}
		return req != nil
	})
	if req == nil {
		t.Fatal("request not stored")
	}
	reply, err := producer.NewReply(req, append([]byte("re:"), req.Body...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := responder.Send(ctx, reply); err != nil {
		if e.external() && (errors.Is(err, remoting.ErrRequestCodeNotSupported) || errors.Is(err, remoting.ErrTopicNotExist)) {
			t.Skipf("the external broker does not support request-reply: %v", err)
		}
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !bytes.Equal(o.m.Body, append([]byte("re:"), body...)) {
		t.Fatalf("reply body %q", o.m.Body)
	}
}
