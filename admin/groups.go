package admin

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// GroupConfig is a consumer group's broker-side settings (Java
// SubscriptionGroupConfig). NewGroupConfig has Java's defaults.
type GroupConfig = remoting.SubscriptionGroupConfig

// NewGroupConfig returns Java's defaults for group: consume enabled, from
// the start allowed, broadcast allowed, 1 retry queue, 16 retries.
func NewGroupConfig(group string) GroupConfig { return remoting.NewSubscriptionGroupConfig(group) }

func (a *Admin) groupRequest(gc GroupConfig) (*remoting.Command, error) {
	if err := rocketmq.ValidateGroup(gc.GroupName); err != nil {
		return nil, err
	}
	gc.GroupName = a.wrap(gc.GroupName)
	return remoting.NewRequest(remoting.UpdateAndCreateSubscriptionGroup, nil, gc.AppendJSON(nil, remoting.JSONStandard)), nil
}

// CreateGroup creates or updates a consumer group on the broker at
// brokerAddr (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP).
func (a *Admin) CreateGroup(ctx context.Context, brokerAddr string, gc GroupConfig) error {
	req, err := a.groupRequest(gc)
	if err != nil {
		return err
	}
	_, err = a.invoke(ctx, brokerAddr, req, "create group "+gc.GroupName)
	return err
}

// CreateGroupInCluster creates or updates a consumer group on every master
// broker of cluster.
func (a *Admin) CreateGroupInCluster(ctx context.Context, cluster string, gc GroupConfig) error {
	if _, err := a.groupRequest(gc); err != nil {
		return err
	}
	addrs, err := a.clusterMasters(ctx, cluster)
	if err != nil {
		return err
	}
	return each(addrs, func(addr string) error { return a.CreateGroup(ctx, addr, gc) })
}

// Groups returns the consumer group configurations of the broker at
// brokerAddr by name (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), system groups
// included; with a namespace, only those in it, without the prefix.
func (a *Admin) Groups(ctx context.Context, brokerAddr string) (map[string]GroupConfig, error) {
	resp, err := a.invoke(ctx, brokerAddr, remoting.NewRequest(remoting.GetAllSubscriptionGroupConfig, nil, nil), "group list")
	if err != nil {
		return nil, err
	}
	var w remoting.SubscriptionGroupWrapper
	if err := decode(resp, &w, "group list"); err != nil {
		return nil, err
	}
	out := make(map[string]GroupConfig, len(w.SubscriptionGroupTable))
	ns := a.cfg.client.Namespace
	for name, gc := range w.SubscriptionGroupTable {
		// The broker's own groups (CID_RMQ_SYS_TRANS, preset by 5.x) are in
		// no namespace.
		if ns != "" && mqclient.NamespaceOf(name) != ns {
			continue
		}
		gc.GroupName = a.unwrap(gc.GroupName)
		out[a.unwrap(name)] = gc
	}
	return out, nil
}

// DeleteGroup deletes a consumer group from the broker at brokerAddr
// (DELETE_SUBSCRIPTIONGROUP), and its committed offsets with cleanOffset.
// A broker accepts deleting a group it does not have; this call first
// checks that it has it and otherwise fails with an error matching
// remoting.ErrSubscriptionGroupNotExist.
func (a *Admin) DeleteGroup(ctx context.Context, brokerAddr, group string, cleanOffset bool) error {
	if err := rocketmq.ValidateGroup(group); err != nil {
		return err
	}
	groups, err := a.Groups(ctx, brokerAddr)
	if err != nil {
		return err
	}
	if _, ok := groups[group]; !ok {
		return errorf("delete group %s at %s: %w", group, brokerAddr,
			&remoting.Error{Code: remoting.SubscriptionGroupNotExist, Remark: "subscription group " + group + " does not exist"})
	}
	h := remoting.DeleteSubscriptionGroupRequestHeader{GroupName: a.wrap(group), CleanOffset: cleanOffset}
	_, err = a.invoke(ctx, brokerAddr, remoting.NewRequest(remoting.DeleteSubscriptionGroup, h.AppendExt(nil), nil), "delete group "+group)
	return err
}

// DeleteGroupInCluster deletes a consumer group from every master broker of
// cluster that has it; it fails with remoting.ErrSubscriptionGroupNotExist
// when none has it.
func (a *Admin) DeleteGroupInCluster(ctx context.Context, cluster, group string, cleanOffset bool) error {
	if err := rocketmq.ValidateGroup(group); err != nil {
		return err
	}
	addrs, err := a.clusterMasters(ctx, cluster)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	deleted := 0
	err = each(addrs, func(addr string) error {
		err := a.DeleteGroup(ctx, addr, group, cleanOffset)
		if errors.Is(err, remoting.ErrSubscriptionGroupNotExist) {
			return nil
		}
		if err == nil {
			mu.Lock()
			deleted++
			mu.Unlock()
		}
		return err
	})
	if err != nil {
		return err
	}
	if deleted == 0 {
		return errorf("delete group %s: no broker of cluster %q has it: %w", group, cluster, remoting.ErrSubscriptionGroupNotExist)
	}
	return nil
}

// groupBrokers returns the master brokers that serve group (docs/PROTOCOL.md
// §8.14): those of its retry topic's route as Java does; before any member
// created that, those of topic's route, or every master the NameServer
// knows when topic is empty.
func (a *Admin) groupBrokers(ctx context.Context, group, topic string) ([]string, error) {
	r, err := a.cli.FetchRoute(ctx, rocketmq.RetryTopic(a.wrap(group)))
	if err != nil && errors.Is(err, rocketmq.ErrNoRoute) {
		if topic == "" {
			return a.allMasters(ctx)
		}
		r, err = a.cli.FetchRoute(ctx, a.wrap(topic))
	}
	if err != nil {
		return nil, errorf("group %s: %w", group, err)
	}
	addrs := routeMasters(r)
	if len(addrs) == 0 {
		return nil, errorf("group %s: %w", group, ErrNoBroker)
	}
	return addrs, nil
}

// ConsumerConnection returns the live members of group, their
// subscriptions and consume mode, from a broker that serves the group
// (GET_CONSUMER_CONNECTION_LIST). A group without live members gives an
// error matching remoting.ErrConsumerNotOnline.
func (a *Admin) ConsumerConnection(ctx context.Context, group string) (*remoting.ConsumerConnection, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	addrs, err := a.groupBrokers(ctx, group, "")
	if err != nil {
		return nil, err
	}
	h := remoting.GetConsumerConnectionListRequestHeader{ConsumerGroup: a.wrap(group)}
	var errs []error
	for _, addr := range addrs {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumerConnectionList, h.AppendExt(nil), nil), "connections of group "+group)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cc := new(remoting.ConsumerConnection)
		if err := decode(resp, cc, "connections of group "+group); err != nil {
			return nil, err
		}
		if len(cc.ConnectionSet) == 0 {
			return nil, errorf("group %s has no live member: %w", group, remoting.ErrConsumerNotOnline)
		}
		if a.cfg.client.Namespace != "" {
			subs := make(map[string]remoting.SubscriptionData, len(cc.SubscriptionTable))
			for t, sd := range cc.SubscriptionTable {
				sd.Topic = a.unwrap(sd.Topic)
				subs[a.unwrap(t)] = sd
			}
			cc.SubscriptionTable = subs
		}
		return cc, nil
	}
	return nil, errorf("%w", errors.Join(errs...))
}

// ConsumeStats is a group's progress: per queue the broker's max offset,
// the committed offset and the store time of the last consumed message.
type ConsumeStats struct {
	Queues     map[rocketmq.MessageQueue]remoting.OffsetWrapper
	ConsumeTPS float64
}

// Lag returns the messages not yet consumed, summed over every queue
// (Java computeTotalDiff: broker offset minus committed offset).
func (s *ConsumeStats) Lag() int64 {
	var n int64
	for _, w := range s.Queues {
		n += w.BrokerOffset - w.ConsumerOffset
	}
	return n
}

// ConsumeStats returns the progress of group on topic, or on every topic it
// has offsets for when topic is empty, from every master broker that
// serves the group (GET_CONSUME_STATS, Java examineConsumeStats).
func (a *Admin) ConsumeStats(ctx context.Context, group, topic string) (*ConsumeStats, error) {
	if err := rocketmq.ValidateGroup(group); err != nil {
		return nil, err
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	addrs, err := a.groupBrokers(ctx, group, topic)
	if err != nil {
		return nil, err
	}
	h := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: a.wrap(group)}
	if topic != "" {
		h.Topic = remoting.Ptr(a.wrap(topic))
	}
	out := &ConsumeStats{Queues: make(map[rocketmq.MessageQueue]remoting.OffsetWrapper)}
	var mu sync.Mutex
	err = each(addrs, func(addr string) error {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumeStats, h.AppendExt(nil), nil), "consume stats of group "+group)
		if err != nil {
			return err
		}
		var cs remoting.ConsumeStats
		if err := decode(resp, &cs, "consume stats of group "+group); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for mq, w := range cs.OffsetTable {
			out.Queues[a.unwrapMQ(mq)] = w
		}
		out.ConsumeTPS += cs.ConsumeTps
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResetOffsetByTime moves the committed offsets of group on topic to the
// first message stored at or after t, on every queue of topic's route; a
// zero t means the end of each queue. Without force a queue whose
// committed offset is already before that point keeps it. Live members
// are told by their brokers (INVOKE_BROKER_TO_RESET_OFFSET); when a broker
// answers that the group has none online, the offsets are searched and
// committed from here (Java resetOffsetByTimestampOld, docs/PROTOCOL.md
// §8.14). It returns the
// new offset of every queue.
func (a *Admin) ResetOffsetByTime(ctx context.Context, group, topic string, t time.Time, force bool) (map[rocketmq.MessageQueue]int64, error) {
	if err := rocketmq.ValidateGroup(group); err != nil {
		return nil, err
	}
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return nil, err
	}
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	ts := int64(-1)
	if !t.IsZero() {
		ts = t.UnixMilli()
	}
	out := make(map[rocketmq.MessageQueue]int64)
	var mu sync.Mutex
	err = each(routeMasters(r), func(addr string) error {
		table, err := a.resetAt(ctx, addr, group, topic, ts, force)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for mq, off := range table {
			out[a.unwrapMQ(mq)] = off
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (a *Admin) resetAt(ctx context.Context, addr, group, topic string, ts int64, force bool) (map[rocketmq.MessageQueue]int64, error) {
	h := remoting.ResetOffsetRequestHeader{Topic: a.wrap(topic), Group: a.wrap(group), Timestamp: ts, IsForce: force}
	what := "reset offsets of group " + group + " on " + topic
	resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.InvokeBrokerToResetOffset, h.AppendExt(nil), nil), what)
	if errors.Is(err, remoting.ErrConsumerNotOnline) {
		return a.resetOffline(ctx, addr, group, topic, ts, force)
	}
	if err != nil {
		return nil, err
	}
	var body remoting.ResetOffsetBody
	if err := decode(resp, &body, what); err != nil {
		return nil, err
	}
	return body.OffsetTable, nil
}

// resetOffline commits the offsets at ts of every queue the group has
// progress on at addr.
func (a *Admin) resetOffline(ctx context.Context, addr, group, topic string, ts int64, force bool) (map[rocketmq.MessageQueue]int64, error) {
	what := "reset offsets of group " + group + " on " + topic
	sh := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: a.wrap(group), Topic: remoting.Ptr(a.wrap(topic))}
	resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumeStats, sh.AppendExt(nil), nil), what)
	if err != nil {
		return nil, err
	}
	var cs remoting.ConsumeStats
	if err := decode(resp, &cs, what); err != nil {
		return nil, err
	}
	out := make(map[rocketmq.MessageQueue]int64, len(cs.OffsetTable))
	for _, mq := range slices.SortedFunc(maps.Keys(cs.OffsetTable), cmpMQ) {
		off := cs.OffsetTable[mq].BrokerOffset
		if ts >= 0 {
			q := remoting.SearchOffsetRequestHeader{Topic: mq.Topic, QueueID: int32(mq.QueueID), Timestamp: ts}
			resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.SearchOffsetByTimestamp, q.AppendExt(nil), nil), what)
			if err != nil {
				return nil, err
			}
			var oh remoting.OffsetResponseHeader
			if err := oh.FromExt(resp.Ext); err != nil {
				return nil, errorf("%s: bad response header: %w", what, err)
			}
			off = oh.Offset
		}
		if committed := cs.OffsetTable[mq].ConsumerOffset; !force && committed < off {
			off = committed
		}
		u := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: a.wrap(group), Topic: mq.Topic, QueueID: int32(mq.QueueID), CommitOffset: off}
		if _, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.UpdateConsumerOffset, u.AppendExt(nil), nil), what); err != nil {
			return nil, err
		}
		out[mq] = off
	}
	return out, nil
}

// ConsumerRunningInfo asks the member clientID of group, through a broker it
// is connected to, for its running state: properties, subscriptions and
// every process queue (GET_CONSUMER_RUNNING_INFO).
func (a *Admin) ConsumerRunningInfo(ctx context.Context, group, clientID string) (*remoting.ConsumerRunningInfo, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	addrs, err := a.groupBrokers(ctx, group, "")
	if err != nil {
		return nil, err
	}
	h := remoting.GetConsumerRunningInfoRequestHeader{ConsumerGroup: a.wrap(group), ClientID: clientID}
	what := "running info of " + clientID + " in group " + group
	var errs []error
	for _, addr := range addrs {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumerRunningInfo, h.AppendExt(nil), nil), what)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		info := new(remoting.ConsumerRunningInfo)
		if err := decode(resp, info, what); err != nil {
			return nil, err
		}
		return info, nil
	}
	return nil, errorf("%w", errors.Join(errs...))
}

// TopicConsumers returns the groups that consume topic: those with a live
// member subscribed to it and those with a committed offset of it, over
// every master of its route (QUERY_TOPIC_CONSUME_BY_WHO; Java asks the
// first broker of the route only). Sorted; with a namespace, only those in
// it, without the prefix. A 5.x broker also lists the topic's own name once
// a member subscribed to it (its ConsumerManager records the topic where the
// group belongs): that name is left out unless a group of that name is live
// on the broker that listed it (docs/INTEROP.md).
func (a *Admin) TopicConsumers(ctx context.Context, topic string) ([]string, error) {
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	addrs := routeMasters(r)
	if len(addrs) == 0 {
		return nil, errorf("topic %q: %w", topic, ErrNoBroker)
	}
	h := remoting.QueryTopicConsumeByWhoRequestHeader{Topic: a.wrap(topic)}
	what := "consumers of topic " + topic
	var mu sync.Mutex
	var out []string
	err = each(addrs, func(addr string) error {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.QueryTopicConsumeByWho, h.AppendExt(nil), nil), what)
		if err != nil {
			return err
		}
		var gl remoting.GroupList
		if err := decode(resp, &gl, what); err != nil {
			return err
		}
		phantom := slices.Contains(gl.GroupList, h.Topic) && !a.liveAt(ctx, addr, h.Topic)
		mu.Lock()
		defer mu.Unlock()
		for _, g := range gl.GroupList {
			if ns := a.cfg.client.Namespace; ns != "" && a.wrap(a.unwrap(g)) != g {
				continue
			}
			if phantom && g == h.Topic {
				continue
			}
			out = append(out, a.unwrap(g))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// liveAt reports whether wireGroup has a live member at addr.
func (a *Admin) liveAt(ctx context.Context, addr, wireGroup string) bool {
	h := remoting.GetConsumerConnectionListRequestHeader{ConsumerGroup: wireGroup}
	resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumerConnectionList, h.AppendExt(nil), nil), "connections of group "+wireGroup)
	if err != nil {
		return false
	}
	var cc remoting.ConsumerConnection
	return decode(resp, &cc, "connections of group "+wireGroup) == nil && len(cc.ConnectionSet) > 0
}

// ConsumerStatus asks every live member of group, through each master of
// topic's route, for the offsets it holds of topic's queues
// (INVOKE_BROKER_TO_GET_CONSUMER_STATUS, docs/PROTOCOL.md §9.15): client id
// → queue → offset. clientID empty asks every member. Members that do not
// answer are left out by the broker.
func (a *Admin) ConsumerStatus(ctx context.Context, group, topic, clientID string) (map[string]map[rocketmq.MessageQueue]int64, error) {
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	h := remoting.GetConsumerStatusRequestHeader{Topic: a.wrap(topic), Group: a.wrap(group)}
	if clientID != "" {
		h.ClientAddr = &clientID
	}
	what := "status of group " + group + " on " + topic
	out := make(map[string]map[rocketmq.MessageQueue]int64)
	var mu sync.Mutex
	err = each(routeMasters(r), func(addr string) error {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.InvokeBrokerToGetConsumerStatus, h.AppendExt(nil), nil), what)
		if err != nil {
			return err
		}
		var body remoting.GetConsumerStatusBody
		if err := decode(resp, &body, what); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for id, table := range body.ConsumerTable {
			if out[id] == nil {
				out[id] = make(map[rocketmq.MessageQueue]int64, len(table))
			}
			for mq, off := range table {
				out[id][a.unwrapMQ(mq)] = off
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ProducerConnection returns the live producers of a producer group as a
// broker of topic's route records them (GET_PRODUCER_CONNECTION_LIST,
// Java examineProducerConnectionInfo). A group without live producers
// gives an error matching remoting.ErrSystemError, as the broker answers.
func (a *Admin) ProducerConnection(ctx context.Context, group, topic string) ([]remoting.Connection, error) {
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	addrs := routeMasters(r)
	if len(addrs) == 0 {
		return nil, errorf("topic %q: %w", topic, ErrNoBroker)
	}
	h := remoting.GetProducerConnectionListRequestHeader{ProducerGroup: a.wrap(group)}
	what := "connections of producer group " + group
	resp, err := a.invoke(ctx, addrs[0], remoting.NewRequest(remoting.GetProducerConnectionList, h.AppendExt(nil), nil), what)
	if err != nil {
		return nil, err
	}
	var pc remoting.ProducerConnection
	if err := decode(resp, &pc, what); err != nil {
		return nil, err
	}
	return pc.ConnectionSet, nil
}
