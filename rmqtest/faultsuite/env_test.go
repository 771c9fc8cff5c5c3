// Package faultsuite drives the producer and the push consumer through the
// faults rmqtest can inject: brokers stopped and crashed, SYSTEM_BUSY,
// dropped requests, connections cut while a request is under way, the
// NameServer gone, and a consumer that stops without shutting down. Each
// test states what must hold. They need the in-process cluster and skip
// when ROCKETMQ_NAMESRV points at an external one.
package faultsuite

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const wait = 30 * time.Second

// cluster starts an in-process cluster with opts, or skips on an external
// one: every test here injects faults.
func cluster(t *testing.T, opts ...rmqtest.Option) *rmqtest.Cluster {
	t.Helper()
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("injects faults into the in-process cluster (ROCKETMQ_NAMESRV is set)")
	}
	return rmqtest.StartCluster(t, opts...)
}

func name(t *testing.T, prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), time.Now().UnixNano()%1e9)
}

func newTopic(t *testing.T, c *rmqtest.Cluster, queues int) string {
	t.Helper()
	topic := name(t, "FS")
	if err := c.CreateTopic(context.Background(), topic, queues); err != nil {
		t.Fatal(err)
	}
	return topic
}

func newProducer(t *testing.T, ns string, opts ...producer.Option) *producer.Producer {
	t.Helper()
	p, err := producer.New(append([]producer.Option{producer.WithGroup(name(t, "pg")), producer.WithNameServers(ns)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	})
	return p
}

// seen records the bodies a push consumer got and how often.
type seen struct {
	mu sync.Mutex
	m  map[string]int
	by map[string]map[string]bool // member -> bodies
}

func newSeen() *seen { return &seen{m: map[string]int{}, by: map[string]map[string]bool{}} }

func (s *seen) handler(member string) consumer.Handler {
	return func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, m := range msgs {
			s.m[string(m.Body)]++
			if s.by[member] == nil {
				s.by[member] = map[string]bool{}
			}
			s.by[member][string(m.Body)] = true
		}
		return consumer.Success, nil
	}
}

func (s *seen) has(body string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[body] > 0
}

// waitAll waits until every body in want has been consumed.
func (s *seen) waitAll(t *testing.T, want []string) {
	t.Helper()
	var missing []string
	if !testutil.Poll(wait, func() bool {
		missing = missing[:0]
		for _, b := range want {
			if !s.has(b) {
				missing = append(missing, b)
			}
		}
		return len(missing) == 0
	}) {
		t.Fatalf("%d of %d acknowledged messages never consumed, e.g. %q", len(missing), len(want), missing[0])
	}
}

func startConsumer(t *testing.T, ns, group, topic string, h consumer.Handler, opts ...consumer.Option) *consumer.PushConsumer {
	t.Helper()
	c, err := consumer.NewPush(append([]consumer.Option{consumer.WithGroup(group), consumer.WithNameServers(ns),
		consumer.WithConsumeFrom(consumer.FromFirst), consumer.WithOffsetPersistInterval(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(topic, consumer.Tags("*"), h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return c
}

// sendN sends n messages with bodies prefix-0 ... and returns the bodies
// of those acknowledged.
func sendN(t *testing.T, p *producer.Producer, topic, prefix string, n int) []string {
	t.Helper()
	var acked []string
	for i := range n {
		b := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := p.Send(context.Background(), &rocketmq.Message{Topic: topic, Body: []byte(b)}); err != nil {
			t.Fatalf("send %s: %v", b, err)
		}
		acked = append(acked, b)
	}
	return acked
}

// dialer opens real connections and can cut all of them at once, or
// freeze them: a frozen connection swallows what is written to it and
// hands nothing read back, as the connections of a process that hangs.
type dialer struct {
	mu      sync.Mutex
	conns   []*faultConn
	dials   int
	frozen  bool
	refused string // dials to this address fail as refused
	// wrote is when a write to each address last reached its socket.
	wrote map[string]time.Time
}

// refuse makes dials to addr fail ("" for none).
func (d *dialer) refuse(addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = addr
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	refused := addr == d.refused
	d.mu.Unlock()
	if refused {
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	fc := &faultConn{Conn: c, d: d, addr: addr}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials++
	if d.frozen {
		c.Close()
		return nil, fmt.Errorf("dial %s: frozen", addr)
	}
	d.conns = append(d.conns, fc)
	return fc, nil
}

func (d *dialer) dialCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// cut closes every connection opened so far.
func (d *dialer) cut() {
	d.mu.Lock()
	conns := d.conns
	d.conns = nil
	d.mu.Unlock()
	for _, c := range conns {
		c.Conn.Close()
	}
}

func (d *dialer) freeze() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.frozen = true
}

func (d *dialer) isFrozen() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.frozen
}

type faultConn struct {
	net.Conn
	d    *dialer
	addr string
}

func (c *faultConn) Write(p []byte) (int, error) {
	if c.d.isFrozen() {
		return len(p), nil
	}
	n, err := c.Conn.Write(p)
	c.d.mu.Lock()
	if c.d.wrote == nil {
		c.d.wrote = map[string]time.Time{}
	}
	c.d.wrote[c.addr] = time.Now()
	c.d.mu.Unlock()
	return n, err
}

// lastWrite is when a write to addr last reached its socket; a write
// begun before freeze may end after it.
func (d *dialer) lastWrite(addr string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.wrote[addr]
}

func (c *faultConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if err != nil || !c.d.isFrozen() {
			return n, err
		}
	}
}

// nsProxy stands in front of the NameServer so that a test can take it
// away (connections refused, open ones reset) and bring it back on the
// same address.
type nsProxy struct {
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *nsProxy {
	t.Helper()
	p := &nsProxy{target: target}
	if err := p.listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	p.addr = p.ln.Addr().String()
	t.Cleanup(func() { p.down(); p.wg.Wait() })
	return p
}

func (p *nsProxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); pipe(up, c) }()
			go func() { defer p.wg.Done(); pipe(c, up) }()
		}
	}()
	return nil
}

func pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// down closes the listener and every proxied connection.
func (p *nsProxy) down() {
	p.mu.Lock()
	ln, conns := p.ln, p.conns
	p.ln, p.conns = nil, nil
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
}

// up listens again on the first address.
func (p *nsProxy) up(t *testing.T) {
	t.Helper()
	if err := p.listen(p.addr); err != nil {
		t.Fatal(err)
	}
}

// blackHole accepts connections on an address and never answers: it reads
// and discards what arrives and keeps every connection open until the
// test ends, also after it stops listening.
type blackHole struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startBlackHole listens on addr, retrying while the address is still
// being released by the server that held it.
func startBlackHole(t *testing.T, addr string) *blackHole {
	t.Helper()
	h := &blackHole{}
	testutil.WaitFor(t, 5*time.Second, "the black hole listening on "+addr, func() bool {
		ln, err := net.Listen("tcp", addr)
		h.ln = ln
		return err == nil
	})
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			nc, err := h.ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, nc)
			h.mu.Unlock()
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				_, _ = io.Copy(io.Discard, nc)
			}()
		}
	}()
	t.Cleanup(func() {
		h.stopListening()
		h.mu.Lock()
		for _, nc := range h.conns {
			nc.Close()
		}
		h.mu.Unlock()
		h.wg.Wait()
	})
	return h
}

func (h *blackHole) accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// stopListening frees the address; accepted connections stay open.
func (h *blackHole) stopListening() { h.ln.Close() }
