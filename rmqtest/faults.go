package rmqtest

import (
	"context"
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Fault changes how a broker or the NameServer treats one request code.
type Fault struct {
	// Delay holds the request this long before acting on it.
	Delay time.Duration
	// Drop swallows the request: no response is ever sent.
	Drop bool
	// Respond answers with Code and Remark instead of serving the request.
	Respond bool
	Code    int32
	Remark  string
	// Times limits how many requests are affected; 0 means until cleared.
	Times int
	// Match, when set, decides from the request (its header fields, body,
	// opaque) whether the fault applies; requests it returns false for are
	// served normally and do not count towards Times. It must not keep req.
	Match func(req *remoting.Command) bool
}

// Intercept installs f for requests with code on the named broker. It lasts
// until ClearIntercept, f.Times requests, or the broker stops.
func (c *Cluster) Intercept(brokerName string, code int32, f Fault) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.slot(brokerName)
	if err != nil {
		return err
	}
	if s.b == nil {
		return fmt.Errorf("rocketmq: rmqtest: broker %s is stopped", brokerName)
	}
	bf := broker.Fault(f)
	s.b.SetFault(code, &bf)
	return nil
}

// ClearIntercept removes the fault for code on the named broker.
func (c *Cluster) ClearIntercept(brokerName string, code int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.slot(brokerName)
	if err != nil {
		return err
	}
	if s.b != nil {
		s.b.SetFault(code, nil)
	}
	return nil
}

// InterceptNameServer installs f for requests with code on the NameServer
// (for example GET_ROUTEINFO_BY_TOPIC 105 or REGISTER_BROKER 103). It lasts
// until ClearNameServerIntercept or f.Times requests.
func (c *Cluster) InterceptNameServer(code int32, f Fault) {
	bf := broker.Fault(f)
	c.nsFault.Set(code, &bf)
}

// ClearNameServerIntercept removes the NameServer's fault for code.
func (c *Cluster) ClearNameServerIntercept(code int32) { c.nsFault.Set(code, nil) }

// interceptNameServer puts the NameServer's fault table in front of h.
func (c *Cluster) interceptNameServer(code int32, h server.Handler) server.Handler {
	return func(ctx context.Context, conn *server.Conn, req *remoting.Command) *remoting.Command {
		return c.nsFault.Serve(ctx, code, req, func() *remoting.Command { return h(ctx, conn, req) })
	}
}
