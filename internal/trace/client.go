package trace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// ClientSender sends trace messages from a client instance of its own,
// as Java's dispatcher does with its trace producer: same NameServers,
// credentials and TLS as the traced client, no namespace (the trace topic
// is shared by every namespace), instance name PID_CLIENT_INNER_TRACE_PRODUCER.
type ClientSender struct {
	cli   *mqclient.Client
	group string
	ids   *rocketmq.UniqIDGenerator
	next  atomic.Uint32
}

// Kind is the TraceDispatcher.Type in the trace producer's group name.
type Kind string

const (
	Produce Kind = "PRODUCE"
	Consume Kind = "CONSUME"
)

// NewClientSender makes the sender of a client configured by cfg whose
// group (without namespace) is group; Start connects it.
func NewClientSender(cfg mqclient.Config, group string, kind Kind) (*ClientSender, error) {
	cfg.Namespace = ""
	cfg.InstanceName = InstanceName
	cli, err := mqclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return &ClientSender{
		cli:   cli,
		group: GroupPrefix + "-" + group + "-" + string(kind),
		ids:   rocketmq.NewUniqIDGenerator(),
	}, nil
}

// Group returns the trace producer's group.
func (s *ClientSender) Group() string { return s.group }

// Start registers the trace producer's group and starts the client.
func (s *ClientSender) Start(ctx context.Context) error {
	if err := s.cli.RegisterProducer(s.group, nil); err != nil {
		return err
	}
	return s.cli.Start(ctx)
}

// Close unregisters the group and closes the client within ctx.
func (s *ClientSender) Close(ctx context.Context) error {
	s.cli.UnregisterProducer(ctx, s.group)
	return s.cli.Close(ctx)
}

// SendTrace sends body to topic once, on the next of its writable queues
// (Java's trace producer retries, which the next batch replaces here).
func (s *ClientSender) SendTrace(ctx context.Context, topic string, body []byte, keys []string) error {
	pi, err := s.cli.PublishInfo(ctx, topic, rocketmq.TopicAutoCreate, 4)
	if err != nil {
		return err
	}
	if len(pi.Queues) == 0 {
		return fmt.Errorf("rocketmq: no writable queue for trace topic %s", topic)
	}
	mq := pi.Queues[int(s.next.Inc()-1)%len(pi.Queues)]
	addr, ok := s.cli.BrokerAddr(mq.BrokerName)
	if !ok {
		return fmt.Errorf("rocketmq: broker %s has no master", mq.BrokerName)
	}
	props := map[string]string{
		rocketmq.PropertyWaitStoreMsgOK: "true",
		rocketmq.PropertyUniqKey:        s.ids.NewID(),
	}
	if len(keys) > 0 {
		props[rocketmq.PropertyKeys] = strings.Join(keys, rocketmq.KeySeparator)
	}
	ps := message.EncodeProperties(props)
	recon := int32(0)
	bname := mq.BrokerName
	h := remoting.SendMessageRequestHeaderV2{
		ProducerGroup:         s.group,
		Topic:                 topic,
		DefaultTopic:          rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4,
		QueueID:               int32(mq.QueueID),
		BornTimestamp:         time.Now().UnixMilli(),
		Properties:            &ps,
		ReconsumeTimes:        &recon,
		BrokerName:            &bname,
	}
	timeout := SendTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	resp, err := s.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.SendMessageV2, h.AppendExt(nil), body), timeout)
	if err != nil {
		return err
	}
	return remoting.ResponseError(resp)
}
