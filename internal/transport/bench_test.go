package transport

import (
	"context"
	"net"
	"runtime"
	"sync"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// startRawEcho serves rawEcho on a random loopback port until the
// benchmark ends.
func startRawEcho(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				rawEcho(nc)
			}()
		}
	}()
	b.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// BenchmarkInvokeParallel64 runs 64 concurrent sync callers over one
// loopback connection to a minimal echo peer, with a SEND_MESSAGE_V2-like
// header (a few extFields) and a 128-byte body.
func BenchmarkInvokeParallel64(b *testing.B) {
	for _, bc := range []struct {
		name string
		st   remoting.SerializeType
	}{{"json", remoting.SerializeJSON}, {"rocketmq", remoting.SerializeRocketMQ}} {
		b.Run(bc.name, func(b *testing.B) {
			addr := startRawEcho(b)
			c, err := New(WithSerializeType(bc.st))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ext := remoting.ExtFields{
				{Key: "a", Value: "ProducerGroupA"}, {Key: "b", Value: "TopicTest"},
				{Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"}, {Key: "e", Value: "1"},
				{Key: "f", Value: "0"}, {Key: "g", Value: "1700000000000"}, {Key: "h", Value: "0"},
			}
			body := make([]byte, 128)
			if _, err := c.Invoke(context.Background(), addr, remoting.NewRequest(remoting.SendMessageV2, ext, body)); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				req := remoting.NewRequest(remoting.SendMessageV2, ext, body)
				for pb.Next() {
					resp, err := c.Invoke(ctx, addr, req)
					if err != nil {
						b.Error(err)
						return
					}
					if resp.Opaque != req.Opaque {
						b.Errorf("opaque %d for request %d", resp.Opaque, req.Opaque)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			if cn := c.readyConn(addr); cn != nil {
				b.ReportMetric(float64(b.N)/float64(cn.writes.Load()), "frames/write")
			}
		})
	}
}

// BenchmarkInvokeSerial is one caller at a time: round-trip latency.
func BenchmarkInvokeSerial(b *testing.B) {
	addr := startRawEcho(b)
	c, err := New(WithSerializeType(remoting.SerializeRocketMQ))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := remoting.NewRequest(remoting.HeartBeat, nil, make([]byte, 128))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Invoke(ctx, addr, req); err != nil {
			b.Fatal(err)
		}
	}
}
