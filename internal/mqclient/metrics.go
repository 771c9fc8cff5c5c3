package mqclient

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/metrics"
)

// measuredDialer returns dial (or the transport's default, a net.Dialer
// with 30 s keep-alive) reporting connection events to h; dial itself
// when h is nil.
func measuredDialer(dial transport.DialFunc, h metrics.Hook) transport.DialFunc {
	if dial == nil {
		d := &net.Dialer{KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	if h == nil {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			h.Conn(addr, metrics.DialFailed)
			return nil, err
		}
		h.Conn(addr, metrics.Connected)
		return &measuredConn{Conn: c, addr: addr, h: h}, nil
	}
}

// measuredConn reports its first Close.
type measuredConn struct {
	net.Conn
	addr string
	h    metrics.Hook
	once sync.Once
}

func (c *measuredConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.h.Conn(c.addr, metrics.Closed) })
	return err
}
