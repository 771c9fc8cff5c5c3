package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleQueryConsumerOffset serves QUERY_CONSUMER_OFFSET (14): the committed
// offset; else 0 when the queue still starts at 0 and that message is in
// memory (a new group then consumes from the beginning); else
// QUERY_NOT_FOUND (docs/PROTOCOL.md §9.8). A 5.x setZeroIfNotFound=false turns
// the 0 answer off.
func (b *Broker) handleQueryConsumerOffset(_ context.Context, _ *server.Conn, h *remoting.QueryConsumerOffsetRequestHeader) *remoting.Command {
	// Java keeps -1 for "none", so a committed negative value is "none" too.
	if off, ok := b.offsets.query(h.ConsumerGroup, h.Topic, h.QueueID); ok && off >= 0 {
		return offsetResponse(off)
	}
	if h.SetZeroIfNotFound != nil && !*h.SetZeroIfNotFound {
		return remoting.NewResponse(remoting.QueryNotFound, "Not found, do not set to zero, maybe this group boot first")
	}
	if b.store.MinOffset(h.Topic, h.QueueID) <= 0 && !b.offsets.firstMessageOnDisk(h.Topic, h.QueueID) {
		return offsetResponse(0)
	}
	return remoting.NewResponse(remoting.QueryNotFound, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
}
