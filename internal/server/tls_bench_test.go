package server

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// pipeClientOn is newPipeClient over an established connection.
func pipeClientOn(tb testing.TB, nc net.Conn) *pipeClient {
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

// BenchmarkTLSEcho compares invoke round trips over TLS with plain ones,
// one caller at a time and 64 pipelining over one connection, 256-byte
// bodies: plain to a server without TLS, plain to a permissive server
// (sniffed, then served directly by gnet) and TLS (bridged).
func BenchmarkTLSEcho(b *testing.B) {
	ca, srvCfg := newCA(b)
	for _, bc := range []struct {
		name    string
		cfg     Config
		dialTLS bool
	}{
		{"plain", Config{}, false},
		{"plain-permissive", Config{TLS: srvCfg}, false},
		{"tls", Config{TLS: srvCfg, TLSMode: TLSEnforcing}, true},
	} {
		for _, callers := range []int{1, 64} {
			name := bc.name + "/callers-1"
			if callers > 1 {
				name = bc.name + "/callers-64"
			}
			b.Run(name, func(b *testing.B) {
				addr := echoServer(b, bc.cfg)
				var nc net.Conn
				var err error
				if bc.dialTLS {
					nc, err = tls.Dial("tcp", addr, ca.ClientConfig())
				} else {
					nc, err = net.Dial("tcp", addr)
				}
				if err != nil {
					b.Fatal(err)
				}
				p := pipeClientOn(b, nc)
				body := []byte(strings.Repeat("b", 256))
				var n atomic.Int64
				var failed atomic.Value
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ch := make(chan *remoting.Command, 1)
						r := &remoting.Command{Code: codeEcho, Version: remoting.DefaultVersion, Serialize: remoting.SerializeRocketMQ, Body: body}
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
}
