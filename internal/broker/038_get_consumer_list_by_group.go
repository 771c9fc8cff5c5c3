package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetConsumerListByGroup is GET_CONSUMER_LIST_BY_GROUP (38): the
// client ids of the group's live members, SYSTEM_ERROR when it has none.
func (b *Broker) handleGetConsumerListByGroup(_ context.Context, _ *server.Conn, h *remoting.GetConsumerListByGroupRequestHeader) *remoting.Command {
	var resp *remoting.Command
	if ids := b.clients.consumerIDs(h.ConsumerGroup); len(ids) > 0 {
		resp = jsonResponse(&remoting.ConsumerListByGroupBody{ConsumerIDList: ids})
	} else {
		resp = remoting.NewResponse(remoting.SystemError, "no consumer for this group, "+h.ConsumerGroup)
	}
	resp.Ext = remoting.ExtFields{} // Java's empty response header: "extFields":{}
	return resp
}
