package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/remoting"
)

var updateSubGroupCmd = &command{
	name:     "updateSubGroup",
	synopsis: "Create or update a consumer group on a broker or on every master of a cluster",
	setup: func(fs *flag.FlagSet) action {
		def := admin.NewGroupConfig("")
		addr := fs.String("b", "", "broker `address` to create the group on")
		cluster := fs.String("c", "", "`cluster` whose masters get the group")
		group := fs.String("g", "", "consumer `group` name")
		consume := boolFlag(fs, "s", def.ConsumeEnable, "consume enabled: `true|false`")
		// mqadmin's updateSubGroup turns both off unless asked, unlike
		// SubscriptionGroupConfig's own defaults.
		fromMin := boolFlag(fs, "m", false, "consume from the min offset allowed: `true|false`")
		broadcast := boolFlag(fs, "d", false, "broadcast allowed: `true|false`")
		retryQueues := fs.Int("q", int(def.RetryQueueNums), "retry queue `number`")
		retryMax := fs.Int("r", int(def.RetryMaxTimes), "retry max `times`")
		brokerID := fs.Int64("i", def.BrokerID, "broker `id` to consume from")
		slowly := fs.Int64("w", def.WhichBrokerWhenConsumeSlowly, "broker `id` to consume from when consuming slowly")
		notify := boolFlag(fs, "a", def.NotifyConsumerIdsChangedEnable, "notify members when the group's members change: `true|false`")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group); err != nil {
				return err
			}
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			if *retryQueues < 0 || *retryMax < -1 || *retryQueues > 1<<16 || *retryMax > 1<<16 {
				return usagef("-q %d -r %d: out of range", *retryQueues, *retryMax)
			}
			gc := admin.NewGroupConfig(*group)
			gc.ConsumeEnable, gc.ConsumeFromMinEnable, gc.ConsumeBroadcastEnable = consume.v, fromMin.v, broadcast.v
			gc.RetryQueueNums, gc.RetryMaxTimes = int32(*retryQueues), int32(*retryMax)
			gc.BrokerID, gc.WhichBrokerWhenConsumeSlowly = *brokerID, *slowly
			gc.NotifyConsumerIdsChangedEnable = notify.v
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			target := *addr
			if *cluster != "" {
				target = *cluster
				err = adm.CreateGroupInCluster(ctx, *cluster, gc)
			} else {
				err = adm.CreateGroup(ctx, *addr, gc)
			}
			if err != nil {
				return err
			}
			doc := map[string]any{
				"group": gc.GroupName, "consumeEnable": gc.ConsumeEnable, "consumeFromMinEnable": gc.ConsumeFromMinEnable,
				"consumeBroadcastEnable": gc.ConsumeBroadcastEnable, "retryQueueNums": gc.RetryQueueNums,
				"retryMaxTimes": gc.RetryMaxTimes, "brokerId": gc.BrokerID,
				"whichBrokerWhenConsumeSlowly":   gc.WhichBrokerWhenConsumeSlowly,
				"notifyConsumerIdsChangedEnable": gc.NotifyConsumerIdsChangedEnable,
			}
			if *cluster != "" {
				doc["cluster"] = *cluster
			} else {
				doc["brokerAddr"] = *addr
			}
			return a.emit(doc, func(t *table) {
				t.row("create subscription group to " + target + " success.")
				t.row("Group:", gc.GroupName)
				t.row("Consume Enable:", gc.ConsumeEnable)
				t.row("Consume From Min Enable:", gc.ConsumeFromMinEnable)
				t.row("Consume Broadcast Enable:", gc.ConsumeBroadcastEnable)
				t.row("Retry Queue Nums:", gc.RetryQueueNums)
				t.row("Retry Max Times:", gc.RetryMaxTimes)
				t.row("Broker Id:", gc.BrokerID)
				t.row("Which Broker When Consume Slowly:", gc.WhichBrokerWhenConsumeSlowly)
				t.row("Notify Consumer Ids Changed Enable:", gc.NotifyConsumerIdsChangedEnable)
			})
		}
	},
}

var deleteSubGroupCmd = &command{
	name:     "deleteSubGroup",
	synopsis: "Delete a consumer group from a broker or from every master of a cluster",
	setup: func(fs *flag.FlagSet) action {
		addr := fs.String("b", "", "broker `address` to delete the group from")
		cluster := fs.String("c", "", "`cluster` whose masters lose the group")
		group := fs.String("g", "", "consumer `group` name")
		removeOffset := boolFlag(fs, "r", false, "remove the group's committed offsets too: `true|false`")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group); err != nil {
				return err
			}
			if err := brokerOrCluster(*addr, *cluster); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			target := *addr
			if *cluster != "" {
				target = *cluster
				err = adm.DeleteGroupInCluster(ctx, *cluster, *group, removeOffset.v)
			} else {
				err = adm.DeleteGroup(ctx, *addr, *group, removeOffset.v)
			}
			if err != nil {
				return err
			}
			doc := map[string]any{"group": *group, "removeOffset": removeOffset.v, "deleted": true}
			if *cluster != "" {
				doc["cluster"] = *cluster
			} else {
				doc["brokerAddr"] = *addr
			}
			return a.emit(doc, func(t *table) {
				t.row("delete subscription group [" + *group + "] from " + target + " success.")
			})
		}
	},
}

type progressRow struct {
	Topic          string `json:"topic"`
	Broker         string `json:"broker"`
	QueueID        int    `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"`
	Client         string `json:"client,omitempty"`
	Diff           int64  `json:"diff"`
	LastTimestamp  int64  `json:"lastTimestamp"`
}

var consumerProgressCmd = &command{
	name:     "consumerProgress",
	synopsis: "Show a consumer group's offsets, lag and TPS per queue",
	setup: func(fs *flag.FlagSet) action {
		group := fs.String("g", "", "consumer `group` name")
		topic := fs.String("t", "", "only this `topic` (default: every topic the group has offsets of)")
		showClient := boolFlag(fs, "s", false, "show the member that holds each queue: `true|false`")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group); err != nil {
				return err
			}
			return consumerProgress(ctx, a, *group, *topic, showClient.v)
		}
	},
}

func consumerProgress(ctx context.Context, a *app, group, topic string, showClient bool) error {
	adm, err := a.admin(ctx)
	if err != nil {
		return err
	}
	cs, err := adm.ConsumeStats(ctx, group, topic)
	if err != nil {
		return err
	}
	if len(cs.Queues) == 0 {
		// As Java's examineConsumeStats, which mqadmin reports.
		on := ""
		if topic != "" {
			on = " on topic " + topic
		}
		return errorf("group %s has no consume progress%s: it has committed no offset", group, on)
	}
	var holders map[rocketmq.MessageQueue]string
	if showClient {
		if holders, err = queueHolders(ctx, adm, group); err != nil {
			return err
		}
	}
	rows := []progressRow{}
	for _, mq := range admin.SortedQueues(cs.Queues) {
		w := cs.Queues[mq]
		rows = append(rows, progressRow{mq.Topic, mq.BrokerName, mq.QueueID, w.BrokerOffset, w.ConsumerOffset,
			holders[mq], w.BrokerOffset - w.ConsumerOffset, w.LastTimestamp})
	}
	doc := map[string]any{"group": group, "consumeTPS": round2(cs.ConsumeTPS), "diffTotal": cs.Lag(), "queues": rows}
	return a.emit(doc, func(t *table) {
		head := []any{"#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff", "#LastTime"}
		if showClient {
			head = slices.Insert(head, 5, any("#Client"))
		}
		t.row(head...)
		for _, r := range rows {
			line := []any{r.Topic, r.Broker, r.QueueID, r.BrokerOffset, r.ConsumerOffset, r.Diff, orDash(humanTime(r.LastTimestamp))}
			if showClient {
				line = slices.Insert(line, 5, any(orDash(r.Client)))
			}
			t.row(line...)
		}
		t.row("")
		t.row("Consume TPS:", formatTPS(cs.ConsumeTPS))
		t.row("Diff Total:", cs.Lag())
	})
}

func formatTPS(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// queueHolders returns the member (client id) of group that holds each
// queue, from the running info of every live member; none when the group
// has no live member.
func queueHolders(ctx context.Context, adm *admin.Admin, group string) (map[rocketmq.MessageQueue]string, error) {
	out := make(map[rocketmq.MessageQueue]string)
	cc, err := adm.ConsumerConnection(ctx, group)
	if errors.Is(err, remoting.ErrConsumerNotOnline) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, c := range cc.ConnectionSet {
		info, err := adm.ConsumerRunningInfo(ctx, group, c.ClientID)
		if err != nil {
			continue // a member that does not answer holds nothing we can show
		}
		for mq := range info.MQTable {
			out[mq] = c.ClientID
		}
	}
	return out, nil
}

type connRow struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

func connRows(cs []remoting.Connection) []connRow {
	rows := []connRow{}
	for _, c := range cs {
		rows = append(rows, connRow{c.ClientID, c.ClientAddr, c.Language, c.Version})
	}
	slices.SortFunc(rows, func(x, y connRow) int { return compareStr(x.ClientID, y.ClientID) })
	return rows
}

func connTable(t *table, rows []connRow) {
	t.row("#ClientId", "#ClientAddr", "#Language", "#Version")
	for _, r := range rows {
		t.row(r.ClientID, r.ClientAddr, r.Language, versionDesc(r.Version))
	}
}

// versionDesc names a client version as mqadmin does (MQVersion's enum
// name). From V4_0_0_SNAPSHOT (212) on the enum is regular: a SNAPSHOT and
// a release for each x.y.z, z and y 0 to 9; older ordinals are printed as
// numbers.
func versionDesc(v int32) string {
	if v < 212 {
		return strconv.Itoa(int(v))
	}
	k := int(v) - 212
	name := fmt.Sprintf("V%d_%d_%d", 4+k/200, k/20%10, k/2%10)
	if k%2 == 0 {
		name += "_SNAPSHOT"
	}
	return name
}

type subRow struct {
	Topic         string `json:"topic"`
	SubExpression string `json:"subExpression"`
	Type          string `json:"expressionType,omitempty"`
}

var consumerConnectionCmd = &command{
	name:     "consumerConnection",
	synopsis: "Show the live members of a consumer group and its subscriptions",
	setup: func(fs *flag.FlagSet) action {
		group := fs.String("g", "", "consumer `group` name")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			cc, err := adm.ConsumerConnection(ctx, *group)
			if err != nil {
				return err
			}
			conns := connRows(cc.ConnectionSet)
			subs := []subRow{}
			for _, topic := range slices.Sorted(maps.Keys(cc.SubscriptionTable)) {
				sd := cc.SubscriptionTable[topic]
				subs = append(subs, subRow{topic, sd.SubString, sd.ExpressionType})
			}
			doc := map[string]any{"group": *group, "connections": conns, "subscriptions": subs,
				"consumeType": cc.ConsumeType, "messageModel": cc.MessageModel, "consumeFromWhere": cc.ConsumeFromWhere}
			return a.emit(doc, func(t *table) {
				connTable(t, conns)
				t.row("")
				t.row("Below is subscription:")
				t.row("#Topic", "#SubExpression")
				for _, s := range subs {
					t.row(s.Topic, s.SubExpression)
				}
				t.row("")
				t.row("ConsumeType:", cc.ConsumeType)
				t.row("MessageModel:", cc.MessageModel)
				t.row("ConsumeFromWhere:", cc.ConsumeFromWhere)
			})
		}
	},
}

var producerConnectionCmd = &command{
	name:     "producerConnection",
	synopsis: "Show the live producers of a producer group",
	setup: func(fs *flag.FlagSet) action {
		group := fs.String("g", "", "producer `group` name")
		topic := fs.String("t", "", "a `topic` the group sends to (its brokers are asked)")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group, "t", *topic); err != nil {
				return err
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			cs, err := adm.ProducerConnection(ctx, *group, *topic)
			if err != nil {
				return err
			}
			conns := connRows(cs)
			return a.emit(map[string]any{"group": *group, "connections": conns}, func(t *table) { connTable(t, conns) })
		}
	},
}

type resetRow struct {
	Broker  string `json:"broker"`
	QueueID int    `json:"queueId"`
	Offset  int64  `json:"offset"`
}

var resetOffsetByTimeCmd = &command{
	name:     "resetOffsetByTime",
	synopsis: "Move a consumer group's offsets on a topic to the first message at or after a time",
	setup: func(fs *flag.FlagSet) action {
		group := fs.String("g", "", "consumer `group` name")
		topic := fs.String("t", "", "`topic` name")
		ts := fs.String("s", "", "`timestamp`: now, milliseconds since the epoch or yyyy-MM-dd#HH:mm:ss:SSS")
		force := boolFlag(fs, "f", true, "also move offsets that are before the time: `true|false`")
		return func(ctx context.Context, a *app) error {
			if err := required("g", *group, "t", *topic, "s", *ts); err != nil {
				return err
			}
			// mqadmin's "now" is -1, the end of every queue, not a search
			// by the current time (which leaves a queue's last message).
			var at time.Time
			ms := int64(-1)
			if strings.TrimSpace(*ts) != "now" {
				var err error
				if at, err = parseTimestamp(*ts, time.Now()); err != nil {
					return err
				}
				ms = at.UnixMilli()
			}
			adm, err := a.admin(ctx)
			if err != nil {
				return err
			}
			offs, err := adm.ResetOffsetByTime(ctx, *group, *topic, at, force.v)
			if err != nil {
				return err
			}
			rows := []resetRow{}
			for _, mq := range admin.SortedQueues(offs) {
				rows = append(rows, resetRow{mq.BrokerName, mq.QueueID, offs[mq]})
			}
			doc := map[string]any{"group": *group, "topic": *topic, "timestamp": ms, "force": force.v, "queues": rows}
			return a.emit(doc, func(t *table) {
				t.row("#Broker Name", "#QID", "#Offset")
				for _, r := range rows {
					t.row(r.Broker, r.QueueID, r.Offset)
				}
			})
		}
	},
}
