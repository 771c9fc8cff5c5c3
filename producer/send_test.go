package producer

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func TestNewValidation(t *testing.T) {
	t.Setenv(mqclient.EnvNameServer, "")
	ns := WithNameServers("127.0.0.1:9876")
	tests := []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"ok", []Option{ns}, true},
		{"no namesrv", nil, false},
		{"bad namesrv", []Option{WithNameServers("nope")}, false},
		{"blank group", []Option{ns, WithGroup("")}, false},
		{"illegal group", []Option{ns, WithGroup("a b")}, false},
		{"zero timeout", []Option{ns, WithSendTimeout(0)}, false},
		{"negative retries", []Option{ns, WithRetries(-1)}, false},
		{"bad level", []Option{ns, WithCompression(4096, 11)}, false},
		{"bad inflight", []Option{ns, WithAsyncInflight(0, 1, false)}, false},
		{"bad latency tables", []Option{ns, WithLatencyTable([]time.Duration{1}, nil)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts...)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	t.Setenv(mqclient.EnvNameServer, "127.0.0.1:9876")
	if _, err := New(); err != nil {
		t.Fatalf("NAMESRV_ADDR not used: %v", err)
	}
}

func TestSendWireAndRetryAnotherBroker(t *testing.T) {
	env := newMockProducer(t, nil)
	var reqs []*remoting.Command
	var addrs []string
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, addr string, req *remoting.Command, timeout time.Duration) (*remoting.Command, error) {
			reqs = append(reqs, captured(req))
			addrs = append(addrs, addr)
			if len(reqs) == 1 {
				return remoting.NewResponse(remoting.SystemBusy, "[REJECTREQUEST]system busy"), nil
			}
			return okResp(remoting.Success, int32(reqHeader(t, req).QueueID), 42), nil
		}).Times(2)
	msg := &rocketmq.Message{Topic: "T", Body: []byte("hello")}
	msg.SetTag("TagA")
	res, err := env.p.Send(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if addrs[0] == addrs[1] {
		t.Fatalf("retry went to the same broker %s", addrs[0])
	}
	h := reqHeader(t, reqs[1])
	props := reqProps(t, reqs[1])
	if reqs[1].Code != remoting.SendMessageV2 || h.ProducerGroup != "pg" || h.Topic != "T" || h.DefaultTopic != "TBW102" ||
		h.DefaultTopicQueueNums != 4 || h.BrokerName == nil || "addr-"+*h.BrokerName != addrs[1] || h.Batch || h.SysFlag != 0 {
		t.Fatalf("request %d header %+v", reqs[1].Code, h)
	}
	if props["WAIT"] != "true" || props["TAGS"] != "TagA" || len(props["UNIQ_KEY"]) != 32 && len(props["UNIQ_KEY"]) != 56 {
		t.Fatalf("properties %q", props)
	}
	if p0 := reqProps(t, reqs[0]); p0["UNIQ_KEY"] != props["UNIQ_KEY"] {
		t.Fatal("a retry must keep the message id")
	}
	if msg.Properties["UNIQ_KEY"] != "" {
		t.Fatal("the user's message was modified")
	}
	if res.Status != rocketmq.SendOK || res.MsgID != props["UNIQ_KEY"] || res.QueueOffset != 42 ||
		res.Queue.BrokerName != *h.BrokerName || res.Queue.Topic != "T" || res.RegionID != "DefaultRegion" || !res.TraceOn {
		t.Fatalf("result %+v", res)
	}
}

func TestSendRetryRules(t *testing.T) {
	tests := []struct {
		name     string
		resp     func() (*remoting.Command, error)
		opts     []Option
		attempts int
		wantErr  error
		status   rocketmq.SendStatus
	}{
		{"not retriable", func() (*remoting.Command, error) {
			return remoting.NewResponse(remoting.MessageIllegal, "too big"), nil
		}, nil, 1, remoting.ErrMessageIllegal, 0},
		{"system busy", func() (*remoting.Command, error) { return remoting.NewResponse(remoting.SystemBusy, ""), nil }, nil, 3, remoting.ErrSystemBusy, 0},
		{"topic not exist", func() (*remoting.Command, error) { return remoting.NewResponse(remoting.TopicNotExist, ""), nil }, nil, 3, remoting.ErrTopicNotExist, 0},
		{"network", func() (*remoting.Command, error) { return nil, timeoutErr{} }, nil, 3, timeoutErr{}, 0},
		{"no retries", func() (*remoting.Command, error) { return nil, timeoutErr{} }, []Option{WithRetries(0)}, 1, timeoutErr{}, 0},
		{"flush disk timeout returned", func() (*remoting.Command, error) { return okResp(remoting.FlushDiskTimeout, 0, 1), nil }, nil, 1, nil, rocketmq.SendFlushDiskTimeout},
		{"slave not available retried", func() (*remoting.Command, error) { return okResp(remoting.SlaveNotAvailable, 0, 1), nil },
			[]Option{WithRetryOnNotStoreOK(true)}, 3, nil, rocketmq.SendSlaveNotAvailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newMockProducer(t, nil, tc.opts...)
			n := 0
			env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
				func(context.Context, string, *remoting.Command, time.Duration) (*remoting.Command, error) {
					n++
					return tc.resp()
				}).AnyTimes()
			res, err := env.p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")})
			if n != tc.attempts {
				t.Fatalf("%d attempts, want %d", n, tc.attempts)
			}
			if tc.wantErr != nil {
				var se *SendError
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &se) || se.Attempts != tc.attempts {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || res.Status != tc.status {
				t.Fatalf("res %+v err %v", res, err)
			}
		})
	}
}

func TestSendTimeoutIsTotalBudget(t *testing.T) {
	const budget = time.Second
	env := newMockProducer(t, nil, WithSendTimeout(budget))
	n := 0
	var timeouts []time.Duration
	// The first attempt fails early, leaving most of the budget; the
	// second is given the rest and uses it up, as a real timeout does.
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(ctx context.Context, _ string, _ *remoting.Command, timeout time.Duration) (*remoting.Command, error) {
			n++
			timeouts = append(timeouts, timeout)
			if n == 1 {
				time.Sleep(200 * time.Millisecond)
			} else {
				time.Sleep(timeout)
			}
			return nil, timeoutErr{}
		}).AnyTimes()
	_, err := env.p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")})
	if !errors.Is(err, ErrSendTimeout) || !errors.Is(err, timeoutErr{}) {
		t.Fatalf("err = %v, want ErrSendTimeout and the last error", err)
	}
	// Whatever the machine's load, the second attempt gets no more than
	// the budget less the first attempt's 200 ms, and none follows it.
	if n != 2 || timeouts[0] > budget || timeouts[0] < budget/2 || timeouts[1] > budget-200*time.Millisecond {
		t.Fatalf("%d attempts with timeouts %v, want 2 sharing %v", n, timeouts, budget)
	}
}

func TestSendNoRoute(t *testing.T) {
	env := newMockProducer(t, map[string]*mqclient.PublishInfo{})
	_, err := env.p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")})
	if !errors.Is(err, ErrNoQueue) || !errors.Is(err, remoting.ErrTopicNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestSendValidation(t *testing.T) {
	env := newMockProducer(t, nil, WithMaxMessageSize(100))
	big := &rocketmq.Message{Topic: "T", Body: make([]byte, 101)}
	tests := []struct {
		name string
		msgs []*rocketmq.Message
		want error
	}{
		{"none", nil, ErrNoMessage},
		{"nil", []*rocketmq.Message{nil}, rocketmq.ErrNilMessage},
		{"empty body", []*rocketmq.Message{&rocketmq.Message{Topic: "T", Body: nil}}, rocketmq.ErrNilBody},
		{"bad topic", []*rocketmq.Message{&rocketmq.Message{Topic: "a b", Body: []byte("x")}}, rocketmq.ErrIllegalName},
		{"forbidden topic", []*rocketmq.Message{&rocketmq.Message{Topic: "SCHEDULE_TOPIC_XXXX", Body: []byte("x")}}, rocketmq.ErrNotAllowedSendTopic},
		{"too large", []*rocketmq.Message{big}, ErrTooLarge},
		{"bad delay", []*rocketmq.Message{func() *rocketmq.Message {
			m := &rocketmq.Message{Topic: "T", Body: []byte("x")}
			m.SetProperty("DELAY", "x")
			return m
		}()}, ErrInvalidDelayLevel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := env.p.Send(context.Background(), tc.msgs...); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// The size refusal has one prefix and says the sizes once.
	_, err := env.p.Send(context.Background(), big)
	if want := "rocketmq: message body too large: 101 bytes, over the limit of 100 bytes (WithMaxMessageSize)"; err == nil ||
		err.Error() != want || !errors.Is(err, rocketmq.ErrBodyTooLarge) {
		t.Errorf("too large: %v, want %q matching ErrBodyTooLarge too", err, want)
	}
}

func TestBatch(t *testing.T) {
	env := newMockProducer(t, nil)
	var got *remoting.Command
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			got = captured(req)
			return okResp(remoting.Success, reqHeader(t, req).QueueID, 7), nil
		}).Times(1)
	var msgs []*rocketmq.Message
	for i := 0; i < 3; i++ {
		m := &rocketmq.Message{Topic: "T", Body: []byte{'a' + byte(i)}}
		m.SetKeys("k" + string(rune('0'+i)))
		m.Flag = int32(i)
		msgs = append(msgs, m)
	}
	res, err := env.p.Send(context.Background(), msgs...)
	if err != nil {
		t.Fatal(err)
	}
	h := reqHeader(t, got)
	if got.Code != remoting.SendBatchMessage || !h.Batch || *h.Properties != "WAIT\x01true" || h.SysFlag != 0 {
		t.Fatalf("batch header %d %+v", got.Code, h)
	}
	els, err := message.DecodeBatchElements(got.Body)
	if err != nil || len(els) != 3 {
		t.Fatalf("elements %v %v\n%x", els, err, got.Body)
	}
	ids := strings.Split(res.MsgID, ",")
	seen := map[string]bool{}
	for i, el := range els {
		props := message.DecodeProperties(el.Properties)
		if string(el.Body) != string(rune('a'+i)) || el.Flag != int32(i) || props["KEYS"] != "k"+string(rune('0'+i)) || props["UNIQ_KEY"] != ids[i] || seen[ids[i]] {
			t.Fatalf("element %d: %+v %q (ids %v)", i, el, props, ids)
		}
		seen[ids[i]] = true
	}

	errTests := []struct {
		name string
		mod  func(m *rocketmq.Message)
		want error
	}{
		{"topics", func(m *rocketmq.Message) { m.Topic = "U" }, ErrBatchTopics},
		{"wait", func(m *rocketmq.Message) { m.SetWaitStoreMsgOK(false) }, ErrBatchWait},
		{"delay", func(m *rocketmq.Message) { m.SetDelayLevel(2) }, ErrBatchDelay},
		{"timer", func(m *rocketmq.Message) { m.SetDelayTimeMS(10) }, ErrBatchDelay},
		{"reply", func(m *rocketmq.Message) { m.SetProperty("MSG_TYPE", "reply") }, ErrBatchReply},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &rocketmq.Message{Topic: "T", Body: []byte("a")}, &rocketmq.Message{Topic: "T", Body: []byte("b")}
			tc.mod(b)
			if _, err := env.p.Send(context.Background(), a, b); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("retry topic", func(t *testing.T) {
		a, b := &rocketmq.Message{Topic: "%RETRY%g", Body: []byte("a")}, &rocketmq.Message{Topic: "%RETRY%g", Body: []byte("b")}
		if _, err := env.p.Send(context.Background(), a, b); !errors.Is(err, ErrBatchRetryTopic) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		env := newMockProducer(t, nil, WithMaxMessageSize(1000))
		a, b := &rocketmq.Message{Topic: "T", Body: make([]byte, 600)}, &rocketmq.Message{Topic: "T", Body: make([]byte, 600)}
		_, err := env.p.Send(context.Background(), a, b)
		if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), "rocketmq: batch too large: ") ||
			!strings.HasSuffix(err.Error(), " bytes, over the limit of 1000 bytes (WithMaxMessageSize)") || strings.Count(err.Error(), "rocketmq: ") != 1 {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCompression(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size       int
		opts       []Option
		compressed bool
	}{
		{"below threshold", 4095, nil, false},
		{"at threshold", 4096, nil, true},
		{"custom threshold", 100, []Option{WithCompression(100, 9)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newMockProducer(t, nil, tc.opts...)
			var got *remoting.Command
			env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
				func(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
					got = captured(req)
					return okResp(remoting.Success, 0, 0), nil
				})
			body := bytes.Repeat([]byte("abcd"), tc.size/4+1)[:tc.size]
			if _, err := env.p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: body}); err != nil {
				t.Fatal(err)
			}
			h := reqHeader(t, got)
			if !tc.compressed {
				if h.SysFlag != 0 || !bytes.Equal(got.Body, body) {
					t.Fatalf("sysFlag %#x, body changed", h.SysFlag)
				}
				return
			}
			if h.SysFlag != 0x301 {
				t.Fatalf("sysFlag %#x, want 0x301", h.SysFlag)
			}
			plain, err := message.Decompress(got.Body, h.SysFlag, 0)
			if err != nil || !bytes.Equal(plain, body) {
				t.Fatalf("decompress: %v", err)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	// The wrap and unwrap themselves are tested in internal/mqclient.
	env := newMockProducer(t, nil, WithNamespace("ns"))
	var topics, groups []string
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			topics = append(topics, reqHeader(t, req).Topic)
			groups = append(groups, reqHeader(t, req).ProducerGroup)
			return okResp(remoting.Success, 1, 0), nil
		}).Times(2)
	msg := &rocketmq.Message{Topic: "T", Body: []byte("x")}
	for i := 0; i < 2; i++ {
		res, err := env.p.Send(context.Background(), msg)
		if err != nil || res.Queue.Topic != "T" {
			t.Fatalf("res %+v err %v", res, err)
		}
	}
	if topics[0] != "ns%T" || topics[1] != "ns%T" || msg.Topic != "T" {
		t.Fatalf("wire topics %q, message topic %q", topics, msg.Topic)
	}
	// The group is in the namespace too (Java DefaultMQProducer.start), but
	// Group and SendInfo keep the user's name.
	if want := "ns%" + env.p.Group(); groups[0] != want || groups[1] != want {
		t.Fatalf("wire producer groups %q, want %q", groups, want)
	}
}

func TestRetryTopicHeaders(t *testing.T) {
	env := newMockProducer(t, nil)
	var got *remoting.Command
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			got = captured(req)
			return okResp(remoting.Success, 0, 0), nil
		})
	m := &rocketmq.Message{Topic: "%RETRY%g", Body: []byte("x")}
	m.SetProperty(rocketmq.PropertyReconsumeTime, "3")
	m.SetProperty(rocketmq.PropertyMaxReconsumeTimes, "16")
	if _, err := env.p.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	h := reqHeader(t, got)
	props := reqProps(t, got)
	if *h.ReconsumeTimes != 3 || h.MaxReconsumeTimes == nil || *h.MaxReconsumeTimes != 16 || props["RECONSUME_TIME"] != "" || props["MAX_RECONSUME_TIMES"] != "" {
		t.Fatalf("header %+v props %q", h, props)
	}
}

func TestMessageOptions(t *testing.T) {
	at := time.UnixMilli(1_800_000_000_000)
	m, err := NewMessage("T", []byte("x"), Tag("A"), Keys("k1", "k2"), Property("p", "v"), Flag(3), DeliverAt(at), WaitStoreMsgOK(false))
	if err != nil {
		t.Fatal(err)
	}
	if m.Tag() != "A" || m.Property("KEYS") != "k1 k2" || m.Property("p") != "v" || m.Flag != 3 ||
		m.Property("TIMER_DELIVER_MS") != "1800000000000" || m.WaitStoreMsgOK() {
		t.Fatalf("message %+v", m)
	}
	m, _ = NewMessage("T", []byte("x"), DelayLevel(2), DeliverAfter(1500*time.Millisecond))
	if m.DelayLevel() != 2 || m.Property("TIMER_DELAY_MS") != "1500" || isTimer(m) {
		t.Fatalf("message %+v", m)
	}
	for _, tc := range []struct {
		name string
		opt  MessageOption
		want error
	}{
		{"reserved", Property("UNIQ_KEY", "x"), rocketmq.ErrReservedProperty},
		{"blank", Property("", "x"), rocketmq.ErrEmptyProperty},
		{"level 0", DelayLevel(0), ErrInvalidDelayLevel},
		{"level 19", DelayLevel(19), ErrInvalidDelayLevel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewMessage("T", []byte("x"), tc.opt); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := NewMessage("T", []byte("x"), DeliverAfter(0)); err == nil {
		t.Fatal("zero delay accepted")
	}
}

func TestTimerCheck(t *testing.T) {
	env := newMockProducer(t, nil)
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(okResp(remoting.Success, 0, 0), nil).Times(2)
	m, _ := NewMessage("T", []byte("x"), DeliverAfter(3*time.Second))
	// Unknown version: sent.
	if _, err := env.p.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	env.mu.Lock()
	env.version = 409
	env.mu.Unlock()
	if _, err := env.p.Send(context.Background(), m); !errors.Is(err, ErrTimerNotSupported) {
		t.Fatalf("err = %v, want ErrTimerNotSupported", err)
	}
	// A delay level works everywhere.
	d, _ := NewMessage("T", []byte("x"), DelayLevel(2))
	if _, err := env.p.Send(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

func TestInterceptors(t *testing.T) {
	var (
		mu    sync.Mutex
		infos []SendInfo
		order []string
	)
	mk := func(name string) Interceptor {
		return func(ctx context.Context, info *SendInfo, next Invoker) (*rocketmq.SendResult, error) {
			ci, ok := InfoFromContext(ctx)
			if !ok || ci != info {
				t.Error("info missing from ctx")
			}
			mu.Lock()
			order = append(order, name)
			if name == "outer" {
				infos = append(infos, *info)
			}
			mu.Unlock()
			return next(ctx)
		}
	}
	env := newMockProducer(t, nil, WithInterceptors(mk("outer"), mk("inner")))
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(okResp(remoting.Success, 0, 0), nil).AnyTimes()
	env.api.EXPECT().invokeOneway(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil).Times(1)
	ctx := context.Background()
	if _, err := env.p.Send(ctx, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.p.Send(ctx, &rocketmq.Message{Topic: "T", Body: []byte("x")}, &rocketmq.Message{Topic: "T", Body: []byte("y")}); err != nil {
		t.Fatal(err)
	}
	if err := env.p.SendOneway(ctx, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if err := env.p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) { done <- err }, &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(infos) != 4 || strings.Join(order, ",") != "outer,inner,outer,inner,outer,inner,outer,inner" {
		t.Fatalf("order %v", order)
	}
	kinds := []SendKind{KindSync, KindSync, KindOneway, KindAsync}
	for i, in := range infos {
		if in.Kind != kinds[i] || in.Batch != (i == 1) || in.Group != "pg" || in.Topic != "T" || in.Queue.Topic != "T" ||
			in.BrokerAddr != "addr-"+in.Queue.BrokerName || len(in.Messages) != 1+boolInt(i == 1) {
			t.Fatalf("info %d: %+v", i, in)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestInterceptorError(t *testing.T) {
	boom := errors.New("boom")
	env := newMockProducer(t, nil, WithInterceptors(func(context.Context, *SendInfo, Invoker) (*rocketmq.SendResult, error) {
		return nil, boom
	}))
	if _, err := env.p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

func TestLifecycle(t *testing.T) {
	env := newMockProducer(t, nil)
	p := env.p
	if err := p.Start(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second start: %v", err)
	}
	if p.ClientID() == "" {
		t.Fatal("no client id")
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("second shutdown: %v", err)
	}
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("send after shutdown: %v", err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(okResp(remoting.Success, 0, 0), nil)
	if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: "T", Body: []byte("x")}); err != nil {
		t.Fatalf("send after restart: %v", err)
	}
}

func TestUniqueIDs(t *testing.T) {
	env := newMockProducer(t, nil)
	const n = 1_000_000
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		id := env.p.ids.NewID()
		if _, dup := seen[id]; dup {
			t.Fatalf("duplicate id %s after %d", id, i)
		}
		seen[id] = struct{}{}
	}
	// And through the send path: prepare assigns the UNIQ_KEY.
	m := &rocketmq.Message{Topic: "T", Body: []byte("x")}
	for i := 0; i < 20_000; i++ {
		e, err := env.p.prepare(KindSync, []*rocketmq.Message{m})
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := seen[e.ids]; dup {
			t.Fatalf("duplicate id %s from prepare", e.ids)
		}
		seen[e.ids] = struct{}{}
	}
}
