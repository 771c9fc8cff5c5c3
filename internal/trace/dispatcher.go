package trace

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// Sender sends one trace message: body to topic with the given keys.
type Sender interface {
	SendTrace(ctx context.Context, topic string, body []byte, keys []string) error
}

// Limits of Java's AsyncTraceDispatcher.
const (
	QueueSize     = 1024                   // traceContextQueue capacity
	MaxMsgSize    = 128000                 // the trace producer's maxMessageSize
	BatchSize     = MaxMsgSize - 10*1000   // a batch is sent once its data reaches this
	WaitThreshold = 500 * time.Millisecond // or once its first record is this old
	PollInterval  = 100 * time.Millisecond // pollingTimeMil
	SendTimeout   = 5 * time.Second        // the trace producer's sendMsgTimeout
	batchQueue    = 16                     // batches waiting for a sender
	senders       = 2                      // goroutines sending batches
)

// Dispatcher is Java's AsyncTraceDispatcher: Append hands a record over
// without waiting (a full queue drops it, counted by Dropped); a worker
// encodes records into one batch per trace topic and sends it when it
// reaches BatchSize bytes or its first record is WaitThreshold old.
// Failures are logged and counted, never returned to the traced call.
type Dispatcher struct {
	topic string
	send  Sender
	log   *slog.Logger

	mu     sync.RWMutex
	closed bool
	queue  chan *Context

	batches chan batch
	stop    chan struct{}
	ctx     context.Context // cancelled when Close gives up waiting
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	dropped atomic.Int64 // records lost: queue full, batch queue full, send failed
	sent    atomic.Int64 // records sent
}

type batch struct {
	data  []byte
	keys  []string
	count int
}

// NewDispatcher starts a dispatcher sending to topic; empty means
// RMQ_SYS_TRACE_TOPIC. log may be nil.
func NewDispatcher(topic string, s Sender, log *slog.Logger) *Dispatcher {
	if topic == "" {
		topic = DefaultTopic
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{
		topic:   topic,
		send:    s,
		log:     log,
		queue:   make(chan *Context, QueueSize),
		batches: make(chan batch, batchQueue),
		stop:    make(chan struct{}),
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wg.Add(1 + senders)
	go d.worker()
	for range senders {
		go d.sender()
	}
	return d
}

// DefaultTopic is TopicValidator.RMQ_SYS_TRACE_TOPIC.
const DefaultTopic = "RMQ_SYS_TRACE_TOPIC"

// Topic returns the trace topic.
func (d *Dispatcher) Topic() string { return d.topic }

// Dropped returns how many records were lost so far.
func (d *Dispatcher) Dropped() int64 { return d.dropped.Load() }

// Sent returns how many records were sent so far.
func (d *Dispatcher) Sent() int64 { return d.sent.Load() }

// Append hands c over to be sent; it never blocks. It reports false when
// the record was dropped: the queue is full or the dispatcher closed.
func (d *Dispatcher) Append(c *Context) bool {
	if c == nil || len(c.Beans) == 0 {
		return false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		d.dropped.Inc()
		return false
	}
	select {
	case d.queue <- c:
		return true
	default:
		d.dropped.Inc()
		return false
	}
}

// Close stops taking records, sends those queued within ctx, then cancels
// the sends still in progress, waits for every goroutine and returns
// ctx's error when it had to cut them short. Closing twice is a no-op.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	close(d.stop)
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		d.cancel()
		<-done
	}
	d.cancel()
	return err
}

// worker encodes records into the pending batch and hands batches to the
// senders (Java's AsyncRunnable and TraceDataSegment).
func (d *Dispatcher) worker() {
	defer d.wg.Done()
	defer close(d.batches)
	var cur batch
	var first time.Time
	flush := func() {
		if cur.count == 0 {
			return
		}
		select {
		case d.batches <- cur:
		case <-d.ctx.Done():
			d.dropped.Add(int64(cur.count))
		case <-d.stop:
			// Closing: wait for a sender, unless Close gives up.
			select {
			case d.batches <- cur:
			case <-d.ctx.Done():
				d.dropped.Add(int64(cur.count))
			}
		}
		cur, first = batch{}, time.Time{}
	}
	add := func(c *Context) {
		if cur.count == 0 {
			first = time.Now()
		}
		cur.data, cur.keys = Encode(cur.data, c, cur.keys)
		cur.count++
		if len(cur.data) >= BatchSize {
			flush()
		}
	}
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		select {
		case c := <-d.queue:
			add(c)
		case <-tick.C:
			if cur.count > 0 && time.Since(first) >= WaitThreshold {
				flush()
			}
		case <-d.stop:
			// Append no longer queues anything: drain and send the rest.
			for {
				select {
				case c := <-d.queue:
					add(c)
					continue
				default:
				}
				break
			}
			flush()
			return
		}
	}
}

func (d *Dispatcher) sender() {
	defer d.wg.Done()
	for b := range d.batches {
		if d.ctx.Err() != nil {
			d.dropped.Add(int64(b.count))
			continue
		}
		ctx, cancel := context.WithTimeout(d.ctx, SendTimeout)
		err := d.send.SendTrace(ctx, d.topic, b.data, dedup(b.keys))
		cancel()
		if err != nil {
			d.dropped.Add(int64(b.count))
			d.log.Warn("rocketmq: trace data not sent", "topic", d.topic, "records", b.count, "err", err)
			continue
		}
		d.sent.Add(int64(b.count))
	}
}

// dedup keeps the first of equal keys, in order (Java collects them in a
// HashSet).
func dedup(keys []string) []string {
	seen := make(map[string]struct{}, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, k)
	}
	return out
}
