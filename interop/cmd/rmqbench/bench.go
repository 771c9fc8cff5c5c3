package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// runProperty marks every message of one run, so consume mode counts only
// what this run produced even on a reused topic.
const runProperty = "RMQBENCH_RUN"

// driver is one client under test. Each method sends messages of the
// configured topic and body size carrying runProperty.
type driver interface {
	// SendSync sends n messages (n > 1: as one batch) and waits for the
	// broker's reply.
	SendSync(ctx context.Context, n int) error
	// SendAsync sends one message and returns without waiting; done is
	// called once with the outcome, on a goroutine the client owns. A
	// non-nil error means done will not be called.
	SendAsync(ctx context.Context, done func(error)) error
	// SendOneway writes one message and does not wait for a reply.
	SendOneway(ctx context.Context) error
	// Consume starts a push consumer in a new group reading the topic from
	// its first offset and reports this run's messages to sink. stop shuts
	// the consumer down.
	Consume(ctx context.Context, group string, sink consumeSink) (stop func() error, err error)
	// Close shuts the client down.
	Close() error
}

// consumeSink receives what a consumer delivers.
type consumeSink struct {
	// delivered is called with the count of this run's messages in each
	// delivered batch.
	delivered func(n int)
	// sent, when set (e2e mode), is called with the sentProperty of each of
	// this run's messages.
	sent func(unixNano int64)
}

// sentProperty carries the send time (Unix nanoseconds) in e2e mode.
const sentProperty = "RMQBENCH_SENT"

type driverConfig struct {
	namesrv   []string
	topic     string
	size      int
	runID     string
	consumers int  // consumer goroutines
	cbatch    int  // messages per handler call, 0: the client's default
	orderly   bool // Consume runs the client's orderly push consumer
	consume   bool // the run will call Consume
	stamp     bool // messages carry sentProperty
	verbose   bool
	log       io.Writer
}

// newDriver builds the driver for -client; the map is the only place a
// new client is wired in.
var drivers = map[string]func(context.Context, driverConfig) (driver, error){
	clientOfficial: newOfficialDriver,
	clientOurs:     newOursDriver,
	clientFloor:    newFloorDriver,
}

// warmupTimeout bounds the first send, which also resolves the route and
// may wait for the broker to auto-create the topic.
const warmupTimeout = 30 * time.Second

func bench(ctx context.Context, cfg config, log io.Writer) ([]result, error) {
	namesrv := cfg.namesrv
	var m meter
	if cfg.cpuprof != "" {
		m.profiles = append(m.profiles, func() (func() error, error) { return startCPUProfile(cfg.cpuprof) })
	}
	if cfg.memprof != "" {
		m.profiles = append(m.profiles, func() (func() error, error) { return allocProfile(cfg.memprof), nil })
	}
	if namesrv == "" && cfg.queues == 0 {
		cfg.queues = defaultQueues
	}
	if namesrv == "" {
		h, err := startBroker(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err := h.close(); err != nil {
				fmt.Fprintln(log, "rmqbench: stopping the broker:", err)
			}
		}()
		namesrv, m.broker = h.addr, h.cpu
		if cfg.bprof != "" {
			m.profiles = append(m.profiles, func() (func() error, error) { return h.profile(cfg.bprof) })
		}
	} else if cfg.queues > 0 {
		if err := createTopic(ctx, namesrv, cfg.topic, cfg.queues); err != nil {
			return nil, err
		}
	}
	newDriver := drivers[cfg.client]
	switch cfg.mode {
	case modeTx:
		newDriver = txDrivers[cfg.client]
	case modePull:
		newDriver = newOursDriver // produces the backlog every client drains
	}
	dcfg := driverConfig{
		namesrv:   splitAddrs(namesrv),
		topic:     cfg.topic,
		size:      cfg.size,
		runID:     strconv.FormatInt(time.Now().UnixNano(), 36),
		consumers: cfg.callers,
		cbatch:    cfg.cbatch,
		orderly:   cfg.orderly,
		consume:   cfg.mode == modeConsume || cfg.mode == modeE2E,
		stamp:     cfg.mode == modeE2E,
		verbose:   cfg.verbose,
		log:       log,
	}
	d, err := newDriver(ctx, dcfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := d.Close(); err != nil {
			fmt.Fprintln(log, "rmqbench: closing client:", err)
		}
	}()
	if err := warmup(ctx, d); err != nil {
		return nil, err
	}
	defer m.stopProfiles(log)
	var res result
	switch cfg.mode {
	case modePull:
		return runPull(ctx, cfg, dcfg, d, &m, log)
	case modeConsume:
		res, err = runConsume(ctx, cfg, d, &m, log)
	case modeE2E:
		res, err = runE2E(ctx, cfg, d, &m, log)
	default:
		res, err = runSend(ctx, cfg, d, &m)
		if err == nil && cfg.mode == modeOneway {
			// Not timed: a sync send behind the oneway ones on the same
			// connection returns only after the broker has read them all, so
			// closing the client cannot cut off the tail of the run.
			if berr := d.SendSync(ctx, 1); berr != nil {
				fmt.Fprintln(log, "rmqbench: closing sync send after oneway run:", berr)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return []result{res}, nil
}

// meter reads the CPU time of the client (this process) and, when it runs
// apart, of the broker, at the start and the end of the measured phase,
// and runs the CPU profiles asked for over that phase.
type meter struct {
	broker             func() (time.Duration, error) // nil: not measured apart
	profiles           []func() (stop func() error, err error)
	stops              []func() error
	client0, broker0   time.Duration
	client, brokerUsed time.Duration
	// Heap allocations of this process over the phase (count, bytes).
	mallocs0, bytes0 uint64
	mallocs, bytes   uint64
}

// heapAllocs returns the heap allocations this process has made (count,
// bytes).
func heapAllocs() (uint64, uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs, ms.TotalAlloc
}

func (m *meter) start() error {
	for _, p := range m.profiles {
		stop, err := p()
		if err != nil {
			return err
		}
		m.stops = append(m.stops, stop)
	}
	m.mallocs0, m.bytes0 = heapAllocs()
	var err error
	if m.client0, err = processCPU(); err != nil {
		return err
	}
	if m.broker != nil {
		m.broker0, err = m.broker()
	}
	return err
}

func (m *meter) stop() error {
	defer m.stopProfiles(nil)
	c, err := processCPU()
	if err != nil {
		return err
	}
	m.client = c - m.client0
	mallocs, bytes := heapAllocs()
	m.mallocs, m.bytes = mallocs-m.mallocs0, bytes-m.bytes0
	if m.broker != nil {
		b, err := m.broker()
		if err != nil {
			return err
		}
		m.brokerUsed = b - m.broker0
	}
	return nil
}

// stopProfiles ends the profiles still running, reporting failures to log.
func (m *meter) stopProfiles(log io.Writer) {
	for _, stop := range m.stops {
		if err := stop(); err != nil && log != nil {
			fmt.Fprintln(log, "rmqbench: cpu profile:", err)
		}
	}
	m.stops = nil
}

// apply adds the CPU figures per message to r.
func (m *meter) apply(r *result) {
	if r.Msgs <= 0 {
		return
	}
	r.ClientCPUusMsg = round(micros(m.client)/float64(r.Msgs), 2)
	r.AllocsPerMsg = round(float64(m.mallocs)/float64(r.Msgs), 2)
	r.AllocBytesPerMsg = round(float64(m.bytes)/float64(r.Msgs), 1)
	if m.broker != nil {
		r.BrokerCPUusMsg = round(micros(m.brokerUsed)/float64(r.Msgs), 2)
	}
}

func splitAddrs(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ';' && s[i] != ',' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// warmup sends until one message succeeds, so that route lookup, topic
// creation and connection setup are not measured.
func warmup(ctx context.Context, d driver) error {
	ctx, cancel := context.WithTimeout(ctx, warmupTimeout)
	defer cancel()
	var last error
	for {
		if last = d.SendSync(ctx, 1); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warm-up send never succeeded: %w", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// op is one measured operation; it returns how many messages it carried.
type op func(ctx context.Context) (int, error)

func runSend(ctx context.Context, cfg config, d driver, m *meter) (result, error) {
	var call op
	switch cfg.mode {
	case modeSync, modeTx:
		call = func(ctx context.Context) (int, error) { return 1, d.SendSync(ctx, 1) }
	case modeBatch:
		call = func(ctx context.Context) (int, error) { return cfg.batch, d.SendSync(ctx, cfg.batch) }
	case modeOneway:
		call = func(ctx context.Context) (int, error) { return 1, d.SendOneway(ctx) }
	}
	recs := make([]*recorder, cfg.callers)
	for i := range recs {
		recs[i] = &recorder{}
	}
	if err := m.start(); err != nil {
		return result{}, err
	}
	start := time.Now()
	stopAt := start.Add(cfg.duration)
	errs := make(chan error, cfg.callers)
	var wg sync.WaitGroup
	for _, rec := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.mode == modeAsync {
				errs <- asyncCaller(ctx, d, rec, stopAt, cfg.window)
				return
			}
			syncCaller(ctx, call, rec, stopAt)
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	end := time.Now()
	if err := m.stop(); err != nil {
		return result{}, err
	}
	for e := range errs {
		if e != nil {
			return result{}, e
		}
	}
	t := merge(recs)
	if cfg.mode == modeAsync && t.last.After(start) {
		end = t.last // the run ends with its last completion
	}
	r := newResult(cfg, t, end.Sub(start))
	m.apply(&r)
	return r, nil
}

func syncCaller(ctx context.Context, call op, rec *recorder, stopAt time.Time) {
	for ctx.Err() == nil && time.Now().Before(stopAt) {
		t0 := time.Now()
		n, err := call(ctx)
		if err != nil {
			rec.fail()
			continue
		}
		rec.ok(time.Since(t0), n)
	}
}

// asyncDrainTimeout bounds the wait for outstanding async sends after the
// measured period; it exceeds the official client's 3 s send timeout.
const asyncDrainTimeout = 10 * time.Second

// asyncCaller keeps up to window sends outstanding until stopAt, then
// waits for all of them to complete.
func asyncCaller(ctx context.Context, d driver, rec *recorder, stopAt time.Time, window int) error {
	slots := make(chan struct{}, window)
	for ctx.Err() == nil && time.Now().Before(stopAt) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		t0 := time.Now()
		var once sync.Once
		err := d.SendAsync(ctx, func(err error) {
			once.Do(func() {
				if err != nil {
					rec.fail()
				} else {
					rec.ok(time.Since(t0), 1)
				}
				<-slots
			})
		})
		if err != nil {
			rec.fail()
			<-slots
		}
	}
	timeout := time.NewTimer(asyncDrainTimeout)
	defer timeout.Stop()
	for i := 0; i < window; i++ {
		select {
		case slots <- struct{}{}:
		case <-timeout.C:
			return fmt.Errorf("%d async sends still outstanding %v after the run", window-i, asyncDrainTimeout)
		}
	}
	return nil
}

// preloadCallers is how many goroutines produce the consume backlog.
const preloadCallers = 8

func runConsume(ctx context.Context, cfg config, d driver, m *meter, log io.Writer) (result, error) {
	produced, err := preload(ctx, d, cfg.backlog, cfg.batch, log)
	if err != nil {
		return result{}, err
	}
	produced++ // the warm-up message is in the topic too
	var got atomic.Int64
	var lastNanos atomic.Int64
	done := make(chan struct{})
	var doneOnce sync.Once

	if err := m.start(); err != nil {
		return result{}, err
	}
	start := time.Now()
	group := fmt.Sprintf("rmqbench_%d", start.UnixNano())
	stop, err := d.Consume(ctx, group, consumeSink{delivered: func(n int) {
		if n == 0 {
			return
		}
		lastNanos.Store(int64(time.Since(start)))
		if got.Add(int64(n)) >= produced {
			doneOnce.Do(func() { close(done) })
		}
	}})
	if err != nil {
		return result{}, err
	}
	timer := time.NewTimer(cfg.duration)
	var waitErr error
	select {
	case <-done:
	case <-timer.C:
		waitErr = fmt.Errorf("drained %d of %d messages within -duration %v", got.Load(), produced, cfg.duration)
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	timer.Stop()
	elapsed := time.Duration(lastNanos.Load())
	cpuErr := m.stop()
	if err := stop(); err != nil {
		fmt.Fprintln(log, "rmqbench: stopping consumer:", err)
	}
	if waitErr != nil {
		return result{}, waitErr
	}
	if cpuErr != nil {
		return result{}, cpuErr
	}
	r := newResult(cfg, totals{msgs: got.Load()}, elapsed)
	m.apply(&r)
	return r, nil
}

// preload produces the consume backlog with sync sends of up to batch
// messages and returns how many were stored.
func preload(ctx context.Context, d driver, backlog, batch int, log io.Writer) (int64, error) {
	var next, stored atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range preloadCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := int64(batch)
				end := next.Add(n)
				if end-n >= int64(backlog) {
					return
				}
				n = min(end, int64(backlog)) - (end - n)
				if err := d.SendSync(ctx, int(n)); err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				stored.Add(n)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if got := stored.Load(); got < int64(backlog) {
		fmt.Fprintf(log, "rmqbench: preloaded %d of %d messages (first error: %v)\n", got, backlog, firstErr)
		if got == 0 {
			return 0, errors.New("preload stored no message")
		}
	}
	return stored.Load(), nil
}
