package broker

import (
	"net"
	"strconv"
)

// startVIP opens the VIP channel (fastListenPort) beside the broker's
// port, as a Java broker does: Java slaves fetch their master's topic table
// (GET_ALL_TOPIC_CONFIG) through it. Failing to listen is logged, not
// fatal: only that fetch needs it.
func (b *Broker) startVIP() {
	if !b.cfg.VIPChannel {
		return
	}
	host, port, err := net.SplitHostPort(b.srv.Addr())
	if err != nil {
		return
	}
	p := b.cfg.FastListenPort
	if p <= 0 {
		n, _ := strconv.Atoi(port)
		p = n - 2
	}
	addr := net.JoinHostPort(host, strconv.Itoa(p))
	if p <= 0 {
		b.log.Warn("no VIP channel: no port below the listen port", "listen", b.srv.Addr())
		return
	}
	if _, err := b.srv.ListenAlso(addr); err != nil {
		b.log.Warn("no VIP channel", "addr", addr, "err", err)
	}
}
