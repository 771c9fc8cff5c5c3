package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetConsumerConnectionList is GET_CONSUMER_CONNECTION_LIST (203):
// the group's connections and subscriptions, CONSUMER_NOT_ONLINE when no
// member is registered.
func (b *Broker) handleGetConsumerConnectionList(_ context.Context, _ *server.Conn, h *remoting.GetConsumerConnectionListRequestHeader) *remoting.Command {
	cc, ok := b.clients.consumerConnection(h.ConsumerGroup)
	if !ok {
		return remoting.NewResponse(remoting.ConsumerNotOnline, "the consumer group["+h.ConsumerGroup+"] not online")
	}
	return jsonResponse(&cc)
}
