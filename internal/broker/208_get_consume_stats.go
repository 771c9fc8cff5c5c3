package broker

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetConsumeStats serves GET_CONSUME_STATS (208) like 4.9.8: for the
// given topic, or every topic the group has offsets for, each read queue's
// max offset, committed offset and the store time of the last consumed
// message; consumeTps sums the group's per-topic get rates. A topic the
// group's live consumers do not subscribe to is left out while the group
// has any subscription; members without one (assigned lite-pull
// consumers) hide nothing.
func (b *Broker) handleGetConsumeStats(_ context.Context, _ *server.Conn, h *remoting.GetConsumeStatsRequestHeader) *remoting.Command {
	group := h.ConsumerGroup
	var topics []string
	if h.Topic != nil && *h.Topic != "" {
		topics = []string{*h.Topic}
	} else {
		topics = b.offsets.topicsOf(group)
	}
	now := time.Now()
	stats := remoting.ConsumeStats{OffsetTable: make(map[rocketmq.MessageQueue]remoting.OffsetWrapper)}
	for _, topic := range topics {
		tc, ok := b.topics.get(topic)
		if !ok {
			continue
		}
		if !b.clients.subscribesOrAll(group, topic) {
			continue
		}
		for i := int32(0); i < clampQueueNums(tc.ReadQueueNums, b.cfg.MaxQueueNums); i++ {
			w := remoting.OffsetWrapper{BrokerOffset: max(b.store.MaxOffset(topic, i), 0)}
			if off, ok := b.offsets.query(group, topic, i); ok && off > 0 {
				w.ConsumerOffset = off
				if ts, err := b.store.MessageStoreTime(topic, i, off-1); err == nil && ts > 0 {
					w.LastTimestamp = ts
				}
			}
			stats.OffsetTable[rocketmq.MessageQueue{Topic: topic, BrokerName: b.cfg.BrokerName, QueueID: int(i)}] = w
		}
		stats.ConsumeTps += b.offsets.gets.tps(group, topic, now)
	}
	return jsonResponse(&stats)
}
