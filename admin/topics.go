package admin

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TopicConfig is what CreateTopic writes on a broker. Zero fields take
// Java's defaults (mqadmin updateTopic): 8 read and 8 write queues,
// read+write permission.
type TopicConfig struct {
	Name        string
	ReadQueues  int32
	WriteQueues int32
	// Perm is a combination of rocketmq.PermRead and rocketmq.PermWrite
	// (0: both).
	Perm int32
	// Order marks the topic ordered; the NameServer then serves its queues
	// in the orderTopicConf form.
	Order bool
}

func (a *Admin) createTopicRequest(tc TopicConfig) (*remoting.Command, error) {
	if err := rocketmq.ValidateTopic(tc.Name); err != nil {
		return nil, err
	}
	if rocketmq.IsSystemTopic(tc.Name) {
		return nil, errorf("topic %q is a system topic: %w", tc.Name, rocketmq.ErrIllegalName)
	}
	if tc.ReadQueues == 0 {
		tc.ReadQueues = 8
	}
	if tc.WriteQueues == 0 {
		tc.WriteQueues = 8
	}
	if tc.Perm == 0 {
		tc.Perm = rocketmq.PermRead | rocketmq.PermWrite
	}
	if tc.ReadQueues < 0 || tc.WriteQueues < 0 || !rocketmq.PermValid(int(tc.Perm)) {
		return nil, errorf("topic %q: bad queue numbers %d/%d or permission %d", tc.Name, tc.ReadQueues, tc.WriteQueues, tc.Perm)
	}
	h := remoting.CreateTopicRequestHeader{
		Topic:           a.wrap(tc.Name),
		DefaultTopic:    rocketmq.TopicAutoCreate,
		ReadQueueNums:   tc.ReadQueues,
		WriteQueueNums:  tc.WriteQueues,
		Perm:            tc.Perm,
		TopicFilterType: remoting.TopicFilterSingleTag,
		TopicSysFlag:    remoting.Ptr(int32(0)),
		Order:           tc.Order,
	}
	return remoting.NewRequest(remoting.UpdateAndCreateTopic, h.AppendExt(nil), nil), nil
}

// CreateTopic creates or updates a topic on the broker at brokerAddr
// (UPDATE_AND_CREATE_TOPIC). The broker registers it with the NameServers.
func (a *Admin) CreateTopic(ctx context.Context, brokerAddr string, tc TopicConfig) error {
	req, err := a.createTopicRequest(tc)
	if err != nil {
		return err
	}
	_, err = a.invoke(ctx, brokerAddr, req, "create topic "+tc.Name)
	return err
}

// CreateTopicInCluster creates or updates a topic on every master broker
// of cluster.
func (a *Admin) CreateTopicInCluster(ctx context.Context, cluster string, tc TopicConfig) error {
	if _, err := a.createTopicRequest(tc); err != nil {
		return err
	}
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return err
	}
	addrs, names := clusterMasters(ci, cluster)
	if len(addrs) == 0 {
		return errorf("cluster %q has no master broker: %w", cluster, ErrNoBroker)
	}
	if err := each(addrs, func(addr string) error { return a.CreateTopic(ctx, addr, tc) }); err != nil {
		return err
	}
	if !tc.Order {
		return nil
	}
	// mqadmin updateTopic -o: the order conf "broker:writeQueues;..." in
	// every NameServer's KV config, which a NameServer with
	// orderMessageEnable serves in routes.
	wq := tc.WriteQueues
	if wq == 0 {
		wq = 8
	}
	conf := make([]string, len(names))
	for i, n := range names {
		conf[i] = n + ":" + strconv.Itoa(int(wq))
	}
	h := remoting.PutKVConfigRequestHeader{Namespace: OrderTopicConfigNamespace, Key: a.wrap(tc.Name), Value: strings.Join(conf, ";")}
	return each(a.cli.NameServers(), func(addr string) error {
		_, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.PutKVConfig, h.AppendExt(nil), nil), "order conf of topic "+tc.Name)
		return err
	})
}

// OrderTopicConfigNamespace is the NameServer KV namespace of the order
// confs of ordered topics (Java NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG).
const OrderTopicConfigNamespace = "ORDER_TOPIC_CONFIG"

// DeleteTopic deletes a topic from every master broker of cluster, then
// the cluster's part of its route from every NameServer (Java
// deleteTopic): DELETE_TOPIC_IN_BROKER, DELETE_TOPIC_IN_NAMESRV with the
// cluster name (docs/PROTOCOL.md §8.14).
func (a *Admin) DeleteTopic(ctx context.Context, cluster, topic string) error {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return err
	}
	addrs, err := a.clusterMasters(ctx, cluster)
	if err != nil {
		return err
	}
	wire := a.wrap(topic)
	err = each(addrs, func(addr string) error {
		h := remoting.DeleteTopicRequestHeader{Topic: wire}
		_, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.DeleteTopicInBroker, h.AppendExt(nil), nil), "delete topic "+topic)
		return err
	})
	if err != nil {
		return err
	}
	return each(a.cli.NameServers(), func(addr string) error {
		h := remoting.DeleteTopicFromNamesrvRequestHeader{Topic: wire, ClusterName: &cluster}
		_, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.DeleteTopicInNamesrv, h.AppendExt(nil), nil), "delete topic "+topic)
		return err
	})
}

// Topics returns the names of every topic the NameServer knows, sorted;
// with a namespace, only those in it, without the prefix.
func (a *Admin) Topics(ctx context.Context) ([]string, error) {
	resp, err := a.invokeNameServer(ctx, func() *remoting.Command {
		return remoting.NewRequest(remoting.GetAllTopicListFromNameServer, nil, nil)
	}, "topic list")
	if err != nil {
		return nil, err
	}
	var tl remoting.TopicList
	if err := decode(resp, &tl, "topic list"); err != nil {
		return nil, err
	}
	ns := a.cfg.client.Namespace
	out := make([]string, 0, len(tl.TopicList))
	for _, t := range tl.TopicList {
		if ns != "" && a.wrap(a.unwrap(t)) != t {
			continue
		}
		out = append(out, a.unwrap(t))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// TopicRoute returns the route of topic from the NameServer. A topic the
// NameServer does not know gives an error matching rocketmq.ErrNoRoute and
// remoting.ErrTopicNotExist.
func (a *Admin) TopicRoute(ctx context.Context, topic string) (*remoting.TopicRouteData, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return a.cli.FetchRoute(ctx, a.wrap(topic))
}

// TopicStats returns, for every queue of topic on every master broker of
// its route, the min and max offsets and the time of the last message
// (GET_TOPIC_STATS_INFO, Java examineTopicStats).
func (a *Admin) TopicStats(ctx context.Context, topic string) (map[rocketmq.MessageQueue]remoting.TopicOffset, error) {
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	addrs := routeMasters(r)
	if len(addrs) == 0 {
		return nil, errorf("topic %q: %w", topic, ErrNoBroker)
	}
	tables := make([]map[rocketmq.MessageQueue]remoting.TopicOffset, len(addrs))
	err = each(addrs, func(addr string) error {
		i := slices.Index(addrs, addr)
		h := remoting.GetTopicStatsInfoRequestHeader{Topic: a.wrap(topic)}
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetTopicStatsInfo, h.AppendExt(nil), nil), "stats of topic "+topic)
		if err != nil {
			return err
		}
		var st remoting.TopicStatsTable
		if err := decode(resp, &st, "stats of topic "+topic); err != nil {
			return err
		}
		tables[i] = st.OffsetTable
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[rocketmq.MessageQueue]remoting.TopicOffset)
	for _, t := range tables {
		for mq, o := range t {
			out[a.unwrapMQ(mq)] = o
		}
	}
	return out, nil
}

// SortedQueues returns the keys of a queue table in (topic, broker,
// queue id) order.
func SortedQueues[V any](m map[rocketmq.MessageQueue]V) []rocketmq.MessageQueue {
	return slices.SortedFunc(maps.Keys(m), cmpMQ)
}

func cmpMQ(a, b rocketmq.MessageQueue) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.BrokerName, b.BrokerName), cmp.Compare(a.QueueID, b.QueueID))
}
