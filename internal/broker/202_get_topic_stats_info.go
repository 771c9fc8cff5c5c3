package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetTopicStatsInfo serves GET_TOPIC_STATS_INFO (202): min and max
// offset of every write queue and the store time of its newest message.
// Queue counts are bounded by Config.MaxQueueNums (topics.go), so is the
// body.
func (b *Broker) handleGetTopicStatsInfo(_ context.Context, _ *server.Conn, h *remoting.GetTopicStatsInfoRequestHeader) *remoting.Command {
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return remoting.NewResponse(remoting.TopicNotExist, "topic["+h.Topic+"] not exist")
	}
	n := clampQueueNums(tc.WriteQueueNums, b.cfg.MaxQueueNums)
	t := remoting.TopicStatsTable{OffsetTable: make(map[rocketmq.MessageQueue]remoting.TopicOffset, n)}
	for i := int32(0); i < n; i++ {
		o := remoting.TopicOffset{
			MinOffset: max(b.store.MinOffset(h.Topic, i), 0),
			MaxOffset: max(b.store.MaxOffset(h.Topic, i), 0),
		}
		if o.MaxOffset > 0 {
			if ts, err := b.store.MessageStoreTime(h.Topic, i, o.MaxOffset-1); err == nil {
				o.LastUpdateTimestamp = ts
			}
		}
		t.OffsetTable[rocketmq.MessageQueue{Topic: h.Topic, BrokerName: b.cfg.BrokerName, QueueID: int(i)}] = o
	}
	return jsonResponse(&t)
}
