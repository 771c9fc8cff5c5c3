package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// LocalState is the outcome of a local transaction (Java
// LocalTransactionState).
//
// The zero value is LocalUnknown: a listener that forgets to decide
// leaves the message invisible and the broker asks again later.
type LocalState int

const (
	// LocalUnknown leaves the half message undecided: the broker asks a
	// member of the producer group again (CheckLocal) after the check
	// interval, up to its maximum checks.
	LocalUnknown LocalState = iota
	// LocalCommit makes the message visible to consumers.
	LocalCommit
	// LocalRollback discards the message.
	LocalRollback
)

func (s LocalState) String() string {
	switch s {
	case LocalCommit:
		return "COMMIT_MESSAGE"
	case LocalRollback:
		return "ROLLBACK_MESSAGE"
	case LocalUnknown:
		return "UNKNOW"
	}
	return "unknown"
}

// TransactionListener runs the local transactions of a transactional
// producer and answers the broker's checks (Java TransactionListener).
//
// Shutdown cancels the ctx of the calls still running when its own ctx
// ends; a call that ignores this is abandoned after a short grace and its
// outcome dropped: the broker checks that transaction later, with another
// member of the group. Either method may call Shutdown (ExecuteLocal with
// its ctx, or one derived from it); the outcome it returns afterwards is
// dropped the same way.
type TransactionListener interface {
	// ExecuteLocal runs the local transaction of msg, just stored as a
	// half message, with the arg given to SendInTransaction. msg is a copy
	// of the message sent, with the TRAN_MSG and PGROUP properties and its
	// UNIQ_KEY: msg.UniqKey() is the transaction id CheckLocal later sees
	// as TransactionID(). A panic counts as LocalUnknown and is logged.
	ExecuteLocal(ctx context.Context, msg *rocketmq.Message, arg any) LocalState
	// CheckLocal tells the broker the state of the local transaction of
	// a half message still undecided after the check immunity time:
	// msg.TransactionID() and msg's properties identify it. It runs on
	// the producer's check goroutines, for any half message of the group,
	// including those sent by another producer instance of the group. A
	// panic counts as LocalUnknown and is logged.
	CheckLocal(ctx context.Context, msg *rocketmq.MessageExt) LocalState
}

// TransactionResult is what SendInTransaction returns: the half message's
// send result and the local transaction's outcome.
type TransactionResult struct {
	*rocketmq.SendResult
	// State is the outcome sent to the broker: what ExecuteLocal returned
	// (LocalUnknown after a panic or for a value outside the three), or
	// LocalRollback for a half message stored with a non-OK status.
	State LocalState
	// TransactionID identifies the transaction: the half message's
	// UNIQ_KEY, as Java.
	TransactionID string
}

// TransactionProducer sends messages in transactions (Java
// TransactionMQProducer); it is also a Producer for ordinary sends.
// Create it with NewTransactional, Start it, and Shutdown it when done.
// While it runs it answers the broker's checks of its group's undecided
// transactions (see WithTransactionChecks); Shutdown answers the checks
// already queued within its ctx.
type TransactionProducer struct {
	*Producer
}

// ErrTransactionUnsupported is returned for a message that cannot be sent
// in a transaction: one with a delay level or a 5.x delivery time. (Java
// silently drops a delay level instead; the message would then be
// delivered at once, which is refused here rather than hidden.) Batches
// cannot be sent in a transaction at all.
var ErrTransactionUnsupported = errors.New("rocketmq: delayed messages cannot be sent in a transaction")

// NewTransactional validates the options and returns a transactional
// producer that is not started. The options are the producer's; the
// group names the producer group the broker asks when it checks a
// transaction.
func NewTransactional(l TransactionListener, opts ...Option) (*TransactionProducer, error) {
	if l == nil {
		return nil, errors.New("rocketmq: transactional producer: nil listener")
	}
	p, err := New(opts...)
	if err != nil {
		return nil, err
	}
	p.txl = l
	return &TransactionProducer{Producer: p}, nil
}

// SendInTransaction sends msg as a half message, runs the listener's
// ExecuteLocal with arg and ends the transaction with its outcome. The
// error is non-nil when the half message was not stored (ExecuteLocal is
// then not called); the END_TRANSACTION request is oneway, as Java's, so
// its loss is repaired by the broker's check. A half message stored with
// a non-OK status (a flush or replication timeout) is rolled back without
// running ExecuteLocal, as Java does. msg itself is not changed.
func (t *TransactionProducer) SendInTransaction(ctx context.Context, msg *rocketmq.Message, arg any) (*TransactionResult, error) {
	p := t.Producer
	half, err := p.halfMessage(msg)
	if err != nil {
		return nil, err
	}
	e, err := p.prepare(KindSync, []*rocketmq.Message{half})
	if err != nil {
		return nil, err
	}
	defer p.release(e)
	r, err := p.enter()
	if err != nil {
		return nil, err
	}
	res, err := p.sendEnvelope(ctx, r, e, p.cfg.selector)
	if err != nil {
		r.leave()
		return nil, err
	}
	// The local transaction is counted apart from the sends, so that a
	// listener calling Shutdown does not wait for itself.
	lc := r.beginLocal(ctx)
	r.leave()
	defer r.endLocal(lc)
	state, remark := LocalUnknown, ""
	switch res.Status {
	case rocketmq.SendOK:
		state, remark = p.executeLocal(lc, half, arg)
	case rocketmq.SendFlushDiskTimeout, rocketmq.SendFlushSlaveTimeout, rocketmq.SendSlaveNotAvailable:
		state = LocalRollback
	}
	if r.trace != nil {
		addr, _ := r.api.brokerAddr(res.Queue.BrokerName)
		r.trace.endTransaction(msg, res.MsgID, half.UniqKey(), addr, state.known(), false)
	}
	p.endTransaction(r, res, state, remark)
	return &TransactionResult{SendResult: res, State: state, TransactionID: half.UniqKey()}, nil
}

// halfMessage checks msg and returns the copy sent as the half message
// (docs/PROTOCOL.md §8.12): TRAN_MSG and PGROUP set, and a UNIQ_KEY, the
// transaction id, generated unless msg has one.
func (p *Producer) halfMessage(msg *rocketmq.Message) (*rocketmq.Message, error) {
	if msg == nil {
		return nil, rocketmq.ErrNilMessage
	}
	if err := p.checkMessage(msg); err != nil {
		return nil, err
	}
	// checkMessage has parsed a present DELAY already.
	if d := msg.Properties[rocketmq.PropertyDelayLevel]; (d != "" && msg.DelayLevel() > 0) || isTimer(msg) {
		return nil, ErrTransactionUnsupported
	}
	half := *msg
	half.Properties = make(map[string]string, len(msg.Properties)+3)
	for k, v := range msg.Properties {
		half.Properties[k] = v
	}
	half.Properties[rocketmq.PropertyTransactionPrepared] = "true"
	half.Properties[rocketmq.PropertyProducerGroup] = p.cfg.wireGroup
	if half.UniqKey() == "" {
		half.SetUniqKey(p.ids.NewID())
	}
	return &half, nil
}

// executeLocal runs ExecuteLocal; a panic is LocalUnknown with a remark
// for the broker's log, as Java sends the exception text. Its ctx also
// ends when Shutdown gives up waiting.
func (p *Producer) executeLocal(lc *localCtx, msg *rocketmq.Message, arg any) (state LocalState, remark string) {
	defer lc.release()
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("rocketmq: local transaction panicked", "group", p.cfg.group, "transaction", msg.UniqKey(), "panic", v)
			state, remark = LocalUnknown, fmt.Sprintf("executeLocalTransactionBranch exception: panic: %v", v)
		}
	}()
	state = p.txl.ExecuteLocal(lc, msg, arg)
	if state != LocalCommit {
		p.log.Info("rocketmq: local transaction not committed", "group", p.cfg.group, "transaction", msg.UniqKey(), "state", state)
	}
	return state.known(), ""
}

// localCtx is the ctx of ExecuteLocal: the caller's ctx, also ended by
// the run ctx. Joining the two registers on both, and the run ctx is shared
// by every caller of the producer, so it happens only when the listener
// asks for Done (or derives a ctx); Err alone looks at both directly.
type localCtx struct {
	context.Context // the caller's
	run             context.Context

	joint    atomic.Pointer[localJoint] // nil until Done
	mu       sync.Mutex                 // orders joining and release
	released bool
}

// localJoint is the caller's ctx joined with the run ctx.
type localJoint struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool
}

func (c *localCtx) join() context.Context {
	if j := c.joint.Load(); j != nil {
		return j.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if j := c.joint.Load(); j != nil {
		return j.ctx
	}
	j := &localJoint{}
	j.ctx, j.cancel = context.WithCancel(c.Context)
	if c.released {
		// Kept past ExecuteLocal: already over, nothing registered.
		j.cancel()
		j.stop = func() bool { return false }
	} else {
		j.stop = context.AfterFunc(c.run, j.cancel)
		if c.run.Err() != nil {
			j.cancel() // at once, not on AfterFunc's goroutine
		}
	}
	c.joint.Store(j)
	return j.ctx
}

func (c *localCtx) Done() <-chan struct{} { return c.join().Done() }

func (c *localCtx) Err() error {
	if j := c.joint.Load(); j != nil {
		return j.ctx.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.run.Err() != nil {
		return context.Canceled
	}
	return nil
}

// Value answers from the joined ctx once there is one, so that a ctx
// derived from c (which asks for Done first) finds the joined ctx's
// cancellation and hooks on it directly, and context.Cause sees it.
// localKey is answered with c itself (see detachLocal).
func (c *localCtx) Value(key any) any {
	if key == (localKey{}) {
		return c
	}
	if j := c.joint.Load(); j != nil {
		return j.ctx.Value(key)
	}
	return c.Context.Value(key)
}

// release unjoins c once ExecuteLocal has returned.
func (c *localCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = true
	if j := c.joint.Load(); j != nil {
		j.stop()
		j.cancel()
	}
}

// known maps a value outside the three states to LocalUnknown.
func (s LocalState) known() LocalState {
	switch s {
	case LocalCommit, LocalRollback:
		return s
	}
	return LocalUnknown
}

// wire is the END_TRANSACTION commitOrRollback of s.
func (s LocalState) wire() int32 {
	switch s {
	case LocalCommit:
		return remoting.TransactionCommit
	case LocalRollback:
		return remoting.TransactionRollback
	}
	return remoting.TransactionNotType
}

// endTransaction sends END_TRANSACTION oneway to the master that stored
// the half message (docs/PROTOCOL.md §3.9, §8.12). A failure is logged
// only: the broker checks the transaction later.
func (p *Producer) endTransaction(r *runState, res *rocketmq.SendResult, state LocalState, remark string) {
	log := func(err error) {
		p.log.Warn("rocketmq: end of transaction not sent; the broker will check it", "group", p.cfg.group,
			"transaction", res.MsgID, "state", state, "err", err)
	}
	_, offset, err := rocketmq.DecodeOffsetMsgID(res.OffsetMsgID)
	if err != nil {
		log(err)
		return
	}
	addr, ok := r.api.brokerAddr(res.Queue.BrokerName)
	if !ok {
		log(fmt.Errorf("%w: %s", ErrBrokerNotFound, res.Queue.BrokerName))
		return
	}
	h := remoting.EndTransactionRequestHeader{
		ProducerGroup:        p.cfg.wireGroup,
		TranStateTableOffset: res.QueueOffset,
		CommitLogOffset:      offset,
		CommitOrRollback:     state.wire(),
		MsgID:                res.MsgID,
		BrokerName:           &res.Queue.BrokerName,
	}
	if res.TransactionID != "" {
		h.TransactionID = &res.TransactionID
	}
	req := remoting.NewRequest(remoting.EndTransaction, h.AppendExt(nil), nil)
	req.Remark = remark
	// The decision goes out even when the caller's ctx has ended. A oneway
	// request only waits to connect, which the transport bounds by its own
	// timeout: no per-call timer ctx (it would register a child on the run
	// ctx every transaction shares).
	if err := r.api.invokeOneway(r.ctx, addr, req); err != nil {
		log(err)
	}
}

// checkPool answers CHECK_TRANSACTION_STATE for the group on a bounded
// set of goroutines (Java's check executor): the client hands each check
// over without waiting, a full queue drops it, and the broker asks again.
type checkPool struct {
	p      *Producer
	r      *runState
	ctx    context.Context // ends when Shutdown gives up waiting
	cancel context.CancelFunc
	queue  chan checkRequest
	wg     mqclient.Goroutines // known, so that a CheckLocal may call Shutdown

	mu     sync.RWMutex
	closed bool
}

type checkRequest struct {
	addr string
	msg  *rocketmq.MessageExt
	h    remoting.CheckTransactionStateRequestHeader
}

// checkTimeout bounds the oneway answer to a check, as Java's 3 s.
const checkTimeout = 3 * time.Second

func (p *Producer) newCheckPool(r *runState) *checkPool {
	c := &checkPool{p: p, r: r, queue: make(chan checkRequest, p.cfg.checkQueue)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	for range p.cfg.checkGoroutines {
		c.wg.Go(c.run)
	}
	return c
}

// CheckTransactionState implements mqclient.Producer: it queues the check
// and returns at once.
func (c *checkPool) CheckTransactionState(_ context.Context, addr string, msg *rocketmq.MessageExt, h *remoting.CheckTransactionStateRequestHeader) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		c.p.log.Debug("rocketmq: transaction check dropped: producer shutting down", "group", c.p.cfg.group, "addr", addr, "transaction", msg.TransactionID())
		return
	}
	select {
	case c.queue <- checkRequest{addr: addr, msg: msg, h: *h}:
	default:
		c.p.log.Warn("rocketmq: transaction check dropped: check queue full; the broker asks again", "group", c.p.cfg.group,
			"addr", addr, "transaction", msg.TransactionID(), "capacity", cap(c.queue))
	}
}

func (c *checkPool) run() {
	for req := range c.queue {
		if c.ctx.Err() != nil {
			continue // Shutdown gave up: drop the rest
		}
		c.answer(req)
	}
}

// answer asks the listener and sends its decision to the broker that asked
// (docs/PROTOCOL.md §8.12 step 4).
func (c *checkPool) answer(req checkRequest) {
	p := c.p
	state, remark := c.checkLocal(req.msg)
	msgID := req.msg.UniqKey()
	if msgID == "" {
		msgID = req.msg.MsgID
	}
	h := remoting.EndTransactionRequestHeader{
		ProducerGroup:        p.cfg.wireGroup,
		TranStateTableOffset: req.h.TranStateTableOffset,
		CommitLogOffset:      req.h.CommitLogOffset,
		CommitOrRollback:     state.wire(),
		FromTransactionCheck: true,
		MsgID:                msgID,
		TransactionID:        req.h.TransactionID,
		BrokerName:           req.h.BrokerName,
	}
	c.r.trace.endTransaction(&req.msg.Message, msgID, req.msg.TransactionID(), req.addr, state, true)
	cmd := remoting.NewRequest(remoting.EndTransaction, h.AppendExt(nil), nil)
	cmd.Remark = remark
	ctx, cancel := context.WithTimeout(c.ctx, checkTimeout)
	defer cancel()
	if err := c.r.api.invokeOneway(ctx, req.addr, cmd); err != nil {
		p.log.Warn("rocketmq: answer to a transaction check not sent", "group", p.cfg.group, "addr", req.addr, "transaction", msgID, "err", err)
	}
}

func (c *checkPool) checkLocal(msg *rocketmq.MessageExt) (state LocalState, remark string) {
	defer func() {
		if v := recover(); v != nil {
			c.p.log.Error("rocketmq: transaction check panicked", "group", c.p.cfg.group, "transaction", msg.TransactionID(), "panic", v)
			state, remark = LocalUnknown, fmt.Sprintf("checkLocalTransactionState Exception: panic: %v", v)
		}
	}()
	state = c.p.txl.CheckLocal(c.ctx, msg).known()
	if state != LocalCommit {
		c.p.log.Info("rocketmq: transaction check not committed", "group", c.p.cfg.group, "transaction", msg.TransactionID(), "state", state)
	}
	return state, ""
}

// stop refuses new checks, lets the goroutines answer the queued ones
// until ctx ends, then cancels the rest and waits for the goroutines at
// most shutdownGrace more: a CheckLocal ignoring its ctx is abandoned,
// its answer dropped. A check goroutine calling stop does not wait for
// itself.
func (c *checkPool) stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	c.wg.Detach()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		c.cancel()
		t := time.NewTimer(shutdownGrace)
		select {
		case <-done:
		case <-t.C:
			c.p.log.Warn("rocketmq: shutdown: a transaction check ignores its cancelled ctx; its answer is dropped", "group", c.p.cfg.group)
		}
		t.Stop()
	}
	c.cancel()
	return err
}
