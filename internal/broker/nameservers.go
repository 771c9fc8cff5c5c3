package broker

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// registerTimeout is Java's registerBrokerTimeoutMills.
const registerTimeout = 24 * time.Second

// registrar keeps registrations with the NameServers from piling up: one
// REGISTER_BROKER round is in flight at a time, and topic changes during it
// ask for exactly one more round, which then carries all of them.
type registrar struct {
	send sync.Mutex // held for a whole round

	mu      sync.Mutex
	running bool // a goroutine runs coalesced rounds
	pending bool // a change arrived after the running round took its snapshot

	rounds      atomic.Int64 // rounds started
	inFlight    atomic.Int32
	maxInFlight atomic.Int32
}

// registerAll sends a full REGISTER_BROKER to every NameServer (docs/PROTOCOL.md
// §9.12), one goroutine per NameServer so a dead one does not delay others.
// Rounds never overlap; the topic table is snapshotted and encoded once per
// round and the same body goes to every NameServer.
func (b *Broker) registerAll(ctx context.Context) {
	if len(b.cfg.NameServers) == 0 {
		return
	}
	b.reg.send.Lock()
	defer b.reg.send.Unlock()
	if ctx.Err() != nil {
		return
	}
	b.reg.rounds.Inc()
	n := b.reg.inFlight.Inc()
	defer b.reg.inFlight.Dec()
	for {
		m := b.reg.maxInFlight.Load()
		if n <= m || b.reg.maxInFlight.CAS(m, n) {
			break
		}
	}
	body, compressed := b.registerBody()
	h := remoting.RegisterBrokerRequestHeader{
		BrokerName:   b.cfg.BrokerName,
		BrokerAddr:   b.addr,
		ClusterName:  b.cfg.ClusterName,
		HAServerAddr: b.haAddr(),
		BrokerID:     b.cfg.BrokerID,
		Compressed:   compressed,
		BodyCRC32:    message.BodyCRC(body),
	}
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	done := make(chan struct{}, len(b.cfg.NameServers))
	for _, ns := range b.cfg.NameServers {
		req := remoting.NewRequest(remoting.RegisterBroker, h.AppendExt(nil), body)
		err := b.nsCli.InvokeAsync(ctx, ns, req, func(resp *remoting.Command, err error) {
			if err == nil {
				err = remoting.ResponseError(resp)
				b.onRegistered(resp)
			}
			if err != nil {
				b.log.Warn("register with name server", "namesrv", ns, "err", err)
			} else {
				b.log.Debug("registered with name server", "namesrv", ns)
			}
			done <- struct{}{}
		})
		if err != nil {
			b.log.Warn("register with name server", "namesrv", ns, "err", err)
			done <- struct{}{}
		}
	}
	for range b.cfg.NameServers {
		<-done
	}
}

// registerBody encodes the topic table for REGISTER_BROKER: JSON, or with
// CompressedRegister the deflated form Java's BrokerOuterAPI sends when
// compressedRegister is on (RegisterBrokerBody.encode(true)), which
// NameServers read when the header's compressed flag is set.
func (b *Broker) registerBody() (body []byte, compressed bool) {
	w := b.topics.wrapper()
	if perm := b.brokerPermission(); perm&rocketmq.PermWrite == 0 || perm&rocketmq.PermRead == 0 {
		for k, tc := range w.TopicConfigTable {
			tc.Perm &= perm
			w.TopicConfigTable[k] = tc
		}
	}
	rb := remoting.RegisterBrokerBody{TopicConfigSerializeWrapper: w}
	if b.cfg.CompressedRegister {
		body, err := rb.AppendCompressed(nil, remoting.DefaultVersion)
		if err == nil {
			return body, true
		}
		b.log.Warn("register with name server: compress body, sending JSON", "err", err)
	}
	return rb.AppendJSON(nil, remoting.JSONFastjson), false
}

// registerAsync re-registers after a topic change without blocking the
// caller (a send that auto-created a topic). A change while a round runs
// marks one more round; any number of changes meanwhile share it.
func (b *Broker) registerAsync() {
	r := &b.reg
	r.mu.Lock()
	if r.running {
		r.pending = true
		r.mu.Unlock()
		return
	}
	r.running = true
	r.mu.Unlock()
	b.wgMu.Lock()
	defer b.wgMu.Unlock()
	if !b.running {
		r.mu.Lock()
		r.running, r.pending = false, false
		r.mu.Unlock()
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			b.registerAll(b.ctx)
			r.mu.Lock()
			if !r.pending || b.ctx.Err() != nil {
				r.running, r.pending = false, false
				r.mu.Unlock()
				return
			}
			r.pending = false
			r.mu.Unlock()
		}
	}()
}

// unregisterAll sends UNREGISTER_BROKER to every NameServer.
func (b *Broker) unregisterAll(ctx context.Context) {
	h := remoting.UnregisterBrokerRequestHeader{
		BrokerName:  b.cfg.BrokerName,
		BrokerAddr:  b.addr,
		ClusterName: b.cfg.ClusterName,
		BrokerID:    b.cfg.BrokerID,
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, ns := range b.cfg.NameServers {
		req := remoting.NewRequest(remoting.UnregisterBroker, h.AppendExt(nil), nil)
		if _, err := b.nsCli.Invoke(ctx, ns, req); err != nil {
			b.log.Warn("unregister from name server", "namesrv", ns, "err", err)
		}
	}
}

// haAddr is ip:(listenPort+1), what Java publishes as haServerAddr.
func (b *Broker) haAddr() string {
	host, port, err := net.SplitHostPort(b.addr)
	if b.cfg.BrokerIP2 != "" && err == nil {
		host = b.cfg.BrokerIP2
	}
	if b.ha.addr != "" {
		if _, p, err := net.SplitHostPort(b.ha.addr); err == nil {
			return net.JoinHostPort(host, p)
		}
	}
	if err != nil {
		return b.addr
	}
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p+1))
}
