package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	ourproducer "github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// What a test asks the listeners to decide for a transaction, carried in
// the message's propKind property so that any member of the producer
// group answers a check the same way.
const (
	txCommit        = "commit"
	txRollback      = "rollback"
	txCheckCommit   = "check-commit"   // unknown at first, commit when checked
	txCheckRollback = "check-rollback" // unknown at first, rollback when checked
)

var txKinds = []string{txCommit, txRollback, txCheckCommit, txCheckRollback}

// txVisible reports whether a transaction of kind ends committed.
func txVisible(s *sent) bool { return s.kind == txCommit || s.kind == txCheckCommit }

// propPGroup is the producer group property of a half message
// (docs/PROTOCOL.md §9.7).
const propPGroup = "PGROUP"

// Transaction settings of the in-process broker: checks every second, a
// half message is checked once it is two seconds old, long after its
// sender's own decision even on a loaded machine. A real broker with
// default settings checks every 60 s after 6 s of immunity.
const (
	txCheckInterval = time.Second
	txImmunity      = 2 * time.Second
)

// txTimeout is how long a test waits for the checks of undecided
// transactions and for the messages they commit: on a real broker the
// first check comes up to one check interval (60 s) after the immunity.
func (e *env) txTimeout() time.Duration {
	if e.cluster == nil {
		return 150 * time.Second
	}
	return 30 * time.Second
}

// newTxEnv starts the cluster of a transaction test with short check
// timings (an external cluster keeps its own).
func newTxEnv(t *testing.T) *env {
	return newEnv(t, 1, txClusterOptions...)
}

// txCheck is one CHECK_TRANSACTION_STATE a listener answered.
type txCheck struct {
	by              string // the listener's name
	idx             int
	topic           string
	queueID         int
	uniqKey         string
	group           string
	commitLogOffset int64
	body            []byte
	answer          string // txCommit, txRollback or "" (unknown)
}

// txLog collects what the listeners of one test were asked.
type txLog struct {
	run string
	mu  sync.Mutex
	all []txCheck
}

// answer records a check of a message of this run and returns what the
// test planned for it: commit, rollback, or "" for a message of another
// run (left unknown).
func (l *txLog) answer(c txCheck, run, kind string, idx string) string {
	if run != l.run {
		return ""
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 {
		return ""
	}
	c.idx = i
	switch kind {
	case txCommit, txCheckCommit:
		c.answer = txCommit
	case txRollback, txCheckRollback:
		c.answer = txRollback
	}
	l.mu.Lock()
	l.all = append(l.all, c)
	l.mu.Unlock()
	return c.answer
}

func (l *txLog) checks() []txCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]txCheck(nil), l.all...)
}

// checkedAll reports whether every undecided transaction of pl has been
// checked at least once.
func (l *txLog) checkedAll(pl *txPlan) bool {
	seen := make(map[int]bool)
	for _, c := range l.checks() {
		seen[c.idx] = true
	}
	for _, s := range pl.msgs {
		if (s.kind == txCheckCommit || s.kind == txCheckRollback) && !seen[s.idx] {
			return false
		}
	}
	return true
}

// officialListener is the official client's TransactionListener.
type officialListener struct {
	name string
	log  *txLog
}

func (l *officialListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch m.GetProperty(propKind) {
	case txCommit:
		return primitive.CommitMessageState
	case txRollback:
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

func (l *officialListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	c := txCheck{
		by:              l.name,
		topic:           m.Topic,
		uniqKey:         m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex),
		group:           m.GetProperty(primitive.PropertyProducerGroup),
		commitLogOffset: m.CommitLogOffset,
		body:            m.Body,
	}
	if m.Queue != nil {
		c.queueID = m.Queue.QueueId
	}
	switch l.log.answer(c, m.GetProperty(propRun), m.GetProperty(propKind), m.GetProperty(propIdx)) {
	case txCommit:
		return primitive.CommitMessageState
	case txRollback:
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

// ourListener is our producer's TransactionListener.
type ourListener struct {
	name string
	log  *txLog
}

func (l *ourListener) ExecuteLocal(_ context.Context, m *rocketmq.Message, _ any) ourproducer.LocalState {
	switch m.Property(propKind) {
	case txCommit:
		return ourproducer.LocalCommit
	case txRollback:
		return ourproducer.LocalRollback
	}
	return ourproducer.LocalUnknown
}

func (l *ourListener) CheckLocal(_ context.Context, m *rocketmq.MessageExt) ourproducer.LocalState {
	c := txCheck{
		by:              l.name,
		topic:           m.Topic,
		queueID:         int(m.QueueID),
		uniqKey:         m.Property(rocketmq.PropertyUniqKey),
		group:           m.Property(propPGroup),
		commitLogOffset: m.CommitLogOffset,
		body:            m.Body,
	}
	switch l.log.answer(c, m.Property(propRun), m.Property(propKind), m.Property(propIdx)) {
	case txCommit:
		return ourproducer.LocalCommit
	case txRollback:
		return ourproducer.LocalRollback
	}
	return ourproducer.LocalUnknown
}

// txPlan is a plan of transactions: the commit-log offset of each half
// message as its sender reported it, by index.
type txPlan struct {
	*plan
	group string
	// lateChecks accepts checks of transactions their sender decides:
	// under load the decision may come after the immunity time.
	lateChecks bool
	mu         sync.Mutex
	half       map[int]int64
}

// halfOffset is the commit-log offset of transaction idx's half message.
func (p *txPlan) halfOffset(idx int) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.half[idx]
}

func newTxPlan(e *env, topic, group string) *txPlan {
	return &txPlan{plan: newPlan(e, topic), group: group, half: make(map[int]int64)}
}

// addAll registers perKind transactions of every kind, interleaved.
func (p *txPlan) addAll(perKind int) []*sent {
	var out []*sent
	for i := 0; i < perKind; i++ {
		for _, k := range txKinds {
			out = append(out, p.add(k, []string{"TagA", "TagB"}[len(p.msgs)%2], 64+31*len(p.msgs)))
		}
	}
	return out
}

// wantState is the state SendInTransaction reports for kind.
func wantState(kind string) string {
	switch kind {
	case txCommit:
		return txCommit
	case txRollback:
		return txRollback
	}
	return ""
}

// officialTxProducer starts a transaction producer of the official client
// in group; it is shut down when the test ends unless the test does. Its
// instance name must be its own: the client shares one instance per name,
// and only the first producer's listener would get the checks. The
// goroutine that runs its checks outlives Shutdown (the client never
// closes the channel it reads), parked and harmless in a test binary.
func (e *env) officialTxProducer(t *testing.T, group string, l *officialListener) (p rmq.TransactionProducer, shutdown func()) {
	t.Helper()
	p, err := rmq.NewTransactionProducer(l,
		producer.WithNsResolver(e.resolver()),
		producer.WithGroupName(group),
		producer.WithInstanceName(l.name),
		producer.WithRetry(2),
	)
	if err != nil {
		t.Fatalf("official transaction producer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("official transaction producer start: %v", err)
	}
	var once sync.Once
	shutdown = func() {
		once.Do(func() {
			if err := p.Shutdown(); err != nil {
				t.Errorf("official transaction producer shutdown: %v", err)
			}
		})
	}
	t.Cleanup(shutdown)
	return p, shutdown
}

// ourTxProducer starts our transactional producer in group.
func (e *env) ourTxProducer(t *testing.T, group string, l *ourListener) (p *ourproducer.TransactionProducer, shutdown func()) {
	t.Helper()
	p, err := ourproducer.NewTransactional(l,
		ourproducer.WithGroup(group),
		ourproducer.WithNameServers(e.ns),
		ourproducer.WithInstanceName(l.name),
	)
	if err != nil {
		t.Fatalf("our transactional producer: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatalf("our transactional producer start: %v", err)
	}
	var once sync.Once
	shutdown = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Errorf("our transactional producer shutdown: %v", err)
			}
		})
	}
	t.Cleanup(shutdown)
	return p, shutdown
}

// sendOfficialTx runs the transactions of msgs with the official producer
// and records what it reported. It may run on several goroutines at once;
// it stops at the first failed send and reports false.
func sendOfficialTx(t *testing.T, p rmq.TransactionProducer, pl *txPlan, masters map[string]string, msgs []*sent) bool {
	t.Helper()
	for _, s := range msgs {
		msg := s.official(pl.topic)
		res, err := p.SendMessageInTransaction(context.Background(), msg)
		if err != nil {
			t.Errorf("transaction %d (%s): %v", s.idx, s.kind, err)
			return false
		}
		var state string
		switch res.State {
		case primitive.CommitMessageState:
			state = txCommit
		case primitive.RollbackMessageState:
			state = txRollback
		}
		if state != wantState(s.kind) {
			t.Errorf("transaction %d (%s): local state %v", s.idx, s.kind, res.State)
		}
		pl.record(t, masters, s, res.Status == primitive.SendOK, msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex),
			res.MsgID, res.OffsetMsgID, res.MessageQueue)
	}
	return true
}

// sendOurTx runs the transactions of msgs with our producer and records
// what it reported; the transaction id is the half message's UNIQ_KEY
// (our producer leaves msg unchanged). Like sendOfficialTx it may run
// concurrently and reports false after a failed send.
func sendOurTx(t *testing.T, p *ourproducer.TransactionProducer, pl *txPlan, masters map[string]string, msgs []*sent) bool {
	t.Helper()
	for _, s := range msgs {
		msg := s.ours(t, pl.topic)
		res, err := p.SendInTransaction(context.Background(), msg, s.idx)
		if err != nil {
			t.Errorf("transaction %d (%s): %v", s.idx, s.kind, err)
			return false
		}
		var state string
		switch res.State {
		case ourproducer.LocalCommit:
			state = txCommit
		case ourproducer.LocalRollback:
			state = txRollback
		}
		if state != wantState(s.kind) {
			t.Errorf("transaction %d (%s): local state %v", s.idx, s.kind, res.State)
		}
		q := res.Queue
		pl.record(t, masters, s, res.Status == rocketmq.SendOK, res.TransactionID, res.MsgID, res.OffsetMsgID,
			&primitive.MessageQueue{Topic: q.Topic, BrokerName: q.BrokerName, QueueId: q.QueueID})
	}
	return true
}

// record checks what a producer reported for the half message of s: its
// id is the message's UNIQ_KEY, its offsetMsgId names the master and the
// half message's commit-log offset. The committed message is a new record
// (another offset, another queue offset), so only its queue and msgId are
// what the consumer must see.
func (p *txPlan) record(t *testing.T, masters map[string]string, s *sent, ok bool, uniq, msgID, offsetMsgID string, q *primitive.MessageQueue) {
	t.Helper()
	what := fmt.Sprintf("transaction %d (%s)", s.idx, s.kind)
	if !ok {
		t.Errorf("%s: half message not SEND_OK", what)
	}
	if len(uniq) != 32 || msgID != uniq {
		t.Errorf("%s: msgId %q, message UNIQ_KEY %q (want the same 32 hex digits)", what, msgID, uniq)
	}
	if q == nil || q.Topic != p.topic {
		t.Errorf("%s: reported queue %v, want one of topic %s", what, q, p.topic)
		return
	}
	off := checkOffsetMsgID(t, masters, what+" half", offsetMsgID, q.BrokerName)
	p.mu.Lock()
	p.half[s.idx] = off
	p.mu.Unlock()
	s.msgID, s.queue = msgID, *q
}

// checkTxDelivered checks what only a committed transaction carries, as a
// 4.9.8 broker writes it (EndTransactionProcessor): the queue the half
// message was sent to, the commit type in the system flag, the producer
// group, and the commit-log offset of the half message that was committed
// (the original, or the copy a check was about) as prepared offset.
// TRAN_MSG, REAL_TOPIC and REAL_QID are not looked at: a 4.9.8 broker
// stores the half message's properties string as it was, with them.
func checkTxDelivered(t *testing.T, pl *txPlan, log *txLog, got []delivery) {
	t.Helper()
	for _, d := range got {
		s, err := pl.find(d.msg)
		if err != nil {
			continue // reported by checkConsumed
		}
		m := d.msg
		what := fmt.Sprintf("msg %d (%s) to %s", s.idx, s.kind, d.member)
		if m.Queue != nil && (m.Queue.BrokerName != s.queue.BrokerName || m.Queue.QueueId != s.queue.QueueId) {
			t.Errorf("%s: consumed from %s/%d, half message sent to %s/%d", what, m.Queue.BrokerName, m.Queue.QueueId, s.queue.BrokerName, s.queue.QueueId)
		}
		if f := int(m.SysFlag) & (0x3 << 2); f != primitive.TransactionCommitType {
			t.Errorf("%s: transaction bits of the system flag %#x, want commit %#x", what, f, primitive.TransactionCommitType)
		}
		if g := m.GetProperty(propPGroup); g != pl.group {
			t.Errorf("%s: %s = %q, want %q", what, propPGroup, g, pl.group)
		}
		offs := []int64{pl.halfOffset(s.idx)}
		if s.kind == txCheckCommit {
			offs = offs[:0]
			for _, c := range log.checks() {
				if c.idx == s.idx {
					offs = append(offs, c.commitLogOffset)
				}
			}
		}
		found := false
		for _, o := range offs {
			found = found || o == m.PreparedTransactionOffset
		}
		if !found {
			t.Errorf("%s: prepared transaction offset %d, want one of %v", what, m.PreparedTransactionOffset, offs)
		}
	}
}

// checkChecks checks the CHECK_TRANSACTION_STATE requests the listeners
// answered: only undecided transactions are checked, and the message of a
// check is the half message on its real topic and queue, with its
// UNIQ_KEY, producer group and body.
func checkChecks(t *testing.T, pl *txPlan, log *txLog) {
	t.Helper()
	for _, c := range log.checks() {
		if c.idx >= len(pl.msgs) {
			t.Errorf("check by %s of a message with %s %d, not sent by this test", c.by, propIdx, c.idx)
			continue
		}
		s := pl.msgs[c.idx]
		what := fmt.Sprintf("check of transaction %d (%s) by %s", s.idx, s.kind, c.by)
		if s.kind != txCheckCommit && s.kind != txCheckRollback {
			if !pl.lateChecks {
				t.Errorf("%s: the transaction was already decided", what)
			}
			continue
		}
		if c.topic != pl.topic || c.queueID != s.queue.QueueId {
			t.Errorf("%s: message of %s/%d, want %s/%d", what, c.topic, c.queueID, pl.topic, s.queue.QueueId)
		}
		if c.uniqKey != s.msgID {
			t.Errorf("%s: UNIQ_KEY %q, want %q", what, c.uniqKey, s.msgID)
		}
		if c.group != pl.group {
			t.Errorf("%s: %s %q, want %q", what, propPGroup, c.group, pl.group)
		}
		if !bytes.Equal(c.body, s.body) {
			t.Errorf("%s: body differs: %s", what, diffBytes(c.body, s.body))
		}
		if c.commitLogOffset <= 0 {
			t.Errorf("%s: commit-log offset %d", what, c.commitLogOffset)
		}
	}
}

// topicOffsets returns the max offset of every queue of topic on every
// master: where a consumer that got everything stored in it has committed.
func (e *env) topicOffsets(t *testing.T, masters map[string]string, topic string, queues int) map[queueKey]int64 {
	t.Helper()
	out := make(map[queueKey]int64)
	for name, addr := range masters {
		for q := 0; q < queues; q++ {
			out[queueKey{name, q}] = e.maxOffset(t, addr, topic, q)
		}
	}
	return out
}

// waitTx waits until every undecided transaction of pl was checked and
// each consumer group got the committed ones, then until the groups have
// committed everything the topic holds, so that nothing stored in it
// (a rolled-back message included) can be missing from their deliveries.
// It checks that the topic holds the committed messages and nothing else.
func (e *env) waitTx(t *testing.T, pl *txPlan, log *txLog, masters map[string]string, queues int, groups ...txGroup) {
	t.Helper()
	committed := 0
	for _, s := range pl.msgs {
		if txVisible(s) {
			committed++
		}
	}
	timeout := e.txTimeout()
	if !testutil.Poll(timeout, func() bool { return log.checkedAll(pl) }) {
		t.Fatalf("not every undecided transaction was checked within %v: %d checks", timeout, len(log.checks()))
	}
	for _, g := range groups {
		if !testutil.Poll(timeout, func() bool { return g.sink.len() >= committed }) {
			t.Fatalf("%s got %d of %d committed messages within %v", g.name, g.sink.len(), committed, timeout)
		}
	}
	offs := e.topicOffsets(t, masters, pl.topic, queues)
	stored := int64(0)
	for _, o := range offs {
		stored += o
	}
	if stored != int64(committed) {
		t.Errorf("topic holds %d messages, want the %d committed ones", stored, committed)
	}
	for _, g := range groups {
		if !testutil.Poll(consumeTimeout, func() bool { return committedAll(offs, g.members...) }) {
			t.Fatalf("%s never committed %v: %s", g.name, offs, describeAssignment(g.members...))
		}
	}
}

// stayDecided watches for a while for what must never happen once every
// transaction is decided: a check of a transaction already decided (its
// decision was lost) or a message appearing in the topic. On the
// in-process broker the window spans several check intervals.
func (e *env) stayDecided(t *testing.T, pl *txPlan, log *txLog, groups ...txGroup) {
	t.Helper()
	// Checks of the transactions a check decided; with lateChecks a
	// sender's own decision may still be on its way and be checked.
	counted := func() int {
		n := 0
		for _, c := range log.checks() {
			if c.idx >= len(pl.msgs) || !pl.lateChecks {
				n++
			} else if k := pl.msgs[c.idx].kind; k == txCheckCommit || k == txCheckRollback {
				n++
			}
		}
		return n
	}
	checks := counted()
	var n []int
	for _, g := range groups {
		n = append(n, g.sink.len())
	}
	changed := func() bool {
		if counted() != checks {
			return true
		}
		for i, g := range groups {
			if g.sink.len() != n[i] {
				return true
			}
		}
		return false
	}
	if testutil.Poll(3*txCheckInterval+txImmunity, changed) {
		t.Errorf("after every transaction was decided: %d checks (had %d), deliveries changed", counted(), checks)
	}
}

// txGroup is one consumer group of a transaction test.
type txGroup struct {
	name    string
	group   string
	sink    *sink
	members []*member
}

// txConsumers starts an official push consumer and ours, each in its own
// group, on topic.
func (e *env) txConsumers(t *testing.T, topic string) []txGroup {
	t.Helper()
	var gs []txGroup
	og := txGroup{name: "official consumer", group: e.name("G"), sink: new(sink)}
	og.members = []*member{e.startPush(t, og.group, topic, consumer.Clustering, selectAll, og.sink)}
	gs = append(gs, og)
	ug := txGroup{name: "our consumer", group: e.name("G"), sink: new(sink)}
	ug.members = []*member{e.startOurPush(t, ug.group, topic, ug.sink)}
	gs = append(gs, ug)
	return gs
}

// finishTx checks every group's deliveries and the checks, watches that
// nothing changes any more, and stops the consumers.
func (e *env) finishTx(t *testing.T, pl *txPlan, log *txLog, masters map[string]string, gs []txGroup) {
	t.Helper()
	e.stayDecided(t, pl, log, gs...)
	checkChecks(t, pl, log)
	for _, g := range gs {
		got := g.sink.snapshot()
		checkConsumed(t, masters, pl.plan, got, txVisible, nil)
		checkTxDelivered(t, pl, log, got)
		stopGroup(t, e, g.group, g.members...)
	}
}

// TestOfficialTransactions runs the official client's transaction
// producer: committed transactions reach an official consumer and ours
// exactly once, rolled-back ones never, and undecided ones are checked
// (CheckLocalTransaction) and then committed or rolled back as answered.
func TestOfficialTransactions(t *testing.T) {
	t.Parallel()
	e := newTxEnv(t)
	const queues = 4
	topic, masters := e.newTopic(t, queues)
	gs := e.txConsumers(t, topic)

	group := e.name("PG")
	log := &txLog{run: e.prefix}
	pl := newTxPlan(e, topic, group)
	p, _ := e.officialTxProducer(t, group, &officialListener{name: e.name("tp"), log: log})
	if !sendOfficialTx(t, p, pl, masters, pl.addAll(3)) {
		t.FailNow()
	}

	e.waitTx(t, pl, log, masters, queues, gs...)
	e.finishTx(t, pl, log, masters, gs)
}

// TestOurTransactionsToOfficial runs our transactional producer with the
// same plan as TestOfficialTransactions, consumed by the official push
// consumer and ours.
func TestOurTransactionsToOfficial(t *testing.T) {
	t.Parallel()
	e := newTxEnv(t)
	const queues = 4
	topic, masters := e.newTopic(t, queues)
	gs := e.txConsumers(t, topic)

	group := e.name("PG")
	log := &txLog{run: e.prefix}
	pl := newTxPlan(e, topic, group)
	p, _ := e.ourTxProducer(t, group, &ourListener{name: e.name("ours"), log: log})
	if !sendOurTx(t, p, pl, masters, pl.addAll(3)) {
		t.FailNow()
	}

	e.waitTx(t, pl, log, masters, queues, gs...)
	e.finishTx(t, pl, log, masters, gs)
}

// TestTransactionsConcurrent runs 400 transactions at once, half from the
// official client's producer and half from ours, both in one producer
// group, with a random mix of outcomes: each consumer group must get
// exactly the committed ones, whichever member the broker asked about the
// undecided ones.
func TestTransactionsConcurrent(t *testing.T) {
	t.Parallel()
	e := newTxEnv(t)
	const (
		queues  = 8
		perSide = 200
		callers = 8 // per client
	)
	topic, masters := e.newTopic(t, queues)
	gs := e.txConsumers(t, topic)

	group := e.name("PG")
	log := &txLog{run: e.prefix}
	pl := newTxPlan(e, topic, group)
	pl.lateChecks = true
	official, _ := e.officialTxProducer(t, group, &officialListener{name: e.name("tp"), log: log})
	ours, _ := e.ourTxProducer(t, group, &ourListener{name: e.name("ours"), log: log})
	seed := uint64(time.Now().UnixNano())
	t.Logf("outcome seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var msgs []*sent
	for i := 0; i < 2*perSide; i++ {
		msgs = append(msgs, pl.add(txKinds[r.IntN(len(txKinds))], []string{"TagA", "TagB"}[i%2], 64+r.IntN(512)))
	}
	// The official producer's first transaction runs alone: concurrent
	// first sends of a topic race in its route cache (the callers that
	// find the NameServer's route unchanged do not store it for the
	// producer) and fail with "route info not found".
	if !sendOfficialTx(t, official, pl, masters, msgs[perSide:perSide+1]) {
		t.FailNow()
	}
	var wg sync.WaitGroup
	ok := make(chan bool, 2*callers)
	chunk := perSide / callers
	for c := 0; c < callers; c++ {
		mine := msgs[c*chunk : (c+1)*chunk]
		theirs := msgs[perSide+c*chunk : perSide+(c+1)*chunk]
		if c == 0 {
			theirs = theirs[1:] // sent above
		}
		wg.Add(2)
		go func() { defer wg.Done(); ok <- sendOurTx(t, ours, pl, masters, mine) }()
		go func() { defer wg.Done(); ok <- sendOfficialTx(t, official, pl, masters, theirs) }()
	}
	wg.Wait()
	close(ok)
	for good := range ok {
		if !good {
			t.FailNow()
		}
	}
	e.waitTx(t, pl, log, masters, queues, gs...)
	e.finishTx(t, pl, log, masters, gs)
	by := make(map[string]int)
	for _, c := range log.checks() {
		by[c.by]++
	}
	t.Logf("checks answered per member: %v", by)
}

// TestTransactionCheckAcrossClients leaves transactions undecided and
// shuts their producer down: the broker must ask the other member of the
// producer group, a producer of the other client, which decides them.
// Both directions run, each with its own group and topic.
func TestTransactionCheckAcrossClients(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"ours-then-official", "official-then-ours"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			e := newTxEnv(t)
			const queues = 2
			topic, masters := e.newTopic(t, queues)
			gs := e.txConsumers(t, topic)

			group := e.name("PG")
			log := &txLog{run: e.prefix}
			pl := newTxPlan(e, topic, group)
			var msgs []*sent // the sender's
			for i := 0; i < 3; i++ {
				msgs = append(msgs, pl.add(txCheckCommit, "TagA", 100+i), pl.add(txCheckRollback, "TagB", 200+i))
			}
			// The sender is shut down right after its sends: no check may
			// reach it before (a real broker's immunity is 6 s anyway).
			for _, s := range msgs {
				s.props[rocketmq.PropertyCheckImmunityTimeInSeconds] = "3"
			}
			// The sender's listener must never be asked: it is gone when
			// the checks come.
			senderLog := &txLog{run: e.prefix}
			// The member that answers runs a transaction of its own first:
			// a producer heartbeats only to the brokers of the routes it
			// holds, and the broker asks only the producers it knows.
			first := pl.add(txCommit, "TagA", 50)
			var answerer string
			if dir == "ours-then-official" {
				answerer = e.name("tp")
				p, _ := e.officialTxProducer(t, group, &officialListener{name: answerer, log: log})
				if !sendOfficialTx(t, p, pl, masters, []*sent{first}) {
					t.FailNow()
				}
			} else {
				answerer = e.name("ours")
				p, _ := e.ourTxProducer(t, group, &ourListener{name: answerer, log: log})
				if !sendOurTx(t, p, pl, masters, []*sent{first}) {
					t.FailNow()
				}
			}
			e.waitProducer(t, masters, group, answerer)
			if dir == "ours-then-official" {
				p, stop := e.ourTxProducer(t, group, &ourListener{name: e.name("ours"), log: senderLog})
				if !sendOurTx(t, p, pl, masters, msgs) {
					t.FailNow()
				}
				stop()
			} else {
				p, stop := e.officialTxProducer(t, group, &officialListener{name: e.name("tp"), log: senderLog})
				if !sendOfficialTx(t, p, pl, masters, msgs) {
					t.FailNow()
				}
				stop()
			}
			e.waitTx(t, pl, log, masters, queues, gs...)
			e.finishTx(t, pl, log, masters, gs)
			if n := len(senderLog.checks()); n != 0 {
				t.Errorf("the producer that was shut down answered %d checks", n)
			}
		})
	}
}

// txClusterOptions are the in-process broker's transaction timings.
var txClusterOptions = []rmqtest.Option{rmqtest.WithTransactionCheck(txCheckInterval, txImmunity)}

// waitProducer waits until every master lists the client instance in
// producer group (GET_PRODUCER_CONNECTION_LIST).
func (e *env) waitProducer(t *testing.T, masters map[string]string, group, instance string) {
	t.Helper()
	listed := func(addr string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := remoting.GetProducerConnectionListRequestHeader{ProducerGroup: group}
		resp, err := e.admin.Invoke(ctx, addr, remoting.NewRequest(remoting.GetProducerConnectionList, h.AppendExt(nil), nil), 5*time.Second)
		if err != nil || resp.Code != remoting.Success {
			return false
		}
		var pc remoting.ProducerConnection
		if err := pc.DecodeJSON(resp.Body); err != nil {
			t.Fatalf("GET_PRODUCER_CONNECTION_LIST %q: %v", resp.Body, err)
		}
		for _, c := range pc.ConnectionSet {
			if strings.HasSuffix(c.ClientID, "@"+instance) {
				return true
			}
		}
		return false
	}
	timeout := e.txTimeout()
	for name, addr := range masters {
		if !testutil.Poll(timeout, func() bool { return listed(addr) }) {
			t.Fatalf("%s does not list %s in producer group %s after %v", name, instance, group, timeout)
		}
	}
}

// TestOfficialTransactionsAcrossRestart restarts the broker after the
// official producer's transactions were decided or left undecided, and the
// producer has gone: after the restart the decided ones stay as decided
// (committed once, never a rollback, never checked), and the undecided
// ones are checked and decided by our producer, a member of the group
// started after the restart.
func TestOfficialTransactionsAcrossRestart(t *testing.T) {
	t.Parallel()
	e := newTxEnv(t)
	if e.cluster == nil {
		t.Skip("restarts the broker: needs the in-process cluster")
	}
	const queues = 4
	topic, masters := e.newTopic(t, queues)
	group := e.name("PG")
	log := &txLog{run: e.prefix}
	pl := newTxPlan(e, topic, group)
	msgs := pl.addAll(2)
	for _, s := range msgs {
		// Checked after the restart, unless the machine is very slow; a
		// check that comes earlier is answered the same way.
		s.props[rocketmq.PropertyCheckImmunityTimeInSeconds] = "4"
	}
	p, stop := e.officialTxProducer(t, group, &officialListener{name: e.name("tp"), log: log})
	if !sendOfficialTx(t, p, pl, masters, msgs) {
		t.FailNow()
	}
	stop()
	// END_TRANSACTION is oneway: wait until the broker has recorded every
	// decision (one op record each) before stopping it.
	decided := int64(0)
	for _, s := range msgs {
		if s.kind == txCommit || s.kind == txRollback {
			decided++
		}
	}
	name := e.cluster.BrokerNames()[0]
	addr := masters[name]
	testutil.WaitFor(t, 10*time.Second, "op records of the decided transactions", func() bool {
		return e.maxOffset(t, addr, rocketmq.TopicTransOpHalf, 0) >= decided
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.cluster.StopBroker(ctx, name); err != nil {
		t.Fatalf("stop broker: %v", err)
	}
	if err := e.cluster.StartBroker(name); err != nil {
		t.Fatalf("start broker: %v", err)
	}
	gs := e.txConsumers(t, topic)
	e.ourTxProducer(t, group, &ourListener{name: e.name("ours"), log: log})
	e.waitTx(t, pl, log, masters, queues, gs...)
	e.finishTx(t, pl, log, masters, gs)
}
