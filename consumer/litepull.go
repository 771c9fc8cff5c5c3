package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/rebalance"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// ErrNotAssigned: the queue is not one the pull consumer holds now.
var ErrNotAssigned = errors.New("rocketmq: queue not held by this consumer")

// PullConsumer reads messages at the caller's pace (Java
// DefaultLitePullConsumer): it pulls the queues it holds in the
// background, within flow-control caps, and Poll hands out what arrived.
// The queues come either from Subscribe, split between the members of the
// group by rebalance, or from Assign; a consumer uses one or the other.
//
// Offsets: Poll moves a queue's consumed offset past the batch it
// returns; with auto-commit (the default) consumed offsets are committed
// every auto-commit interval and at Shutdown, else by CommitSync or
// Commit. Committed offsets are kept by the broker (clustering) or in a
// local file (broadcasting), as the push consumer's.
type PullConsumer struct {
	cfg       config
	log       *slog.Logger
	wireGroup string

	// ctlMu orders the changes of the held set (Assign, rebalance, Seek,
	// Shutdown); held across network calls and pull-goroutine stops.
	ctlMu sync.Mutex

	mu     sync.Mutex // guards the fields below
	state  int
	mode   liteMode
	subs   map[string]*liteSub // subscribe mode, by wire topic
	assign []rocketmq.MessageQueue
	queues map[rocketmq.MessageQueue]*liteQueue // held, by wire queue
	paused map[rocketmq.MessageQueue]bool
	ready  batchFIFO // pulled, not yet polled, in arrival order
	held   int       // messages in ready
	// allRoom, when not nil, is closed (and cleared) once held drops
	// under the consumer's cap; queues held back by that cap wait on it.
	allRoom chan struct{}

	wake   chan struct{} // a batch arrived (cap 1)
	closed chan struct{} // Shutdown began

	cli    *mqclient.Client
	store  offsetStore
	gs     mqclient.Goroutines
	ctx    context.Context // ends at Shutdown's start
	cancel context.CancelFunc
	rebNow chan struct{}
	done   chan struct{} // Shutdown finished
}

type liteMode int

const (
	modeUnset liteMode = iota
	modeSubscribe
	modeAssign
)

// liteQueue is one held queue. A Seek replaces it, so batches of the old
// one are recognised as stale.
type liteQueue struct {
	mq  rocketmq.MessageQueue // on the wire
	sub *liteSub
	// consumed is the offset after what Poll returned, -1 before the
	// first Poll: what a commit writes.
	consumed atomic.Int64
	// count and bytes are what ready holds of the queue, under mu.
	count, bytes int64
	// lo and hi are the offsets of the first and the last message ready
	// holds of the queue, under mu; meaningful while count > 0.
	lo, hi int64
	// room (cap 1) is signalled when what holds the queue back may have
	// changed: one of its batches was polled, or it was resumed.
	room chan struct{}

	cancel context.CancelFunc
	done   chan struct{} // the pull goroutine returned
}

type liteBatch struct {
	q     *liteQueue
	msgs  []*rocketmq.MessageExt
	next  int64 // the queue's next offset after the batch
	bytes int64
}

// NewPull checks the options and returns a pull consumer that is not
// started. The push consumer's options apply where they mean the same:
// group, model, consume-from, allocate strategy, rebalance interval, pull
// batch size (default 32), per-queue thresholds, consume max span,
// offset store directory and the client options; WithAutoCommit, WithAutoCommitInterval,
// WithPullThresholdForAll and WithQueueListener are its own.
func NewPull(opts ...Option) (*PullConsumer, error) {
	cfg, err := newConfig(opts...)
	if err != nil {
		return nil, err
	}
	if err := cfg.lite.validate(); err != nil {
		return nil, err
	}
	log := cfg.client.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		cfg.client.Logger = log
	}
	return &PullConsumer{
		cfg:       cfg,
		log:       log,
		wireGroup: mqclient.WrapNamespace(cfg.client.Namespace, cfg.group),
		subs:      map[string]*liteSub{},
		queues:    map[rocketmq.MessageQueue]*liteQueue{},
		paused:    map[rocketmq.MessageQueue]bool{},
		wake:      make(chan struct{}, 1),
		closed:    make(chan struct{}),
		rebNow:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}, nil
}

// Group returns the consumer group.
func (c *PullConsumer) Group() string { return c.cfg.group }

func (c *PullConsumer) wrap(mq rocketmq.MessageQueue) rocketmq.MessageQueue {
	mq.Topic = mqclient.WrapNamespace(c.cfg.client.Namespace, mq.Topic)
	return mq
}

func (c *PullConsumer) unwrap(mq rocketmq.MessageQueue) rocketmq.MessageQueue {
	mq.Topic = mqclient.UnwrapNamespace(c.cfg.client.Namespace, mq.Topic)
	return mq
}

// setMode fixes the consumer to subscribe or assign mode, under mu.
func (c *PullConsumer) setModeLocked(m liteMode) error {
	if c.state == stateClosing || c.state == stateClosed {
		return ErrClosed
	}
	if c.mode != modeUnset && c.mode != m {
		return fmt.Errorf("rocketmq: pull consumer %s: Subscribe and Assign cannot be mixed", c.cfg.group)
	}
	c.mode = m
	return nil
}

// Subscribe adds topic with selector sel: the group's members split its
// queues between them (clustering) or each holds them all
// (broadcasting). It may be called before or after Start.
func (c *PullConsumer) Subscribe(topic string, sel Selector) error {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return fmt.Errorf("rocketmq: subscribe: %w", err)
	}
	wt := mqclient.WrapNamespace(c.cfg.client.Namespace, topic)
	s, err := newLiteSub(wt, sel)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.setModeLocked(modeSubscribe); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("rocketmq: subscribe %s: %w", topic, err)
	}
	c.subs[wt] = s
	running := c.state == stateRunning
	c.mu.Unlock()
	if running {
		c.cli.TriggerRouteRefresh(wt)
		c.cli.TriggerHeartbeat()
		c.rebalanceSoon()
	}
	return nil
}

// Unsubscribe removes topic: its queues are given up, their offsets
// committed first with auto-commit on.
func (c *PullConsumer) Unsubscribe(topic string) error {
	wt := mqclient.WrapNamespace(c.cfg.client.Namespace, topic)
	c.mu.Lock()
	if c.subs[wt] == nil {
		c.mu.Unlock()
		return fmt.Errorf("rocketmq: unsubscribe %s: not subscribed", topic)
	}
	delete(c.subs, wt)
	running := c.state == stateRunning
	c.mu.Unlock()
	if running {
		c.cli.TriggerHeartbeat()
		c.rebalanceSoon()
	}
	return nil
}

// Assign makes queues the consumer's held set, replacing the previous
// one; the group's members do not share them. A queue newly held starts
// at the group's committed offset, else where WithConsumeFrom says. Before
// Start it only records the set.
func (c *PullConsumer) Assign(ctx context.Context, queues []rocketmq.MessageQueue) error {
	wire := make([]rocketmq.MessageQueue, 0, len(queues))
	for _, mq := range queues {
		if err := rocketmq.ValidateTopic(mq.Topic); err != nil {
			return fmt.Errorf("rocketmq: assign: %w", err)
		}
		wire = append(wire, c.wrap(mq))
	}
	c.mu.Lock()
	if err := c.setModeLocked(modeAssign); err != nil {
		c.mu.Unlock()
		return fmt.Errorf("rocketmq: assign: %w", err)
	}
	c.assign = wire
	running := c.state == stateRunning
	c.mu.Unlock()
	if !running {
		return nil
	}
	return c.applyAssign(ctx)
}

// applyAssign makes the held set exactly the assigned queues, topic by
// topic. The set is read under ctlMu, so the last Assign wins.
func (c *PullConsumer) applyAssign(ctx context.Context) error {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	c.mu.Lock()
	wire := c.assign
	c.mu.Unlock()
	by := map[string][]rocketmq.MessageQueue{}
	for _, mq := range wire {
		by[mq.Topic] = append(by[mq.Topic], mq)
	}
	for _, mq := range c.Assigned() {
		wt := c.wrap(mq).Topic
		if _, ok := by[wt]; !ok {
			by[wt] = nil
		}
	}
	sub := func(wt string) *liteSub {
		s, _ := newLiteSub(wt, All)
		return s
	}
	var errs []error
	for _, wt := range slices.Sorted(maps.Keys(by)) {
		if err := c.updateTopicLocked(ctx, wt, by[wt], sub(wt)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Start connects to the NameServers and starts pulling the subscribed or
// assigned queues. ctx bounds the first route lookups and heartbeat.
func (c *PullConsumer) Start(ctx context.Context) error {
	c.ctlMu.Lock()
	c.mu.Lock()
	switch c.state {
	case stateRunning:
		c.mu.Unlock()
		c.ctlMu.Unlock()
		return ErrAlreadyStarted
	case stateClosing, stateClosed:
		c.mu.Unlock()
		c.ctlMu.Unlock()
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, ErrClosed)
	}
	c.mu.Unlock()
	if err := c.startLocked(ctx); err != nil {
		c.ctlMu.Unlock()
		return err
	}
	c.mu.Lock()
	mode := c.mode
	c.mu.Unlock()
	c.ctlMu.Unlock()
	c.log.Info("rocketmq: pull consumer started", "group", c.cfg.group, "client", c.cli.ClientID())
	if mode == modeAssign {
		// Queues whose start offset cannot be read now are taken at a
		// later rebalance period.
		if err := c.applyAssign(ctx); err != nil {
			c.log.Warn("rocketmq: assigned queues not held yet", "group", c.cfg.group, "err", err)
		}
	}
	return nil
}

// startLocked connects and starts the loops; under ctlMu.
func (c *PullConsumer) startLocked(ctx context.Context) error {
	cli, err := mqclient.New(c.cfg.client)
	if err != nil {
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, err)
	}
	c.cli = cli
	if c.cfg.model == Broadcasting {
		path := localStorePath(c.cfg.offsetDir, c.cfg.client.ClientIP, c.cfg.client.InstanceName, c.cfg.client.UnitName, c.wireGroup)
		c.store = newLocalStore(path)
	} else {
		c.store = newRemoteStore(cli, c.wireGroup, c.log)
	}
	fail := func(err error) error {
		cctx, cancel := context.WithTimeout(context.Background(), c.cfg.client.RequestTimeout)
		defer cancel()
		cli.UnregisterConsumer(cctx, c.wireGroup)
		_ = cli.Close(cctx)
		c.store.close()
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, err)
	}
	if err := c.store.load(); err != nil {
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, err)
	}
	if err := cli.RegisterConsumer(c.wireGroup, &liteMember{c: c}); err != nil {
		return fail(err)
	}
	if err := cli.Start(ctx); err != nil {
		return fail(err)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.mu.Lock()
	subs := slices.Sorted(maps.Keys(c.subs))
	c.state = stateRunning
	c.mu.Unlock()
	for _, wt := range subs {
		if err := cli.UpdateRoute(ctx, wt); err != nil && ctx.Err() == nil {
			c.log.Warn("rocketmq: no route for subscribed topic yet", "group", c.cfg.group, "topic", wt, "err", err)
		}
	}
	if err := cli.SendHeartbeat(ctx); err != nil {
		c.log.Warn("rocketmq: first heartbeat failed", "group", c.cfg.group, "err", err)
	}
	c.gs.Go(c.rebalanceLoop)
	if c.cfg.lite.autoCommit {
		c.gs.Go(func() { every(c.closed, c.cfg.lite.autoCommitInterval, c.autoCommit) })
	}
	return nil
}

func (c *PullConsumer) running() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateNew:
		return ErrNotStarted
	case stateRunning:
		return nil
	}
	return ErrClosed
}

// Poll returns the next batch of messages pulled from one held queue that
// is not paused (at most the pull batch size), waiting for one until ctx
// ends; then it returns nil and ctx's error. The queue's consumed offset
// moves past the batch. Topics are without the namespace.
func (c *PullConsumer) Poll(ctx context.Context) ([]*rocketmq.MessageExt, error) {
	for {
		c.mu.Lock()
		if c.state != stateRunning {
			c.mu.Unlock()
			if err := c.running(); err != nil {
				return nil, err
			}
			continue
		}
		b := c.takeLocked()
		c.mu.Unlock()
		if b != nil {
			c.measurePoll(b)
			if ns := c.cfg.client.Namespace; ns != "" {
				for _, m := range b.msgs {
					m.Topic = mqclient.UnwrapNamespace(ns, m.Topic)
				}
			}
			return b.msgs, nil
		}
		select {
		case <-c.wake:
		case <-c.closed:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// takeLocked removes and returns the first batch of a held queue not
// paused, dropping stale ones; under mu.
func (c *PullConsumer) takeLocked() *liteBatch {
	// Stale batches at the front go at once; with nothing paused the
	// first batch left is the one, taken without moving the rest.
	for b := c.ready.front(); b != nil && c.queues[b.q.mq] != b.q; b = c.ready.front() {
		c.ready.pop()
	}
	var got *liteBatch
	if len(c.paused) == 0 {
		got = c.ready.pop()
	} else {
		got = c.takeSlowLocked()
	}
	if got == nil {
		return nil
	}
	q := got.q
	n := int64(len(got.msgs))
	q.count -= n
	q.bytes -= got.bytes
	c.held -= int(n)
	q.consumed.Store(got.next)
	if q.count > 0 {
		// The queue's next batch in arrival order is its oldest.
		for _, b := range c.ready.all() {
			if b.q == q {
				q.lo = b.msgs[0].QueueOffset
				break
			}
		}
	}
	wakeQueue(q)
	c.freeAllLocked()
	if c.ready.len() > 0 {
		c.signal()
	}
	return got
}

// takeSlowLocked is takeLocked's walk over every ready batch, skipping
// paused queues and dropping stale batches; under mu.
func (c *PullConsumer) takeSlowLocked() *liteBatch {
	var got *liteBatch
	c.ready.keep(func(b *liteBatch) bool {
		if c.queues[b.q.mq] != b.q {
			return false // the queue was given up or sought
		}
		if got == nil && !c.paused[b.q.mq] {
			got = b
			return false
		}
		return true
	})
	return got
}

// batchFIFO is a queue of batches over one reused array: taking from the
// front moves an index, so a steady stream of batches allocates nothing.
type batchFIFO struct {
	buf  []*liteBatch
	head int // buf[head:] are queued
}

func (f *batchFIFO) len() int { return len(f.buf) - f.head }

// all returns the queued batches, oldest first; valid until the next
// change.
func (f *batchFIFO) all() []*liteBatch { return f.buf[f.head:] }

func (f *batchFIFO) front() *liteBatch {
	if f.head == len(f.buf) {
		return nil
	}
	return f.buf[f.head]
}

func (f *batchFIFO) pop() *liteBatch {
	if f.head == len(f.buf) {
		return nil
	}
	b := f.buf[f.head]
	f.buf[f.head] = nil
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return b
}

func (f *batchFIFO) push(b *liteBatch) {
	if f.head > 0 && len(f.buf) == cap(f.buf) {
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, b)
}

// keep drops the batches for which ok is false, keeping the order.
func (f *batchFIFO) keep(ok func(*liteBatch) bool) {
	live := f.buf[f.head:]
	kept := f.buf[:0]
	for _, b := range live {
		if ok(b) {
			kept = append(kept, b)
		}
	}
	clear(f.buf[len(kept):])
	f.buf, f.head = kept, 0
}

func (f *batchFIFO) reset() { *f = batchFIFO{} }

// wakeQueue tells q's pull goroutine to check again whether it may pull.
func wakeQueue(q *liteQueue) {
	select {
	case q.room <- struct{}{}:
	default:
	}
}

// allRoomLocked returns the channel closed once the consumer holds less
// than its cap; under mu.
func (c *PullConsumer) allRoomLocked() chan struct{} {
	if c.allRoom == nil {
		c.allRoom = make(chan struct{})
	}
	return c.allRoom
}

// freeAllLocked wakes the queues waiting on allRoomLocked if the consumer
// holds less than its cap; under mu.
func (c *PullConsumer) freeAllLocked() {
	if c.allRoom != nil && c.held < c.cfg.lite.thresholdForAll {
		close(c.allRoom)
		c.allRoom = nil
	}
}

func (c *PullConsumer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Pause stops handing out and pulling messages of queues until Resume;
// other queues go on. Queues not held yet stay paused when they come.
func (c *PullConsumer) Pause(queues ...rocketmq.MessageQueue) {
	c.mu.Lock()
	for _, mq := range queues {
		c.paused[c.wrap(mq)] = true
	}
	c.mu.Unlock()
}

// Resume undoes Pause.
func (c *PullConsumer) Resume(queues ...rocketmq.MessageQueue) {
	c.mu.Lock()
	for _, mq := range queues {
		wmq := c.wrap(mq)
		delete(c.paused, wmq)
		if q := c.queues[wmq]; q != nil {
			wakeQueue(q)
		}
	}
	c.mu.Unlock()
	c.signal()
}

// Assigned returns the queues held now, sorted.
func (c *PullConsumer) Assigned() []rocketmq.MessageQueue {
	c.mu.Lock()
	out := make([]rocketmq.MessageQueue, 0, len(c.queues))
	for mq := range c.queues {
		out = append(out, c.unwrap(mq))
	}
	c.mu.Unlock()
	slices.SortFunc(out, compareQueues)
	return out
}

// Seek makes the next messages of mq, a held queue, those from offset on:
// what was pulled and not polled is dropped, and the consumed offset (what
// the next commit writes) becomes offset.
func (c *PullConsumer) Seek(ctx context.Context, mq rocketmq.MessageQueue, offset int64) error {
	if err := c.running(); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("rocketmq: seek %s to %d: negative offset", queueLog(mq), offset)
	}
	wmq := c.wrap(mq)
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	c.mu.Lock()
	q := c.queues[wmq]
	c.mu.Unlock()
	if q == nil {
		return fmt.Errorf("rocketmq: seek %s: %w", queueLog(mq), ErrNotAssigned)
	}
	c.stopQueue(q)
	c.startQueue(wmq, q.sub, offset, offset)
	return nil
}

// SeekToBegin seeks mq to the first offset the broker still has.
func (c *PullConsumer) SeekToBegin(ctx context.Context, mq rocketmq.MessageQueue) error {
	off, err := c.queryOffset(ctx, mq, remoting.GetMinOffset, 0)
	if err != nil {
		return err
	}
	return c.Seek(ctx, mq, off)
}

// SeekToEnd seeks mq past its last message: only messages sent later are
// returned.
func (c *PullConsumer) SeekToEnd(ctx context.Context, mq rocketmq.MessageQueue) error {
	off, err := c.queryOffset(ctx, mq, remoting.GetMaxOffset, 0)
	if err != nil {
		return err
	}
	return c.Seek(ctx, mq, off)
}

// OffsetForTimestamp returns the offset of mq's first message stored at
// or after t, as the broker finds it (SEARCH_OFFSET_BY_TIMESTAMP).
func (c *PullConsumer) OffsetForTimestamp(ctx context.Context, mq rocketmq.MessageQueue, t time.Time) (int64, error) {
	return c.queryOffset(ctx, mq, remoting.SearchOffsetByTimestamp, t.UnixMilli())
}

func (c *PullConsumer) queryOffset(ctx context.Context, mq rocketmq.MessageQueue, code int32, ts int64) (int64, error) {
	if err := c.running(); err != nil {
		return -1, err
	}
	off, err := queryQueueOffset(ctx, c.cli, c.wrap(mq), code, ts)
	if err != nil {
		return -1, fmt.Errorf("rocketmq: offset of %s: %w", queueLog(mq), err)
	}
	return off, nil
}

// Committed returns the group's committed offset of mq as its store keeps
// it (the broker, or the local file when broadcasting), -1 when it has
// none. A broker answers 0, not none, while the queue's first message is
// still in its memory (Java ConsumerManageProcessor).
func (c *PullConsumer) Committed(ctx context.Context, mq rocketmq.MessageQueue) (int64, error) {
	if err := c.running(); err != nil {
		return -1, err
	}
	wmq := c.wrap(mq)
	if c.cfg.model == Broadcasting {
		off, err := c.store.readStore(ctx, wmq)
		if errors.Is(err, errNoOffset) {
			return -1, nil
		}
		return off, err
	}
	off, err := queryCommitted(ctx, c.cli, c.wireGroup, wmq)
	if errors.Is(err, errNoOffset) {
		return -1, nil
	}
	return off, err
}

// queryCommitted is QUERY_CONSUMER_OFFSET without touching the in-memory
// offset.
func queryCommitted(ctx context.Context, cli *mqclient.Client, group string, mq rocketmq.MessageQueue) (int64, error) {
	addr, err := offsetAddr(ctx, cli, mq)
	if err != nil {
		return -1, err
	}
	h := remoting.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: mq.Topic, QueueID: int32(mq.QueueID), BrokerName: &mq.BrokerName}
	resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.QueryConsumerOffset, h.AppendExt(nil), nil), 0)
	if err != nil {
		return -1, err
	}
	if resp.Code == remoting.QueryNotFound {
		return -1, errNoOffset
	}
	if err := remoting.ResponseError(resp); err != nil {
		return -1, err
	}
	var rh remoting.QueryConsumerOffsetResponseHeader
	if err := rh.FromExt(resp.Ext); err != nil {
		return -1, err
	}
	return rh.Offset, nil
}

// CommitSync commits the consumed offset of every held queue and waits for
// the store to acknowledge.
func (c *PullConsumer) CommitSync(ctx context.Context) error {
	if err := c.running(); err != nil {
		return err
	}
	return c.commitHeld(ctx, true)
}

// Commit commits the given offsets (the offset of the next message to
// read, per queue) and waits for the store to acknowledge. A held queue's
// consumed offset becomes the one given, so auto-commit keeps it until
// Poll moves on.
func (c *PullConsumer) Commit(ctx context.Context, offsets map[rocketmq.MessageQueue]int64) error {
	if err := c.running(); err != nil {
		return err
	}
	var errs []error
	for mq, off := range offsets {
		if off < 0 {
			return fmt.Errorf("rocketmq: commit %s at %d: negative offset", queueLog(mq), off)
		}
		wmq := c.wrap(mq)
		c.mu.Lock()
		if q := c.queues[wmq]; q != nil {
			q.consumed.Store(off)
		}
		c.mu.Unlock()
		c.store.update(wmq, off, false)
		if err := c.store.persist(ctx, wmq); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// commitHeld writes the consumed offsets of the held queues to the store
// and persists them (sync: acknowledged).
func (c *PullConsumer) commitHeld(ctx context.Context, sync bool) error {
	c.mu.Lock()
	mqs := make([]rocketmq.MessageQueue, 0, len(c.queues))
	for mq, q := range c.queues {
		if off := q.consumed.Load(); off >= 0 {
			c.store.update(mq, off, false)
			mqs = append(mqs, mq)
		}
	}
	c.mu.Unlock()
	if len(mqs) == 0 {
		return nil
	}
	slices.SortFunc(mqs, compareQueues)
	return c.store.persistAll(ctx, mqs, sync)
}

func (c *PullConsumer) autoCommit() {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.client.RequestTimeout)
	defer cancel()
	if err := c.commitHeld(ctx, false); err != nil && ctx.Err() == nil {
		c.log.Warn("rocketmq: auto-commit failed", "group", c.cfg.group, "err", err)
	}
}

// Pull reads up to maxNums messages of mq from offset once, without
// waiting for new ones and apart from what Poll hands out; nothing is
// committed. It needs a started consumer, which it pulls as.
func (c *PullConsumer) Pull(ctx context.Context, mq rocketmq.MessageQueue, sel Selector, offset int64, maxNums int) (PullResult, error) {
	if err := c.running(); err != nil {
		return PullResult{}, err
	}
	if offset < 0 || maxNums < 1 || maxNums > 1024 {
		return PullResult{}, fmt.Errorf("rocketmq: pull %s: offset %d, max %d: want offset >= 0 and max 1..1024", queueLog(mq), offset, maxNums)
	}
	wmq := c.wrap(mq)
	s, err := newLiteSub(wmq.Topic, sel)
	if err != nil {
		return PullResult{}, err
	}
	res, _, err := pullQueue(ctx, c.cli, c.wireGroup, wmq, remoting.MasterID, s, offset, maxNums, false, 0)
	if err != nil {
		return PullResult{}, fmt.Errorf("rocketmq: pull %s at %d: %w", queueLog(mq), offset, err)
	}
	if ns := c.cfg.client.Namespace; ns != "" {
		for _, m := range res.Messages {
			m.Topic = mqclient.UnwrapNamespace(ns, m.Topic)
		}
	}
	return res, nil
}

// Shutdown stops pulling, commits the consumed offsets with auto-commit
// on, unregisters from the brokers and waits for every goroutine of the
// consumer; ctx bounds the commit and the unregistering. Messages pulled
// but not polled are dropped. A second call waits for the first.
func (c *PullConsumer) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	switch c.state {
	case stateNew:
		c.mu.Unlock()
		return ErrNotStarted
	case stateClosing, stateClosed:
		c.mu.Unlock()
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.state = stateClosing
	close(c.closed)
	c.mu.Unlock()
	c.cancel()

	c.ctlMu.Lock()
	c.mu.Lock()
	qs := slices.Collect(maps.Values(c.queues))
	c.mu.Unlock()
	for _, q := range qs {
		q.cancel()
	}
	for _, q := range qs {
		<-q.done // pulls end with c.ctx
		c.measureStopped(q)
	}
	var errs []error
	if c.cfg.lite.autoCommit {
		if err := c.commitHeld(ctx, true); err != nil {
			errs = append(errs, err)
		}
	}
	c.mu.Lock()
	c.queues = map[rocketmq.MessageQueue]*liteQueue{}
	c.ready.reset()
	c.held = 0
	c.mu.Unlock()
	c.ctlMu.Unlock()

	c.gs.Wait()
	c.cli.UnregisterConsumer(ctx, c.wireGroup)
	if err := c.cli.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	c.store.close()
	c.mu.Lock()
	c.state = stateClosed
	c.mu.Unlock()
	close(c.done)
	c.log.Info("rocketmq: pull consumer shut down", "group", c.cfg.group)
	return errors.Join(errs...)
}

// stopQueue stops q's pull goroutine and forgets its batches; under ctlMu.
// The goroutine returns promptly once cancelled (its pull and its waits
// end with its ctx), so it is always waited for.
func (c *PullConsumer) stopQueue(q *liteQueue) {
	q.cancel()
	<-q.done
	c.mu.Lock()
	if c.queues[q.mq] == q {
		delete(c.queues, q.mq)
	}
	c.held -= int(q.count)
	q.count, q.bytes = 0, 0
	c.freeAllLocked()
	c.mu.Unlock()
	c.measureStopped(q)
}

// startQueue holds mq and pulls it from offset; consumed is the offset
// the next commit writes (-1: none yet). Under ctlMu.
func (c *PullConsumer) startQueue(mq rocketmq.MessageQueue, s *liteSub, offset, consumed int64) {
	q := &liteQueue{mq: mq, sub: s, done: make(chan struct{}), room: make(chan struct{}, 1)}
	q.consumed.Store(consumed)
	var ctx context.Context
	ctx, q.cancel = context.WithCancel(c.ctx)
	c.mu.Lock()
	c.queues[mq] = q
	c.mu.Unlock()
	c.gs.Go(func() {
		defer close(q.done)
		c.pullLoop(ctx, q, offset)
	})
}

// putLocked queues b, a batch of at least one message, for Poll; under
// mu.
func (c *PullConsumer) putLocked(b *liteBatch) {
	q := b.q
	c.ready.push(b)
	if q.count == 0 {
		q.lo = b.msgs[0].QueueOffset
	}
	q.hi = b.msgs[len(b.msgs)-1].QueueOffset
	q.count += int64(len(b.msgs))
	q.bytes += b.bytes
	c.held += len(b.msgs)
}

// queueHeldBackLocked reports whether q must not pull now for a reason of
// its own: it is paused, or holds its cap of messages or bytes, or its
// messages span more offsets than the consume max span (Java
// DefaultLitePullConsumerImpl.PullTaskImpl's checks, with the consumer's
// cap checked apart); under mu.
func (c *PullConsumer) queueHeldBackLocked(q *liteQueue, capBytes int64) bool {
	return c.paused[q.mq] || q.count >= int64(c.cfg.pullThresholdForQueue) || q.bytes >= capBytes ||
		(q.count > 0 && q.hi-q.lo > int64(c.cfg.maxSpan))
}

// pullLoop pulls q from offset until ctx ends (Java PullTaskImpl).
func (c *PullConsumer) pullLoop(ctx context.Context, q *liteQueue, offset int64) {
	next := offset
	brokerID := remoting.MasterID
	capBytes := int64(c.cfg.pullThresholdSizeForQueue) << 20
	for ctx.Err() == nil {
		// Java waits a fixed delay and checks again; this waits for the
		// poll, Resume or dropped queue that can change the answer.
		c.mu.Lock()
		var room <-chan struct{}
		switch {
		case c.queueHeldBackLocked(q, capBytes):
			room = q.room
		case c.held >= c.cfg.lite.thresholdForAll:
			room = c.allRoomLocked()
		}
		c.mu.Unlock()
		if room != nil {
			select {
			case <-room:
			case <-ctx.Done():
				return
			}
			continue
		}
		res, bid, err := pullQueue(ctx, c.cli, c.wireGroup, q.mq, brokerID, q.sub, next, c.cfg.pullBatchSize, true, c.cfg.suspendBrokerMillis)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("rocketmq: pull failed", "group", c.cfg.group, "queue", queueLog(q.mq), "offset", next, "err", err)
			if !sleep(ctx, pullDelayOnError) {
				return
			}
			continue
		}
		brokerID = bid
		c.measureLagPulled(q, &res)
		switch res.Status {
		case PullFound:
			b := &liteBatch{q: q, msgs: res.Messages, next: res.NextOffset}
			for _, m := range res.Messages {
				b.bytes += int64(len(m.Body))
			}
			c.mu.Lock()
			if ctx.Err() != nil {
				c.mu.Unlock()
				return
			}
			c.putLocked(b)
			c.mu.Unlock()
			c.signal()
		case PullOffsetIllegal:
			c.log.Warn("rocketmq: pull offset illegal, queue continues at the broker's offset", "group", c.cfg.group,
				"queue", queueLog(q.mq), "offset", next, "next", res.NextOffset)
			fallthrough
		default:
			// Nothing held and nothing matched up to NextOffset: the
			// consumed offset moves with it (Java correctTagsOffset).
			c.mu.Lock()
			if q.count == 0 && res.NextOffset > q.consumed.Load() {
				q.consumed.Store(res.NextOffset)
			}
			c.mu.Unlock()
		}
		c.measureCached(q)
		next = res.NextOffset
	}
}

// updateTopic makes the held queues of wt exactly mine.
func (c *PullConsumer) updateTopic(ctx context.Context, wt string, mine []rocketmq.MessageQueue, s *liteSub) error {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	return c.updateTopicLocked(ctx, wt, mine, s)
}

// updateTopicLocked is updateTopic under ctlMu.
func (c *PullConsumer) updateTopicLocked(ctx context.Context, wt string, mine []rocketmq.MessageQueue, s *liteSub) error {
	if c.ctx == nil || c.ctx.Err() != nil {
		return ErrClosed
	}
	want := make(map[rocketmq.MessageQueue]bool, len(mine))
	for _, mq := range mine {
		want[mq] = true
	}
	c.mu.Lock()
	var drop []*liteQueue
	for mq, q := range c.queues {
		if mq.Topic == wt && !want[mq] {
			drop = append(drop, q)
		}
	}
	var add []rocketmq.MessageQueue
	for _, mq := range mine {
		if c.queues[mq] == nil {
			add = append(add, mq)
		}
	}
	c.mu.Unlock()
	changed := false
	var errs []error
	for _, q := range drop {
		c.stopQueue(q)
		changed = true
		// Java removeUnnecessaryMessageQueue: the offset is persisted and
		// forgotten.
		if off := q.consumed.Load(); off >= 0 && c.cfg.lite.autoCommit {
			c.store.update(q.mq, off, false)
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.client.RequestTimeout)
		if err := c.store.persist(pctx, q.mq); err != nil {
			c.log.Warn("rocketmq: persist offset of a dropped queue", "group", c.cfg.group, "queue", queueLog(q.mq), "err", err)
		}
		cancel()
		c.store.remove(q.mq)
		c.log.Info("rocketmq: queue dropped", "group", c.cfg.group, "queue", queueLog(q.mq))
	}
	slices.SortFunc(add, compareQueues)
	for _, mq := range add {
		c.store.remove(mq) // Java removeDirtyOffset
		off, err := c.startOffset(ctx, mq)
		if err != nil {
			errs = append(errs, fmt.Errorf("rocketmq: start offset of %s: %w", queueLog(mq), err))
			continue
		}
		c.startQueue(mq, s, off, -1)
		changed = true
		c.log.Info("rocketmq: queue assigned", "group", c.cfg.group, "queue", queueLog(mq), "offset", off)
	}
	if changed {
		c.measureRebalance(wt)
		if l := c.cfg.lite.listener; l != nil {
			var held []rocketmq.MessageQueue
			for _, mq := range c.Assigned() {
				if c.wrap(mq).Topic == wt {
					held = append(held, mq)
				}
			}
			l(mqclient.UnwrapNamespace(c.cfg.client.Namespace, wt), held)
		}
	}
	return errors.Join(errs...)
}

// startOffset is where a newly held queue starts: the committed offset,
// else where WithConsumeFrom says (Java computePullFromWhere,
// docs/PROTOCOL.md §8.7).
func (c *PullConsumer) startOffset(ctx context.Context, mq rocketmq.MessageQueue) (int64, error) {
	off, err := c.store.readStore(ctx, mq)
	if err == nil && off >= 0 {
		return off, nil
	}
	if err != nil && !errors.Is(err, errNoOffset) {
		return -1, err
	}
	switch c.cfg.from {
	case FromFirst:
		return 0, nil
	case FromTimestamp:
		return queryQueueOffset(ctx, c.cli, mq, remoting.SearchOffsetByTimestamp, c.cfg.fromTimestamp.Truncate(time.Second).UnixMilli())
	default:
		return queryQueueOffset(ctx, c.cli, mq, remoting.GetMaxOffset, 0)
	}
}

func (c *PullConsumer) rebalanceSoon() {
	select {
	case c.rebNow <- struct{}{}:
	default:
	}
}

// rebalanceLoop rebalances the subscribed topics every rebalance interval
// and when asked.
func (c *PullConsumer) rebalanceLoop() {
	t := time.NewTicker(c.cfg.rebalanceInterval)
	defer t.Stop()
	c.rebalance()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		case <-c.rebNow:
		}
		c.rebalance()
	}
}

func (c *PullConsumer) rebalance() {
	c.mu.Lock()
	if c.mode == modeAssign {
		// Assigned queues whose start offset could not be read are
		// retried.
		missing := false
		for _, mq := range c.assign {
			missing = missing || c.queues[mq] == nil
		}
		c.mu.Unlock()
		if missing {
			ctx, cancel := context.WithTimeout(c.ctx, c.cfg.client.RequestTimeout)
			defer cancel()
			if err := c.applyAssign(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("rocketmq: assigned queues not held yet", "group", c.cfg.group, "err", err)
			}
		}
		return
	}
	if c.mode != modeSubscribe {
		c.mu.Unlock()
		return
	}
	subs := maps.Clone(c.subs)
	heldTopics := map[string]bool{}
	for mq := range c.queues {
		heldTopics[mq.Topic] = true
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.client.RequestTimeout)
	defer cancel()
	for wt := range heldTopics {
		if subs[wt] == nil {
			_ = c.updateTopic(ctx, wt, nil, nil)
		}
	}
	for _, wt := range slices.Sorted(maps.Keys(subs)) {
		mine, ok := c.allocate(ctx, wt)
		if !ok {
			continue
		}
		if err := c.updateTopic(ctx, wt, mine, subs[wt]); err != nil && ctx.Err() == nil {
			c.log.Warn("rocketmq: rebalance", "group", c.cfg.group, "topic", wt, "err", err)
		}
	}
}

// allocate returns this member's share of wt's queues; false when it
// cannot be known now (the held set then stays, as Java's).
func (c *PullConsumer) allocate(ctx context.Context, wt string) ([]rocketmq.MessageQueue, bool) {
	all, err := c.cli.SubscribeQueues(ctx, wt)
	if err != nil || len(all) == 0 {
		return nil, false
	}
	all = slices.Clone(all)
	rebalance.SortQueues(all)
	if c.cfg.model == Broadcasting {
		return all, true
	}
	cids, err := c.cli.FindConsumerIDs(ctx, wt, c.wireGroup)
	if err != nil {
		return nil, false
	}
	cids = slices.Clone(cids)
	rebalance.SortClientIDs(cids)
	if err := rebalance.Validate(c.cli.ClientID(), all, cids); err != nil {
		return nil, false
	}
	return c.cfg.strategy.Allocate(c.wireGroup, c.cli.ClientID(), all, cids), true
}

// queryQueueOffset asks mq's master for its min or max offset or the
// offset of a time (unix ms).
func queryQueueOffset(ctx context.Context, cli *mqclient.Client, mq rocketmq.MessageQueue, code int32, ts int64) (int64, error) {
	addr, err := masterAddr(ctx, cli, mq)
	if err != nil {
		return -1, err
	}
	var req *remoting.Command
	switch code {
	case remoting.GetMaxOffset:
		h := remoting.GetMaxOffsetRequestHeader{Topic: mq.Topic, QueueID: int32(mq.QueueID), BrokerName: &mq.BrokerName}
		req = remoting.NewRequest(code, h.AppendExt(nil), nil)
	case remoting.GetMinOffset:
		h := remoting.GetMinOffsetRequestHeader{Topic: mq.Topic, QueueID: int32(mq.QueueID), BrokerName: &mq.BrokerName}
		req = remoting.NewRequest(code, h.AppendExt(nil), nil)
	default:
		h := remoting.SearchOffsetRequestHeader{Topic: mq.Topic, QueueID: int32(mq.QueueID), Timestamp: ts, BrokerName: &mq.BrokerName}
		req = remoting.NewRequest(code, h.AppendExt(nil), nil)
	}
	resp, err := cli.Invoke(ctx, addr, req, 0)
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return -1, err
	}
	var h remoting.OffsetResponseHeader
	if err := h.FromExt(resp.Ext); err != nil {
		return -1, err
	}
	return h.Offset, nil
}
