// Package soaksuite runs producers and consumers against the in-process
// cluster for a long time and checks that memory and goroutines stay flat
// and that every acknowledged message is consumed. It runs only when
// ROCKETMQ_SOAK holds a duration (for example 10m) and skips when
// ROCKETMQ_NAMESRV is set: it samples the in-process broker's memory too.
package soaksuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Bounds of a flat run: the last third's median heap may exceed the first
// third's by heapFactor plus heapSlack (caches and pools filling up), and
// its median goroutine count the first third's highest by goroutineSlack
// (server worker pools grow and shrink with the load).
const (
	heapFactor     = 1.5
	heapSlack      = 16 << 20
	goroutineSlack = 16
)

// sample is one reading taken after a GC.
type sample struct {
	at         time.Duration
	heapInuse  uint64
	goroutines int
}

func take(start time.Time) sample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{at: time.Since(start), heapInuse: ms.HeapInuse, goroutines: runtime.NumGoroutine()}
}

// goroutineKinds counts the live goroutines by the function each was
// created by and the function it runs now, to name what grew.
func goroutineKinds() map[string]int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]int{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		if len(lines) < 2 {
			continue
		}
		top, created := lines[1], ""
		for _, l := range lines {
			if strings.HasPrefix(l, "created by ") {
				created, _, _ = strings.Cut(strings.TrimPrefix(l, "created by "), " in goroutine ")
			}
		}
		if i := strings.LastIndexByte(top, '('); i > 0 {
			top = top[:i]
		}
		out[top+" <- "+created]++
	}
	return out
}

// grown lists the kinds of goroutine more numerous in after than in before.
func grown(before, after map[string]int) []string {
	var out []string
	for k, n := range after {
		if n > before[k] {
			out = append(out, fmt.Sprintf("+%d %s", n-before[k], k))
		}
	}
	slices.Sort(out)
	return out
}

func median[T uint64 | int](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// flat compares the first and last thirds of the samples and says what
// grew, or "" when neither heap nor goroutines did.
func flat(samples []sample) string {
	n := len(samples) / 3
	if n == 0 {
		return fmt.Sprintf("%d samples are too few to compare", len(samples))
	}
	var firstHeap, lastHeap []uint64
	var firstG, lastG []int
	for _, s := range samples[:n] {
		firstHeap = append(firstHeap, s.heapInuse)
		firstG = append(firstG, s.goroutines)
	}
	for _, s := range samples[len(samples)-n:] {
		lastHeap = append(lastHeap, s.heapInuse)
		lastG = append(lastG, s.goroutines)
	}
	var why []string
	if h0, h1 := median(firstHeap), median(lastHeap); float64(h1) > heapFactor*float64(h0)+heapSlack {
		why = append(why, fmt.Sprintf("heap grew: median %d B in the last third, %d B in the first", h1, h0))
	}
	if g0, g1 := slices.Max(firstG), median(lastG); g1 > g0+goroutineSlack {
		why = append(why, fmt.Sprintf("goroutines grew: median %d in the last third, at most %d in the first", g1, g0))
	}
	return strings.Join(why, "; ")
}

func TestFlat(t *testing.T) {
	const mib = 1 << 20
	series := func(heap func(i int) uint64, g func(i int) int) []sample {
		var s []sample
		for i := range 30 {
			s = append(s, sample{heapInuse: heap(i), goroutines: g(i)})
		}
		return s
	}
	cases := []struct {
		name    string
		samples []sample
		grew    string
	}{
		{"steady", series(func(i int) uint64 { return 40*mib + uint64(i%3)*mib }, func(i int) int { return 60 + i%5 }), ""},
		{"spikes within bounds", series(func(i int) uint64 {
			if i%7 == 0 {
				return 200 * mib
			}
			return 40 * mib
		}, func(int) int { return 60 }), ""},
		{"heap leak", series(func(i int) uint64 { return 40*mib + uint64(i)*4*mib }, func(int) int { return 60 }), "heap grew"},
		{"goroutine leak", series(func(int) uint64 { return 40 * mib }, func(i int) int { return 60 + 3*i }), "goroutines grew"},
		{"too few", []sample{{}, {}}, "too few"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := flat(c.samples)
			if c.grew == "" && got != "" || c.grew != "" && !strings.Contains(got, c.grew) {
				t.Errorf("flat = %q, want %q", got, c.grew)
			}
		})
	}
}

// idSet records message ids (small consecutive integers) in a bitmap, so
// that tracking a long run costs a bit per message.
type idSet struct {
	mu    sync.Mutex
	bits  []uint64
	count int64
	dups  int64
}

func (s *idSet) add(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := int(id / 64)
	for w >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	if s.bits[w]&(1<<(id%64)) != 0 {
		s.dups++
		return
	}
	s.bits[w] |= 1 << (id % 64)
	s.count++
}

func (s *idSet) stats() (count, dups int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, s.dups
}

// missing returns how many ids of want are not in s, and one of them.
func (s *idSet) missing(want *idSet) (n int64, example int64) {
	want.mu.Lock()
	defer want.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	example = -1
	for w, bits := range want.bits {
		var have uint64
		if w < len(s.bits) {
			have = s.bits[w]
		}
		if lost := bits &^ have; lost != 0 {
			for b := range 64 {
				if lost&(1<<b) != 0 {
					n++
					if example < 0 {
						example = int64(w*64 + b)
					}
				}
			}
		}
	}
	return n, example
}

func TestIDSet(t *testing.T) {
	var want, got idSet
	for _, id := range []int64{0, 1, 63, 64, 200, 1000} {
		want.add(id)
	}
	for _, id := range []int64{1, 63, 64, 64, 1000, 5000} {
		got.add(id)
	}
	if n, dups := got.stats(); n != 5 || dups != 1 {
		t.Errorf("stats = %d, %d; want 5, 1", n, dups)
	}
	if n, ex := got.missing(&want); n != 2 || ex != 0 {
		t.Errorf("missing = %d (e.g. %d), want 2 (e.g. 0)", n, ex)
	}
	got.add(0)
	got.add(200)
	if n, ex := got.missing(&want); n != 0 {
		t.Errorf("missing = %d (e.g. %d) once every id is in", n, ex)
	}
}

func bodyID(m *rocketmq.MessageExt) (int64, bool) {
	head, _, ok := strings.Cut(string(m.Body), "|")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(head, 10, 64)
	return id, err == nil
}

func TestSoak(t *testing.T) {
	env := os.Getenv("ROCKETMQ_SOAK")
	if env == "" {
		t.Skip("set ROCKETMQ_SOAK to a duration (e.g. 10m) to run the soak test")
	}
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("samples the in-process broker's memory (ROCKETMQ_NAMESRV is set)")
	}
	dur, err := time.ParseDuration(env)
	if err != nil || dur <= 0 {
		t.Fatalf("ROCKETMQ_SOAK=%q is not a positive duration", env)
	}
	every := min(max(dur/40, time.Second), 5*time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := rmqtest.StartCluster(t, rmqtest.WithStoreDir(t.TempDir()))
	ns := cl.NameServerAddr()
	const topic = "SoakTopic"
	if err := cl.CreateTopic(ctx, topic, 4); err != nil {
		t.Fatal(err)
	}

	var acked, pushed, polled idSet
	var seq, sendErrs atomic.Int64
	var lastErr atomic.Value
	pad := strings.Repeat("x", 200)
	next := func() (*rocketmq.Message, int64) {
		id := seq.Add(1) - 1
		m := &rocketmq.Message{Topic: topic, Body: []byte(strconv.FormatInt(id, 10) + "|" + pad[:id%200])}
		m.SetTag("soak")
		return m, id
	}
	failed := func(err error) {
		sendErrs.Add(1)
		lastErr.Store(err.Error())
	}

	push, err := consumer.NewPush(consumer.WithGroup("cg_soak_push"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := push.Subscribe(topic, consumer.Tags("soak"), func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			if id, ok := bodyID(m); ok {
				pushed.add(id)
			}
		}
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := push.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer push.Shutdown(context.Background())

	pull, err := consumer.NewPull(consumer.WithGroup("cg_soak_pull"), consumer.WithNameServers(ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := pull.Subscribe(topic, consumer.Tags("soak")); err != nil {
		t.Fatal(err)
	}
	if err := pull.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer pull.Shutdown(context.Background())
	pollCtx, stopPoll := context.WithCancel(ctx)
	var pollers sync.WaitGroup
	pollers.Add(1)
	go func() {
		defer pollers.Done()
		for pollCtx.Err() == nil {
			msgs, err := pull.Poll(pollCtx)
			if err != nil && pollCtx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("poll: %v", err)
				return
			}
			for _, m := range msgs {
				if id, ok := bodyID(m); ok {
					polled.add(id)
				}
			}
		}
	}()
	defer func() { stopPoll(); pollers.Wait() }()

	p, err := producer.New(producer.WithGroup("pg_soak"), producer.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())

	// Three senders, each paced by its own ticker so that the run stays a
	// steady load rather than a benchmark: sync single messages, async
	// single messages with at most 64 in flight, and sync batches of 8.
	sendCtx, stopSend := context.WithCancel(ctx)
	var senders, inflight sync.WaitGroup
	window := make(chan struct{}, 64)
	pace := func(period time.Duration, one func()) {
		senders.Add(1)
		go func() {
			defer senders.Done()
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				select {
				case <-sendCtx.Done():
					return
				case <-tick.C:
					one()
				}
			}
		}()
	}
	pace(3*time.Millisecond, func() {
		m, id := next()
		if _, err := p.Send(sendCtx, m); err != nil {
			if sendCtx.Err() == nil {
				failed(err)
			}
			return
		}
		acked.add(id)
	})
	pace(3*time.Millisecond, func() {
		select {
		case window <- struct{}{}:
		case <-sendCtx.Done():
			return
		}
		m, id := next()
		inflight.Add(1)
		err := p.SendAsync(context.Background(), func(_ *rocketmq.SendResult, err error) {
			defer inflight.Done()
			<-window
			if err != nil {
				failed(err)
				return
			}
			acked.add(id)
		}, m)
		if err != nil {
			inflight.Done()
			<-window
			failed(err)
		}
	})
	pace(24*time.Millisecond, func() {
		batch := make([]*rocketmq.Message, 8)
		ids := make([]int64, 8)
		for i := range batch {
			batch[i], ids[i] = next()
		}
		if _, err := p.Send(sendCtx, batch...); err != nil {
			if sendCtx.Err() == nil {
				failed(err)
			}
			return
		}
		for _, id := range ids {
			acked.add(id)
		}
	})

	start := time.Now()
	var samples []sample
	var kinds0 map[string]int
	tick := time.NewTicker(every)
	for time.Since(start) < dur {
		<-tick.C
		s := take(start)
		samples = append(samples, s)
		if len(samples) == 1 {
			kinds0 = goroutineKinds()
		}
		a, _ := acked.stats()
		pu, _ := pushed.stats()
		po, _ := polled.stats()
		t.Logf("%6.0fs heap %6.1f MiB goroutines %4d acked %7d pushed %7d polled %7d errors %d",
			s.at.Seconds(), float64(s.heapInuse)/(1<<20), s.goroutines, a, pu, po, sendErrs.Load())
	}
	tick.Stop()
	kinds1 := goroutineKinds()
	stopSend()
	senders.Wait()
	inflight.Wait()

	sent, _ := acked.stats()
	errs := sendErrs.Load()
	if sent == 0 {
		t.Fatal("no message was acknowledged")
	}
	// A send may time out on a loaded machine; a steady run has next to none.
	if errs*1000 > sent {
		t.Errorf("%d of %d sends failed, last: %v", errs, sent+errs, lastErr.Load())
	}
	for _, c := range []struct {
		name string
		got  *idSet
	}{{"push consumer", &pushed}, {"lite pull consumer", &polled}} {
		if !testutil.Poll(2*time.Minute, func() bool { n, _ := c.got.missing(&acked); return n == 0 }) {
			n, ex := c.got.missing(&acked)
			t.Errorf("the %s lacks %d of %d acknowledged messages, e.g. id %d", c.name, n, sent, ex)
		}
	}
	pu, pd := pushed.stats()
	po, od := polled.stats()
	t.Logf("%v: %d samples, %d messages acknowledged (%.0f/s), %d send errors; push consumer %d (+%d redelivered), lite pull consumer %d (+%d redelivered)",
		dur, len(samples), sent, float64(sent)/dur.Seconds(), errs, pu, pd, po, od)
	t.Logf("goroutines more numerous at the end than at the first sample:\n%s", strings.Join(grown(kinds0, kinds1), "\n"))
	if why := flat(samples); why != "" {
		t.Error(why)
	}
	first, last := samples[:len(samples)/3], samples[len(samples)-len(samples)/3:]
	heaps := func(s []sample) (v []uint64) {
		for _, x := range s {
			v = append(v, x.heapInuse)
		}
		return v
	}
	gs := func(s []sample) (v []int) {
		for _, x := range s {
			v = append(v, x.goroutines)
		}
		return v
	}
	t.Logf("heap in use after GC: first third median %.1f MiB (max %.1f), last third median %.1f MiB (max %.1f); goroutines: first third median %d (max %d), last third median %d (max %d)",
		float64(median(heaps(first)))/(1<<20), float64(slices.Max(heaps(first)))/(1<<20),
		float64(median(heaps(last)))/(1<<20), float64(slices.Max(heaps(last)))/(1<<20),
		median(gs(first)), slices.Max(gs(first)), median(gs(last)), slices.Max(gs(last)))
}
