package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
)

// runState is everything that lives from Start to Shutdown.
//
// Goroutines, all counted in gs: the rebalance loop, the persist loop, the
// expiry sweep, one pull loop per held queue, consumeGoroutines workers,
// and a short-lived one per local retry; orderly: the lock renewal loop,
// one per suspended or unlocked queue task, one per released queue. Locks:
// qmu (the queue table) is taken before a processQueue's mu, never the
// other way; rebMu and persist are the only locks held across network
// calls; an orderly queue's consumeMu is the only one held across a
// handler.
type runState struct {
	c       *PushConsumer
	cfg     *config
	log     *slog.Logger
	cli     *mqclient.Client
	store   offsetStore
	stats   *statsTable
	started time.Time
	// retryTopic is the group's retry topic on the wire.
	retryTopic string
	trace      *consumeTracer // WithTrace; nil: off

	// pullCtx ends at Shutdown's start: pulls and the loops stop.
	pullCtx    context.Context
	pullCancel context.CancelFunc
	// handlerCtx ends when Shutdown gives up waiting for handlers.
	handlerCtx    context.Context
	handlerCancel context.CancelFunc
	stop          chan struct{} // closed at Shutdown's start
	stopping      atomic.Bool   // workers take no new request

	gs      mqclient.Goroutines // loops, pull loops, local retries
	workers mqclient.Goroutines // handler workers and waits on them
	work    *workQueue
	closed  atomic.Bool // offsets persisted: late handler results are dropped
	rebNow  chan struct{}
	rebMu   sync.Mutex // one rebalance at a time
	persist sync.Mutex // one persist at a time

	qmu       sync.Mutex
	queues    map[rocketmq.MessageQueue]*queueState
	resetting map[rocketmq.MessageQueue]int64 // queues an offset reset keeps from the rebalance, with the offset it will store
	// releasing holds the orderly queues that left and are not yet
	// released (batch in hand, offset, unlock): not taken again until
	// then, their locks still renewed.
	releasing map[rocketmq.MessageQueue]*queueState

	lockRetry    time.Duration // orderly: the next quick rebalance after a refused lock
	lockRetrying atomic.Bool
	// lockMu orders lock renewals and re-locks against a release's
	// unlock, so no LOCK_BATCH_MQ of a queue reaches a broker after its
	// UNLOCK_BATCH_MQ; held across those calls.
	lockMu sync.Mutex
	// consumeMus are the orderly consume mutexes by queue (Java
	// MessageQueueLock), under qmu.
	consumeMus map[rocketmq.MessageQueue]*sync.Mutex
}

// queueState is one held queue: its process queue and pull loop.
type queueState struct {
	mq   rocketmq.MessageQueue
	pq   *processQueue
	cell *offsetCell

	// ctx is the handlers' base context: cancelled when the queue is
	// dropped or Shutdown gives up waiting.
	ctx    context.Context
	cancel context.CancelFunc
	// pullCancel stops the pull loop; pullDone closes when it returned.
	pullCancel context.CancelFunc
	pullDone   chan struct{}
	inflight   atomic.Int32 // handler batches running on this queue's messages

	// userTopic is the topic the handler sees (no namespace); stats counts
	// its batches, retried messages excepted.
	userTopic string
	stats     *topicStats

	capCount atomic.Int64 // flow-control caps, recomputed after rebalances
	capBytes atomic.Int64
	flowCtl  atomic.Int64 // flow-control pauses, for logs
	brokerID atomic.Int64 // suggested broker id for the next pull

	// orderly: consumed by queue tasks; lockNeeded: and only while
	// locked on the broker (clustering).
	orderly, lockNeeded bool
	// Orderly: consumeMu is held by the worker running the queue's
	// batches; it belongs to the MessageQueue (runState.consumeMus), so a
	// queue state made after a drop waits for a call of the previous
	// one still running. task is the queue's consume task (one at a time,
	// see processQueue.schedule).
	consumeMu *sync.Mutex
	task      consumeReq
	unlocking atomic.Bool // release is unlocking it: no renewal
	// Orderly clustering: the broker lock as this client last saw it
	// (Java ProcessQueue locked / lastLockTimestamp, unix ms).
	locked         atomic.Bool
	lastLock       atomic.Int64
	tryUnlockTimes atomic.Int64
	// releasing is set when the queue leaves by a rebalance: the batch
	// in hand still commits its result.
	releasing atomic.Bool
}

func (c *PushConsumer) newRunState() (*runState, error) {
	cli, err := mqclient.New(c.cfg.client)
	if err != nil {
		return nil, err
	}
	r := &runState{
		c:          c,
		cfg:        &c.cfg,
		log:        c.log,
		cli:        cli,
		stats:      newStatsTable(),
		stop:       make(chan struct{}),
		rebNow:     make(chan struct{}, 1),
		queues:     map[rocketmq.MessageQueue]*queueState{},
		resetting:  map[rocketmq.MessageQueue]int64{},
		releasing:  map[rocketmq.MessageQueue]*queueState{},
		consumeMus: map[rocketmq.MessageQueue]*sync.Mutex{},
		retryTopic: mqclient.RetryTopicOf(c.cfg.client.Namespace, c.cfg.group),
		work:       newWorkQueue(),
		started:    time.Now(),
	}
	if c.cfg.model == Broadcasting {
		path := localStorePath(c.cfg.offsetDir, c.cfg.client.ClientIP, c.cfg.client.InstanceName, c.cfg.client.UnitName, c.wireGroup)
		r.store = newLocalStore(path)
	} else {
		r.store = newRemoteStore(cli, c.wireGroup, c.log)
	}
	r.pullCtx, r.pullCancel = context.WithCancel(context.Background())
	r.handlerCtx, r.handlerCancel = context.WithCancel(context.Background())
	return r, nil
}

func (r *runState) start(ctx context.Context) error {
	if err := r.store.load(); err != nil {
		return err
	}
	if err := r.cli.RegisterConsumer(r.c.wireGroup, &member{r: r}); err != nil {
		return err
	}
	if err := r.cli.Start(ctx); err != nil {
		return err
	}
	var missing []string
	for _, s := range r.c.subscriptionList() {
		if err := r.cli.UpdateRoute(ctx, s.wireTopic); err != nil && ctx.Err() == nil {
			missing = append(missing, s.wireTopic)
			if !rocketmq.IsRetryTopic(s.wireTopic) {
				r.log.Warn("rocketmq: no route for subscribed topic yet", "group", r.cfg.group, "topic", s.topic, "err", err)
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := r.checkSubscriptions(ctx); err != nil {
		return err
	}
	// Java sends a heartbeat at once so the brokers know the group and its
	// subscriptions before the first pull.
	if err := r.cli.SendHeartbeat(ctx); err != nil {
		r.log.Warn("rocketmq: first heartbeat failed", "group", r.cfg.group, "err", err)
	}
	for i := 0; i < r.cfg.consumeGoroutines; i++ {
		r.workers.Go(r.worker)
	}
	r.gs.Go(r.rebalanceLoop)
	r.gs.Go(func() { every(r.stop, r.cfg.persistInterval, r.persistPeriodic) })
	// Messages whose handler has run longer than the consume timeout are
	// given back every consumeTimeout (Java cleanExpireMsg).
	r.gs.Go(func() { every(r.stop, r.cfg.consumeTimeout, r.cleanExpired) })
	if r.cfg.model == Clustering && !r.c.concurrent() {
		// Orderly queue locks renewed (Java lockAll every 20 s).
		r.gs.Go(func() { every(r.stop, r.cfg.lockInterval, r.lockAll) })
	}
	if len(missing) > 0 {
		r.gs.Go(func() { r.awaitRoutes(missing) })
	}
	r.rebalanceSoon()
	return nil
}

// awaitRoutes looks for the routes of topics that had none at Start, at
// short intervals for a while, rebalancing as each appears. The group's
// retry topic is the usual one: its broker creates it at the group's first
// heartbeat and registers it with the NameServers shortly after; waiting
// for the periodic route refresh would delay the first retries by up to
// its period.
func (r *runState) awaitRoutes(topics []string) {
	delay := 100 * time.Millisecond
	for len(topics) > 0 && delay <= 10*time.Second {
		if !sleep(r.pullCtx, delay) {
			return
		}
		delay *= 2
		left := topics[:0]
		for _, tp := range topics {
			ctx, cancel := context.WithTimeout(r.pullCtx, r.cfg.client.RequestTimeout)
			err := r.cli.UpdateRoute(ctx, tp)
			cancel()
			if err != nil {
				left = append(left, tp)
				continue
			}
			r.rebalanceSoon()
		}
		topics = left
	}
}

// abort undoes a failed start.
func (r *runState) abort() {
	close(r.stop)
	r.work.close()
	r.pullCancel()
	r.handlerCancel()
	r.gs.Wait()
	r.workers.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.client.RequestTimeout)
	defer cancel()
	r.cli.UnregisterConsumer(ctx, r.c.wireGroup)
	_ = r.cli.Close(ctx)
	r.store.close()
}

func (r *runState) rebalanceSoon() {
	select {
	case r.rebNow <- struct{}{}:
	default:
	}
}

// shutdownGrace is how long Shutdown still waits for handlers after its
// ctx ended and their contexts were cancelled, so that handlers that
// return promptly have their results counted before the offsets are
// persisted.
const shutdownGrace = time.Second

// pullSettle is the least time between cancelling the pulls and sending
// the final offsets at Shutdown (clustering): the broker applies a pull's
// piggy-backed commit when a worker takes the pull, possibly after an
// offset update sent later on the same connection.
const pullSettle = 200 * time.Millisecond

// shutdown: stop the loops and pulls; let the workers run what was pulled
// while ctx allows; then cancel the handlers' contexts and drop the rest;
// persist, unregister, close. Handlers that ignore their cancelled ctx are
// not waited for beyond shutdownGrace: their results are dropped.
func (r *runState) shutdown(ctx context.Context) error {
	r.stopping.Store(true)
	close(r.stop)
	r.pullCancel()
	pullsCancelled := time.Now()
	r.work.drain()

	// A handler calling Shutdown is not waited for.
	r.workers.Detach()
	r.gs.Detach()
	loops := make(chan struct{})
	go func() { r.gs.Wait(); close(loops) }()
	workers := make(chan struct{})
	go func() { r.workers.Wait(); close(workers) }()
	var err error
	select {
	case <-workers:
	case <-ctx.Done():
		err = ctx.Err()
		r.work.close()
		r.handlerCancel()
		t := time.NewTimer(shutdownGrace)
		select {
		case <-workers:
		case <-t.C:
			r.log.Warn("rocketmq: shutdown: handlers ignore their cancelled ctx; their results are dropped", "group", r.cfg.group)
		}
		t.Stop()
	}
	// The loops and pull loops end at once: their calls are cancelled.
	<-loops

	// A pull sent just before the cancel carries an older commit offset
	// and may still be waiting for a broker worker: give it time to land
	// before the final offsets, which it would otherwise overwrite.
	if d := pullSettle - time.Since(pullsCancelled); d > 0 && r.cfg.model == Clustering {
		t := time.NewTimer(d)
		<-t.C
	}

	// Offsets: acknowledged, even when ctx is already over.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*r.cfg.client.RequestTimeout)
	defer cancel()
	r.closed.Store(true)
	mqs := append(r.heldQueues(""), r.releasingQueues()...)
	if perr := r.store.persistAll(pctx, mqs, true); perr != nil {
		r.log.Warn("rocketmq: persist offsets at shutdown", "group", r.cfg.group, "err", perr)
		if err == nil {
			err = perr
		}
	}
	if r.locking() && len(mqs) > 0 {
		// After the offsets (Java unlocks first): the next owner of a
		// queue reads the final offset, not an older one.
		r.lockMu.Lock()
		r.unlockAll(pctx, r.idleQueues(mqs))
		r.lockMu.Unlock()
	}
	r.qmu.Lock()
	for _, q := range r.queues {
		q.pq.setDropped()
		q.cancel()
	}
	for _, q := range r.releasing {
		q.cancel()
	}
	r.qmu.Unlock()
	r.work.close()
	r.cli.UnregisterConsumer(pctx, r.c.wireGroup)
	_ = r.cli.Close(pctx)
	r.store.close()
	r.handlerCancel()
	return err
}

// heldQueues returns the queues held for wireTopic ("" for all).
func (r *runState) heldQueues(wireTopic string) []rocketmq.MessageQueue {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	out := make([]rocketmq.MessageQueue, 0, len(r.queues))
	for mq := range r.queues {
		if wireTopic == "" || mq.Topic == wireTopic {
			out = append(out, mq)
		}
	}
	return out
}

func (r *runState) persistPeriodic() {
	r.persist.Lock()
	defer r.persist.Unlock()
	ctx, cancel := context.WithTimeout(r.pullCtx, r.cfg.persistInterval)
	defer cancel()
	if err := r.store.persistAll(ctx, r.heldQueues(""), false); err != nil && ctx.Err() == nil {
		r.log.Debug("rocketmq: persist offsets", "group", r.cfg.group, "err", err)
	}
}

// sleep waits d unless ctx ends first; false when it did.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var errDropped = errors.New("rocketmq: queue dropped")
