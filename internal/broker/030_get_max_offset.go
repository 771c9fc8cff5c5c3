package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetMaxOffset serves GET_MAX_OFFSET (30): the queue's next offset,
// 0 for an unknown queue. Every stored message is committed here, so the
// 5.x `committed` flag changes nothing.
func (b *Broker) handleGetMaxOffset(_ context.Context, _ *server.Conn, h *remoting.GetMaxOffsetRequestHeader) *remoting.Command {
	return offsetResponse(b.store.MaxOffset(h.Topic, h.QueueID))
}
