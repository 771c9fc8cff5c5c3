package mqclient

import (
	"slices"
	"strconv"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// PublishInfo is what a producer needs of a topic's route
// (Java TopicPublishInfo).
type PublishInfo struct {
	Topic string
	// Ordered is true when the route came from an orderTopicConf.
	Ordered bool
	// Queues are the writable queues of master brokers in Java's order
	// (brokers by name, then queue id).
	Queues []rocketmq.MessageQueue
	// FromDefault is true when the topic has no route yet and Queues were
	// derived from the auto-create template topic (docs/PROTOCOL.md §8.3).
	FromDefault bool
	// Route is the route the queues were derived from; read-only.
	Route *remoting.TopicRouteData
}

// WriteQueueNums returns how many write queues broker has for the topic,
// 0 when it has none (Java getQueueIdByBroker).
func (p *PublishInfo) WriteQueueNums(broker string) int {
	for i := range p.Route.QueueDatas {
		if p.Route.QueueDatas[i].BrokerName == broker {
			return int(p.Route.QueueDatas[i].WriteQueueNums)
		}
	}
	return 0
}

// PublishQueues derives the publish queue list from a route as Java's
// topicRouteData2TopicPublishInfo does (docs/PROTOCOL.md §7.3): the
// orderTopicConf when present, else, by broker name, the write queues of
// every writable QueueData whose broker has a master.
func PublishQueues(topic string, r *remoting.TopicRouteData) (queues []rocketmq.MessageQueue, ordered bool) {
	if r == nil {
		return nil, false
	}
	if r.OrderTopicConf != "" {
		for _, item := range strings.Split(r.OrderTopicConf, ";") {
			name, num, ok := strings.Cut(item, ":")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(num))
			if err != nil {
				continue
			}
			for i := 0; i < n; i++ {
				queues = append(queues, rocketmq.MessageQueue{Topic: topic, BrokerName: name, QueueID: i})
			}
		}
		return queues, true
	}
	qds := slices.Clone(r.QueueDatas)
	slices.SortStableFunc(qds, func(a, b remoting.QueueData) int { return strings.Compare(a.BrokerName, b.BrokerName) })
	for _, qd := range qds {
		if !rocketmq.PermWriteable(int(qd.Perm)) {
			continue
		}
		bd := findBroker(r, qd.BrokerName)
		if bd == nil || bd.MasterAddr() == "" {
			continue
		}
		for i := 0; i < int(qd.WriteQueueNums); i++ {
			queues = append(queues, rocketmq.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	return queues, false
}

// SubscribeQueues derives the readable queues of a route (Java
// topicRouteData2TopicSubscribeInfo), sorted in Java's MessageQueue order.
func SubscribeQueues(topic string, r *remoting.TopicRouteData) []rocketmq.MessageQueue {
	if r == nil {
		return nil
	}
	var out []rocketmq.MessageQueue
	for _, qd := range r.QueueDatas {
		if !rocketmq.PermReadable(int(qd.Perm)) {
			continue
		}
		for i := 0; i < int(qd.ReadQueueNums); i++ {
			out = append(out, rocketmq.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	slices.SortFunc(out, func(a, b rocketmq.MessageQueue) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
			return c
		}
		return a.QueueID - b.QueueID
	})
	return out
}

func findBroker(r *remoting.TopicRouteData, name string) *remoting.BrokerData {
	for i := range r.BrokerDatas {
		if r.BrokerDatas[i].BrokerName == name {
			return &r.BrokerDatas[i]
		}
	}
	return nil
}

// cloneFromDefault makes the route of a topic that does not exist yet from
// the template topic's route: every queue count becomes
// min(defaultQueueNums, readQueueNums) (docs/PROTOCOL.md §8.3).
func cloneFromDefault(def *remoting.TopicRouteData, defaultQueueNums int) *remoting.TopicRouteData {
	r := &remoting.TopicRouteData{
		OrderTopicConf:    def.OrderTopicConf,
		QueueDatas:        slices.Clone(def.QueueDatas),
		BrokerDatas:       def.BrokerDatas,
		FilterServerTable: def.FilterServerTable,
	}
	for i := range r.QueueDatas {
		n := min(int32(defaultQueueNums), r.QueueDatas[i].ReadQueueNums)
		r.QueueDatas[i].ReadQueueNums = n
		r.QueueDatas[i].WriteQueueNums = n
	}
	return r
}

// routeEqual compares two routes as Java's topicRouteDataChanged does:
// queue and broker data order-insensitively, and the order conf.
func routeEqual(a, b *remoting.TopicRouteData) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.OrderTopicConf != b.OrderTopicConf || len(a.QueueDatas) != len(b.QueueDatas) || len(a.BrokerDatas) != len(b.BrokerDatas) {
		return false
	}
	qa, qb := slices.Clone(a.QueueDatas), slices.Clone(b.QueueDatas)
	cmpQ := func(x, y remoting.QueueData) int { return strings.Compare(x.BrokerName, y.BrokerName) }
	slices.SortFunc(qa, cmpQ)
	slices.SortFunc(qb, cmpQ)
	if !slices.Equal(qa, qb) {
		return false
	}
	ba, bb := slices.Clone(a.BrokerDatas), slices.Clone(b.BrokerDatas)
	cmpB := func(x, y remoting.BrokerData) int { return strings.Compare(x.BrokerName, y.BrokerName) }
	slices.SortFunc(ba, cmpB)
	slices.SortFunc(bb, cmpB)
	for i := range ba {
		x, y := ba[i], bb[i]
		if x.BrokerName != y.BrokerName || x.Cluster != y.Cluster || len(x.BrokerAddrs) != len(y.BrokerAddrs) {
			return false
		}
		for id, addr := range x.BrokerAddrs {
			if y.BrokerAddrs[id] != addr {
				return false
			}
		}
	}
	return true
}
