package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUpdateConsumerOffset serves UPDATE_CONSUMER_OFFSET (15), oneway or
// not (the official Go client sends it without the oneway bit). Like 4.9.8
// it stores unconditionally; the answer carries an empty header.
func (b *Broker) handleUpdateConsumerOffset(_ context.Context, _ *server.Conn, h *remoting.UpdateConsumerOffsetRequestHeader) *remoting.Command {
	b.offsets.commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Ext = remoting.ExtFields{}
	return resp
}
