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
	return startRawPeer(b, rawEcho)
}

// startRawPeer serves each connection with serve on a random loopback port
// until the benchmark ends.
func startRawPeer(b *testing.B, serve func(net.Conn) error) string {
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
				serve(nc)
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

// rawBodyReply is a peer that answers every request with a response
// carrying body, like a broker answering pulls.
func rawBodyReply(body []byte) func(net.Conn) error {
	return func(nc net.Conn) error {
		defer nc.Close()
		in := make([]byte, 64<<10)
		var out []byte
		r, w := 0, 0
		for {
			n, err := nc.Read(in[w:])
			if err != nil {
				return err
			}
			w += n
			out = out[:0]
			for {
				req, size, err := remoting.DecodeFrameView(in[r:w], 0)
				if err == remoting.ErrIncomplete {
					break
				}
				if err != nil {
					return err
				}
				r += size
				resp := remoting.NewResponse(remoting.Success, "")
				resp.Opaque, resp.Serialize, resp.Body = req.Opaque, remoting.SerializeRocketMQ, body
				if out, err = resp.AppendFrame(out); err != nil {
					return err
				}
			}
			copy(in, in[r:w])
			w -= r
			r = 0
			if _, err := nc.Write(out); err != nil {
				return err
			}
		}
	}
}

// BenchmarkInvokePullBody has 4 callers over one connection receive 38 KB
// response bodies, the size of a pull of 32 messages of 1 KiB: the
// receive path of a consumer draining 4 queues of one broker.
func BenchmarkInvokePullBody(b *testing.B) {
	body := make([]byte, 38<<10)
	addr := startRawPeer(b, rawBodyReply(body))
	c, err := New(WithSerializeType(remoting.SerializeRocketMQ))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ext := remoting.ExtFields{{Key: "consumerGroup", Value: "G"}, {Key: "topic", Value: "TopicTest"}, {Key: "queueId", Value: "1"}}
	if _, err := c.Invoke(context.Background(), addr, remoting.NewRequest(remoting.PullMessage, ext, nil)); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism((4 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		req := remoting.NewRequest(remoting.PullMessage, ext, nil)
		for pb.Next() {
			resp, err := c.Invoke(ctx, addr, req)
			if err != nil {
				b.Error(err)
				return
			}
			if len(resp.Body) != len(body) {
				b.Errorf("body of %d bytes, want %d", len(resp.Body), len(body))
				return
			}
		}
	})
}
