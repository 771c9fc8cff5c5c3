package server

import (
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// pipeClient multiplexes many callers over one raw connection: callers
// queue encoded frames for one writer goroutine and wait for the reader
// goroutine to route their response by opaque.
type pipeClient struct {
	nc   net.Conn
	next atomic.Int32

	mu    sync.Mutex
	out   []byte
	kick  chan struct{}
	done  chan struct{}
	dead  chan struct{} // closed when the read loop ends
	wg    sync.WaitGroup
	werr  atomic.Value
	pmu   sync.Mutex
	calls map[int32]chan *remoting.Command
}

func newPipeClient(tb testing.TB, addr string) *pipeClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	p := &pipeClient{nc: nc, kick: make(chan struct{}, 1), done: make(chan struct{}), dead: make(chan struct{}), calls: make(map[int32]chan *remoting.Command)}
	p.wg.Add(2)
	go p.writeLoop()
	go p.readLoop()
	tb.Cleanup(func() {
		close(p.done)
		nc.Close()
		p.wg.Wait()
	})
	return p
}

func (p *pipeClient) writeLoop() {
	defer p.wg.Done()
	var buf []byte
	for {
		select {
		case <-p.kick:
		case <-p.done:
			return
		}
		p.mu.Lock()
		buf, p.out = p.out, buf[:0]
		p.mu.Unlock()
		if _, err := p.nc.Write(buf); err != nil {
			p.werr.Store(err)
			return
		}
	}
}

func (p *pipeClient) readLoop() {
	defer p.wg.Done()
	defer close(p.dead)
	store := make([]byte, 0, 256<<10)
	buf := store
	for {
		for {
			cmd, n, err := remoting.DecodeFrame(buf, 0)
			if errors.Is(err, remoting.ErrIncomplete) {
				break
			}
			if err != nil {
				return
			}
			buf = buf[n:]
			p.pmu.Lock()
			ch := p.calls[cmd.Opaque]
			delete(p.calls, cmd.Opaque)
			p.pmu.Unlock()
			if ch != nil {
				ch <- cmd
			}
		}
		if cap(buf)-len(buf) < 64<<10 {
			// Move the partial frame to the front of a (big enough) buffer.
			nb := store
			if len(buf)+64<<10 > cap(nb) {
				nb = make([]byte, 0, 2*len(buf)+64<<10)
				store = nb
			}
			buf = append(nb[:0], buf...)
		}
		n, err := p.nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return
		}
	}
}

func (p *pipeClient) call(r *remoting.Command, ch chan *remoting.Command) (*remoting.Command, error) {
	r.Opaque = p.next.Add(1)
	p.pmu.Lock()
	p.calls[r.Opaque] = ch
	p.pmu.Unlock()
	p.mu.Lock()
	out, err := r.AppendFrame(p.out)
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	p.out = out
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-p.dead:
		if err, _ := p.werr.Load().(error); err != nil {
			return nil, err
		}
		return nil, errors.New("connection lost")
	}
}

// BenchmarkEchoParallel: 64 callers pipelining over one connection to an
// echo handler. Allocations include the test client's.
func BenchmarkEchoParallel(b *testing.B) {
	const callers = 64
	cases := []struct {
		name string
		st   remoting.SerializeType
		body int
	}{
		{"json-256B", remoting.SerializeJSON, 256},
		{"rocketmq-256B", remoting.SerializeRocketMQ, 256},
		{"rocketmq-4KiB", remoting.SerializeRocketMQ, 4 << 10},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			addr := echoServer(b, Config{})
			p := newPipeClient(b, addr)
			body := []byte(strings.Repeat("b", bc.body))
			ext := remoting.ExtFields{
				{Key: "producerGroup", Value: "bench-group"}, {Key: "topic", Value: "BenchTopic"},
				{Key: "queueId", Value: "3"}, {Key: "sysFlag", Value: "0"}, {Key: "bornTimestamp", Value: "1700000000000"},
			}
			var n atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			b.SetBytes(int64(bc.body))
			b.ReportAllocs()
			b.ResetTimer()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ch := make(chan *remoting.Command, 1)
					r := &remoting.Command{Code: codeEcho, Version: remoting.DefaultVersion, Serialize: bc.st, Ext: ext, Body: body}
					for n.Add(1) <= int64(b.N) {
						resp, err := p.call(r, ch)
						if err != nil {
							failed.Store(err)
							return
						}
						if len(resp.Body) != len(body) {
							failed.Store(errors.New("short body"))
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
		})
	}
}
