package broker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

const txTestGroup = "PGTx"

// txEnv is a restartable broker (delayEnv) with short transaction timings.
type txEnv struct{ *delayEnv }

func txTestBroker(t testing.TB, mod func(*Config)) txEnv {
	t.Helper()
	return txEnv{delayTestBroker(t, func(c *Config) {
		c.TransactionCheckInterval = 100 * time.Millisecond
		c.TransactionTimeout = 300 * time.Millisecond
		if mod != nil {
			mod(c)
		}
	})}
}

// txHalf is what a producer learns from a half message's send response.
type txHalf struct {
	queueOffset int64
	phys        int64
	uniq        string
}

// sendHalf sends a half message of txTestGroup to topic/queue with extra
// properties and returns its offsets.
func (e txEnv) sendHalf(topic string, queue int32, uniq string, extra ...string) txHalf {
	e.t.Helper()
	kv := append([]string{"TRAN_MSG", "true", "PGROUP", txTestGroup, "UNIQ_KEY", uniq, "WAIT", "true", "TAGS", "TagTx"}, extra...)
	props := delayProps(kv...)
	h := remoting.SendMessageRequestHeader{
		ProducerGroup: txTestGroup, Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate, DefaultTopicQueueNums: 4,
		QueueID: queue, SysFlag: message.FlagTransactionPrep, Flag: 7, BornTimestamp: time.Now().UnixMilli(), Properties: &props,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), []byte("body-"+uniq)))
	if err != nil {
		e.t.Fatalf("send half: %v", err)
	}
	if resp.Code != remoting.Success {
		e.t.Fatalf("send half: code %d remark %q", resp.Code, resp.Remark)
	}
	rh := sendRespHeader(e.t, resp)
	_, phys, err := rocketmq.DecodeOffsetMsgID(rh.MsgID)
	if err != nil {
		e.t.Fatalf("send half: msgId %q: %v", rh.MsgID, err)
	}
	if rh.QueueID != queue {
		e.t.Errorf("send half: queueId %d, want the requested %d", rh.QueueID, queue)
	}
	return txHalf{queueOffset: rh.QueueOffset, phys: phys, uniq: uniq}
}

// endReq is an END_TRANSACTION request (answered unless oneway).
func endReq(group string, h txHalf, state int32, fromCheck, oneway bool) *remoting.Command {
	eh := remoting.EndTransactionRequestHeader{
		ProducerGroup: group, TranStateTableOffset: h.queueOffset, CommitLogOffset: h.phys,
		CommitOrRollback: state, FromTransactionCheck: fromCheck, MsgID: h.uniq,
	}
	req := remoting.NewRequest(remoting.EndTransaction, eh.AppendExt(nil), nil)
	if oneway {
		req.Flag |= remoting.FlagOneway
	}
	return req
}

// end sends END_TRANSACTION over cli and returns the answer.
func (e txEnv) end(cli *transport.Client, group string, h txHalf, state int32, fromCheck bool) *remoting.Command {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, e.b.Addr(), endReq(group, h, state, fromCheck, false))
	if err != nil {
		e.t.Fatalf("END_TRANSACTION: %v", err)
	}
	return resp
}

// endOK ends h and fails unless the broker answered SUCCESS.
func (e txEnv) endOK(h txHalf, state int32, fromCheck bool) {
	e.t.Helper()
	if resp := e.end(e.cli, txTestGroup, h, state, fromCheck); resp.Code != remoting.Success || resp.Remark != "" {
		e.t.Fatalf("END_TRANSACTION %d: code %d remark %q", state, resp.Code, resp.Remark)
	}
}

// txProducer is a producer connection of a group that records the
// CHECK_TRANSACTION_STATE requests it gets.
type txProducer struct {
	*clientsPeer
	checks chan *remoting.Command
}

func newTxProducer(t testing.TB, e txEnv, id string, groups ...string) *txProducer {
	t.Helper()
	p := &txProducer{clientsPeer: clientsNewPeer(t, e.b, id), checks: make(chan *remoting.Command, 1024)}
	// Inline, so that checks reach the channel in the order the broker
	// sent them: on handler goroutines a round's check could overtake the
	// one before it on a loaded machine. The channel holds a long test's
	// worth of unanswered rounds, so the reader never blocks on it.
	p.cli.RegisterInlineHandler(remoting.CheckTransactionState, func(_ context.Context, _ string, req *remoting.Command) *remoting.Command {
		p.checks <- req
		return nil
	})
	p.heartbeat(t, "", "", nil, groups...)
	return p
}

// txCheck is a decoded CHECK_TRANSACTION_STATE.
type txCheck struct {
	req *remoting.Command
	h   remoting.CheckTransactionStateRequestHeader
	m   *rocketmq.MessageExt
}

// half is the half message the check asks about, as END_TRANSACTION names it.
func (c txCheck) half() txHalf {
	return txHalf{queueOffset: c.h.TranStateTableOffset, phys: c.h.CommitLogOffset, uniq: orZero(c.h.MsgID)}
}

// nextCheck waits up to d for a check and decodes it.
func (p *txProducer) nextCheck(t testing.TB, d time.Duration) txCheck {
	t.Helper()
	select {
	case req := <-p.checks:
		c := txCheck{req: req}
		if err := c.h.FromExt(req.Ext); err != nil {
			t.Fatalf("check header: %v", err)
		}
		m, _, err := message.DecodeRecord(req.Body)
		if err != nil {
			t.Fatalf("check body: %v", err)
		}
		c.m = m
		return c
	case <-time.After(d):
		t.Fatalf("%s: no CHECK_TRANSACTION_STATE within %v", p.id, d)
		return txCheck{}
	}
}

// noCheck asserts that no check about a half record at queue offset from
// or later arrives for d; the wait is the assertion. Checks about earlier
// records were sent before the decision the caller waits out (a round may
// check a transaction just before it is decided) and are let through.
func (p *txProducer) noCheck(t testing.TB, d time.Duration, from int64) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case req := <-p.checks:
			var h remoting.CheckTransactionStateRequestHeader
			if err := h.FromExt(req.Ext); err != nil || h.TranStateTableOffset >= from {
				t.Fatalf("%s: unexpected CHECK_TRANSACTION_STATE %v (records from %d are after the decision)", p.id, req.Ext, from)
			}
		case <-deadline:
			return
		}
	}
}

// nextCheckFor is nextCheck skipping checks about other transactions.
func (p *txProducer) nextCheckFor(t testing.TB, d time.Duration, uniq string) txCheck {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		c := p.nextCheck(t, time.Until(deadline))
		if orZero(c.h.MsgID) == uniq {
			return c
		}
	}
}

// halfEnd is the half queue's end: records a decision taken before now
// could still have been checked about lie before it.
func (e txEnv) halfEnd() int64 { return e.b.store.MaxOffset(rocketmq.TopicTransHalf, 0) }

// realCount is the number of messages in topic/queue.
func (e txEnv) realCount(topic string, queue int32) int { return len(e.read(topic, queue)) }

func TestTransactionCommitAndRollback(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
	a := e.sendHalf("TxT", 1, "UNIQ-A", "KEYS", "k-a")
	r := e.sendHalf("TxT", 1, "UNIQ-R")
	if n := e.realCount("TxT", 1); n != 0 {
		t.Fatalf("half messages visible in the real topic: %d", n)
	}
	halves := e.read(rocketmq.TopicTransHalf, 0)
	if len(halves) != 2 || halves[0].QueueOffset != a.queueOffset || halves[0].CommitLogOffset != a.phys {
		t.Fatalf("half queue %d records, first at %d/%d, want 2 with %+v", len(halves), halves[0].QueueOffset, halves[0].CommitLogOffset, a)
	}
	hp := halves[0].Properties
	if hp["REAL_TOPIC"] != "TxT" || hp["REAL_QID"] != "1" || hp["TRAN_MSG"] != "true" || hp["WAIT"] != "true" ||
		halves[0].SysFlag&message.FlagTransactionMask != 0 {
		t.Errorf("half record sysFlag %d properties %v", halves[0].SysFlag, hp)
	}

	e.endOK(a, remoting.TransactionCommit, false)
	e.endOK(r, remoting.TransactionRollback, false)
	got := e.read("TxT", 1)
	if len(got) != 1 {
		t.Fatalf("real topic holds %d messages after commit and rollback, want 1", len(got))
	}
	m := got[0]
	if string(m.Body) != "body-UNIQ-A" || m.Flag != 7 || m.SysFlag&message.FlagTransactionMask != message.FlagTransactionCommit ||
		m.PreparedTransactionOffset != a.phys || m.Properties["UNIQ_KEY"] != "UNIQ-A" || m.Properties["KEYS"] != "k-a" ||
		m.Properties["TRAN_MSG"] != "true" || m.Properties["PGROUP"] != txTestGroup {
		t.Errorf("committed message: body %q flag %d sysFlag %d prepared %d props %v", m.Body, m.Flag, m.SysFlag, m.PreparedTransactionOffset, m.Properties)
	}

	// Decided is decided: a second commit, a commit after the rollback and
	// a rollback after the commit are answered and change nothing.
	e.endOK(a, remoting.TransactionCommit, true)
	e.endOK(r, remoting.TransactionCommit, true)
	e.endOK(a, remoting.TransactionRollback, false)
	if n := e.realCount("TxT", 1); n != 1 {
		t.Fatalf("real topic holds %d messages after repeated decisions, want 1", n)
	}
	ops := e.read(rocketmq.TopicTransOpHalf, 0)
	if len(ops) != 2 {
		t.Fatalf("%d op records, want 2", len(ops))
	}
	for i, want := range []int64{a.queueOffset, r.queueOffset} {
		if string(ops[i].Body) != strconv.FormatInt(want, 10) || ops[i].Properties["TAGS"] != "d" || ops[i].Properties["WAIT"] != "false" {
			t.Errorf("op record %d: body %q props %v", i, ops[i].Body, ops[i].Properties)
		}
	}
}

func TestTransactionCommitDelayed(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
	h := e.sendHalf("TxDelay", 0, "UNIQ-D", "DELAY", "1")
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxDelay", 0); n != 0 {
		t.Fatalf("delayed commit visible at once: %d", n)
	}
	msgs, _ := e.waitFor("TxDelay", 0, 1, 5*time.Second)
	if string(msgs[0].Body) != "body-UNIQ-D" || msgs[0].SysFlag&message.FlagTransactionMask != message.FlagTransactionCommit {
		t.Errorf("delayed commit: body %q sysFlag %d", msgs[0].Body, msgs[0].SysFlag)
	}
}

func TestEndTransactionRefused(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
	h := e.sendHalf("TxBad", 0, "UNIQ-BAD")
	plain := e.sendOK("TxBad", 0, "", []byte("plain"))
	_, plainPhys, _ := rocketmq.DecodeOffsetMsgID(sendRespHeader(t, plain).MsgID)
	tests := []struct {
		name   string
		group  string
		half   txHalf
		remark string
	}{
		{"wrong group", "OtherGroup", h, remarkTxGroupWrong},
		{"wrong queue offset", txTestGroup, txHalf{h.queueOffset + 1, h.phys, h.uniq}, remarkTxQueueOffset},
		{"no record at offset", txTestGroup, txHalf{h.queueOffset, h.phys + 1, h.uniq}, remarkTxNotFound},
		{"not a half message", txTestGroup, txHalf{h.queueOffset, plainPhys, h.uniq}, remarkTxNotFound},
		{"beyond the log", txTestGroup, txHalf{h.queueOffset, 1 << 40, h.uniq}, remarkTxNotFound},
		{"negative offset", txTestGroup, txHalf{h.queueOffset, -5, h.uniq}, remarkTxNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.end(e.cli, tt.group, tt.half, remoting.TransactionCommit, false)
			if resp.Code != remoting.SystemError || resp.Remark != tt.remark {
				t.Errorf("code %d remark %q, want SYSTEM_ERROR %q", resp.Code, resp.Remark, tt.remark)
			}
		})
	}
	// Unknown and invalid states get no answer at all.
	for _, state := range []int32{remoting.TransactionNotType, 4, 99} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		resp, err := e.cli.Invoke(ctx, e.b.Addr(), endReq(txTestGroup, h, state, false, false))
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, transport.ErrTimeout) {
			t.Errorf("state %d: answered %v, err %v; want no answer", state, resp, err)
		}
	}
	// A header without the required fields.
	resp := e.cli
	r, err := resp.Invoke(context.Background(), e.b.Addr(), remoting.NewRequest(remoting.EndTransaction, remoting.ExtFields{{Key: "producerGroup", Value: "G"}}, nil))
	if err != nil || r.Code != remoting.SystemError {
		t.Errorf("header without fields: %v %v", r, err)
	}
	if n := e.realCount("TxBad", 0); n != 1 {
		t.Fatalf("refused decisions changed the real topic: %d messages, want the plain one", n)
	}
	// The half message is still pending: a good commit works.
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxBad", 0); n != 2 {
		t.Fatalf("commit after refusals: %d messages, want 2", n)
	}
}

func TestEndTransactionSlave(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.BrokerID = 1; c.TransactionCheckInterval = time.Hour })
	resp := e.end(e.cli, txTestGroup, txHalf{0, 0, "U"}, remoting.TransactionCommit, false)
	if resp.Code != remoting.SlaveNotAvailable {
		t.Errorf("slave answered code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestEndTransactionFromAnotherConnection(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
	h := e.sendHalf("TxOther", 0, "UNIQ-O")
	other := newTestClient(t)
	if resp := e.end(other, txTestGroup, h, remoting.TransactionCommit, true); resp.Code != remoting.Success {
		t.Fatalf("END_TRANSACTION from another connection: code %d remark %q", resp.Code, resp.Remark)
	}
	// The captured client sends it oneway: no answer, same effect.
	h2 := e.sendHalf("TxOther", 0, "UNIQ-O2")
	if err := other.InvokeOneway(context.Background(), e.b.Addr(), endReq(txTestGroup, h2, remoting.TransactionCommit, false, true)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "oneway commit", func() bool { return e.b.store.MaxOffset("TxOther", 0) == 2 })
}

func TestTransactionCheck(t *testing.T) {
	for _, tt := range []struct {
		name  string
		state int32
		want  int
	}{{"commit", remoting.TransactionCommit, 1}, {"rollback", remoting.TransactionRollback, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			e := txTestBroker(t, nil)
			p := newTxProducer(t, e, "producer-1", txTestGroup)
			h := e.sendHalf("TxCheck", 2, "UNIQ-C", "KEYS", "k")
			// The producer does not know yet.
			if err := e.cli.InvokeOneway(context.Background(), e.b.Addr(), endReq(txTestGroup, h, remoting.TransactionNotType, false, true)); err != nil {
				t.Fatal(err)
			}
			c := p.nextCheck(t, 5*time.Second)
			// Measured from the half's birth, as the check service measures.
			if age := time.Now().UnixMilli() - c.m.BornTimestamp; age < e.b.cfg.TransactionTimeout.Milliseconds() {
				t.Errorf("checked %d ms after its birth, before the transaction timeout %v", age, e.b.cfg.TransactionTimeout)
			}
			if !c.req.IsOneway() || orZero(c.h.MsgID) != "UNIQ-C" || orZero(c.h.TransactionID) != "UNIQ-C" ||
				c.h.TranStateTableOffset <= h.queueOffset || c.h.CommitLogOffset <= h.phys {
				t.Fatalf("check header %+v (oneway %v), half %+v", c.h, c.req.IsOneway(), h)
			}
			if _, phys, err := rocketmq.DecodeOffsetMsgID(orZero(c.h.OffsetMsgID)); err != nil || phys != c.h.CommitLogOffset {
				t.Errorf("offsetMsgId %q: %d %v", orZero(c.h.OffsetMsgID), phys, err)
			}
			m := c.m
			if m.Topic != "TxCheck" || m.QueueID != 2 || m.QueueOffset != c.h.TranStateTableOffset || m.CommitLogOffset != c.h.CommitLogOffset ||
				string(m.Body) != "body-UNIQ-C" || m.Properties["TRANSACTION_CHECK_TIMES"] != "1" || m.Properties["WAIT"] != "false" ||
				m.Properties["PGROUP"] != txTestGroup || m.Properties["REAL_TOPIC"] != "TxCheck" {
				t.Errorf("check body: topic %s queue %d offsets %d/%d body %q props %v", m.Topic, m.QueueID, m.QueueOffset, m.CommitLogOffset, m.Body, m.Properties)
			}
			// The producer answers on its own connection.
			if err := p.cli.InvokeOneway(context.Background(), e.b.Addr(), endReq(txTestGroup, c.half(), tt.state, true, true)); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 5*time.Second, "the decision's op record", func() bool {
				return e.b.store.MaxOffset(rocketmq.TopicTransOpHalf, 0) == 1
			})
			// The original producer's late decision changes nothing.
			e.endOK(h, remoting.TransactionCommit, false)
			p.noCheck(t, time.Second, e.halfEnd())
			if n := e.realCount("TxCheck", 2); n != tt.want {
				t.Fatalf("real topic holds %d messages, want %d", n, tt.want)
			}
			if tt.want == 1 {
				if m := e.read("TxCheck", 2)[0]; m.Properties["TRANSACTION_CHECK_TIMES"] != "1" || m.PreparedTransactionOffset != c.h.CommitLogOffset {
					t.Errorf("committed after check: prepared %d props %v", m.PreparedTransactionOffset, m.Properties)
				}
			}
		})
	}
}

func TestTransactionCheckMax(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckMax = 2 })
	p := newTxProducer(t, e, "producer-1", txTestGroup)
	h := e.sendHalf("TxMax", 0, "UNIQ-M")
	for i := 1; i <= 2; i++ {
		c := p.nextCheck(t, 5*time.Second)
		if got := c.m.Properties["TRANSACTION_CHECK_TIMES"]; got != strconv.Itoa(i) {
			t.Fatalf("check %d carries TRANSACTION_CHECK_TIMES %q", i, got)
		}
	}
	msgs, _ := e.waitFor(rocketmq.TopicTransCheckMaxTime, 0, 1, 5*time.Second)
	if m := msgs[0]; string(m.Body) != "body-UNIQ-M" || m.Properties["REAL_TOPIC"] != "TxMax" || m.Properties["TRANSACTION_CHECK_TIMES"] != "2" {
		t.Errorf("discarded message: body %q props %v", m.Body, m.Properties)
	}
	p.noCheck(t, time.Second, e.halfEnd())
	// A discarded transaction is over: a late commit delivers nothing.
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxMax", 0); n != 0 {
		t.Fatalf("discarded transaction committed: %d messages", n)
	}
	if _, ok := e.b.topics.get(rocketmq.TopicTransCheckMaxTime); !ok {
		t.Error("no topic config for " + rocketmq.TopicTransCheckMaxTime)
	}
}

func TestTransactionImmunity(t *testing.T) {
	e := txTestBroker(t, nil)
	p := newTxProducer(t, e, "producer-1", txTestGroup)
	immune := e.sendHalf("TxImm", 0, "UNIQ-IMM", "CHECK_IMMUNITY_TIME_IN_SECONDS", "2")
	plain := e.sendHalf("TxImm", 0, "UNIQ-PLAIN")
	// The message without its own immunity is not held up behind it.
	c := p.nextCheck(t, 5*time.Second)
	if orZero(c.h.MsgID) != plain.uniq {
		t.Fatalf("first check is about %q, want %q", orZero(c.h.MsgID), plain.uniq)
	}
	e.endOK(c.half(), remoting.TransactionRollback, true)
	c = p.nextCheckFor(t, 5*time.Second, immune.uniq)
	if age := time.Now().UnixMilli() - c.m.BornTimestamp; age < 2000 {
		t.Errorf("message with 2 s immunity checked %d ms after its birth", age)
	}
	if c.m.Properties["TRAN_PREPARED_QUEUE_OFFSET"] != strconv.FormatInt(immune.queueOffset, 10) || c.m.Properties["TRANSACTION_CHECK_TIMES"] != "1" {
		t.Errorf("immune message's check properties %v", c.m.Properties)
	}
	e.endOK(c.half(), remoting.TransactionCommit, true)
	if n := e.realCount("TxImm", 0); n != 1 {
		t.Fatalf("real topic holds %d, want 1", n)
	}
}

func TestTransactionNoProducer(t *testing.T) {
	e := txTestBroker(t, nil)
	h := e.sendHalf("TxLone", 0, "UNIQ-L")
	// Rounds pass with nobody to ask; the transaction stays open.
	testutil.WaitFor(t, 5*time.Second, "a re-put without a producer", func() bool {
		return e.b.store.MaxOffset(rocketmq.TopicTransHalf, 0) >= 2
	})
	p := newTxProducer(t, e, "late-producer", txTestGroup)
	c := p.nextCheck(t, 5*time.Second)
	if orZero(c.h.MsgID) != h.uniq {
		t.Fatalf("check about %q", orZero(c.h.MsgID))
	}
	e.endOK(c.half(), remoting.TransactionCommit, true)
	if n := e.realCount("TxLone", 0); n != 1 {
		t.Fatalf("real topic holds %d, want 1", n)
	}
}

func TestTransactionRestart(t *testing.T) {
	eachStop(t, func(t *testing.T, clean bool) {
		e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
		committed := e.sendHalf("TxRe", 0, "UNIQ-1")
		rolled := e.sendHalf("TxRe", 0, "UNIQ-2")
		open := e.sendHalf("TxRe", 0, "UNIQ-3")
		e.endOK(committed, remoting.TransactionCommit, false)
		e.endOK(rolled, remoting.TransactionRollback, false)
		e.restart(clean)

		// The decisions hold: repeating them changes nothing.
		e.endOK(committed, remoting.TransactionCommit, false)
		e.endOK(rolled, remoting.TransactionCommit, false)
		if n := e.realCount("TxRe", 0); n != 1 {
			t.Fatalf("after restart the real topic holds %d, want 1", n)
		}
		// The open one is still open, and only it is checked.
		e.stop(true)
		e.cfg.TransactionCheckInterval = 100 * time.Millisecond
		e.start()
		p := newTxProducer(t, e, "producer-1", txTestGroup)
		c := p.nextCheck(t, 5*time.Second)
		if orZero(c.h.MsgID) != open.uniq {
			t.Fatalf("check about %q, want %q", orZero(c.h.MsgID), open.uniq)
		}
		e.endOK(open, remoting.TransactionCommit, false)
		p.noCheck(t, time.Second, e.halfEnd())
		e.endOK(c.half(), remoting.TransactionCommit, true)
		if n := e.realCount("TxRe", 0); n != 2 {
			t.Fatalf("real topic holds %d, want 2", n)
		}
	})
}

// A decision taken after checks began, then a restart: the records the
// check service put before the restart are not checked again.
func TestTransactionRestartAfterChecks(t *testing.T) {
	eachStop(t, func(t *testing.T, clean bool) {
		e := txTestBroker(t, func(c *Config) { c.OffsetFlushInterval = 50 * time.Millisecond })
		p := newTxProducer(t, e, "producer-1", txTestGroup)
		h := e.sendHalf("TxRe2", 0, "UNIQ-X")
		p.nextCheck(t, 5*time.Second)
		c := p.nextCheck(t, 5*time.Second)
		e.endOK(c.half(), remoting.TransactionCommit, true)
		e.restart(clean)
		p = newTxProducer(t, e, "producer-2", txTestGroup)
		p.noCheck(t, time.Second, 0)
		e.endOK(h, remoting.TransactionCommit, false)
		if n := e.realCount("TxRe2", 0); n != 1 {
			t.Fatalf("real topic holds %d, want 1", n)
		}
	})
}

func TestTransactionMaxPending(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionMaxPending = 2; c.TransactionCheckInterval = time.Hour })
	first := e.sendHalf("TxCap", 0, "UNIQ-C1")
	e.sendHalf("TxCap", 0, "UNIQ-C2")
	props := delayProps("TRAN_MSG", "true", "PGROUP", txTestGroup, "UNIQ_KEY", "UNIQ-C3")
	h := remoting.SendMessageRequestHeader{ProducerGroup: txTestGroup, Topic: "TxCap", DefaultTopic: rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), Properties: &props}
	resp := invokeBroker(t, e.cli, e.b, remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), []byte("x")))
	if resp.Code != remoting.SystemBusy || resp.Remark != remarkTxTooMany {
		t.Fatalf("half beyond the bound: code %d remark %q", resp.Code, resp.Remark)
	}
	// A plain message is not affected, and a decision makes room.
	e.sendOK("TxCap", 0, "", []byte("plain"))
	e.endOK(first, remoting.TransactionRollback, false)
	e.sendHalf("TxCap", 0, "UNIQ-C3")
}

// BenchmarkTransactionHandlers runs the broker's side of one committed
// transaction: the half send and END_TRANSACTION commit (final message and
// op record), async flush.
func BenchmarkTransactionHandlers(b *testing.B) {
	e := sendTestBroker(b, sendBenchConfig)
	body := bytes.Repeat([]byte("x"), 1024)
	c := &server.Conn{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		props := sendTestProps("TAGS", "TagA", "TRAN_MSG", "true", "PGROUP", txTestGroup,
			"UNIQ_KEY", "C0A8000A30391B6D358600A1B2C3"+strconv.Itoa(100000+i), "WAIT", "true")
		h := sendTestHeader("BenchTx", 0, props)
		h.SysFlag = message.FlagTransactionPrep
		resp := e.b.handleSendMessageV2(ctx, c, sendV2Req(h, body))
		if resp.Code != remoting.Success {
			b.Fatalf("half: %d %s", resp.Code, resp.Remark)
		}
		rh := sendRespHeader(b, resp)
		_, phys, _ := rocketmq.DecodeOffsetMsgID(rh.MsgID)
		end := endReq(txTestGroup, txHalf{rh.QueueOffset, phys, "u"}, remoting.TransactionCommit, false, false)
		if resp := e.b.handleEndTransaction(ctx, c, end); resp.Code != remoting.Success {
			b.Fatalf("end: %d %s", resp.Code, resp.Remark)
		}
	}
}

// A client's own REAL_TOPIC and REAL_QID do not redirect the commit: the
// broker's replace them, as Java's map put does.
func TestTransactionClientRealTopicIgnored(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
	h := e.sendHalf("TxReal", 1, "UNIQ-REAL", "REAL_TOPIC", "Elsewhere", "REAL_QID", "3")
	halves := e.read(rocketmq.TopicTransHalf, 0)
	if halves[0].Properties["REAL_TOPIC"] != "TxReal" || halves[0].Properties["REAL_QID"] != "1" {
		t.Errorf("half record keeps the client's REAL_TOPIC: %v", halves[0].Properties)
	}
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxReal", 1); n != 1 {
		t.Fatalf("TxReal/1 holds %d, want 1", n)
	}
	if n := e.b.store.MaxOffset("Elsewhere", 3); n != 0 {
		t.Fatalf("commit followed the client's REAL_TOPIC: %d", n)
	}
	raw, err := e.b.store.MessageAt(h.phys)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := message.ScanRecord(raw)
	if n := strings.Count(string(v.Properties), "REAL_TOPIC"); n != 1 {
		t.Errorf("half properties hold REAL_TOPIC %d times: %q", n, v.Properties)
	}
}

// The check progress passes decided records, and the op progress follows
// once the half progress has passed what the op records concern, so a
// restart reads only what is still open.
func TestTransactionProgress(t *testing.T) {
	// No half falls due during the test: on a loaded machine a round could
	// otherwise find one older than the timeout before its decision's op
	// record and put it back, moving the progress past 2.
	e := txTestBroker(t, func(c *Config) { c.TransactionTimeout = time.Minute })
	a := e.sendHalf("TxProg", 0, "UNIQ-P1")
	b := e.sendHalf("TxProg", 0, "UNIQ-P2")
	e.endOK(a, remoting.TransactionCommit, false)
	e.endOK(b, remoting.TransactionRollback, false)
	testutil.WaitFor(t, 5*time.Second, "check and op progress", func() bool {
		half, ok1 := e.b.offsets.query(groupTransCheck, rocketmq.TopicTransHalf, 0)
		op, ok2 := e.b.offsets.query(groupTransCheck, rocketmq.TopicTransOpHalf, 0)
		return ok1 && ok2 && half == 2 && op == 2
	})
	if _, ok := e.b.topics.get(rocketmq.TopicTransHalf); !ok {
		t.Error("no topic config for " + rocketmq.TopicTransHalf + " after a check round")
	}
	// An open transaction holds the check progress until it is due.
	e.sendHalf("TxProg", 0, "UNIQ-P3")
	e.restart(true)
	e.b.tx.mu.Lock()
	n := len(e.b.tx.pending)
	e.b.tx.mu.Unlock()
	if n != 1 {
		t.Errorf("%d transactions open after restart, want 1", n)
	}
}

// A check goes to one live producer of the group: not to a member whose
// connection is gone, and not to both.
func TestTransactionCheckOneLiveProducer(t *testing.T) {
	e := txTestBroker(t, nil)
	gone := newTxProducer(t, e, "producer-gone", txTestGroup)
	live := newTxProducer(t, e, "producer-live", txTestGroup)
	other := newTxProducer(t, e, "producer-other-group", "OtherGroup")
	gone.cli.Close()
	testutil.WaitFor(t, 5*time.Second, "the closed producer's connection to drop", func() bool {
		conn, ok := e.b.clients.producerConnection(txTestGroup)
		return ok && len(conn.ConnectionSet) == 1
	})
	h := e.sendHalf("TxLive", 0, "UNIQ-LIVE")
	c := live.nextCheck(t, 5*time.Second)
	e.endOK(c.half(), remoting.TransactionCommit, true)
	from := e.halfEnd()
	other.noCheck(t, 300*time.Millisecond, 0)
	live.noCheck(t, 300*time.Millisecond, from)
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxLive", 0); n != 1 {
		t.Fatalf("real topic holds %d, want 1", n)
	}
}

// With sync flush a half send is answered once durable, and the decision
// works as with async flush.
func TestTransactionSyncFlush(t *testing.T) {
	e := txTestBroker(t, func(c *Config) { c.FlushMode = store.FlushSync; c.TransactionCheckInterval = time.Hour })
	h := e.sendHalf("TxSync", 0, "UNIQ-SYNC")
	e.endOK(h, remoting.TransactionCommit, false)
	if n := e.realCount("TxSync", 0); n != 1 {
		t.Fatalf("real topic holds %d, want 1", n)
	}
}

// realWhich is the "which" property of each message in topic/queue, in
// order.
func (e txEnv) realWhich(topic string, queue int32) []string {
	var out []string
	for _, m := range e.read(topic, queue) {
		out = append(out, m.Properties["which"])
	}
	return out
}

// A later transaction reusing an earlier one's UNIQ_KEY (a client that
// sets the key on a Message object sent again) is a transaction of its
// own: decisions about the earlier one's records do not touch it, and a
// restart keeps it open.
func TestTransactionReusedUniqKey(t *testing.T) {
	cases := []struct {
		name    string
		restart string // "", "clean", "crash"
		late    bool   // a late check answer commits the first again
	}{
		{"late decision", "", true},
		{"restart clean", "clean", false},
		{"restart crash", "crash", false},
		{"late decision after restart", "clean", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour })
			first := e.sendHalf("TxReuse", 0, "UNIQ-R", "which", "one")
			e.endOK(first, remoting.TransactionCommit, false)
			second := e.sendHalf("TxReuse", 0, "UNIQ-R", "which", "two")
			if tc.restart != "" {
				e.restart(tc.restart == "clean")
			}
			if tc.late {
				e.endOK(first, remoting.TransactionCommit, true)
			}
			e.endOK(second, remoting.TransactionCommit, false)
			e.endOK(second, remoting.TransactionCommit, true) // a duplicate changes nothing
			if got := e.realWhich("TxReuse", 0); !slices.Equal(got, []string{"one", "two"}) {
				t.Fatalf("real topic holds %q, want [one two]", got)
			}
		})
	}
}

// The original producer's decision about a half record the check service
// has already put again, and the answer to the check about the copy, across
// a restart: the message is delivered once, and nothing is checked again.
func TestTransactionRestartLateOriginal(t *testing.T) {
	for _, order := range []string{"original first", "check answer first"} {
		t.Run(order, func(t *testing.T) {
			eachStop(t, func(t *testing.T, clean bool) {
				e := txTestBroker(t, func(c *Config) { c.OffsetFlushInterval = 50 * time.Millisecond })
				p := newTxProducer(t, e, "producer-1", txTestGroup)
				h := e.sendHalf("TxLate", 0, "UNIQ-L")
				p.nextCheck(t, 5*time.Second)
				c := p.nextCheck(t, 5*time.Second) // the check progress has passed h
				testutil.WaitFor(t, 5*time.Second, "check progress past the original", func() bool {
					off, ok := e.b.offsets.query(groupTransCheck, rocketmq.TopicTransHalf, 0)
					return ok && off > h.queueOffset
				})
				firstEnd, secondEnd := h, c.half()
				if order != "original first" {
					firstEnd, secondEnd = secondEnd, firstEnd
				}
				e.endOK(firstEnd, remoting.TransactionCommit, firstEnd == c.half())
				e.restart(clean)
				p = newTxProducer(t, e, "producer-2", txTestGroup)
				e.endOK(secondEnd, remoting.TransactionCommit, secondEnd == c.half())
				p.noCheck(t, time.Second, 0)
				if n := e.realCount("TxLate", 0); n != 1 {
					t.Fatalf("real topic holds %d, want 1", n)
				}
			})
		})
	}
}

// logRecords collects log records at Info and above.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelInfo }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// find returns the attributes of the first record whose message contains
// msg.
func (l *logRecords) find(msg string) (map[string]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		if strings.Contains(r.Message, msg) {
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			return attrs, true
		}
	}
	return nil, false
}

// An END_TRANSACTION that changes nothing is visible in the log at Info
// with the group and both offsets.
func TestEndTransactionIgnoredLogged(t *testing.T) {
	logs := &logRecords{}
	e := txTestBroker(t, func(c *Config) { c.TransactionCheckInterval = time.Hour; c.Logger = slog.New(logs) })
	h := e.sendHalf("TxLog", 0, "UNIQ-LOG")
	e.endOK(h, remoting.TransactionCommit, false)
	if _, ok := logs.find("end transaction ignored"); ok {
		t.Fatal("the first decision was logged as ignored")
	}
	e.endOK(h, remoting.TransactionRollback, true)
	attrs, ok := logs.find("end transaction ignored")
	if !ok {
		t.Fatal("no Info record for an ignored END_TRANSACTION")
	}
	want := map[string]string{"group": txTestGroup, "msgId": h.uniq,
		"commitLogOffset": strconv.FormatInt(h.phys, 10), "queueOffset": strconv.FormatInt(h.queueOffset, 10)}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("log %s = %q, want %q (%v)", k, attrs[k], v, attrs)
		}
	}
}
