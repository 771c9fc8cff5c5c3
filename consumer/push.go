package consumer

import (
	"context"
	"errors"

	"github.com/go-rocketmq/rocketmq"
)

// PushConsumer receives the messages of its subscriptions and hands them
// to their handlers (Java DefaultMQPushConsumer with a concurrent
// listener). Create it with NewPush, Subscribe, then Start.
type PushConsumer struct {
	cfg config
}

// NewPush checks the options and returns a consumer that is not started.
func NewPush(opts ...Option) (*PushConsumer, error) {
	cfg, err := newConfig(opts...)
	if err != nil {
		return nil, err
	}
	return &PushConsumer{cfg: cfg}, nil
}

// errNotBuilt marks the parts of the skeleton still to be written.
var errNotBuilt = errors.New("rocketmq: push consumer: not built yet")

// Subscribe adds topic with selector sel and its handler. It may be
// called before or after Start; a topic subscribed twice keeps the last
// selector and handler.
func (c *PushConsumer) Subscribe(topic string, sel Selector, h Handler) error {
	return errNotBuilt
}

// Unsubscribe removes topic: its queues stop being pulled and their
// offsets are persisted.
func (c *PushConsumer) Unsubscribe(topic string) error {
	return errNotBuilt
}

// Start connects to the NameServers, registers the group with the brokers
// and starts consuming. ctx bounds the first route lookups and heartbeat.
func (c *PushConsumer) Start(ctx context.Context) error {
	return errNotBuilt
}

// Shutdown stops pulling, waits within ctx for the handlers running now
// to return, persists the offsets of what was consumed, unregisters from
// the brokers and waits for every goroutine of the consumer. It may be
// called from a handler. Messages pulled but not consumed are delivered
// again to whoever takes their queues.
func (c *PushConsumer) Shutdown(ctx context.Context) error {
	return errNotBuilt
}

// Stats returns the consume statistics per subscribed topic.
func (c *PushConsumer) Stats() []Stats {
	return nil
}

// Group returns the consumer group, without the namespace.
func (c *PushConsumer) Group() string { return c.cfg.group }

// Assigned returns the queues this consumer pulls from now.
func (c *PushConsumer) Assigned() []rocketmq.MessageQueue {
	return nil
}
