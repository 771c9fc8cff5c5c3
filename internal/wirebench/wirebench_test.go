package wirebench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// echoCode is a request code no real peer uses.
const echoCode = 9999

// startEcho starts an echo server; with inline the echo also registers its
// fast path (server.HandleInline), as the broker's sends do.
func startEcho(tb testing.TB, inline bool) string {
	tb.Helper()
	srv := server.New(server.Config{})
	echo := func(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
		resp := remoting.NewResponse(remoting.Success, "")
		resp.Body = req.Body
		return resp
	}
	srv.Handle(echoCode, echo)
	if !inline {
		return start(tb, srv)
	}
	srv.HandleInline(echoCode, func(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
		return echo(ctx, c, req), true
	})
	return start(tb, srv)
}

func start(tb testing.TB, srv *server.Server) string {
	tb.Helper()
	if err := srv.Start("127.0.0.1:0"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close(context.Background()) })
	return srv.Addr()
}

func newClient(tb testing.TB, st remoting.SerializeType) *transport.Client {
	tb.Helper()
	cli, err := transport.New(transport.WithSerializeType(st), transport.WithTimeout(10*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

// TestEchoRoundTrip checks the benchmark's setup: both serializations,
// many callers, bodies come back intact.
func TestEchoRoundTrip(t *testing.T) {
	for _, inline := range []bool{false, true} {
		addr := startEcho(t, inline)
		for _, st := range []remoting.SerializeType{remoting.SerializeJSON, remoting.SerializeRocketMQ} {
			cli := newClient(t, st)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < 20; j++ {
						body := []byte(fmt.Sprintf("%d-%d", i, j))
						resp, err := cli.Invoke(context.Background(), addr, remoting.NewRequest(echoCode, remoting.ExtFields{{Key: "k", Value: "v"}}, body))
						if err != nil {
							errs <- err
							return
						}
						if string(resp.Body) != string(body) || resp.Serialize != st {
							errs <- fmt.Errorf("echo %q in %v, got %q in %v", body, st, resp.Body, resp.Serialize)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkInvoke64Callers is the transport benchmark: 64
// concurrent sync callers over one loopback connection against an echo
// handler on internal/server, in both header serializations; "worker" runs
// the echo on the server's worker goroutines only, "inline" also registers
// its non-blocking fast path (server.HandleInline, what the broker's sends
// use). Run with
//
//	go test -run '^$' -bench Invoke64 ./internal/wirebench/
//
// and read round trips per second from the rt/s column.
func BenchmarkInvoke64Callers(b *testing.B) {
	body := make([]byte, 128)
	for _, st := range []remoting.SerializeType{remoting.SerializeRocketMQ, remoting.SerializeJSON} {
		for _, inline := range []bool{false, true} {
			name := st.String() + "/worker"
			if inline {
				name = st.String() + "/inline"
			}
			b.Run(name, func(b *testing.B) {
				addr := startEcho(b, inline)
				cli := newClient(b, st)
				req := func() *remoting.Command {
					return remoting.NewRequest(echoCode, remoting.ExtFields{{Key: "topic", Value: "BenchTopic"}, {Key: "queueId", Value: "1"}}, body)
				}
				if _, err := cli.Invoke(context.Background(), addr, req()); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
				start := time.Now()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := cli.Invoke(context.Background(), addr, req()); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rt/s")
			})
		}
	}
}
