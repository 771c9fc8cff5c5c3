package mqclient

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Members. A Client serves producers, transaction producers, push and pull
// consumers and admin clients, each registered under its group in a table
// of its kind (Java MQClientInstance producerTable, consumerTable,
// adminExtTable; one group name may be in several tables). The Client owns
// the requests brokers send to clients and hands each to the member of the
// group it names (Java ClientRemotingProcessor). Members are called on a
// client goroutine with no lock of the Client held: registries are
// snapshotted under regMu and the calls made after.

// Producer is what the Client needs of a registered producer group.
type Producer interface {
	// CheckTransactionState answers CHECK_TRANSACTION_STATE for a half
	// message of the group (docs/PROTOCOL.md §3.10): the member checks its
	// local transaction and sends END_TRANSACTION to brokerAddr itself.
	// msg has the user's topic; its UNIQ_KEY is the transaction id. A
	// producer without transactions ignores it. It runs on the
	// connection's reader goroutine, so it must not block: it hands the
	// check on (a broker sends a whole round of checks at once).
	CheckTransactionState(ctx context.Context, brokerAddr string, msg *rocketmq.MessageExt, h *remoting.CheckTransactionStateRequestHeader)
}

// Consumer is what the Client needs of a registered consumer group, push
// or pull (Java MQConsumerInner and the consumer half of
// ClientRemotingProcessor).
type Consumer interface {
	// ConsumerData is sent in every heartbeat; its subscriptions name the
	// topics whose routes the client keeps fresh.
	ConsumerData() remoting.ConsumerData
	// SubscribeQueuesChanged is called when the readable queues of a
	// subscribed topic change.
	SubscribeQueuesChanged(topic string, queues []rocketmq.MessageQueue)
	// RebalanceSoon asks for a rebalance now rather than at the next
	// period (NOTIFY_CONSUMER_IDS_CHANGED, §3.13). It must not block.
	RebalanceSoon()
	// RunningInfo answers GET_CONSUMER_RUNNING_INFO (admin tools).
	RunningInfo() *remoting.ConsumerRunningInfo
	// ConsumeDirectly hands msg, from brokerName, to the listener and
	// reports the outcome (CONSUME_MESSAGE_DIRECTLY, admin tools).
	ConsumeDirectly(ctx context.Context, msg *rocketmq.MessageExt, brokerName string) *remoting.ConsumeMessageDirectlyResult
	// ResetOffset moves the consume offsets of topic's queues to offsets
	// (RESET_CONSUMER_CLIENT_OFFSET, sent when an admin resets offsets).
	ResetOffset(topic string, offsets map[rocketmq.MessageQueue]int64)
	// Offsets returns the consume offsets of topic's queues held by the
	// member (GET_CONSUMER_STATUS_FROM_CLIENT).
	Offsets(topic string) map[rocketmq.MessageQueue]int64
}

// RegisterProducer adds a producer group to the heartbeats; p answers its
// transaction checks (nil: the group has none and checks are dropped).
func (c *Client) RegisterProducer(group string, p Producer) error {
	return register(c, c.producers, "producer", group, p)
}

// RegisterConsumer adds a consumer group; its subscriptions join the route
// refresh and its data the heartbeats, and server requests naming the
// group go to cons.
func (c *Client) RegisterConsumer(group string, cons Consumer) error {
	return register(c, c.consumers, "consumer", group, cons)
}

// RegisterAdmin adds an admin client's group. Admin clients send no
// heartbeats and receive no server requests; the registry keeps two admin
// clients of one group from sharing a Client by mistake.
func (c *Client) RegisterAdmin(group string) error {
	return register(c, c.admins, "admin", group, struct{}{})
}

// register adds m to table, one kind's registry, under group.
func register[M any](c *Client, table map[string]M, kind, group string, m M) error {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	if _, ok := table[group]; ok {
		return fmt.Errorf("%w: %s group %q", ErrGroupTaken, kind, group)
	}
	table[group] = m
	return nil
}

// UnregisterProducer removes a producer group and sends UNREGISTER_CLIENT
// for it to every known broker, bounded by ctx.
func (c *Client) UnregisterProducer(ctx context.Context, group string) {
	c.regMu.Lock()
	delete(c.producers, group)
	c.regMu.Unlock()
	c.unregister(ctx, &remoting.UnregisterClientRequestHeader{ClientID: c.id, ProducerGroup: &group})
}

// UnregisterConsumer removes a consumer group and sends UNREGISTER_CLIENT
// for it to every known broker, bounded by ctx.
func (c *Client) UnregisterConsumer(ctx context.Context, group string) {
	c.regMu.Lock()
	delete(c.consumers, group)
	c.regMu.Unlock()
	c.unregister(ctx, &remoting.UnregisterClientRequestHeader{ClientID: c.id, ConsumerGroup: &group})
}

// UnregisterAdmin removes an admin client's group.
func (c *Client) UnregisterAdmin(group string) {
	c.regMu.Lock()
	delete(c.admins, group)
	c.regMu.Unlock()
}

// members is a snapshot of the registry, taken under regMu and used
// without it.
type members struct {
	producers []string // sorted
	consumers []namedConsumer
}

type namedConsumer struct {
	group string
	c     Consumer
}

func (c *Client) snapshot() members {
	c.regMu.Lock()
	m := members{producers: make([]string, 0, len(c.producers)), consumers: make([]namedConsumer, 0, len(c.consumers))}
	for g := range c.producers {
		m.producers = append(m.producers, g)
	}
	for g, cons := range c.consumers {
		m.consumers = append(m.consumers, namedConsumer{g, cons})
	}
	c.regMu.Unlock()
	sort.Strings(m.producers)
	sort.Slice(m.consumers, func(i, j int) bool { return m.consumers[i].group < m.consumers[j].group })
	return m
}

func (c *Client) consumer(group string) Consumer {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	return c.consumers[group]
}

func (c *Client) producer(group string) (Producer, bool) {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	p, ok := c.producers[group]
	return p, ok
}
