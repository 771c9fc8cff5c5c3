package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetEarliestMsgStoretime serves GET_EARLIEST_MSG_STORETIME (32): the
// store time of the message at the queue's min offset, -1 when there is
// none (Java's value for an empty or unknown queue).
func (b *Broker) handleGetEarliestMsgStoretime(_ context.Context, _ *server.Conn, h *remoting.GetEarliestMsgStoretimeRequestHeader) *remoting.Command {
	ts, err := b.store.EarliestMessageTime(h.Topic, h.QueueID)
	if err != nil {
		ts = -1
	}
	resp := remoting.NewResponse(remoting.Success, "")
	rh := remoting.GetEarliestMsgStoretimeResponseHeader{Timestamp: ts}
	resp.Ext = rh.AppendExt(make(remoting.ExtFields, 0, 1))
	return resp
}
