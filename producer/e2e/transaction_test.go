package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// Transactions end to end. The in-process broker checks undecided
// transactions every 200 ms once they are 1 s old; a real broker's first
// check comes 6 s to 60 s after the half message (transactionTimeOut,
// transactionCheckInterval), hence checkWait there.

// txE2E is a cluster for transaction tests with its wait for a check-back.
type txE2E struct {
	*e2e
	checkWait time.Duration
}

func startTx(t *testing.T) *txE2E {
	t.Helper()
	if os.Getenv(envExternal) != "" {
		return &txE2E{e2e: startE2E(t, 1), checkWait: 90 * time.Second}
	}
	return &txE2E{e2e: startE2EWith(t, 1, rmqtest.WithTransactionCheck(200*time.Millisecond, time.Second)), checkWait: 15 * time.Second}
}

// txTopic creates a topic of its own for t.
func (e *txE2E) txTopic(t *testing.T) string {
	t.Helper()
	topic := fmt.Sprintf("TX_%s_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
	if err := rmqtest.CreateTopic(context.Background(), e.ns, topic, 4); err != nil {
		t.Fatal(err)
	}
	return topic
}

func txGroup(t *testing.T, suffix string) string {
	return fmt.Sprintf("tx_%s%s_%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), suffix, time.Now().UnixNano()%1e9)
}

// decisions is a listener whose local transactions are decided by key:
// ExecuteLocal answers exec[key] (missing: unknown), CheckLocal answers
// check[key] (missing: unknown). It records what it was asked.
type decisions struct {
	group string // the PGROUP checks must carry

	mu      sync.Mutex
	exec    map[string]producer.LocalState
	check   map[string]producer.LocalState
	checked map[string]int // transaction id → checks
	keyOf   map[string]string
	foreign []string // checks of transactions that are not this group's
	block   chan struct{}
}

func newDecisions(group string) *decisions {
	return &decisions{group: group, exec: map[string]producer.LocalState{}, check: map[string]producer.LocalState{},
		checked: map[string]int{}, keyOf: map[string]string{}}
}

func (d *decisions) set(key string, exec, check producer.LocalState) {
	d.mu.Lock()
	d.exec[key], d.check[key] = exec, check
	d.mu.Unlock()
}

func (d *decisions) ExecuteLocal(_ context.Context, msg *rocketmq.Message, _ any) producer.LocalState {
	key := msg.Keys()[0]
	d.mu.Lock()
	d.keyOf[msg.UniqKey()] = key
	block := d.block
	d.mu.Unlock()
	if block != nil {
		<-block
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.exec[key]
}

func (d *decisions) CheckLocal(_ context.Context, msg *rocketmq.MessageExt) producer.LocalState {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := msg.TransactionID()
	if msg.Property(rocketmq.PropertyProducerGroup) != d.group || len(msg.Keys()) == 0 {
		d.foreign = append(d.foreign, id)
		return producer.LocalUnknown
	}
	d.checked[id]++
	return d.check[msg.Keys()[0]]
}

func (d *decisions) checks(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.checked[id]
}

func (d *decisions) foreignChecks() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.foreign...)
}

func (e *txE2E) newTx(t *testing.T, group string, l producer.TransactionListener, opts ...producer.Option) *producer.TransactionProducer {
	t.Helper()
	p, err := producer.NewTransactional(l, append([]producer.Option{producer.WithGroup(group), producer.WithNameServers(e.ns)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// sendTx sends one transaction keyed key and returns its id.
func sendTx(t *testing.T, p *producer.TransactionProducer, topic, key string, want producer.LocalState) string {
	t.Helper()
	m, err := producer.NewMessage(topic, []byte("body-"+key), producer.Keys(key), producer.Tag("TagTx"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.SendInTransaction(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != want || res.Status != rocketmq.SendOK || res.TransactionID == "" || res.TransactionID != res.MsgID {
		t.Fatalf("transaction %s: %+v state %v id %q", key, res.SendResult, res.State, res.TransactionID)
	}
	return res.TransactionID
}

// visible counts the messages of topic by UNIQ_KEY.
func (e *txE2E) visible(t *testing.T, topic string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, m := range e.pullAll(t, topic) {
		seen[m.UniqKey()]++
	}
	return seen
}

// waitVisible waits until every id of ids is in topic and returns what is.
func (e *txE2E) waitVisible(t *testing.T, topic string, within time.Duration, ids ...string) map[string]int {
	t.Helper()
	var seen map[string]int
	ok := testutil.Poll(within, func() bool {
		seen = e.visible(t, topic)
		for _, id := range ids {
			if seen[id] == 0 {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("not all of %v visible within %v: %v", ids, within, seen)
	}
	return seen
}

// exactly fails unless seen holds each of ids once and nothing else.
func exactly(t *testing.T, seen map[string]int, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
		if seen[id] != 1 {
			t.Errorf("%s visible %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if !want[id] {
			t.Errorf("%s visible %d times, want never", id, n)
		}
	}
}

// TestE2ETransactionDecided: a committed transaction is visible exactly
// once with the commit type in its sysFlag (its properties still hold the
// half message's TRAN_MSG, REAL_TOPIC and REAL_QID, as a 4.9.8 broker
// writes them); a rolled back one never, though a commit sent after it is.
func TestE2ETransactionDecided(t *testing.T) {
	e := startTx(t)
	topic := e.txTopic(t)
	group := txGroup(t, "")
	d := newDecisions(group)
	d.set("commit", producer.LocalCommit, producer.LocalCommit)
	d.set("rollback", producer.LocalRollback, producer.LocalRollback)
	d.set("after", producer.LocalCommit, producer.LocalCommit)
	p := e.newTx(t, group, d)
	committed := sendTx(t, p, topic, "commit", producer.LocalCommit)
	sendTx(t, p, topic, "rollback", producer.LocalRollback) // exactly below: never visible
	after := sendTx(t, p, topic, "after", producer.LocalCommit)
	seen := e.waitVisible(t, topic, 30*time.Second, committed, after)
	exactly(t, seen, committed, after)
	for _, m := range e.pullAll(t, topic) {
		if m.UniqKey() != committed {
			continue
		}
		if string(m.Body) != "body-commit" || m.Tag() != "TagTx" || m.SysFlag&0xC != 0x8 ||
			m.Property(rocketmq.PropertyProducerGroup) != group {
			t.Errorf("committed message: body %q sysFlag %#x props %v", m.Body, m.SysFlag, m.Properties)
		}
	}
	if f := d.foreignChecks(); len(f) != 0 {
		t.Errorf("checks of other groups' transactions: %v", f)
	}
}

// TestE2ETransactionCheckBack: local transactions left unknown are decided
// by the broker's checks, each answered by the listener of the group that
// sent it though two transactional producers, a plain producer and a push
// consumer live in the process; the consumer gets exactly the commits.
func TestE2ETransactionCheckBack(t *testing.T) {
	e := startTx(t)
	topic := e.txTopic(t)
	ga, gb := txGroup(t, "_a"), txGroup(t, "_b")
	da, db := newDecisions(ga), newDecisions(gb)
	da.set("a-commit", producer.LocalUnknown, producer.LocalCommit)
	da.set("a-rollback", producer.LocalUnknown, producer.LocalRollback)
	db.set("b-commit", producer.LocalUnknown, producer.LocalCommit)
	pa, pb := e.newTx(t, ga, da), e.newTx(t, gb, db)
	plain := e.newProducer(t)

	var mu sync.Mutex
	consumed := map[string]int{}
	c, err := consumer.NewPush(consumer.WithGroup(txGroup(t, "_c")), consumer.WithNameServers(e.ns), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		for _, m := range msgs {
			consumed[m.UniqKey()]++
		}
		mu.Unlock()
		return consumer.Success, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Shutdown(context.Background()) })

	aCommit := sendTx(t, pa, topic, "a-commit", producer.LocalUnknown)
	aRollback := sendTx(t, pa, topic, "a-rollback", producer.LocalUnknown)
	bCommit := sendTx(t, pb, topic, "b-commit", producer.LocalUnknown)
	m, _ := producer.NewMessage(topic, []byte("plain"))
	res, err := plain.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	seen := e.waitVisible(t, topic, e.checkWait, aCommit, bCommit, res.MsgID)
	testutil.WaitFor(t, e.checkWait, "check of the rolled-back transaction", func() bool { return da.checks(aRollback) > 0 })
	// The rollback is decided by now; what is visible stays the commits.
	seen = e.visible(t, topic)
	exactly(t, seen, aCommit, bCommit, res.MsgID)
	if da.checks(aCommit) == 0 || db.checks(bCommit) == 0 {
		t.Errorf("checks: a-commit %d, b-commit %d", da.checks(aCommit), db.checks(bCommit))
	}
	if f := append(da.foreignChecks(), db.foreignChecks()...); len(f) != 0 {
		t.Errorf("checks routed to the wrong group: %v", f)
	}
	testutil.WaitFor(t, 30*time.Second, "consumed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return consumed[aCommit] > 0 && consumed[bCommit] > 0 && consumed[res.MsgID] > 0
	})
	mu.Lock()
	if consumed[aRollback] != 0 || len(consumed) != 3 {
		t.Errorf("consumed %v", consumed)
	}
	mu.Unlock()
}

// TestE2ETransactionOtherInstance: the producer that sent the half message
// shuts down before deciding; another instance of its group answers the
// broker's check.
func TestE2ETransactionOtherInstance(t *testing.T) {
	e := startTx(t)
	topic := e.txTopic(t)
	group := txGroup(t, "")
	first := newDecisions(group)
	first.set("tx", producer.LocalUnknown, producer.LocalUnknown)
	p1, err := producer.NewTransactional(first, producer.WithGroup(group), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := sendTx(t, p1, topic, "tx", producer.LocalUnknown)
	if err := p1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := newDecisions(group)
	second.set("tx", producer.LocalCommit, producer.LocalCommit)
	e.newTx(t, group, second)
	seen := e.waitVisible(t, topic, e.checkWait, id)
	exactly(t, seen, id)
	if second.checks(id) == 0 || first.checks(id) != 0 {
		t.Errorf("checks: second instance %d, first %d", second.checks(id), first.checks(id))
	}
}

// TestE2ETransactionBrokerRestart: the broker restarts between the half
// message and the decision; the decision applies once, and a second
// restart after it neither repeats nor re-checks it.
func TestE2ETransactionBrokerRestart(t *testing.T) {
	e := startTx(t)
	e.needFaults(t)
	topic := e.txTopic(t)
	group := txGroup(t, "")
	d := newDecisions(group)
	d.set("tx", producer.LocalCommit, producer.LocalCommit)
	d.set("marker", producer.LocalUnknown, producer.LocalCommit)
	block := make(chan struct{})
	d.block = block
	// The restarted broker learns of the producer from its next heartbeat.
	p := e.newTx(t, group, d, producer.WithHeartbeatInterval(200*time.Millisecond))
	broker := e.cluster.BrokerNames()[0]
	type out struct {
		res *producer.TransactionResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		m, _ := producer.NewMessage(topic, []byte("body-tx"), producer.Keys("tx"))
		res, err := p.SendInTransaction(context.Background(), m, nil)
		done <- out{res, err}
	}()
	testutil.WaitFor(t, 10*time.Second, "local transaction under way", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.keyOf) == 1
	})
	restart := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.cluster.StopBroker(ctx, broker); err != nil {
			t.Fatal(err)
		}
		if err := e.cluster.StartBroker(broker); err != nil {
			t.Fatal(err)
		}
	}
	restart()
	d.mu.Lock()
	d.block = nil
	d.mu.Unlock()
	close(block)
	o := <-done
	if o.err != nil || o.res.State != producer.LocalCommit {
		t.Fatalf("transaction: %+v, %v", o.res, o.err)
	}
	id := o.res.TransactionID
	// The END_TRANSACTION may be lost with the old connection; the check
	// then commits it.
	seen := e.waitVisible(t, topic, e.checkWait, id)
	exactly(t, seen, id)
	restart()
	// A transaction left unknown after the restart is decided by a check;
	// by then the check service has passed the committed one.
	marker := sendTx(t, p, topic, "marker", producer.LocalUnknown)
	seen = e.waitVisible(t, topic, e.checkWait, marker)
	exactly(t, seen, id, marker)
	if n := d.checks(id); n > 1 {
		t.Errorf("committed transaction checked %d times", n)
	}
}

// TestE2ETransactionConcurrent: 1,000 transactions at once with a random
// mix of outcomes, some decided only by the check: what is visible is
// exactly what was committed.
func TestE2ETransactionConcurrent(t *testing.T) {
	e := startTx(t)
	topic := e.txTopic(t)
	group := txGroup(t, "")
	d := newDecisions(group)
	p := e.newTx(t, group, d, producer.WithTransactionChecks(4, 2000))
	const n = 1000
	type outcome struct{ exec, check producer.LocalState }
	kinds := []outcome{
		{producer.LocalCommit, producer.LocalCommit},
		{producer.LocalRollback, producer.LocalRollback},
		{producer.LocalUnknown, producer.LocalCommit},
		{producer.LocalUnknown, producer.LocalRollback},
	}
	plan := make([]outcome, n)
	for i := range plan {
		plan[i] = kinds[rand.IntN(len(kinds))]
		d.set(fmt.Sprintf("k%d", i), plan[i].exec, plan[i].check)
	}
	ids := make([]string, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m, _ := producer.NewMessage(topic, []byte(fmt.Sprint(i)), producer.Keys(fmt.Sprintf("k%d", i)))
			res, err := p.SendInTransaction(context.Background(), m, nil)
			if err != nil {
				errs <- err
				return
			}
			if res.State != plan[i].exec {
				errs <- fmt.Errorf("transaction %d: state %v, want %v", i, res.State, plan[i].exec)
				return
			}
			ids[i] = res.TransactionID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var commits []string
	for i, o := range plan {
		if o.check == producer.LocalCommit {
			commits = append(commits, ids[i])
		}
	}
	seen := e.waitVisible(t, topic, e.checkWait, commits...)
	// Rollbacks decided by a check may still be pending; wait for every
	// unknown rollback to have been checked, then compare exactly.
	for i, o := range plan {
		if o.exec == producer.LocalUnknown && o.check == producer.LocalRollback {
			testutil.WaitFor(t, e.checkWait, "check of "+ids[i], func() bool { return d.checks(ids[i]) > 0 })
		}
	}
	seen = e.visible(t, topic)
	exactly(t, seen, commits...)
	t.Logf("%d transactions, %d committed", n, len(commits))
}

// shutdownInExec is a listener whose ExecuteLocal shuts its own producer
// down before answering commit.
type shutdownInExec struct {
	p   *producer.TransactionProducer
	err chan error
}

func (s *shutdownInExec) ExecuteLocal(ctx context.Context, _ *rocketmq.Message, _ any) producer.LocalState {
	s.err <- s.p.Shutdown(ctx)
	return producer.LocalCommit
}

func (s *shutdownInExec) CheckLocal(context.Context, *rocketmq.MessageExt) producer.LocalState {
	return producer.LocalUnknown
}

// TestE2ETransactionShutdownInListener: a producer shut down from its own
// ExecuteLocal stops and SendInTransaction returns; that decision goes
// nowhere, and another instance of the group answers the check: the
// message is visible once.
func TestE2ETransactionShutdownInListener(t *testing.T) {
	e := startTx(t)
	topic := e.txTopic(t)
	group := txGroup(t, "")
	l := &shutdownInExec{err: make(chan error, 1)}
	p1, err := producer.NewTransactional(l, producer.WithGroup(group), producer.WithNameServers(e.ns))
	if err != nil {
		t.Fatal(err)
	}
	l.p = p1
	if err := p1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err := producer.NewMessage(topic, []byte("body"), producer.Keys("tx"), producer.Tag("TagTx"))
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		res *producer.TransactionResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := p1.SendInTransaction(context.Background(), m, nil)
		done <- out{res, err}
	}()
	var o out
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("SendInTransaction whose listener shut the producer down has not returned")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if err := <-l.err; err != nil {
		t.Errorf("Shutdown from ExecuteLocal: %v", err)
	}
	if p1.ClientID() != "" {
		t.Error("the producer still runs")
	}
	second := newDecisions(group)
	second.set("tx", producer.LocalCommit, producer.LocalCommit)
	e.newTx(t, group, second)
	seen := e.waitVisible(t, topic, e.checkWait, o.res.TransactionID)
	exactly(t, seen, o.res.TransactionID)
}
