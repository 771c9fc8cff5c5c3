package broker

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// registerTimeout is Java's registerBrokerTimeoutMills.
const registerTimeout = 24 * time.Second

// registerAll sends a full REGISTER_BROKER to every NameServer (docs/PROTOCOL.md
// §9.12), one goroutine per NameServer so a dead one does not delay others.
func (b *Broker) registerAll(ctx context.Context) {
	if len(b.cfg.NameServers) == 0 {
		return
	}
	w := b.topics.wrapper()
	if b.cfg.BrokerPermission&rocketmq.PermWrite == 0 || b.cfg.BrokerPermission&rocketmq.PermRead == 0 {
		for k, tc := range w.TopicConfigTable {
			tc.Perm &= b.cfg.BrokerPermission
			w.TopicConfigTable[k] = tc
		}
	}
	body := (&remoting.RegisterBrokerBody{TopicConfigSerializeWrapper: w}).AppendJSON(nil, remoting.JSONFastjson)
	h := remoting.RegisterBrokerRequestHeader{
		BrokerName:   b.cfg.BrokerName,
		BrokerAddr:   b.addr,
		ClusterName:  b.cfg.ClusterName,
		HAServerAddr: b.haAddr(),
		BrokerID:     b.cfg.BrokerID,
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

// registerAsync re-registers after a topic change without blocking the
// caller (a send that auto-created a topic).
func (b *Broker) registerAsync() {
	b.loop(b.registerAll)
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
	if err != nil {
		return b.addr
	}
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p+1))
}
