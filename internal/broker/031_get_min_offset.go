package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetMinOffset serves GET_MIN_OFFSET (31): the smallest offset still
// stored, 0 for an unknown queue.
func (b *Broker) handleGetMinOffset(_ context.Context, _ *server.Conn, h *remoting.GetMinOffsetRequestHeader) *remoting.Command {
	return offsetResponse(b.store.MinOffset(h.Topic, h.QueueID))
}
