package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetConsumerConnectionList is GET_CONSUMER_CONNECTION_LIST (203):
// the group's connections and subscriptions, CONSUMER_NOT_ONLINE when no
// member is registered.
func (b *Broker) handleGetConsumerConnectionList(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetConsumerConnectionListRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	cc, ok := b.clients.consumerConnection(h.ConsumerGroup)
	if !ok {
		return remoting.NewResponse(remoting.ConsumerNotOnline, "the consumer group["+h.ConsumerGroup+"] not online")
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = cc.AppendJSON(nil, remoting.JSONFastjson)
	return resp
}
