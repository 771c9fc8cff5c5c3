package producer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// stubAPI answers every send at once with a canned SUCCESS response, so the
// benchmarks measure the producer alone (no transport, no broker).
type stubAPI struct {
	pi   *mqclient.PublishInfo
	resp *remoting.Command
}

func (s *stubAPI) start(context.Context, string, mqclient.Producer) error { return nil }
func (s *stubAPI) shutdown(context.Context, string) error                 { return nil }
func (s *stubAPI) clientID() string                                       { return "127.0.0.1@bench" }
func (s *stubAPI) publishInfo(context.Context, string) (*mqclient.PublishInfo, error) {
	return s.pi, nil
}
func (s *stubAPI) refreshRoute(string)                                           {}
func (s *stubAPI) readSoon(string)                                               {}
func (s *stubAPI) brokerAddr(name string) (string, bool)                         { return "addr-" + name, true }
func (s *stubAPI) brokerVersion(string) (int32, bool)                            { return 0, false }
func (s *stubAPI) ensureHeartbeat(context.Context, string) error                 { return nil }
func (s *stubAPI) setReplyHandler(func(*rocketmq.MessageExt))                    {}
func (s *stubAPI) invokeOneway(context.Context, string, *remoting.Command) error { return nil }
func (s *stubAPI) invoke(_ context.Context, _ string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
	return s.resp, nil
}
func (s *stubAPI) invokeAsync(_ context.Context, _ string, req *remoting.Command, _ time.Duration, cb func(*remoting.Command, error)) error {
	go cb(s.resp, nil)
	return nil
}

func newBenchProducer(b *testing.B) *Producer {
	b.Helper()
	api := &stubAPI{pi: fakeRoute("bench", 4, "broker-a"), resp: okResp(remoting.Success, 1, 42)}
	p, err := New(withAPI(api), WithGroup("pg"))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// benchMessage is what an application builds per send: a fresh message
// with a 1 KiB body and one user property.
func benchMessage(b *testing.B, body []byte) *rocketmq.Message {
	m := &rocketmq.Message{Topic: "bench", Body: body, Properties: map[string]string{rocketmq.PropertyWaitStoreMsgOK: "true"}}
	if err := m.SetUserProperty("RUN", "l2x9k3"); err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkSend1KiB(b *testing.B) {
	p := newBenchProducer(b)
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

func BenchmarkSendBatch32x1KiB(b *testing.B) {
	p := newBenchProducer(b)
	body := make([]byte, 1024)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		msgs := make([]*rocketmq.Message, 32)
		for i := range msgs {
			msgs[i] = benchMessage(b, body)
		}
		if _, err := p.Send(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(32*b.N), "ns/msg")
}

func BenchmarkSendAsync1KiB(b *testing.B) {
	p := newBenchProducer(b)
	body := make([]byte, 1024)
	ctx := context.Background()
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		wg.Add(1)
		err := p.SendAsync(ctx, func(_ *rocketmq.SendResult, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		}, benchMessage(b, body))
		if err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
}

// onewayCounter is stubAPI counting the oneway requests (END_TRANSACTION).
type onewayCounter struct {
	*stubAPI
	n atomic.Int64
}

func (s *onewayCounter) invokeOneway(context.Context, string, *remoting.Command) error {
	s.n.Add(1)
	return nil
}

// nopListener commits every transaction at once.
type nopListener struct{}

func (nopListener) ExecuteLocal(context.Context, *rocketmq.Message, any) LocalState {
	return LocalCommit
}
func (nopListener) CheckLocal(context.Context, *rocketmq.MessageExt) LocalState { return LocalCommit }

func newBenchTx(b *testing.B) (*TransactionProducer, *onewayCounter) {
	b.Helper()
	api := &onewayCounter{stubAPI: &stubAPI{pi: fakeRoute("bench", 4, "broker-a"), resp: okResp(remoting.Success, 1, 42)}}
	tp, err := NewTransactional(nopListener{}, withAPI(api), WithGroup("pg"))
	if err != nil {
		b.Fatal(err)
	}
	if err := tp.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, api
}

// BenchmarkSendInTransaction1KiB is the producer's side of one committed
// transaction with a no-op local transaction: half message, ExecuteLocal,
// END_TRANSACTION. The caller's ctx is cancellable, as an application's.
func BenchmarkSendInTransaction1KiB(b *testing.B) {
	tp, api := newBenchTx(b)
	body := make([]byte, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := tp.SendInTransaction(ctx, benchMessage(b, body), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := api.n.Load(); n != int64(b.N) {
		b.Fatalf("%d END_TRANSACTION for %d transactions", n, b.N)
	}
}

// BenchmarkSendInTransactionParallel64 runs 64 callers per core sharing
// one ctx: what a transaction shares with the others shows as contention.
func BenchmarkSendInTransactionParallel64(b *testing.B) {
	tp, api := newBenchTx(b)
	body := make([]byte, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.SetParallelism(64)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tp.SendInTransaction(ctx, benchMessage(b, body), nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if n := api.n.Load(); n != int64(b.N) {
		b.Fatalf("%d END_TRANSACTION for %d transactions", n, b.N)
	}
}
