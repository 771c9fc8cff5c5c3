package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// txListener records its calls; exec and check decide.
type txListener struct {
	exec  func(ctx context.Context, msg *rocketmq.Message, arg any) LocalState
	check func(ctx context.Context, msg *rocketmq.MessageExt) LocalState

	mu     sync.Mutex
	execs  []*rocketmq.Message
	args   []any
	checks []*rocketmq.MessageExt
}

func (l *txListener) ExecuteLocal(ctx context.Context, msg *rocketmq.Message, arg any) LocalState {
	l.mu.Lock()
	l.execs, l.args = append(l.execs, msg), append(l.args, arg)
	l.mu.Unlock()
	if l.exec == nil {
		return LocalCommit
	}
	return l.exec(ctx, msg, arg)
}

func (l *txListener) CheckLocal(ctx context.Context, msg *rocketmq.MessageExt) LocalState {
	l.mu.Lock()
	l.checks = append(l.checks, msg)
	l.mu.Unlock()
	if l.check == nil {
		return LocalCommit
	}
	return l.check(ctx, msg)
}

func (l *txListener) counts() (execs, checks int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.execs), len(l.checks)
}

// sentLog collects the requests a mocked broker received.
type sentLog struct {
	mu     sync.Mutex
	sends  []*remoting.Command
	oneway []*remoting.Command
}

func (s *sentLog) get() (sends, oneway []*remoting.Command) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sends), slices.Clone(s.oneway)
}

// newMockTx starts a transactional producer over the mock; every send is
// answered by answer, every oneway request recorded.
func newMockTx(t *testing.T, l TransactionListener, topic, broker string, answer func(*remoting.Command) (*remoting.Command, error), opts ...Option) (*TransactionProducer, *mockEnv, *sentLog) {
	t.Helper()
	env := newMockAPI(t, map[string]*mqclient.PublishInfo{topic: fakeRoute(topic, 4, broker)})
	log := &sentLog{}
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			log.mu.Lock()
			log.sends = append(log.sends, captured(req))
			log.mu.Unlock()
			return answer(req)
		}).AnyTimes()
	env.api.EXPECT().invokeOneway(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, addr string, req *remoting.Command) error {
			if addr != "addr-"+broker {
				t.Errorf("oneway to %s, want the master of %s", addr, broker)
			}
			log.mu.Lock()
			log.oneway = append(log.oneway, captured(req))
			log.mu.Unlock()
			return nil
		}).AnyTimes()
	tp, err := NewTransactional(l, append([]Option{withAPI(env.api), WithGroup("pg")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	env.start(t, tp.Producer)
	return tp, env, log
}

// javaFrame decodes a captured frame of testdata/wire.
func javaFrame(t *testing.T, name string) *remoting.Command {
	t.Helper()
	raw, err := os.ReadFile("../testdata/wire/" + name)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := remoting.DecodeFrame(raw, 0)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

func extKeys(ext remoting.ExtFields) []string {
	keys := make([]string, len(ext))
	for i, f := range ext {
		keys[i] = f.Key
	}
	return keys
}

func extMap(ext remoting.ExtFields) map[string]string {
	m := make(map[string]string, len(ext))
	for _, f := range ext {
		m[f.Key] = f.Value
	}
	return m
}

// sameRequest compares our oneway request (one the transport will flag
// oneway) with a Java one: code, remark, and the extFields keys in order
// with their values.
func sameRequest(t *testing.T, got, want *remoting.Command) {
	t.Helper()
	if !want.IsOneway() {
		t.Fatal("the Java request is not oneway")
	}
	if got.Code != want.Code || got.Remark != want.Remark {
		t.Errorf("code %d remark %q, Java %d %q", got.Code, got.Remark, want.Code, want.Remark)
	}
	if g, w := extKeys(got.Ext), extKeys(want.Ext); !slices.Equal(g, w) {
		t.Errorf("keys %v, Java %v", g, w)
	}
	g, w := extMap(got.Ext), extMap(want.Ext)
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s = %q, Java %q", k, g[k], v)
		}
	}
}

// TestTransactionJavaWire replays the captured 4.9.8 transaction: the same
// message, group and broker answer make our half send and END_TRANSACTION
// carry what the Java client sent.
func TestTransactionJavaWire(t *testing.T) {
	const group, topic = "GoldenTxProducerJava", "GoldenTopicJava"
	tests := []struct {
		name         string
		send, answer string // captured half send and its response
		end          string // captured END_TRANSACTION
		key, tag     string
		state        LocalState
	}{
		{"commit", "0115-java-req-310-SEND_MESSAGE_V2.bin", "0116-java-resp-310-SEND_MESSAGE_V2-SUCCESS.bin", "0117-java-req-37-END_TRANSACTION.bin", "GoldenTx-commit", "TagTxCommit", LocalCommit},
		{"rollback", "0118-java-req-310-SEND_MESSAGE_V2.bin", "0119-java-resp-310-SEND_MESSAGE_V2-SUCCESS.bin", "0121-java-req-37-END_TRANSACTION.bin", "GoldenTx-rollback", "TagTxRollback", LocalRollback},
		{"unknown", "0122-java-req-310-SEND_MESSAGE_V2.bin", "0123-java-resp-310-SEND_MESSAGE_V2-SUCCESS.bin", "0124-java-req-37-END_TRANSACTION.bin", "GoldenTx-check", "TagTxCheck", LocalUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			javaSend, javaAnswer, javaEnd := javaFrame(t, tc.send), javaFrame(t, tc.answer), javaFrame(t, tc.end)
			javaHdr := reqHeader(t, javaSend)
			javaProps := message.DecodeProperties(*javaHdr.Properties)
			l := &txListener{exec: func(context.Context, *rocketmq.Message, any) LocalState { return tc.state }}
			tp, _, log := newMockTx(t, l, topic, "broker-a", func(*remoting.Command) (*remoting.Command, error) { return javaAnswer, nil },
				WithGroup(group))

			m, err := NewMessage(topic, javaSend.Body, Keys(tc.key), Tag(tc.tag))
			if err != nil {
				t.Fatal(err)
			}
			m.SetUniqKey(javaProps[rocketmq.PropertyUniqKey])
			res, err := tp.SendInTransaction(context.Background(), m, "arg")
			if err != nil {
				t.Fatal(err)
			}
			if res.State != tc.state || res.TransactionID != javaProps[rocketmq.PropertyUniqKey] || res.Status != rocketmq.SendOK || res.QueueOffset != mustInt(t, extMap(javaAnswer.Ext)["queueOffset"]) {
				t.Errorf("result %+v state %v id %q", res.SendResult, res.State, res.TransactionID)
			}
			sends, oneway := log.get()
			if len(sends) != 1 || len(oneway) != 1 {
				t.Fatalf("%d sends and %d oneway requests, want 1 and 1", len(sends), len(oneway))
			}
			h := reqHeader(t, sends[0])
			if h.SysFlag != javaHdr.SysFlag || h.ProducerGroup != group || h.Topic != topic || sends[0].Code != javaSend.Code {
				t.Errorf("half send: code %d sysFlag %d group %q topic %q; Java %d %d", sends[0].Code, h.SysFlag, h.ProducerGroup, h.Topic, javaSend.Code, javaHdr.SysFlag)
			}
			if props := reqProps(t, sends[0]); !mapsEqual(props, javaProps) {
				t.Errorf("half properties %v, Java %v", props, javaProps)
			}
			sameRequest(t, oneway[0], javaEnd)
			// ExecuteLocal saw the half message, transaction id included;
			// the caller's message is unchanged.
			execs, _ := l.counts()
			if execs != 1 || l.execs[0].UniqKey() != res.TransactionID || !l.execs[0].TransactionPrepared() || l.args[0] != "arg" {
				t.Errorf("ExecuteLocal got %+v, %v", l.execs, l.args)
			}
			if m.TransactionPrepared() || m.Property(rocketmq.PropertyProducerGroup) != "" {
				t.Errorf("caller's message changed: %v", m.Properties)
			}
		})
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestTransactionCheckJavaWire hands the member the captured
// CHECK_TRANSACTION_STATE and compares the answer with the Java client's.
func TestTransactionCheckJavaWire(t *testing.T) {
	check := javaFrame(t, "0176-broker-req-39-CHECK_TRANSACTION_STATE.bin")
	javaEnd := javaFrame(t, "0177-java-req-37-END_TRANSACTION.bin")
	l := &txListener{}
	_, env, log := newMockTx(t, l, "GoldenTopicJava", "broker-a", nil, WithGroup("GoldenTxProducerJava"))
	var h remoting.CheckTransactionStateRequestHeader
	if err := h.FromExt(check.Ext); err != nil {
		t.Fatal(err)
	}
	msg, _, err := message.DecodeRecord(check.Body)
	if err != nil {
		t.Fatal(err)
	}
	env.member.CheckTransactionState(context.Background(), "addr-broker-a", msg, &h)
	testutil.WaitFor(t, 5*time.Second, "END_TRANSACTION", func() bool { _, o := log.get(); return len(o) == 1 })
	_, oneway := log.get()
	sameRequest(t, oneway[0], javaEnd)
	if _, checks := l.counts(); checks != 1 || l.checks[0].TransactionID() != *h.TransactionID {
		t.Errorf("CheckLocal calls %v", l.checks)
	}
}

func TestTransactionPanics(t *testing.T) {
	resp := okResp(remoting.Success, 1, 7)
	l := &txListener{
		exec:  func(context.Context, *rocketmq.Message, any) LocalState { panic("boom") },
		check: func(context.Context, *rocketmq.MessageExt) LocalState { panic("bang") },
	}
	tp, env, log := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) { return resp, nil })
	m, _ := NewMessage("T", []byte("x"))
	res, err := tp.SendInTransaction(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != LocalUnknown {
		t.Errorf("state %v after a panic", res.State)
	}
	env.member.CheckTransactionState(context.Background(), "addr-broker-a",
		&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T", Properties: map[string]string{rocketmq.PropertyUniqKey: "U"}}},
		&remoting.CheckTransactionStateRequestHeader{TranStateTableOffset: 3, CommitLogOffset: 4})
	testutil.WaitFor(t, 5*time.Second, "two END_TRANSACTION", func() bool { _, o := log.get(); return len(o) == 2 })
	_, oneway := log.get()
	for i, want := range []struct {
		remark string
		check  string
	}{{"executeLocalTransactionBranch exception: panic: boom", "false"}, {"checkLocalTransactionState Exception: panic: bang", "true"}} {
		e := extMap(oneway[i].Ext)
		if oneway[i].Remark != want.remark || e["commitOrRollback"] != "0" || e["fromTransactionCheck"] != want.check {
			t.Errorf("END_TRANSACTION %d: remark %q ext %v", i, oneway[i].Remark, e)
		}
	}
	if e := extMap(oneway[1].Ext); e["msgId"] != "U" || e["tranStateTableOffset"] != "3" || e["commitLogOffset"] != "4" || e["producerGroup"] != "pg" {
		t.Errorf("check answer %v", e)
	}
}

func TestTransactionRejects(t *testing.T) {
	if _, err := NewTransactional(nil, WithNameServers("127.0.0.1:9876")); err == nil {
		t.Error("nil listener accepted")
	}
	if _, err := NewTransactional(&txListener{}, WithNameServers("127.0.0.1:9876"), WithTransactionChecks(0, 1)); err == nil {
		t.Error("zero check goroutines accepted")
	}
	if _, err := NewTransactional(&txListener{}, WithNameServers("127.0.0.1:9876"), WithTransactionChecks(1, 0)); err == nil {
		t.Error("zero check queue accepted")
	}
	l := &txListener{}
	tp, _, log := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
		return okResp(remoting.Success, 0, 0), nil
	})
	delayed, _ := NewMessage("T", []byte("x"), DelayLevel(3))
	timer, _ := NewMessage("T", []byte("x"), DeliverAfter(time.Minute))
	badDelay, _ := NewMessage("T", []byte("x"))
	badDelay.SetProperty(rocketmq.PropertyDelayLevel, "x")
	tests := []struct {
		name string
		msg  *rocketmq.Message
		want error
	}{
		{"nil", nil, rocketmq.ErrNilMessage},
		{"delay level", delayed, ErrTransactionUnsupported},
		{"delivery time", timer, ErrTransactionUnsupported},
		{"bad delay", badDelay, ErrInvalidDelayLevel},
		{"no body", &rocketmq.Message{Topic: "T"}, rocketmq.ErrNilBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tp.SendInTransaction(context.Background(), tc.msg, nil); !errors.Is(err, tc.want) {
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
	if sends, oneway := log.get(); len(sends)+len(oneway) != 0 {
		t.Errorf("%d sends, %d oneway requests for rejected messages", len(sends), len(oneway))
	}
	if execs, _ := l.counts(); execs != 0 {
		t.Errorf("ExecuteLocal ran %d times", execs)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, _ := NewMessage("T", []byte("x"))
	if _, err := tp.SendInTransaction(context.Background(), m, nil); !errors.Is(err, ErrNotStarted) {
		t.Errorf("after Shutdown: %v", err)
	}
}

// TestTransactionSendOutcomes: a failed half send runs nothing and ends
// nothing; a half stored with a non-OK status is rolled back without
// ExecuteLocal, as Java does.
func TestTransactionSendOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		answer  func(*remoting.Command) (*remoting.Command, error)
		wantErr bool
		state   LocalState
		execs   int
		end     string // commitOrRollback sent; "" none
	}{
		{"send fails", func(*remoting.Command) (*remoting.Command, error) {
			return remoting.NewResponse(remoting.SystemError, "no"), nil
		}, true, 0, 0, ""},
		{"flush disk timeout", func(*remoting.Command) (*remoting.Command, error) {
			return okResp(remoting.FlushDiskTimeout, 0, 1), nil
		}, false, LocalRollback, 0, "12"},
		{"slave not available", func(*remoting.Command) (*remoting.Command, error) {
			return okResp(remoting.SlaveNotAvailable, 0, 1), nil
		}, false, LocalRollback, 0, "12"},
		{"ok", func(*remoting.Command) (*remoting.Command, error) {
			return okResp(remoting.Success, 0, 1), nil
		}, false, LocalCommit, 1, "8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &txListener{}
			tp, _, log := newMockTx(t, l, "T", "broker-a", tc.answer, WithRetries(0))
			m, _ := NewMessage("T", []byte("x"))
			res, err := tp.SendInTransaction(context.Background(), m, nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if err == nil && res.State != tc.state {
				t.Errorf("state %v, want %v", res.State, tc.state)
			}
			if execs, _ := l.counts(); execs != tc.execs {
				t.Errorf("ExecuteLocal ran %d times, want %d", execs, tc.execs)
			}
			_, oneway := log.get()
			switch {
			case tc.end == "" && len(oneway) != 0:
				t.Errorf("END_TRANSACTION sent after a failed send: %v", oneway[0].Ext)
			case tc.end != "" && (len(oneway) != 1 || extMap(oneway[0].Ext)["commitOrRollback"] != tc.end):
				t.Errorf("END_TRANSACTION %v, want commitOrRollback %s", oneway, tc.end)
			}
		})
	}
}

// TestTransactionCheckPool: checks run on the pool's goroutines, never the
// caller's; at most goroutines+queue are held, the rest dropped; Shutdown
// answers the queued ones.
func TestTransactionCheckPool(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	l := &txListener{check: func(ctx context.Context, _ *rocketmq.MessageExt) LocalState {
		entered <- struct{}{}
		<-release
		return LocalRollback
	}}
	tp, env, log := newMockTx(t, l, "T", "broker-a", nil, WithTransactionChecks(1, 2))
	check := func(i int) {
		done := make(chan struct{})
		go func() {
			env.member.CheckTransactionState(context.Background(), "addr-broker-a",
				&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T", Properties: map[string]string{rocketmq.PropertyUniqKey: "U" + string(rune('0'+i))}}},
				&remoting.CheckTransactionStateRequestHeader{TranStateTableOffset: int64(i), CommitLogOffset: 100})
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("check %d blocked its caller", i)
		}
	}
	check(0)
	<-entered // the only goroutine is busy with check 0
	for i := 1; i <= 4; i++ {
		check(i) // 1 and 2 wait in the queue, 3 and 4 are dropped
	}
	close(release)
	testutil.WaitFor(t, 5*time.Second, "three answers", func() bool { _, o := log.get(); return len(o) == 3 })
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, oneway := log.get()
	var offsets []string
	for _, o := range oneway {
		e := extMap(o.Ext)
		offsets = append(offsets, e["tranStateTableOffset"])
		if e["commitOrRollback"] != "12" || e["fromTransactionCheck"] != "true" {
			t.Errorf("answer %v", e)
		}
	}
	if !slices.Equal(offsets, []string{"0", "1", "2"}) {
		t.Errorf("answered checks %v, want 0 1 2", offsets)
	}
	// A check after Shutdown is dropped.
	env.member.CheckTransactionState(context.Background(), "addr-broker-a",
		&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}}, &remoting.CheckTransactionStateRequestHeader{})
	if _, o := log.get(); len(o) != 3 {
		t.Errorf("%d answers after Shutdown", len(o))
	}
}

// TestTransactionShutdownCutsChecks: a check that outlives Shutdown's ctx
// has its ctx cancelled; Shutdown returns the ctx error once it ended, and
// the checks still queued are dropped.
func TestTransactionShutdownCutsChecks(t *testing.T) {
	entered := make(chan struct{}, 10)
	l := &txListener{check: func(ctx context.Context, _ *rocketmq.MessageExt) LocalState {
		entered <- struct{}{}
		<-ctx.Done()
		return LocalUnknown
	}}
	tp, env, log := newMockTx(t, l, "T", "broker-a", nil)
	for i := range 3 {
		env.member.CheckTransactionState(context.Background(), "addr-broker-a",
			&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}},
			&remoting.CheckTransactionStateRequestHeader{TranStateTableOffset: int64(i)})
	}
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := tp.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v", err)
	}
	if _, checks := l.counts(); checks != 1 {
		t.Errorf("%d checks ran, want the one in progress", checks)
	}
	if _, o := log.get(); len(o) > 1 {
		t.Errorf("%d answers sent", len(o))
	}
}

// TestTransactionShutdownCutsLocal: Shutdown waits for a local transaction
// within its ctx, then cancels the ctx ExecuteLocal has, whether or not the
// caller's ctx can end by itself; the caller's values reach the listener.
func TestTransactionShutdownCutsLocal(t *testing.T) {
	type key struct{}
	bg := context.Background()
	cancellable, cancelCaller := context.WithCancel(context.WithValue(bg, key{}, "v"))
	defer cancelCaller()
	// How the listener waits for the end of its ctx.
	waits := map[string]func(ctx context.Context){
		"Done": func(ctx context.Context) { <-ctx.Done() },
		"derived": func(ctx context.Context) {
			d, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			<-d.Done()
		},
		"AfterFunc": func(ctx context.Context) {
			ch := make(chan struct{})
			context.AfterFunc(ctx, func() { close(ch) })
			<-ch
		},
		"Err": func(ctx context.Context) {
			testutil.Poll(time.Minute, func() bool { return ctx.Err() != nil })
		},
	}
	type ctxCase struct {
		name   string
		ctx    context.Context
		wait   func(context.Context)
		joined bool // the listener asked for Done
	}
	var cases []ctxCase
	for wname, wait := range waits {
		cases = append(cases,
			ctxCase{"never ends/" + wname, context.WithValue(bg, key{}, "v"), wait, wname != "Err"},
			ctxCase{"cancellable/" + wname, cancellable, wait, wname != "Err"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entered := make(chan any, 1)
			var errAtEnd error
			l := &txListener{exec: func(ctx context.Context, _ *rocketmq.Message, _ any) LocalState {
				if ctx.Err() != nil {
					t.Errorf("listener ctx ended at the start: %v", ctx.Err())
				}
				entered <- ctx.Value(key{})
				tc.wait(ctx)
				errAtEnd = ctx.Err()
				if cause := context.Cause(ctx); tc.joined && !errors.Is(cause, context.Canceled) {
					t.Errorf("listener ctx cause %v, want Canceled", cause)
				}
				return LocalRollback
			}}
			tp, _, log := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
				return okResp(remoting.Success, 0, 1), nil
			})
			type out struct {
				res *TransactionResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				m, _ := NewMessage("T", []byte("x"))
				res, err := tp.SendInTransaction(tc.ctx, m, nil)
				done <- out{res, err}
			}()
			if v := <-entered; v != "v" {
				t.Errorf("listener ctx value %v, want the caller's", v)
			}
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			if err := tp.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown: %v", err)
			}
			o := <-done
			if o.err != nil || o.res.State != LocalRollback {
				t.Errorf("SendInTransaction %+v, %v", o.res, o.err)
			}
			if !errors.Is(errAtEnd, context.Canceled) {
				t.Errorf("listener ctx ended with %v, want Canceled", errAtEnd)
			}
			// The END_TRANSACTION was attempted on a client being closed; the
			// mock takes it, a real client fails it and the broker checks later.
			if _, oneway := log.get(); len(oneway) > 1 {
				t.Errorf("%d END_TRANSACTION", len(oneway))
			}
		})
	}
}

func TestLocalStateString(t *testing.T) {
	for s, want := range map[LocalState]string{LocalCommit: "COMMIT_MESSAGE", LocalRollback: "ROLLBACK_MESSAGE", LocalUnknown: "UNKNOW", 9: "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
	}
	if LocalState(9).known() != LocalUnknown || LocalState(9).wire() != remoting.TransactionNotType {
		t.Error("an out-of-range state is not unknown")
	}
}

// TestTransactionNamespace: the group and topic go out in the namespace,
// as every send's; the caller sees its own names.
func TestTransactionNamespace(t *testing.T) {
	l := &txListener{}
	tp, env, log := newMockTx(t, l, "ns%T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
		return okResp(remoting.Success, 0, 5), nil
	}, WithNamespace("ns"))
	m, _ := NewMessage("T", []byte("x"))
	res, err := tp.SendInTransaction(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Queue.Topic != "T" {
		t.Errorf("result topic %q", res.Queue.Topic)
	}
	sends, oneway := log.get()
	h := reqHeader(t, sends[0])
	if h.Topic != "ns%T" || h.ProducerGroup != "ns%pg" || reqProps(t, sends[0])[rocketmq.PropertyProducerGroup] != "ns%pg" {
		t.Errorf("half send: topic %q group %q props %v", h.Topic, h.ProducerGroup, reqProps(t, sends[0]))
	}
	if g := extMap(oneway[0].Ext)["producerGroup"]; g != "ns%pg" {
		t.Errorf("END_TRANSACTION group %q", g)
	}
	env.member.CheckTransactionState(context.Background(), "addr-broker-a",
		&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T", Properties: map[string]string{rocketmq.PropertyUniqKey: "U"}}},
		&remoting.CheckTransactionStateRequestHeader{})
	testutil.WaitFor(t, 5*time.Second, "check answer", func() bool { _, o := log.get(); return len(o) == 2 })
	if _, o := log.get(); extMap(o[1].Ext)["producerGroup"] != "ns%pg" {
		t.Errorf("check answer %v", o[1].Ext)
	}
}

// TestTransactionRestart: a producer started again registers a new check
// pool, which answers.
func TestTransactionRestart(t *testing.T) {
	l := &txListener{}
	tp, env, log := newMockTx(t, l, "T", "broker-a", nil)
	old := env.member
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := tp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if env.member == nil || env.member == old {
		t.Fatalf("member after restart: %v (before %v)", env.member, old)
	}
	env.member.CheckTransactionState(context.Background(), "addr-broker-a",
		&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}}, &remoting.CheckTransactionStateRequestHeader{})
	testutil.WaitFor(t, 5*time.Second, "check answer", func() bool { _, o := log.get(); return len(o) == 1 })
}

// TestPlainProducerNoMember: a plain producer registers no check member,
// so the client drops its group's checks.
func TestPlainProducerNoMember(t *testing.T) {
	env := newMockProducer(t, nil)
	if env.member != nil {
		t.Errorf("plain producer registered %T", env.member)
	}
}

// TestTransactionLocalCtxFollowsCaller: the caller's cancellation reaches
// ExecuteLocal's ctx however the listener waits, and a ctx kept past
// ExecuteLocal reports itself over.
func TestTransactionLocalCtxFollowsCaller(t *testing.T) {
	for _, viaDone := range []bool{true, false} {
		t.Run(fmt.Sprintf("viaDone=%v", viaDone), func(t *testing.T) {
			entered := make(chan struct{})
			var kept context.Context
			l := &txListener{exec: func(ctx context.Context, _ *rocketmq.Message, _ any) LocalState {
				kept = ctx
				close(entered)
				if viaDone {
					<-ctx.Done()
				} else {
					testutil.Poll(time.Minute, func() bool { return ctx.Err() != nil })
				}
				if !errors.Is(ctx.Err(), context.Canceled) {
					t.Errorf("listener ctx ended with %v", ctx.Err())
				}
				return LocalCommit
			}}
			tp, _, _ := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
				return okResp(remoting.Success, 0, 1), nil
			})
			defer tp.Shutdown(context.Background())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				m, _ := NewMessage("T", []byte("x"))
				_, err := tp.SendInTransaction(ctx, m, nil)
				done <- err
			}()
			<-entered
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("SendInTransaction: %v", err)
			}
			select {
			case <-kept.Done():
			default:
				t.Error("a ctx kept past ExecuteLocal is not done")
			}
		})
	}
}

// returnsWithin runs f and fails the test when it has not returned after d.
func returnsWithin(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s has not returned after %v", what, d)
	}
}

// TestTransactionShutdownFromListener: Shutdown called from ExecuteLocal or
// CheckLocal returns once everything but that call has stopped, and the
// call itself then ends.
func TestTransactionShutdownFromListener(t *testing.T) {
	okSend := func(*remoting.Command) (*remoting.Command, error) { return okResp(remoting.Success, 0, 1), nil }
	cases := []struct {
		name string
		// shutdownCtx is the ctx the listener gives Shutdown.
		shutdownCtx func(listener context.Context) (context.Context, context.CancelFunc)
		wantErr     error
	}{
		{"listener ctx", func(l context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(l) }, nil},
		{"own ctx with deadline", func(context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run("ExecuteLocal/"+tc.name, func(t *testing.T) {
			var tp *TransactionProducer
			var shutErr error
			l := &txListener{exec: func(ctx context.Context, _ *rocketmq.Message, _ any) LocalState {
				sctx, cancel := tc.shutdownCtx(ctx)
				defer cancel()
				shutErr = tp.Shutdown(sctx)
				return LocalCommit
			}}
			tp, _, _ = newMockTx(t, l, "T", "broker-a", okSend)
			returnsWithin(t, 10*time.Second, "SendInTransaction calling Shutdown", func() {
				m, _ := NewMessage("T", []byte("x"))
				res, err := tp.SendInTransaction(context.Background(), m, nil)
				if err != nil || res.State != LocalCommit {
					t.Errorf("SendInTransaction %+v, %v", res, err)
				}
			})
			if !errors.Is(shutErr, tc.wantErr) || (tc.wantErr == nil && shutErr != nil) {
				t.Errorf("Shutdown: %v, want %v", shutErr, tc.wantErr)
			}
			if tp.ClientID() != "" {
				t.Error("producer still running")
			}
		})
	}
	for _, bg := range []bool{true, false} {
		t.Run(fmt.Sprintf("CheckLocal/background=%v", bg), func(t *testing.T) {
			var tp *TransactionProducer
			shut := make(chan error, 1)
			l := &txListener{check: func(ctx context.Context, _ *rocketmq.MessageExt) LocalState {
				sctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				if bg {
					sctx, cancel = context.WithCancel(context.Background())
				}
				defer cancel()
				shut <- tp.Shutdown(sctx)
				return LocalCommit
			}}
			var env *mockEnv
			tp, env, _ = newMockTx(t, l, "T", "broker-a", nil)
			env.member.CheckTransactionState(context.Background(), "addr-broker-a",
				&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}}, &remoting.CheckTransactionStateRequestHeader{})
			select {
			case err := <-shut:
				if err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Shutdown from CheckLocal has not returned")
			}
			if tp.ClientID() != "" {
				t.Error("producer still running")
			}
		})
	}
}

// TestTransactionShutdownAbandons: a listener call that ignores its
// cancelled ctx keeps Shutdown only a grace past its ctx; the call, when
// it ends, does not disturb the stopped producer.
func TestTransactionShutdownAbandons(t *testing.T) {
	for _, local := range []bool{true, false} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) {
			release := make(chan struct{})
			entered := make(chan struct{}, 1)
			block := func() LocalState { entered <- struct{}{}; <-release; return LocalCommit }
			l := &txListener{
				exec:  func(context.Context, *rocketmq.Message, any) LocalState { return block() },
				check: func(context.Context, *rocketmq.MessageExt) LocalState { return block() },
			}
			tp, env, _ := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
				return okResp(remoting.Success, 0, 1), nil
			})
			sent := make(chan struct{})
			if local {
				go func() {
					defer close(sent)
					m, _ := NewMessage("T", []byte("x"))
					if _, err := tp.SendInTransaction(context.Background(), m, nil); err != nil {
						t.Errorf("SendInTransaction: %v", err)
					}
				}()
			} else {
				close(sent)
				env.member.CheckTransactionState(context.Background(), "addr-broker-a",
					&rocketmq.MessageExt{Message: rocketmq.Message{Topic: "T"}}, &remoting.CheckTransactionStateRequestHeader{})
			}
			<-entered
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			returnsWithin(t, 10*time.Second, "Shutdown", func() {
				if err := tp.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Shutdown: %v", err)
				}
			})
			close(release)
			<-sent
		})
	}
}

// TestTransactionShutdownKeptCtx: Shutdown given the ctx of an ExecuteLocal
// that has returned (and is over) still waits its grace for the local
// transactions in progress.
func TestTransactionShutdownKeptCtx(t *testing.T) {
	var kept context.Context
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var calls sync.Mutex
	n := 0
	l := &txListener{exec: func(ctx context.Context, _ *rocketmq.Message, _ any) LocalState {
		calls.Lock()
		n++
		first := n == 1
		calls.Unlock()
		if first {
			kept = ctx
			return LocalCommit
		}
		entered <- struct{}{}
		<-release
		return LocalRollback
	}}
	tp, _, log := newMockTx(t, l, "T", "broker-a", func(*remoting.Command) (*remoting.Command, error) {
		return okResp(remoting.Success, 0, 1), nil
	})
	m, _ := NewMessage("T", []byte("x"))
	if _, err := tp.SendInTransaction(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := tp.SendInTransaction(context.Background(), m, nil); err != nil {
			t.Errorf("second SendInTransaction: %v", err)
		}
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- tp.Shutdown(kept) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a local transaction runs", err)
	case <-time.After(200 * time.Millisecond): // the wait is the assertion
	}
	close(release)
	// The kept ctx is over, so the wait was its grace.
	if err := <-shut; !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want Canceled", err)
	}
	<-done
	if _, oneway := log.get(); len(oneway) != 2 {
		t.Errorf("%d END_TRANSACTION, want both", len(oneway))
	}
}
