package faultsuite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestOnlyBrokerStoppedAndStarted: with the topic's only broker gone,
// sends fail fast instead of hanging; once it is back, sends go through
// again on the same clients and the running consumer, once its next
// heartbeat has told the new broker about it, gets every acknowledged
// message, those sent before the outage included.
func TestOnlyBrokerStoppedAndStarted(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "stop", true: "crash"}[crash], func(t *testing.T) {
			c := cluster(t)
			topic := newTopic(t, c, 4)
			// While the broker is down its address refuses connections,
			// as a dead process's does; an in-process server that is
			// stopping could still accept one and never serve it.
			d := &dialer{}
			const sendTimeout = 5 * time.Second
			p := newProducer(t, c.NameServerAddr(), producer.WithSendTimeout(sendTimeout), producer.WithDialer(d.dial))
			s := newSeen()
			// The restarted broker knows the consumer again at its next
			// heartbeat (Java 30 s); until then its pulls are refused.
			startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s.handler("a"),
				consumer.WithHeartbeatInterval(500*time.Millisecond), consumer.WithDialer(d.dial))
			acked := sendN(t, p, topic, "before", 20)

			d.refuse(c.BrokerAddr("broker-a"))
			if crash {
				if err := c.CrashBroker("broker-a"); err != nil {
					t.Fatal(err)
				}
			} else if err := c.StopBroker(context.Background(), "broker-a"); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("down")})
			if err == nil {
				t.Fatal("send with the only broker down succeeded")
			}
			// Refused connections need no timeout.
			if d := time.Since(start); errors.Is(err, producer.ErrSendTimeout) || d >= sendTimeout {
				t.Errorf("send with the only broker down failed after %v with %v, a timeout", d, err)
			}
			if err := c.StartBroker("broker-a"); err != nil {
				t.Fatal(err)
			}
			d.refuse("")
			testutil.WaitFor(t, wait, "a send after the restart", func() bool {
				_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("probe")})
				return err == nil
			})
			acked = append(acked, sendN(t, p, topic, "after", 20)...)
			s.waitAll(t, acked)
		})
	}
}

// TestSystemBusy: a SYSTEM_BUSY answer to a send is retried within the
// send's attempts (remoting.IsRetriable) and fails the send with an error
// matching remoting.ErrSystemBusy only once every attempt got it; a busy
// answer to pulls only delays consumption.
func TestSystemBusy(t *testing.T) {
	c := cluster(t)
	topic := newTopic(t, c, 2)
	p := newProducer(t, c.NameServerAddr(), producer.WithRetries(2))
	busy := rmqtest.Fault{Respond: true, Code: remoting.SystemBusy, Remark: "[REJECTREQUEST]system busy, start flow control for a while"}

	busy.Times = 2 // two of the three attempts
	if err := c.Intercept("broker-a", remoting.SendMessageV2, busy); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("third attempt")}); err != nil {
		t.Fatalf("send after two busy answers: %v", err)
	}

	busy.Times = 3
	if err := c.Intercept("broker-a", remoting.SendMessageV2, busy); err != nil {
		t.Fatal(err)
	}
	_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("never stored")})
	var se *producer.SendError
	if !errors.Is(err, remoting.ErrSystemBusy) || !errors.As(err, &se) {
		t.Fatalf("send with every attempt busy: %v, want a *producer.SendError matching remoting.ErrSystemBusy", err)
	}
	acked := []string{"third attempt"}
	acked = append(acked, sendN(t, p, topic, "after", 10)...)

	busy.Times = 5
	if err := c.Intercept("broker-a", remoting.PullMessage, busy); err != nil {
		t.Fatal(err)
	}
	s := newSeen()
	startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s.handler("a"))
	s.waitAll(t, acked)
	if s.has("never stored") {
		t.Error("a send that failed with SYSTEM_BUSY on every attempt was stored")
	}
}

// TestSendTimeout: a broker that never answers costs a send its whole
// budget and no more, the error matches rocketmq.ErrTimeout, and the next
// send succeeds (on a new connection: nothing came back on the old one
// since the dropped request, so the timeout closed it).
func TestSendTimeout(t *testing.T) {
	c := cluster(t)
	topic := newTopic(t, c, 2)
	const budget = 800 * time.Millisecond
	p := newProducer(t, c.NameServerAddr(), producer.WithSendTimeout(budget))
	sendN(t, p, topic, "warm", 1)
	if err := c.Intercept("broker-a", remoting.SendMessageV2, rmqtest.Fault{Drop: true, Times: 1}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("dropped")})
	d := time.Since(start)
	if !errors.Is(err, rocketmq.ErrTimeout) {
		t.Fatalf("send to a broker that drops it: %v, want rocketmq.ErrTimeout", err)
	}
	if d < budget-50*time.Millisecond || d > budget+time.Second {
		t.Errorf("send failed after %v, budget %v", d, budget)
	}
	sendN(t, p, topic, "after", 5)
}

// TestConnectionCutMidRequest: when the connection breaks while a send or
// a pull is under way, the call fails at once with the connection error
// (not after its timeout), the client dials again, the send's retry
// stores the message and the consumer goes on consuming.
func TestConnectionCutMidRequest(t *testing.T) {
	c := cluster(t)
	topic := newTopic(t, c, 2)
	pd := &dialer{}
	p := newProducer(t, c.NameServerAddr(), producer.WithDialer(pd.dial), producer.WithSendTimeout(5*time.Second))
	acked := sendN(t, p, topic, "warm", 2)

	cutOnce := func(d *dialer) rmqtest.Fault {
		return rmqtest.Fault{Delay: 200 * time.Millisecond, Times: 1, Match: func(*remoting.Command) bool {
			d.cut()
			return true
		}}
	}
	dials := pd.dialCount()
	if err := c.Intercept("broker-a", remoting.SendMessageV2, cutOnce(pd)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("cut")}); err != nil {
		t.Fatalf("send whose connection was cut: %v (the retry should have stored it)", err)
	}
	if d := time.Since(start); d >= 5*time.Second {
		t.Errorf("send whose connection was cut took %v: it waited for a timeout", d)
	}
	if pd.dialCount() <= dials {
		t.Error("the producer did not dial again after its connection was cut")
	}
	acked = append(acked, "cut")

	// A cut connection fails the call at once with ErrConnClosed.
	nd := &dialer{}
	p2 := newProducer(t, c.NameServerAddr(), producer.WithDialer(nd.dial), producer.WithRetries(0), producer.WithSendTimeout(5*time.Second))
	sendN(t, p2, topic, "warm2", 1)
	if err := c.Intercept("broker-a", remoting.SendMessageV2, cutOnce(nd)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err := p2.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("cut, no retry")})
	if !errors.Is(err, rocketmq.ErrConnClosed) {
		t.Errorf("send without retries whose connection was cut: %v, want rocketmq.ErrConnClosed", err)
	}
	if d := time.Since(start); d >= 5*time.Second {
		t.Errorf("send without retries whose connection was cut failed after %v, its timeout", d)
	}

	cd := &dialer{}
	s := newSeen()
	if err := c.Intercept("broker-a", remoting.PullMessage, rmqtest.Fault{Times: 3, Match: func(*remoting.Command) bool {
		cd.cut()
		return true
	}}); err != nil {
		t.Fatal(err)
	}
	startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s.handler("a"), consumer.WithDialer(cd.dial))
	acked = append(acked, sendN(t, p, topic, "after", 10)...)
	s.waitAll(t, acked)
}

// TestNameServerDown: with the NameServer unreachable, producers and
// consumers keep working on the routes they hold; a topic never looked up
// cannot be sent to; when the NameServer returns, new lookups work again.
func TestNameServerDown(t *testing.T) {
	c := cluster(t)
	px := startProxy(t, c.NameServerAddr())
	topic := newTopic(t, c, 4)
	p := newProducer(t, px.addr, producer.WithRouteRefreshInterval(100*time.Millisecond))
	s := newSeen()
	startConsumer(t, px.addr, name(t, "cg"), topic, s.handler("a"),
		consumer.WithRouteRefreshInterval(100*time.Millisecond), consumer.WithRebalanceInterval(200*time.Millisecond))
	acked := sendN(t, p, topic, "before", 10)
	s.waitAll(t, acked)

	px.down()
	fresh := newTopic(t, c, 2) // created at the broker; nobody has its route
	// Several refresh and rebalance periods pass with the NameServer gone.
	var during []string
	for deadline := time.Now().Add(time.Second); len(during) < 20 || time.Now().Before(deadline); {
		during = append(during, sendN(t, p, topic, fmt.Sprintf("down%d", len(during)), 1)...)
	}
	s.waitAll(t, during)
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: fresh, Body: []byte("no route")}); err == nil {
		t.Error("send to a topic never looked up succeeded with the NameServer down")
	}

	px.up(t)
	testutil.WaitFor(t, wait, "a send to a new topic after the NameServer returned", func() bool {
		_, err := p.Send(context.Background(), &rocketmq.Message{Topic: fresh, Body: []byte("routed")})
		return err == nil
	})
	after := sendN(t, p, topic, "after", 10)
	s.waitAll(t, after)
}

// TestConsumerHangs: a consumer that stops heartbeating without shutting
// down (its process hangs; its connections stay open) keeps its queues
// until the broker expires its channel; then the rest of the group takes
// them over and consumes every message sent after the hang.
func TestConsumerHangs(t *testing.T) {
	const expiry = 2 * time.Second
	c := cluster(t, rmqtest.WithClientExpiry(expiry, 200*time.Millisecond))
	const queues = 4
	topic := newTopic(t, c, queues)
	group := name(t, "cg")
	p := newProducer(t, c.NameServerAddr())
	s := newSeen()
	opts := []consumer.Option{consumer.WithRebalanceInterval(300 * time.Millisecond), consumer.WithHeartbeatInterval(200 * time.Millisecond)}
	hd := &dialer{}
	hung := startConsumer(t, c.NameServerAddr(), group, topic, s.handler("hung"),
		append(opts, consumer.WithDialer(hd.dial), consumer.WithInstanceName("hung"))...)
	alive := startConsumer(t, c.NameServerAddr(), group, topic, s.handler("alive"), append(opts, consumer.WithInstanceName("alive"))...)
	testutil.WaitFor(t, wait, "queues split between the two members", func() bool {
		return len(assigned(hung, topic)) == queues/2 && len(assigned(alive, topic)) == queues/2
	})
	sendN(t, p, topic, "before", 8)

	hd.freeze()
	testutil.WaitFor(t, wait, "the live member holding every queue", func() bool { return len(assigned(alive, topic)) == queues })
	// Measured from the hung member's last write to the broker (its last
	// heartbeat may be well before the freeze on a loaded machine).
	last := hd.lastWrite(c.BrokerAddr("broker-a"))
	if last.IsZero() {
		t.Fatal("the hung member never wrote to the broker through its dialer: the test's premise is wrong")
	}
	if d := time.Since(last); d < expiry {
		t.Errorf("the hung member's queues moved %v after its last write to the broker, before its channel expiry %v", d, expiry)
	}
	after := sendN(t, p, topic, "after", 20)
	var missing []string
	if !testutil.Poll(wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		missing = missing[:0]
		for _, b := range after {
			if !s.by["alive"][b] {
				missing = append(missing, b)
			}
		}
		return len(missing) == 0
	}) {
		t.Fatalf("the live member never consumed %v", missing)
	}
	// The hung member shuts down within its ctx although nothing answers.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_ = hung.Shutdown(ctx)
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("shutdown of the hung member took %v", d)
	}
}

// assigned returns the queues of topic c holds (not those of its retry
// topic).
func assigned(c *consumer.PushConsumer, topic string) []rocketmq.MessageQueue {
	var out []rocketmq.MessageQueue
	for _, q := range c.Assigned() {
		if q.Topic == topic {
			out = append(out, q)
		}
	}
	return out
}

// TestBrokerBlackHoled: while the topic's only broker is down, a listener
// on its address accepts connections and never answers (a hung process, a
// path that drops everything). Sends fail within their budget; once the
// real broker is back on the address the same producer sends again,
// although the black hole keeps its connections open: a request that
// timed out on a connection nothing came back on closed it, and the next
// one dialed the broker.
func TestBrokerBlackHoled(t *testing.T) {
	c := cluster(t)
	topic := newTopic(t, c, 4)
	const budget = time.Second
	p := newProducer(t, c.NameServerAddr(), producer.WithSendTimeout(budget))
	acked := sendN(t, p, topic, "before", 10)

	addr := c.BrokerAddr("broker-a")
	// A crash does not unregister the broker: its route stays, as a hung
	// broker's would, and sends keep going to its address.
	if err := c.CrashBroker("broker-a"); err != nil {
		t.Fatal(err)
	}
	hole := startBlackHole(t, addr)
	start := time.Now()
	_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("into the hole")})
	if err == nil {
		t.Fatal("send to a broker that never answers succeeded")
	}
	if d := time.Since(start); d > budget+3*time.Second { // room for a loaded machine
		t.Errorf("send to a broker that never answers failed after %v, budget %v", d, budget)
	}
	if hole.accepted() == 0 {
		t.Fatal("the producer never reached the black hole: the test's premise is wrong")
	}

	hole.stopListening()
	if err := c.StartBroker("broker-a"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "a send after the broker is back", func() bool {
		_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("probe")})
		return err == nil
	})
	acked = append(acked, sendN(t, p, topic, "after", 10)...)
	s := newSeen()
	startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s.handler("a"))
	s.waitAll(t, acked)
}
