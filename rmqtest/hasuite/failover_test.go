// Package hasuite rehearses broker failure with master/slave replication:
// a master killed under load, its store deleted, and what the slave still
// has; producers and consumers carrying on over the slave and the other
// broker. Each test prints its figures. They need the in-process cluster
// and skip when ROCKETMQ_NAMESRV points at an external one.
package hasuite

import (
	"context"
	"sync/atomic"

	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const wait = 30 * time.Second

func cluster(t *testing.T, opts ...rmqtest.Option) *rmqtest.Cluster {
	t.Helper()
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("kills brokers of the in-process cluster (ROCKETMQ_NAMESRV is set)")
	}
	base := []rmqtest.Option{rmqtest.WithSlaves(1), rmqtest.WithSlaveSyncInterval(200 * time.Millisecond)}
	return rmqtest.StartCluster(t, append(base, opts...)...)
}

func name(t *testing.T, prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}

func newProducer(t *testing.T, ns string, opts ...producer.Option) *producer.Producer {
	t.Helper()
	p, err := producer.New(append([]producer.Option{producer.WithGroup(name(t, "pg")), producer.WithNameServers(ns)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	})
	return p
}

// seen counts the bodies a push consumer got.
type seen struct {
	mu sync.Mutex
	m  map[string]int
}

func (s *seen) handler(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		s.m[string(m.Body)]++
	}
	return consumer.Success, nil
}

func (s *seen) count(body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[body]
}

func (s *seen) duplicates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.m {
		n += c - 1
	}
	return n
}

func startConsumer(t *testing.T, ns, group, topic string, s *seen) *consumer.PushConsumer {
	t.Helper()
	c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(ns),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithOffsetPersistInterval(100*time.Millisecond),
		consumer.WithHeartbeatInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.Tags("*"), s.handler); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return c
}

// acked is a message whose send returned without error.
type acked struct {
	body   string
	status rocketmq.SendStatus
	broker string
	queue  int
	offset int64
}

// load sends from callers goroutines until stop is closed and returns
// every send that returned without error, and the errors.
// acks counts the successful sends as they happen.
func load(p *producer.Producer, topic string, callers int, stop <-chan struct{}, acks *atomic.Int64) (ok []acked, errs []error, maxGap time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	last := time.Now()
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf("g%d-%d", g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := p.Send(ctx, &rocketmq.Message{Topic: topic, Body: []byte(body)})
				cancel()
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					now := time.Now()
					maxGap = max(maxGap, now.Sub(last))
					last = now
					ok = append(ok, acked{body: body, status: res.Status, broker: res.Queue.BrokerName, queue: res.Queue.QueueID, offset: res.QueueOffset})
					acks.Add(1)
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond) // a dead route: do not spin
				}
			}
		}()
	}
	wg.Wait()
	return ok, errs, maxGap
}

// TestMasterLost: under sync send load the master of broker-a is killed
// and its store deleted. With SYNC_MASTER every message answered SEND_OK
// is read back from the slave, none lost; with ASYNC_MASTER the slave may
// lack the newest ones (the replication window, printed) but holds every
// queue's messages up to a point without holes.
func TestMasterLost(t *testing.T) {
	for _, role := range []string{"SYNC_MASTER", "ASYNC_MASTER"} {
		t.Run(role, func(t *testing.T) {
			c := cluster(t, rmqtest.WithBrokerRole(role))
			topic := name(t, "HA")
			if err := c.CreateTopic(context.Background(), topic, 4); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, wait, "the slave to copy the topic", func() bool {
				r, _ := c.Replication("broker-a")
				return r.SlaveSyncs[1] >= 2 && r.Connected[1]
			})
			p := newProducer(t, c.NameServerAddr(), producer.WithSendTimeout(2*time.Second))
			stop := make(chan struct{})
			var ok []acked
			var errs []error
			done := make(chan struct{})
			var acks atomic.Int64
			go func() { ok, errs, _ = load(p, topic, 16, stop, &acks); close(done) }()
			// The kill comes mid-way through the load.
			testutil.WaitFor(t, wait, "200 sends answered before the kill", func() bool { return acks.Load() >= 200 })
			before, _ := c.Replication("broker-a")
			if err := c.CrashBrokerID("broker-a", 0); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(c.StoreDirID("broker-a", 0)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			close(stop)
			<-done
			var sendOK []acked
			statuses := map[rocketmq.SendStatus]int{}
			for _, a := range ok {
				statuses[a.status]++
				if a.status == rocketmq.SendOK {
					sendOK = append(sendOK, a)
				}
			}
			if len(sendOK) == 0 {
				t.Fatalf("no send answered SEND_OK (statuses %v, %d errors)", statuses, len(errs))
			}
			after, _ := c.Replication("broker-a")

			// Read everything back from the slave, the master being gone.
			s := &seen{m: map[string]int{}}
			startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s)
			var lost []acked
			testutil.Poll(15*time.Second, func() bool {
				lost = lost[:0]
				for _, a := range sendOK {
					if s.count(a.body) == 0 {
						lost = append(lost, a)
					}
				}
				return len(lost) == 0
			})
			t.Logf("%s: %d sends answered (%v), %d send errors after the kill; master at %d, slave acked %d before the kill, slave at %d after; "+
				"%d of %d SEND_OK messages missing from the slave; %d duplicates read",
				role, len(ok), statuses, len(errs), before.MasterOffset, before.Acked, after.SlaveOffsets[1], len(lost), len(sendOK), s.duplicates())
			if role == "SYNC_MASTER" {
				if len(lost) > 0 {
					t.Fatalf("%d acknowledged messages lost, e.g. %+v", len(lost), lost[0])
				}
				return
			}
			// ASYNC: what is missing is each queue's tail, never a hole.
			firstMissing := map[int]int64{}
			for _, a := range lost {
				if o, ok := firstMissing[a.queue]; !ok || a.offset < o {
					firstMissing[a.queue] = a.offset
				}
			}
			for _, a := range sendOK {
				if o, ok := firstMissing[a.queue]; ok && a.offset > o && s.count(a.body) > 0 {
					t.Fatalf("queue %d: offset %d replicated but %d before it lost", a.queue, a.offset, o)
				}
			}
		})
	}
}

// TestProducerRidesOverMasterLoss: with broker-a and broker-b, the master
// of broker-a dies mid-load. No send returns an error: retries go to
// broker-b. The longest gap between two successful sends is printed.
func TestProducerRidesOverMasterLoss(t *testing.T) {
	c := cluster(t, rmqtest.WithBrokers(2))
	topic := name(t, "HA")
	if err := c.CreateTopic(context.Background(), topic, 4); err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, c.NameServerAddr(), producer.WithSendTimeout(3*time.Second))
	// Routes to both brokers first.
	testutil.WaitFor(t, wait, "both brokers in the route", func() bool {
		res, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("probe")})
		return err == nil && res.Queue.BrokerName == "broker-b"
	})
	stop := make(chan struct{})
	var ok []acked
	var errs []error
	var gap time.Duration
	done := make(chan struct{})
	var acks atomic.Int64
	go func() { ok, errs, gap = load(p, topic, 8, stop, &acks); close(done) }()
	testutil.WaitFor(t, wait, "100 sends answered before the kill", func() bool { return acks.Load() >= 100 })
	if err := c.CrashBrokerID("broker-a", 0); err != nil {
		t.Fatal(err)
	}
	killed := acks.Load()
	testutil.WaitFor(t, wait, "300 sends answered after the kill", func() bool { return acks.Load() >= killed+300 })
	close(stop)
	<-done
	perBroker := map[string]int{}
	for _, a := range ok {
		perBroker[a.broker]++
	}
	t.Logf("%d sends succeeded %v, %d failed; longest gap between two successful sends %v", len(ok), perBroker, len(errs), gap)
	if len(errs) > 0 {
		t.Fatalf("%d sends failed, e.g. %v", len(errs), errs[0])
	}
	if gap > 10*time.Second {
		t.Fatalf("sends stalled for %v", gap)
	}
}

// TestConsumersReadFromSlave: a push consumer started while the master of
// broker-a is down consumes everything from its slave, and once the master
// returns, what is sent then.
func TestConsumersReadFromSlave(t *testing.T) {
	c := cluster(t)
	topic := name(t, "HA")
	if err := c.CreateTopic(context.Background(), topic, 2); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, "the slave to copy the topic", func() bool {
		r, _ := c.Replication("broker-a")
		return r.SlaveSyncs[1] >= 2
	})
	p := newProducer(t, c.NameServerAddr())
	var bodies []string
	for i := range 40 {
		b := fmt.Sprintf("before-%d", i)
		if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte(b)}); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	testutil.WaitFor(t, wait, "replication", func() bool {
		r, _ := c.Replication("broker-a")
		return r.SlaveOffsets[1] == r.MasterOffset
	})
	if err := c.StopBrokerID(context.Background(), "broker-a", 0); err != nil {
		t.Fatal(err)
	}
	s := &seen{m: map[string]int{}}
	startConsumer(t, c.NameServerAddr(), name(t, "cg"), topic, s)
	lite := &seen{m: map[string]int{}}
	stopLite := startLitePull(t, c.NameServerAddr(), name(t, "lite"), topic, lite)
	defer stopLite()
	waitAll(t, s, bodies, "from the slave")
	waitAll(t, lite, bodies, "lite pull from the slave")
	if err := c.StartBrokerID("broker-a", 0); err != nil {
		t.Fatal(err)
	}
	var after []string
	testutil.WaitFor(t, wait, "a send after the master returned", func() bool {
		_, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte("probe")})
		return err == nil
	})
	for i := range 20 {
		b := fmt.Sprintf("after-%d", i)
		if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte(b)}); err != nil {
			t.Fatal(err)
		}
		after = append(after, b)
	}
	waitAll(t, s, after, "after the master returned")
	waitAll(t, lite, after, "lite pull after the master returned")
	t.Logf("%d messages read while the master was away, %d after; duplicates: push %d, lite pull %d",
		len(bodies), len(after), s.duplicates(), lite.duplicates())
}

// startLitePull polls topic into s on a goroutine until the returned stop.
func startLitePull(t *testing.T, ns, group, topic string, s *seen) (stop func()) {
	t.Helper()
	c, err := consumer.NewPull(consumer.WithGroup(group), consumer.WithNameServers(ns),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithHeartbeatInterval(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.Tags("*")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			msgs, _ := c.Poll(ctx)
			s.handler(ctx, msgs)
		}
	}()
	return func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = c.Shutdown(sctx)
	}
}

func waitAll(t *testing.T, s *seen, want []string, what string) {
	t.Helper()
	var missing []string
	if !testutil.Poll(wait, func() bool {
		missing = missing[:0]
		for _, b := range want {
			if s.count(b) == 0 {
				missing = append(missing, b)
			}
		}
		return len(missing) == 0
	}) {
		sort.Strings(missing)
		t.Fatalf("%s: %d of %d messages never consumed, e.g. %q", what, len(missing), len(want), missing[0])
	}
}

// BenchmarkAsyncReplicationLag sends with 64 sync callers to an
// ASYNC_MASTER and samples every millisecond how many bytes the slave is
// behind (master write position − slave write position, read in the same
// process): lag-median-B and lag-max-B.
func BenchmarkAsyncReplicationLag(b *testing.B) {
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		b.Skip("measures the in-process cluster")
	}
	c := rmqtest.StartCluster(b, rmqtest.WithSlaves(1))
	topic := fmt.Sprintf("HALag_%d", time.Now().UnixNano()%1e9)
	if err := c.CreateTopic(context.Background(), topic, 4); err != nil {
		b.Fatal(err)
	}
	p, err := producer.New(producer.WithGroup("pg_lag"), producer.WithNameServers(c.NameServerAddr()))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	body := make([]byte, 1024)
	stop := make(chan struct{})
	samples := make(chan []int64, 1)
	go func() {
		var s []int64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				samples <- s
				return
			case <-t.C:
				if r, err := c.Replication("broker-a"); err == nil {
					s = append(s, r.MasterOffset-r.SlaveOffsets[1])
				}
			}
		}
	}()
	b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: body}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	close(stop)
	s := <-samples
	if len(s) == 0 {
		return
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	b.ReportMetric(float64(s[len(s)/2]), "lag-median-B")
	b.ReportMetric(float64(s[len(s)-1]), "lag-max-B")
	b.ReportMetric(float64(len(s)), "samples")
}
