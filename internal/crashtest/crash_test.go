package crashtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const (
	envLong     = "ROCKETMQ_LONG"
	envExternal = "ROCKETMQ_NAMESRV"
	queues      = 4
	senders     = 4
	brokerName  = "broker-a"
	// offsetFlush is the broker's -offset-flush-interval (Java
	// flushConsumerOffsetInterval, 5 s): a consumer offset committed less
	// than this long before a SIGKILL may not be on disk yet. Shorter than
	// the runs between kills, so that the redelivery bound is tighter than
	// "everything since the start".
	offsetFlush = time.Second
	// persistEvery is how often the push consumers commit offsets.
	persistEvery = 100 * time.Millisecond
)

// plan is how many kills a run makes and how long the load runs between
// them.
type plan struct {
	kills          int
	minRun, maxRun time.Duration
	budget         time.Duration // the whole run, kills and read-back included
}

func crashPlan() plan {
	if os.Getenv(envLong) != "" {
		return plan{kills: 12, minRun: 500 * time.Millisecond, maxRun: 8 * time.Second, budget: 5 * time.Minute}
	}
	return plan{kills: 3, minRun: 4 * time.Second, maxRun: 6 * time.Second, budget: 60 * time.Second}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// binary builds cmd/rocketmq-local once per test binary.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "rocketmq-crash-bin")
		if buildErr != nil {
			return
		}
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(gobin); err != nil {
			gobin = "go"
		}
		binPath = filepath.Join(buildDir, "rocketmq-local")
		cmd := exec.Command(gobin, "build", "-o", binPath, "github.com/go-rocketmq/rocketmq/cmd/rocketmq-local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// server is one rocketmq-local process.
type server struct {
	cmd      *exec.Cmd
	done     chan struct{}
	namesrv  string
	broker   string
	exitErr  error
	stderrMu sync.Mutex
	stderr   strings.Builder
}

// startServer runs rocketmq-local on data with the given listen
// addresses ("127.0.0.1:0" for fresh ports) and waits for its listeners.
func startServer(t *testing.T, bin, data, flush, namesrv, broker string) *server {
	t.Helper()
	s := &server{done: make(chan struct{})}
	s.cmd = exec.Command(bin, "-namesrv", namesrv, "-broker", broker, "-data", data, "-flush", flush,
		"-segment-size", fmt.Sprint(4<<20), "-long-poll-check", "200ms", "-offset-flush-interval", offsetFlush.String())
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		s.stderrMu.Lock()
		defer s.stderrMu.Unlock()
		if s.stderr.Len() < 64<<10 {
			s.stderr.Write(p)
		}
		return len(p), nil
	})
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		s.exitErr = s.cmd.Wait()
		close(s.done)
	}()
	timeout := time.After(30 * time.Second)
	for s.namesrv == "" || s.broker == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				<-s.done
				t.Fatalf("rocketmq-local ended before listening: %v\n%s", s.exitErr, s.stderrText())
			}
			f := strings.Fields(line)
			if len(f) >= 4 && f[1] == "listening" {
				switch f[0] {
				case "namesrv":
					s.namesrv = f[3]
				case brokerName:
					s.broker = f[3]
				}
			}
		case <-timeout:
			s.kill()
			t.Fatalf("rocketmq-local did not announce its listeners\n%s", s.stderrText())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

func (s *server) stderrText() string {
	s.stderrMu.Lock()
	defer s.stderrMu.Unlock()
	return s.stderr.String()
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// body is the payload of message key: the key, random filler and a CRC
// of both, so that any damage to a stored body shows.
func body(key string, r *rand.Rand) []byte {
	fill := make([]byte, 32+r.IntN(480))
	for i := range fill {
		fill[i] = 'a' + byte(r.IntN(26))
	}
	s := key + "|" + string(fill)
	return fmt.Appendf(nil, "%s|%08x", s, crc32.ChecksumIEEE([]byte(s)))
}

// parseBody returns the key of b and whether its checksum holds.
func parseBody(b []byte) (string, bool) {
	s := string(b)
	i := strings.LastIndexByte(s, '|')
	if i < 0 {
		return "", false
	}
	var sum uint32
	if _, err := fmt.Sscanf(s[i+1:], "%08x", &sum); err != nil || crc32.ChecksumIEEE([]byte(s[:i])) != sum {
		return "", false
	}
	key, _, _ := strings.Cut(s[:i], "|")
	return key, true
}

// ledger is what the senders know: keys acknowledged and keys tried.
type ledger struct {
	mu     sync.Mutex
	acked  map[string]bool
	tried  map[string]bool
	failed atomic.Int64
}

// delivery is one message handed to a push consumer.
type delivery struct {
	at  time.Time
	gen int // consumer generation (one per broker run)
	key string
}

// deliveries are keyed by queue and queue offset: a message the producer
// stored twice (a retry after a lost answer) has two offsets and is not a
// redelivery.
type deliveries struct {
	mu sync.Mutex
	m  map[[2]int64][]delivery
}

func (d *deliveries) handler(gen int) consumer.Handler {
	return func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		now := time.Now()
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, m := range msgs {
			key, ok := parseBody(m.Body)
			if !ok {
				key = "CORRUPT:" + string(m.Body)
			}
			k := [2]int64{int64(m.QueueID), m.QueueOffset}
			d.m[k] = append(d.m[k], delivery{at: now, gen: gen, key: key})
		}
		return consumer.Success, nil
	}
}

func TestBrokerKill(t *testing.T) {
	if os.Getenv(envExternal) != "" {
		t.Skipf("kills a rocketmq-local process of its own (%s is set)", envExternal)
	}
	if testing.Short() {
		t.Skip("builds and kills rocketmq-local")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	bin := binary(t)
	for _, flush := range []string{"async", "sync"} {
		t.Run(flush, func(t *testing.T) { crashRun(t, bin, flush) })
	}
}

// crashRun sends with several goroutines while a push consumer group
// consumes, kills the broker process at random moments and restarts it
// on the same store and ports, then checks what the store holds and what
// was consumed.
func crashRun(t *testing.T, bin, flush string) {
	p := crashPlan()
	deadline := time.Now().Add(p.budget)
	data := t.TempDir()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	srv := startServer(t, bin, data, flush, "127.0.0.1:0", "127.0.0.1:0")
	nsAddr, brokerAddr := srv.namesrv, srv.broker
	topic := "CrashTopic"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := rmqtest.CreateTopic(ctx, nsAddr, topic, queues, rmqtest.TopicOnBrokers(brokerName)); err != nil {
		cancel()
		t.Fatal(err)
	}
	cancel()

	prod, err := producer.New(producer.WithGroup("pg_crash"), producer.WithNameServers(nsAddr),
		producer.WithSendTimeout(3*time.Second), producer.WithRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := prod.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = prod.Shutdown(ctx)
	})

	group := "cg_crash_" + flush
	got := &deliveries{m: map[[2]int64][]delivery{}}
	startConsumer := func(gen int) *consumer.PushConsumer {
		c, err := consumer.NewPush(consumer.WithGroup(group), consumer.WithNameServers(nsAddr),
			consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithOffsetPersistInterval(persistEvery),
			consumer.WithInstanceName(fmt.Sprintf("crash%d", gen)))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(topic, consumer.Tags("*"), got.handler(gen)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	stopConsumer := func(c *consumer.PushConsumer) {
		// The broker is down: the final commit fails and ctx ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	}
	cons := startConsumer(0)
	defer func() { stopConsumer(cons) }()

	led := &ledger{acked: map[string]bool{}, tried: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(seed), uint64(g)+2))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("g%d-%d", g, i)
				m, err := producer.NewMessage(topic, body(key, r), producer.Keys(key))
				if err != nil {
					t.Error(err)
					return
				}
				led.mu.Lock()
				led.tried[key] = true
				led.mu.Unlock()
				if _, err := prod.Send(context.Background(), m); err != nil {
					led.failed.Add(1)
					// The broker is down: back off a little, not spin.
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					continue
				}
				led.mu.Lock()
				led.acked[key] = true
				led.mu.Unlock()
			}
		}()
	}
	ackedNow := func() int {
		led.mu.Lock()
		defer led.mu.Unlock()
		return len(led.acked)
	}

	var kills []time.Time
	var onDisk []map[int32]int64 // the group's offsets in the broker's file after each kill
	for k := range p.kills {
		if time.Now().After(deadline.Add(-20 * time.Second)) {
			t.Logf("time budget reached after %d kills", k)
			break
		}
		before := ackedNow()
		run := p.minRun + time.Duration(rng.Int64N(int64(p.maxRun-p.minRun)))
		// Load for run, and at least until sends go through again.
		start := time.Now()
		testutil.WaitFor(t, 30*time.Second, "sends acknowledged after the restart", func() bool {
			return time.Since(start) >= run && ackedNow() > before
		})
		srv.kill()
		kills = append(kills, time.Now())
		stopConsumer(cons)
		onDisk = append(onDisk, diskOffsets(t, data, topic, group))
		if srv.exitErr == nil || !strings.Contains(srv.exitErr.Error(), "killed") {
			t.Fatalf("rocketmq-local did not die of SIGKILL: %v", srv.exitErr)
		}
		srv = startServer(t, bin, data, flush, nsAddr, brokerAddr)
		cons = startConsumer(k + 1)
		t.Logf("kill %d after %v: %d acknowledged so far", k+1, run.Round(time.Millisecond), ackedNow())
	}
	// Some load on the last run too, then stop the senders.
	before := ackedNow()
	testutil.WaitFor(t, 30*time.Second, "sends acknowledged after the last restart", func() bool { return ackedNow() > before+100 })
	close(stop)
	wg.Wait()

	acked := len(led.acked)
	stored := readBack(t, nsAddr, topic)
	var recovered, lost, dupStored, unackedStored int
	for key, n := range stored {
		if n > 1 {
			dupStored += n - 1
		}
		if !led.acked[key] {
			if !led.tried[key] {
				t.Errorf("stored message %q was never sent", key)
			}
			unackedStored++
		}
	}
	for key := range led.acked {
		if stored[key] == 0 {
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged message %s not in the store after the restarts", key)
			}
		} else {
			recovered++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged messages lost (flush %s)", lost, acked, flush)
	}
	if acked == 0 {
		t.Fatal("nothing was acknowledged")
	}

	// Consumption: every stored message consumed by the group; a
	// redelivery only of what was consumed too recently before a kill for
	// its committed offset to have reached the broker's offset file.
	var storedTotal int
	for _, n := range stored {
		storedTotal += n
	}
	var consumedKeys map[string]bool
	if !testutil.Poll(60*time.Second, func() bool {
		got.mu.Lock()
		defer got.mu.Unlock()
		if len(got.m) < storedTotal {
			return false
		}
		consumedKeys = map[string]bool{}
		for _, ds := range got.m {
			consumedKeys[ds[0].key] = true
		}
		return true
	}) {
		got.mu.Lock()
		n := len(got.m)
		got.mu.Unlock()
		t.Fatalf("consumed %d of %d stored messages", n, storedTotal)
	}
	for key := range led.acked {
		if !consumedKeys[key] {
			t.Errorf("acknowledged message %s never consumed", key)
		}
	}
	// window: a message consumed at time c is committed by c+persistEvery
	// and on the broker's disk by c+persistEvery+offsetFlush; two more
	// seconds cover the consume call, the commit round trip and a machine
	// busy with other work.
	window := persistEvery + offsetFlush + 2*time.Second
	got.mu.Lock()
	// Each consumer after a restart starts every queue exactly at the
	// offset the broker had on disk when it was killed.
	for gen := 1; gen <= len(kills); gen++ {
		first := map[int32]int64{}
		for qo, ds := range got.m {
			for _, d := range ds {
				if d.gen != gen {
					continue
				}
				if o, ok := first[int32(qo[0])]; !ok || qo[1] < o {
					first[int32(qo[0])] = qo[1]
				}
			}
		}
		for q, o := range first {
			if want := onDisk[gen-1][q]; o != want {
				t.Errorf("after kill %d queue %d resumed at offset %d, committed offset on disk %d", gen, q, o, want)
			}
		}
	}
	var redelivered, beyond int
	for qo, ds := range got.m {
		for i := 1; i < len(ds); i++ {
			redelivered++
			if ds[i].key != ds[0].key {
				t.Errorf("queue %d offset %d delivered as %s and as %s", qo[0], qo[1], ds[0].key, ds[i].key)
			}
			prev, cur := ds[i-1], ds[i]
			if cur.gen == prev.gen {
				t.Errorf("queue %d offset %d delivered twice to one consumer without a restart", qo[0], qo[1])
				continue
			}
			// The kill that ended prev's consumer.
			kill := kills[prev.gen]
			if prev.at.Before(kill.Add(-window)) {
				beyond++
				if beyond <= 10 {
					t.Errorf("queue %d offset %d consumed %v before kill %d and again after it (window %v)",
						qo[0], qo[1], kill.Sub(prev.at).Round(time.Millisecond), prev.gen+1, window)
				}
			}
		}
	}
	got.mu.Unlock()

	t.Logf("flush %s, %d kills: sent %d, acknowledged %d, recovered %d, lost %d; stored duplicates %d, unacknowledged but stored %d; "+
		"consumed %d offsets, redelivered %d (all within %v of a kill: %v); send errors %d",
		flush, len(kills), len(led.tried), acked, recovered, lost, dupStored, unackedStored,
		storedTotal, redelivered, window, beyond == 0, led.failed.Load())
}

// diskOffsets reads group's offsets of topic from the broker's
// consumerOffset.json (docs/PROTOCOL.md §10.6); a queue missing there
// starts at 0 (FromFirst).
func diskOffsets(t *testing.T, data, topic, group string) map[int32]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, brokerName, "config", "consumerOffset.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[int32]int64{}
	}
	if err != nil {
		t.Fatal(err)
	}
	var w remoting.ConsumerOffsetSerializeWrapper
	if err := w.DecodeJSON(b); err != nil {
		t.Fatalf("consumerOffset.json: %v", err)
	}
	out := map[int32]int64{}
	for q, o := range w.OffsetTable[topic+"@"+group] {
		out[q] = o
	}
	return out
}

// readBack pulls every queue of topic from the first offset with the lite
// pull consumer's low-level Pull and returns how often each key is stored;
// a body whose checksum fails is an error.
func readBack(t *testing.T, nsAddr, topic string) map[string]int {
	t.Helper()
	pc, err := consumer.NewPull(consumer.WithGroup("cg_crash_readback"), consumer.WithNameServers(nsAddr))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := pc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Shutdown(context.Background()) }()
	stored := map[string]int{}
	for q := range queues {
		mq := rocketmq.MessageQueue{Topic: topic, BrokerName: brokerName, QueueID: q}
		for off := int64(0); ; {
			res, err := pc.Pull(ctx, mq, consumer.Tags("*"), off, 256)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Messages {
				key, ok := parseBody(m.Body)
				if !ok {
					t.Errorf("queue %d offset %d: damaged body %.60q", q, m.QueueOffset, m.Body)
					continue
				}
				if ks := m.Keys(); len(ks) != 1 || ks[0] != key {
					t.Errorf("queue %d offset %d: keys %q, body of %s", q, m.QueueOffset, ks, key)
				}
				stored[key]++
			}
			if res.Status != consumer.PullFound || res.NextOffset >= res.MaxOffset {
				if res.NextOffset < res.MaxOffset && res.Status != consumer.PullFound {
					t.Fatalf("queue %d: pull at %d answered %v with max offset %d", q, off, res.Status, res.MaxOffset)
				}
				break
			}
			off = res.NextOffset
		}
	}
	return stored
}
