package rmqtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// topicWait bounds CreateTopic when ctx has no deadline.
const topicWait = 30 * time.Second

// TopicOption configures CreateTopic.
type TopicOption func(*topicConfig)

type topicConfig struct {
	perm    int32
	order   bool
	brokers []string
}

// TopicPerm sets the topic's permission bits (4 read, 2 write). Default 6.
func TopicPerm(perm int32) TopicOption { return func(c *topicConfig) { c.perm = perm } }

// TopicOrder marks the topic as ordered.
func TopicOrder() TopicOption { return func(c *topicConfig) { c.order = true } }

// TopicOnBrokers creates the topic on the named brokers only. Default:
// every master the NameServer knows.
func TopicOnBrokers(names ...string) TopicOption {
	return func(c *topicConfig) { c.brokers = append(c.brokers, names...) }
}

// CreateTopic creates topic with queues read and write queues on the
// cluster's brokers and returns once the NameServer routes it to all of
// them, so a client started afterwards finds the route.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, queues int, opts ...TopicOption) error {
	return CreateTopic(ctx, c.NameServerAddr(), topic, queues, opts...)
}

// CreateTopic is Cluster.CreateTopic for any cluster reachable at the
// NameServer address nameServer, such as an external RocketMQ: it sends
// UPDATE_AND_CREATE_TOPIC (17) to every master the NameServer lists, then
// polls GET_ROUTEINFO_BY_TOPIC (105) until every one of them is in the
// route with the requested queue counts. Brokers register topics with the
// NameServer asynchronously, so without the wait a route lookup right after
// creation can fail with TOPIC_NOT_EXIST.
func CreateTopic(ctx context.Context, nameServer, topic string, queues int, opts ...TopicOption) error {
	cfg := topicConfig{perm: 6}
	for _, o := range opts {
		o(&cfg)
	}
	if queues < 1 {
		return fmt.Errorf("rocketmq: rmqtest: topic %s needs at least one queue, got %d", topic, queues)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, topicWait)
		defer cancel()
	}
	cli, err := transport.New()
	if err != nil {
		return err
	}
	defer cli.Close()
	masters, err := masterAddrs(ctx, cli, nameServer)
	if err != nil {
		return err
	}
	if len(cfg.brokers) > 0 {
		chosen := make(map[string]string, len(cfg.brokers))
		for _, name := range cfg.brokers {
			addr, ok := masters[name]
			if !ok {
				return fmt.Errorf("%w: %q has no master at %s", ErrUnknownBroker, name, nameServer)
			}
			chosen[name] = addr
		}
		masters = chosen
	}
	h := remoting.CreateTopicRequestHeader{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: int32(queues),
		WriteQueueNums: int32(queues), Perm: cfg.perm, TopicFilterType: "SINGLE_TAG", Order: cfg.order}
	for name, addr := range masters {
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.UpdateAndCreateTopic, h.AppendExt(nil), nil))
		if err == nil {
			err = remoting.ResponseError(resp)
		}
		if err != nil {
			return fmt.Errorf("rocketmq: rmqtest: create topic %s on %s: %w", topic, name, err)
		}
	}
	for pause := time.Millisecond; ; {
		missing, err := routeMissing(ctx, cli, nameServer, topic, queues, masters)
		if err == nil && len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("brokers %v not in it", missing)
			}
			return fmt.Errorf("rocketmq: rmqtest: route of topic %s: %w (%w)", topic, err, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// masterAddrs asks the NameServer for every broker's master address.
func masterAddrs(ctx context.Context, cli *transport.Client, nameServer string) (map[string]string, error) {
	resp, err := cli.Invoke(ctx, nameServer, remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return nil, fmt.Errorf("rocketmq: rmqtest: cluster info from %s: %w", nameServer, err)
	}
	var ci remoting.ClusterInfo
	if err := ci.DecodeJSON(resp.Body); err != nil {
		return nil, fmt.Errorf("rocketmq: rmqtest: cluster info from %s: %w", nameServer, err)
	}
	out := make(map[string]string)
	for name, bd := range ci.BrokerAddrTable {
		if addr, ok := bd.BrokerAddrs[0]; ok {
			out[name] = addr
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rocketmq: rmqtest: no master broker registered at %s", nameServer)
	}
	return out, nil
}

// routeMissing lists the brokers of want that the route of topic does not
// yet show with queues read and write queues.
func routeMissing(ctx context.Context, cli *transport.Client, nameServer, topic string, queues int, want map[string]string) ([]string, error) {
	h := remoting.GetRouteInfoRequestHeader{Topic: topic}
	resp, err := cli.Invoke(ctx, nameServer, remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return nil, err
	}
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(resp.Body); err != nil {
		return nil, err
	}
	var missing []string
	for name := range want {
		if !slices.ContainsFunc(rd.QueueDatas, func(q remoting.QueueData) bool {
			return q.BrokerName == name && int(q.ReadQueueNums) == queues && int(q.WriteQueueNums) == queues
		}) {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing, nil
}
