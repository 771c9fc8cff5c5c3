package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	ocons "github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
)

// Pull mode: one backlog, produced once with our producer, drained by
// each client's lite pull consumer in turn (-client, a comma-separated
// list, "ours,official" by default), each in a new group from offset 0,
// on the same broker in the same run. Each client's pull consumer
// subscribes the topic and pulls in the background with the same pull
// batch size (-pull-batch); -callers goroutines poll it. A message counts
// once, by its queue and offset: what a client hands out twice counts as
// a duplicate, not again.

// pullDriver starts one client's lite pull consumer and polls it.
type pullDriver func(ctx context.Context, cfg driverConfig, group string, batch int, sink *pullSink) (stop func() error, err error)

var pullDrivers = map[string]pullDriver{
	clientOurs:     oursPull,
	clientOfficial: officialPull,
}

// pullPollWait bounds one Poll of the official client (it takes a
// timeout, not a ctx), so its pollers notice the end of the run.
const pullPollWait = 100 * time.Millisecond

// pullClients splits -client in pull mode.
func pullClients(s string) ([]string, error) {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if pullDrivers[c] == nil {
			return nil, fmt.Errorf("-client %q: pull mode wants ours and/or official, comma-separated", s)
		}
		out = append(out, c)
	}
	return out, nil
}

// pullSink counts this run's messages once each by queue and offset.
type pullSink struct {
	runID string
	limit int64 // offsets at or past it are counted without the check
	mu    sync.Mutex
	seen  map[sinkQueue][]atomic.Uint64 // bitmap of offsets per queue
	got   atomic.Int64
	dups  atomic.Int64
	last  atomic.Int64 // nanoseconds since start of the latest delivery
	start time.Time
	want  int64
	done  chan struct{}
	once  sync.Once
}

func newPullSink(runID string, want int64, start time.Time) *pullSink {
	return &pullSink{runID: runID, limit: want + 1, seen: map[sinkQueue][]atomic.Uint64{}, want: want, start: start, done: make(chan struct{})}
}

// sinkQueue names a queue: queue ids repeat across brokers.
type sinkQueue struct {
	broker string
	id     int
}

// bitmap returns the offsets seen of queue.
func (s *pullSink) bitmap(queue sinkQueue) []atomic.Uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.seen[queue]
	if b == nil {
		b = make([]atomic.Uint64, (s.limit+63)/64)
		s.seen[queue] = b
	}
	return b
}

// deliver records one message at offset of the queue whose bitmap is bm.
func (s *pullSink) deliver(bm []atomic.Uint64, offset int64) {
	if offset >= 0 && offset < s.limit {
		bit := uint64(1) << (offset % 64)
		if bm[offset/64].Or(bit)&bit != 0 {
			s.dups.Add(1)
			return
		}
	}
	s.last.Store(int64(time.Since(s.start)))
	if s.got.Add(1) >= s.want {
		s.once.Do(func() { close(s.done) })
	}
}

// oursPull runs consumer.NewPull with its defaults but the pull batch.
func oursPull(ctx context.Context, cfg driverConfig, group string, batch int, sink *pullSink) (func() error, error) {
	c, err := consumer.NewPull(
		consumer.WithGroup(group),
		consumer.WithNameServers(cfg.namesrv...),
		consumer.WithInstanceName("rmqbench_pull_"+cfg.runID),
		consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithPullBatchSize(batch),
	)
	if err != nil {
		return nil, fmt.Errorf("our pull consumer: %w", err)
	}
	if err := c.Subscribe(cfg.topic, consumer.All); err != nil {
		return nil, fmt.Errorf("our pull consumer subscribe: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("our pull consumer start: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range cfg.consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				msgs, err := c.Poll(pctx)
				if err != nil {
					continue // pctx ended, or the consumer is closing
				}
				countOurs(sink, msgs)
			}
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		sctx, scancel := context.WithTimeout(context.Background(), closeTimeout)
		defer scancel()
		return c.Shutdown(sctx)
	}, nil
}

func countOurs(sink *pullSink, msgs []*rocketmq.MessageExt) {
	var bm []atomic.Uint64
	q := sinkQueue{id: -1}
	for _, m := range msgs {
		if m.Property(runProperty) != sink.runID {
			continue
		}
		if mq := (sinkQueue{m.BrokerName, int(m.QueueID)}); mq != q {
			q, bm = mq, sink.bitmap(mq)
		}
		sink.deliver(bm, m.QueueOffset)
	}
}

// officialPull runs the official client's NewPullConsumer, whose
// Subscribe, Poll and ACK are its counterpart of Java's
// DefaultLitePullConsumer (pulls in the background, Poll hands out one
// pulled batch, ACK moves the offset); its Pull and PullFrom are the
// DefaultMQPullConsumer counterpart and not measured. The pull batch is
// set, as it has no default of its own.
func officialPull(ctx context.Context, cfg driverConfig, group string, batch int, sink *pullSink) (func() error, error) {
	if !cfg.verbose {
		rlog.SetLogLevel("error")
	}
	c, err := rmq.NewPullConsumer(
		ocons.WithNsResolver(primitive.NewPassthroughResolver(cfg.namesrv)),
		ocons.WithGroupName(group),
		ocons.WithInstance("rmqbench_pull_"+cfg.runID),
		ocons.WithConsumeFromWhere(ocons.ConsumeFromFirstOffset),
		ocons.WithPullBatchSize(int32(batch)),
	)
	if err != nil {
		return nil, fmt.Errorf("official pull consumer: %w", err)
	}
	if err := c.Subscribe(cfg.topic, ocons.MessageSelector{}); err != nil {
		return nil, fmt.Errorf("official pull consumer subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("official pull consumer start: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range cfg.consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				cr, err := c.Poll(pctx, pullPollWait)
				if err != nil {
					continue // nothing within pullPollWait
				}
				countOfficial(sink, cr.GetMsgList())
				c.ACK(pctx, cr, ocons.ConsumeSuccess)
			}
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		return c.Shutdown()
	}, nil
}

func countOfficial(sink *pullSink, msgs []*primitive.MessageExt) {
	var bm []atomic.Uint64
	q := sinkQueue{id: -1}
	for _, m := range msgs {
		if m.GetProperty(runProperty) != sink.runID {
			continue
		}
		if m.Queue == nil {
			sink.deliver(nil, -1)
			continue
		}
		if mq := (sinkQueue{m.Queue.BrokerName, m.Queue.QueueId}); mq != q {
			q, bm = mq, sink.bitmap(mq)
		}
		sink.deliver(bm, m.QueueOffset)
	}
}

// runPull preloads the backlog with d and drains it with each client of
// -client in turn, returning one result per client.
func runPull(ctx context.Context, cfg config, dcfg driverConfig, d driver, m *meter, log io.Writer) ([]result, error) {
	clients, err := pullClients(cfg.client)
	if err != nil {
		return nil, err
	}
	produced, err := preload(ctx, d, cfg.backlog, cfg.batch, log)
	if err != nil {
		return nil, err
	}
	produced++ // the warm-up message is in the topic too
	var out []result
	for i, client := range clients {
		pm := *m
		if cfg.cpuprof != "" {
			path := cfg.cpuprof + "." + client
			pm.profiles = []func() (func() error, error){func() (func() error, error) { return startCPUProfile(path) }}
		}
		r, err := drainPull(ctx, cfg, dcfg, client, i, produced, &pm, log)
		if err != nil {
			return out, fmt.Errorf("%s pull consumer: %w", client, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func drainPull(ctx context.Context, cfg config, dcfg driverConfig, client string, round int, produced int64, m *meter, log io.Writer) (result, error) {
	if err := m.start(); err != nil {
		return result{}, err
	}
	start := time.Now()
	group := fmt.Sprintf("rmqbench_pull_%d_%d", start.UnixNano(), round)
	sink := newPullSink(dcfg.runID, produced, start)
	dcfg.runID = fmt.Sprintf("%s_%d", dcfg.runID, round) // instance names differ per client
	stop, err := pullDrivers[client](ctx, dcfg, group, cfg.pullBatch, sink)
	if err != nil {
		m.stopProfiles(log)
		return result{}, err
	}
	timer := time.NewTimer(cfg.duration)
	var waitErr error
	select {
	case <-sink.done:
	case <-timer.C:
		waitErr = fmt.Errorf("drained %d of %d messages within -duration %v", sink.got.Load(), produced, cfg.duration)
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	timer.Stop()
	elapsed := time.Duration(sink.last.Load())
	cpuErr := m.stop()
	if err := stop(); err != nil {
		fmt.Fprintln(log, "rmqbench: stopping pull consumer:", err)
	}
	if waitErr != nil {
		return result{}, waitErr
	}
	if cpuErr != nil {
		return result{}, cpuErr
	}
	r := newResult(cfg, totals{msgs: sink.got.Load()}, elapsed)
	r.Client = client
	r.Batch = cfg.pullBatch
	r.Duplicates = sink.dups.Load()
	m.apply(&r)
	return r, nil
}
