package producer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
)

// Producer sends messages to RocketMQ brokers. It is safe for concurrent
// use. Create it with New, Start it, and Shutdown it when done; a producer
// may be started again after Shutdown (with a new client id).
type Producer struct {
	cfg   config
	log   *slog.Logger
	ids   *rocketmq.UniqIDGenerator
	fault *faultStrategy
	bufs  sync.Pool           // *[]byte batch bodies
	reqs  sync.Pool           // *reqStorage
	txl   TransactionListener // nil for a plain producer

	idxMu sync.RWMutex
	idx   map[string]*atomic.Uint32 // per-topic rotation

	lifeMu sync.Mutex
	run    *runState // nil when not running
}

// runState is everything that lives from Start to Shutdown.
type runState struct {
	api    brokerAPI
	ctx    context.Context // cancelled when Shutdown gives up waiting
	cancel context.CancelFunc
	lim    *limiter

	mu      sync.RWMutex
	closing bool
	wg      sync.WaitGroup      // sends in progress, async goroutines included
	gs      mqclient.Goroutines // goroutines of async sends with interceptors

	reqMu    sync.Mutex
	requests map[string]chan *rocketmq.MessageExt

	checks *checkPool // transaction checks; nil for a plain producer
	trace  *tracer    // WithTrace; nil: off

	// Local transactions in progress (ExecuteLocal and its decision).
	// They run on their callers' goroutines outside wg, so that one
	// calling Shutdown does not wait for itself. The count is atomic:
	// localMu is taken only once Shutdown waits.
	locals     atomic.Int64
	waiting    atomic.Bool              // Shutdown waits for locals to reach 0
	detached   atomic.Pointer[localCtx] // the one calling Shutdown, no longer counted
	localMu    sync.Mutex
	localsIdle chan struct{} // closed when locals reaches 0 while waiting
}

// shutdownGrace is how long Shutdown still waits for listener calls after
// its ctx ended and their contexts were cancelled; a call still running
// then is abandoned and its outcome dropped (the broker checks it later).
const shutdownGrace = time.Second

// New validates the options and returns a producer that is not started.
func New(opts ...Option) (*Producer, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.client.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		cfg.client.Logger = log
	}
	return &Producer{
		cfg:   cfg,
		log:   log,
		ids:   rocketmq.NewUniqIDGenerator(),
		fault: newFaultStrategy(cfg.latencyFault, cfg.latencyMax, cfg.notAvailable, nil),
		idx:   map[string]*atomic.Uint32{},
	}, nil
}

// Group returns the producer group.
func (p *Producer) Group() string { return p.cfg.group }

// ClientID returns the client id of the running producer, "" when it is
// not running.
func (p *Producer) ClientID() string {
	p.lifeMu.Lock()
	defer p.lifeMu.Unlock()
	if p.run == nil {
		return ""
	}
	return p.run.api.clientID()
}

// Start connects the producer: it registers the group with a new client
// instance and starts its heartbeats and route refresh. Start on a running
// producer returns ErrAlreadyStarted; after Shutdown it starts afresh.
func (p *Producer) Start(ctx context.Context) error {
	p.lifeMu.Lock()
	defer p.lifeMu.Unlock()
	if p.run != nil {
		return ErrAlreadyStarted
	}
	api := p.cfg.api
	if api == nil {
		a, err := newClientAPI(&p.cfg)
		if err != nil {
			return err
		}
		api = a
	}
	r := &runState{
		api:      api,
		lim:      newLimiter(p.cfg.maxInflight, p.cfg.maxInflightBytes, p.cfg.inflightFailFast),
		requests: map[string]chan *rocketmq.MessageExt{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	api.setReplyHandler(r.deliverReply)
	var member mqclient.Producer // a nil *checkPool would not be a nil member
	if p.txl != nil {
		r.checks = p.newCheckPool(r)
		member = r.checks
	}
	p.startTrace(ctx, r) // before checks can arrive: they read r.trace
	if err := api.start(ctx, p.cfg.wireGroup, member); err != nil {
		if r.trace != nil {
			_ = r.trace.close(ctx)
		}
		r.cancel()
		_ = api.shutdown(ctx, p.cfg.wireGroup)
		if r.checks != nil {
			_ = r.checks.stop(ctx)
		}
		return fmt.Errorf("rocketmq: start producer %s: %w", p.cfg.group, err)
	}
	p.run = r
	if r.checks != nil {
		p.announce(ctx, r)
	}
	p.log.Info("rocketmq: producer started", "group", p.cfg.group, "client", api.clientID())
	return nil
}

// announce makes the brokers of the create-topic key's route hear from a
// transactional producer at once, before it sends anything: a broker asks
// only the producers it knows about a transaction, and a new instance may
// have to answer for one that is gone (Java's producer keeps that route,
// TBW102, for the same effect). Failures only delay this to the first send.
func (p *Producer) announce(ctx context.Context, r *runState) {
	if p.cfg.createTopicKey == "" {
		return
	}
	pi, err := r.api.publishInfo(ctx, p.cfg.createTopicKey)
	if err != nil {
		p.log.Debug("rocketmq: no route to announce the producer to", "topic", p.cfg.createTopicKey, "err", err)
		return
	}
	done := map[string]bool{}
	for _, q := range pi.Queues {
		if done[q.BrokerName] {
			continue
		}
		done[q.BrokerName] = true
		if addr, ok := r.api.brokerAddr(q.BrokerName); ok {
			if err := r.api.ensureHeartbeat(ctx, addr); err != nil {
				p.log.Debug("rocketmq: heartbeat failed", "addr", addr, "err", err)
			}
		}
	}
}

// Shutdown stops the producer: new sends fail with ErrNotStarted, sends in
// progress (async ones included) may finish until ctx ends, after which
// they are failed; then the group is unregistered from the brokers and
// every connection and goroutine of the producer is closed. It returns
// ctx's error when the sends had to be cut short. Callbacks of async
// sends run before Shutdown returns. A callback may call Shutdown: it
// returns once everything but that callback has stopped. While a Shutdown
// is under way, another returns ErrNotStarted at once.
//
// A transactional producer also waits, within ctx, for the local
// transactions in progress to send their decisions and for the checks
// already queued to be answered. Then their contexts are cancelled, and a
// listener call still running after a short grace is abandoned: its
// outcome is dropped and the broker checks that transaction later.
// CheckLocal may call Shutdown; so may ExecuteLocal, passing its own ctx
// (or one derived from it) so that Shutdown does not wait for that call.
func (p *Producer) Shutdown(ctx context.Context) error {
	// lifeMu is not held while waiting: a callback that sends meanwhile
	// must get ErrNotStarted, not wait for the Shutdown that waits for it.
	p.lifeMu.Lock()
	r := p.run
	if r == nil {
		p.lifeMu.Unlock()
		return ErrNotStarted
	}
	r.mu.Lock()
	already := r.closing
	r.closing = true
	r.mu.Unlock()
	p.lifeMu.Unlock()
	if already {
		return ErrNotStarted
	}

	r.detachLocal(ctx)
	drained := make(chan struct{})
	go func() { r.wg.Wait(); close(drained) }()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
		r.cancel() // unblock waiters; closing the client fails the calls
	}
	if lerr := r.waitLocals(ctx, p.log, p.cfg.group); lerr != nil && err == nil {
		err = lerr
	}
	if r.checks != nil {
		// Checks still queued are answered within ctx, while the client
		// can still send; later ones are dropped and the broker asks again.
		if cerr := r.checks.stop(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}
	if r.trace != nil {
		// After the sends and decisions: their records are queued.
		if terr := r.trace.close(ctx); terr != nil && err == nil {
			err = terr
		}
	}
	r.api.setReplyHandler(nil)
	if serr := r.api.shutdown(ctx, p.cfg.wireGroup); serr != nil && err == nil && ctx.Err() == nil {
		err = serr
	}
	r.cancel()
	<-drained
	r.gs.Wait()
	p.lifeMu.Lock()
	p.run = nil
	p.lifeMu.Unlock()
	p.log.Info("rocketmq: producer shut down", "group", p.cfg.group)
	return err
}

// enter admits one send; leave must follow.
func (p *Producer) enter() (*runState, error) {
	p.lifeMu.Lock()
	r := p.run
	p.lifeMu.Unlock()
	if r == nil {
		return nil, ErrNotStarted
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closing {
		return nil, ErrNotStarted
	}
	r.wg.Add(1)
	return r, nil
}

func (r *runState) leave() { r.wg.Done() }

// index returns the rotation counter of topic, started at random like
// Java's ThreadLocalIndex.
func (p *Producer) index(topic string) *atomic.Uint32 {
	p.idxMu.RLock()
	i := p.idx[topic]
	p.idxMu.RUnlock()
	if i != nil {
		return i
	}
	p.idxMu.Lock()
	defer p.idxMu.Unlock()
	if i = p.idx[topic]; i == nil {
		i = atomic.NewUint32(rand.Uint32())
		p.idx[topic] = i
	}
	return i
}

// SendOption changes one send: the queue selection.
type SendOption func(*Sender)

// Select uses sel for this send instead of the producer's selector.
func Select(sel QueueSelector) SendOption { return func(s *Sender) { s.sel = sel } }

// ShardBy sends to the queue Java's SelectMessageQueueByHash picks for
// key: Select(Hash(key)).
func ShardBy(key ShardingKey) SendOption { return Select(Hash(key)) }

// ToQueue sends to mq: Select(Manual(mq)).
func ToQueue(mq rocketmq.MessageQueue) SendOption { return Select(Manual(mq)) }

// Sender sends with per-call options; get one from Producer.With. It is a
// small value: make one per call or keep it, both are fine.
type Sender struct {
	p   *Producer
	sel QueueSelector
}

// With returns a Sender that applies opts to its sends.
func (p *Producer) With(opts ...SendOption) *Sender {
	s := &Sender{p: p, sel: p.cfg.selector}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (p *Producer) sender() Sender { return Sender{p: p, sel: p.cfg.selector} }

// Send sends one message, or several as one batch (same topic), and waits
// for the broker's answer, retrying on another broker within the send
// timeout. A non-OK store status comes back in SendResult.Status with a
// nil error (unless WithRetryOnNotStoreOK).
func (p *Producer) Send(ctx context.Context, msgs ...*rocketmq.Message) (*rocketmq.SendResult, error) {
	s := p.sender()
	return s.Send(ctx, msgs...)
}

// SendAsync sends like Send without waiting: cb is called once, on a
// goroutine of the producer, with the outcome. It returns an error, and
// cb is not called, when the messages are invalid, the producer is not
// running, or no in-flight slot could be had (see WithAsyncInflight).
// ctx bounds the whole send. The first attempt is queued before SendAsync
// returns (so sends from one goroutine go out in order); the first send
// to a topic also waits for its route there.
func (p *Producer) SendAsync(ctx context.Context, cb func(*rocketmq.SendResult, error), msgs ...*rocketmq.Message) error {
	s := p.sender()
	return s.SendAsync(ctx, cb, msgs...)
}

// SendOneway sends once without waiting for an answer: no retry, no
// result.
func (p *Producer) SendOneway(ctx context.Context, msgs ...*rocketmq.Message) error {
	s := p.sender()
	return s.SendOneway(ctx, msgs...)
}

// Request sends msg as a request and waits for the reply a consumer sends
// back with NewReply (request-reply, 4.6+ brokers).
func (p *Producer) Request(ctx context.Context, msg *rocketmq.Message) (*rocketmq.MessageExt, error) {
	s := p.sender()
	return s.Request(ctx, msg)
}

// RequestAsync is Request without waiting: cb gets the reply or the error.
func (p *Producer) RequestAsync(ctx context.Context, msg *rocketmq.Message, cb func(*rocketmq.MessageExt, error)) error {
	s := p.sender()
	return s.RequestAsync(ctx, msg, cb)
}

// limiter bounds async sends by count and bytes.
type limiter struct {
	mu       sync.Mutex
	count    int
	bytes    int64
	maxCount int
	maxBytes int64
	failFast bool
	waiters  int           // acquire calls waiting on changed
	changed  chan struct{} // closed (and replaced) by a release with waiters
}

func newLimiter(n int, bytes int64, failFast bool) *limiter {
	return &limiter{maxCount: n, maxBytes: bytes, failFast: failFast, changed: make(chan struct{})}
}

func (l *limiter) acquire(ctx, stop context.Context, n int64) error {
	for {
		l.mu.Lock()
		if l.count < l.maxCount && (l.bytes+n <= l.maxBytes || l.bytes == 0) {
			l.count++
			l.bytes += n
			l.mu.Unlock()
			return nil
		}
		if l.failFast {
			l.mu.Unlock()
			return ErrTooManyInflight
		}
		ch := l.changed
		l.waiters++
		l.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = fmt.Errorf("%w: %w", ErrTooManyInflight, ctx.Err())
		case <-stop.Done():
			err = ErrNotStarted
		}
		l.mu.Lock()
		l.waiters--
		l.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

func (l *limiter) release(n int64) {
	l.mu.Lock()
	l.count--
	l.bytes -= n
	if l.waiters > 0 {
		close(l.changed)
		l.changed = make(chan struct{})
	}
	l.mu.Unlock()
}
