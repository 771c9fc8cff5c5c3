package broker

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleInvokeBrokerToResetOffset is INVOKE_BROKER_TO_RESET_OFFSET (222)
// (Java Broker2Client.resetOffset, docs/PROTOCOL.md §9.15): for every write
// queue of the topic the new offset is the one 4.9.8 finds for the timestamp
// (offsetNearTime; -1: the queue's end), or the group's committed offset if
// that is smaller and isForce is not set. Each live consumer of the group is told with
// RESET_CONSUMER_CLIENT_OFFSET (oneway) and the answer carries the table.
// Beyond 4.9.8, which leaves the stored offsets to the consumers, the
// broker commits the table itself, so the reset also holds for members
// that ignore the notice or are restarted before persisting it.
func (b *Broker) handleInvokeBrokerToResetOffset(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.ResetOffsetRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	b.log.Info("reset offset", "topic", h.Topic, "group", h.Group, "timestamp", h.Timestamp, "force", h.IsForce, "remote", c.String())
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return remoting.NewResponse(remoting.SystemError, "[reset-offset] reset offset failed, no topic in this broker. topic="+h.Topic)
	}
	table := make(map[rocketmq.MessageQueue]int64, tc.WriteQueueNums)
	for i := range tc.WriteQueueNums {
		committed, ok := b.offsets.query(h.Group, h.Topic, i)
		if !ok {
			return remoting.NewResponse(remoting.SystemError, fmt.Sprintf("THe consumer group <%s> not exist", h.Group)) // sic
		}
		var off int64
		if h.Timestamp == -1 {
			off = b.store.MaxOffset(h.Topic, i)
		} else if o, err := b.offsetNearTime(h.Topic, i, h.Timestamp); err == nil {
			off = o
		}
		off = max(off, 0)
		if !h.IsForce && off >= committed {
			off = committed
		}
		table[rocketmq.MessageQueue{Topic: h.Topic, BrokerName: b.cfg.BrokerName, QueueID: int(i)}] = off
	}

	members := b.clients.consumerChannels(h.Group)
	if len(members) == 0 {
		return remoting.NewResponse(remoting.ConsumerNotOnline, fmt.Sprintf(
			"Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: %d", h.Group, h.Topic, h.Timestamp))
	}
	for _, m := range members {
		if m.version < versionV307Snapshot {
			return remoting.NewResponse(remoting.SystemError, "the client does not support this feature. version="+oldVersionDesc(m.version))
		}
	}
	for mq, off := range table {
		b.offsets.commit(h.Group, h.Topic, int32(mq.QueueID), off)
	}

	body := &remoting.ResetOffsetBody{OffsetTable: table}
	nh := remoting.ResetOffsetRequestHeader{Topic: h.Topic, Group: h.Group, Timestamp: h.Timestamp}
	var notice []byte
	if req.Language == remoting.LanguageCPP {
		notice = resetOffsetBodyForC(table)
	} else {
		notice = body.AppendJSON(nil, remoting.JSONFastjson)
	}
	push := clientRequest(remoting.ResetConsumerClientOffset, nh.AppendExt(nil), notice)
	for _, m := range members {
		if err := m.conn.InvokeOneway(push); err != nil {
			b.log.Warn("reset offset: notify consumer", "group", h.Group, "client", m.clientID, "err", err)
		}
	}
	return jsonResponse(body)
}

// resetOffsetBodyForC is the table as Java's ResetOffsetBodyForC, which a
// broker sends a C++ client instead of the map keyed by message queue.
func resetOffsetBodyForC(table map[rocketmq.MessageQueue]int64) []byte {
	// One topic on one broker: the queue id orders the entries.
	mqs := slices.SortedFunc(maps.Keys(table), func(a, b rocketmq.MessageQueue) int { return cmp.Compare(a.QueueID, b.QueueID) })
	body := remoting.ResetOffsetBodyForC{OffsetTable: make([]remoting.MessageQueueForC, len(mqs))}
	for i, mq := range mqs {
		body.OffsetTable[i] = remoting.MessageQueueForC{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueID: int32(mq.QueueID), Offset: table[mq]}
	}
	return body.AppendJSON(nil, remoting.JSONFastjson)
}
