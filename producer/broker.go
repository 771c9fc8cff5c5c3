package producer

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

//go:generate go run github.com/golang/mock/mockgen@v1.6.0 -source=broker.go -destination=mock_broker_test.go -package=producer

// brokerAPI is everything the producer needs from the client instance:
// the narrow seam the unit tests mock.
type brokerAPI interface {
	// start registers the producer group, with member answering its transaction
	// checks (nil: none), and starts the client.
	start(ctx context.Context, group string, member mqclient.Producer) error
	// shutdown unregisters the group and closes the client.
	shutdown(ctx context.Context, group string) error
	clientID() string
	// publishInfo returns the topic's publish queues (cached or fetched).
	publishInfo(ctx context.Context, topic string) (*mqclient.PublishInfo, error)
	// refreshRoute asks for a route refresh soon (after a failed send).
	refreshRoute(topic string)
	// brokerAddr returns the master address of a broker name.
	brokerAddr(brokerName string) (string, bool)
	// brokerVersion returns the version from the broker's heartbeat reply.
	brokerVersion(addr string) (int32, bool)
	// ensureHeartbeat makes sure the broker at addr has heard from this
	// client (request-reply needs it to push the reply).
	ensureHeartbeat(ctx context.Context, addr string) error
	invoke(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration) (*remoting.Command, error)
	// invokeAsync sends req and calls cb once with the outcome on a client
	// goroutine, unless it returns an error (the call was not accepted).
	invokeAsync(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration, cb func(*remoting.Command, error)) error
	invokeOneway(ctx context.Context, addr string, req *remoting.Command) error
	// readSoon has the connection to addr read now: a pushed reply is
	// expected on it.
	readSoon(addr string)
	// setReplyHandler receives pushed reply messages.
	setReplyHandler(h func(*rocketmq.MessageExt))
}

// clientAPI implements brokerAPI with an mqclient.Client.
type clientAPI struct {
	c              *mqclient.Client
	createTopicKey string
	queueNums      int
}

func newClientAPI(cfg *config) (*clientAPI, error) {
	c, err := mqclient.New(cfg.client)
	if err != nil {
		return nil, err
	}
	return &clientAPI{c: c, createTopicKey: cfg.createTopicKey, queueNums: cfg.defaultTopicQueueNums}, nil
}

func (a *clientAPI) start(ctx context.Context, group string, member mqclient.Producer) error {
	if err := a.c.RegisterProducer(group, member); err != nil {
		return err
	}
	return a.c.Start(ctx)
}

func (a *clientAPI) shutdown(ctx context.Context, group string) error {
	a.c.UnregisterProducer(ctx, group)
	return a.c.Close(ctx)
}

func (a *clientAPI) clientID() string { return a.c.ClientID() }

func (a *clientAPI) publishInfo(ctx context.Context, topic string) (*mqclient.PublishInfo, error) {
	return a.c.PublishInfo(ctx, topic, a.createTopicKey, a.queueNums)
}

func (a *clientAPI) refreshRoute(topic string) { a.c.TriggerRouteRefresh(topic) }

func (a *clientAPI) brokerAddr(name string) (string, bool) { return a.c.BrokerAddr(name) }

func (a *clientAPI) brokerVersion(addr string) (int32, bool) { return a.c.BrokerVersion(addr) }

func (a *clientAPI) ensureHeartbeat(ctx context.Context, addr string) error {
	if _, ok := a.c.BrokerVersion(addr); ok {
		return nil
	}
	return a.c.SendHeartbeat(ctx)
}

func (a *clientAPI) invoke(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration) (*remoting.Command, error) {
	return a.c.Invoke(ctx, addr, req, timeout)
}

func (a *clientAPI) invokeAsync(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration, cb func(*remoting.Command, error)) error {
	return a.c.InvokeAsync(ctx, addr, req, timeout, cb)
}

func (a *clientAPI) invokeOneway(ctx context.Context, addr string, req *remoting.Command) error {
	return a.c.InvokeOneway(ctx, addr, req)
}

func (a *clientAPI) readSoon(addr string) { a.c.ReadSoon(addr) }

func (a *clientAPI) setReplyHandler(h func(*rocketmq.MessageExt)) {
	if h == nil {
		a.c.SetReplyHandler(nil)
		return
	}
	a.c.SetReplyHandler(h)
}
