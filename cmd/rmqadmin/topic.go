package main

import (
	"context"
	"flag"
	"maps"
	"slices"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
)

var topicListCmd = &command{
	name:     "topicList",
	synopsis: "List the topics the NameServer knows",
	setup: func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *app) error {
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			topics, err := adm.Topics(ctx)
			if err != nil {
				return err
			}
			return a.emit(map[string]any{"topics": topics}, func(t *table) {
				for _, topic := range topics {
					t.row(topic)
				}
			})
		}
	},
}

type routeBroker struct {
	Broker  string `json:"broker"`
	Cluster string `json:"cluster"`
	ID      int64  `json:"id"`
	Addr    string `json:"addr"`
}

type routeQueue struct {
	Broker      string `json:"broker"`
	ReadQueues  int32  `json:"readQueues"`
	WriteQueues int32  `json:"writeQueues"`
	Perm        int32  `json:"perm"`
	SysFlag     int32  `json:"topicSysFlag"`
}

var topicRouteCmd = &command{
	name:     "topicRoute",
	synopsis: "Show a topic's route: its brokers and queues",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			r, err := adm.TopicRoute(ctx, *topic)
			if err != nil {
				return err
			}
			brokers := []routeBroker{}
			for _, bd := range r.BrokerDatas {
				for _, id := range slices.Sorted(maps.Keys(bd.BrokerAddrs)) {
					brokers = append(brokers, routeBroker{bd.BrokerName, bd.Cluster, id, bd.BrokerAddrs[id]})
				}
			}
			slices.SortFunc(brokers, func(x, y routeBroker) int {
				if x.Broker != y.Broker {
					return compareStr(x.Broker, y.Broker)
				}
				return int(x.ID - y.ID)
			})
			queues := []routeQueue{}
			for _, q := range r.QueueDatas {
				queues = append(queues, routeQueue{q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm, q.TopicSysFlag})
			}
			slices.SortFunc(queues, func(x, y routeQueue) int { return compareStr(x.Broker, y.Broker) })
			doc := map[string]any{"topic": *topic, "brokers": brokers, "queues": queues, "orderTopicConf": r.OrderTopicConf}
			return a.emit(doc, func(t *table) {
				t.row("#Broker Name", "#Cluster", "#BID", "#Addr")
				for _, b := range brokers {
					t.row(b.Broker, b.Cluster, b.ID, b.Addr)
				}
				t.row("")
				t.row("#Broker Name", "#Read Queues", "#Write Queues", "#Perm", "#Sys Flag")
				for _, q := range queues {
					t.row(q.Broker, q.ReadQueues, q.WriteQueues, q.Perm, q.SysFlag)
				}
				if r.OrderTopicConf != "" {
					t.row("")
					t.row("Order Topic Conf:", r.OrderTopicConf)
				}
			})
		}
	},
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type queueStatus struct {
	Broker      string `json:"broker"`
	QueueID     int    `json:"queueId"`
	MinOffset   int64  `json:"minOffset"`
	MaxOffset   int64  `json:"maxOffset"`
	LastUpdated int64  `json:"lastUpdated"`
}

var topicStatusCmd = &command{
	name:     "topicStatus",
	synopsis: "Show the min and max offset and last update of every queue of a topic",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			stats, err := adm.TopicStats(ctx, *topic)
			if err != nil {
				return err
			}
			rows := []queueStatus{}
			for _, mq := range admin.SortedQueues(stats) {
				o := stats[mq]
				rows = append(rows, queueStatus{mq.BrokerName, mq.QueueID, o.MinOffset, o.MaxOffset, o.LastUpdateTimestamp})
			}
			return a.emit(map[string]any{"topic": *topic, "queues": rows}, func(t *table) {
				t.row("#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated")
				for _, r := range rows {
					t.row(r.Broker, r.QueueID, r.MinOffset, r.MaxOffset, humanTime(r.LastUpdated))
				}
			})
		}
	},
}

var updateTopicCmd = &command{
	name:      "updateTopic",
	synopsis:  "Create or update a topic on a broker or on every master of a cluster",
	orderFlag: true,
	setup: func(fs *flag.FlagSet) action {
		addr := fs.String("b", "", "broker `address` to create the topic on")
		cluster := fs.String("c", "", "`cluster` whose masters get the topic")
		topic := fs.String("t", "", "`topic` name")
		read := fs.Int("r", 8, "read queue `number`")
		write := fs.Int("w", 8, "write queue `number`")
		perm := fs.Int("p", rocketmq.PermRead|rocketmq.PermWrite, "`permission`: 2 write, 4 read, 6 both")
		order := boolFlag(fs, "o", false, "ordered topic, `true|false`, as mqadmin's -o (the output format is --output here)")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic); err != nil {
				return err
			}
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			if *read <= 0 || *write <= 0 || *read > 1<<16 || *write > 1<<16 {
				return usagef("-r %d -w %d: queue numbers must be between 1 and 65536", *read, *write)
			}
			if *perm != rocketmq.PermRead && *perm != rocketmq.PermWrite && *perm != rocketmq.PermRead|rocketmq.PermWrite {
				return usagef("-p %d: want 2 (write), 4 (read) or 6 (both)", *perm)
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			tc := admin.TopicConfig{Name: *topic, ReadQueues: int32(*read), WriteQueues: int32(*write), Perm: int32(*perm), Order: order.v}
			target := *addr
			if *cluster != "" {
				target = *cluster
				err = adm.CreateTopicInCluster(ctx, *cluster, tc)
			} else {
				err = adm.CreateTopic(ctx, *addr, tc)
			}
			if err != nil {
				return err
			}
			doc := map[string]any{"topic": tc.Name, "readQueues": tc.ReadQueues, "writeQueues": tc.WriteQueues, "perm": tc.Perm, "order": tc.Order}
			if *cluster != "" {
				doc["cluster"] = *cluster
			} else {
				doc["brokerAddr"] = *addr
			}
			return a.emit(doc, func(t *table) {
				t.row("create topic to " + target + " success.")
				t.row("Topic:", tc.Name)
				t.row("Read Queues:", tc.ReadQueues)
				t.row("Write Queues:", tc.WriteQueues)
				t.row("Perm:", tc.Perm)
				t.row("Order:", tc.Order)
			})
		}
	},
}

var deleteTopicCmd = &command{
	name:     "deleteTopic",
	synopsis: "Delete a topic from the masters of a cluster and from the NameServers",
	setup: func(fs *flag.FlagSet) action {
		topic := fs.String("t", "", "`topic` name")
		cluster := fs.String("c", "", "`cluster` to delete the topic from")
		return func(ctx context.Context, a *app) error {
			if err := required("t", *topic, "c", *cluster); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			if err := adm.DeleteTopic(ctx, *cluster, *topic); err != nil {
				return err
			}
			return a.emit(map[string]any{"topic": *topic, "cluster": *cluster, "deleted": true}, func(t *table) {
				t.row("delete topic [" + *topic + "] from cluster [" + *cluster + "] success.")
			})
		}
	},
}
