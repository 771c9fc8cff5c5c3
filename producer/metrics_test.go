package producer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/metrics"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/golang/mock/gomock"
)

// sendHook records Send reports.
type sendHook struct {
	metrics.Nop
	mu   sync.Mutex
	got  []string // "topic result msgs"
	durs []time.Duration
}

func (h *sendHook) Send(topic string, r metrics.Result, n int, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, topic+" "+r.String()+" "+string(rune('0'+n)))
	h.durs = append(h.durs, d)
}

func (h *sendHook) reports() ([]string, []time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...), append([]time.Duration(nil), h.durs...)
}

// Each send kind reports once, after its retries, with the wire topic, its
// result and its message count.
func TestMetricsSend(t *testing.T) {
	ok := func() (*remoting.Command, error) { return okResp(remoting.Success, 0, 1), nil }
	busy := func() (*remoting.Command, error) { return remoting.NewResponse(remoting.SystemBusy, ""), nil }
	msg := func() *rocketmq.Message { return &rocketmq.Message{Topic: "T", Body: []byte("x")} }
	tests := []struct {
		name string
		resp func() (*remoting.Command, error)
		send func(p *Producer) error
		want string
	}{
		{"sync ok", ok, func(p *Producer) error { _, err := p.Send(context.Background(), msg()); return err }, "ns%T ok 1"},
		{"sync error after retries", busy, func(p *Producer) error { _, err := p.Send(context.Background(), msg()); return err }, "ns%T error 1"},
		{"batch", ok, func(p *Producer) error { _, err := p.Send(context.Background(), msg(), msg(), msg()); return err }, "ns%T ok 3"},
		{"oneway", ok, func(p *Producer) error { return p.SendOneway(context.Background(), msg()) }, "ns%T ok 1"},
		{"async ok", ok, func(p *Producer) error {
			return p.SendAsync(context.Background(), func(*rocketmq.SendResult, error) {}, msg())
		}, "ns%T ok 1"},
		{"async error", busy, func(p *Producer) error {
			return p.SendAsync(context.Background(), func(*rocketmq.SendResult, error) {}, msg())
		}, "ns%T error 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &sendHook{}
			env := newMockProducer(t, nil, WithMetrics(h), WithNamespace("ns"))
			env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
				func(context.Context, string, *remoting.Command, time.Duration) (*remoting.Command, error) {
					return tc.resp()
				}).AnyTimes()
			env.api.EXPECT().invokeOneway(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil).AnyTimes()
			_ = tc.send(env.p)
			testutil.WaitFor(t, 5*time.Second, "one report", func() bool { got, _ := h.reports(); return len(got) > 0 })
			got, durs := h.reports()
			if len(got) != 1 || got[0] != tc.want || durs[0] <= 0 {
				t.Fatalf("reports %q %v, want one %q", got, durs, tc.want)
			}
		})
	}
}

// BenchmarkSend1KiBMetrics is BenchmarkSend1KiB with a hook that does
// nothing: the cost of reporting itself.
func BenchmarkSend1KiBMetrics(b *testing.B) {
	api := &stubAPI{pi: fakeRoute("bench", 4, "broker-a"), resp: okResp(remoting.Success, 1, 42)}
	p, err := New(withAPI(api), WithGroup("pg"), WithMetrics(metrics.Nop{}))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	body := make([]byte, 1024)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Send(ctx, benchMessage(b, body)); err != nil {
			b.Fatal(err)
		}
	}
}
