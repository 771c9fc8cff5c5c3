package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUnregisterClient is UNREGISTER_CLIENT (35): remove the connection
// from the named producer and/or consumer group; the consumer group's
// remaining members are notified unless the group disabled it.
func (b *Broker) handleUnregisterClient(_ context.Context, c *server.Conn, h *remoting.UnregisterClientRequestHeader) *remoting.Command {
	if h.ProducerGroup != nil {
		b.clients.unregisterProducer(*h.ProducerGroup, c)
	}
	if h.ConsumerGroup != nil {
		group := *h.ConsumerGroup
		notify := true
		if gc, ok := b.groups.get(group); ok {
			notify = gc.NotifyConsumerIdsChangedEnable
		}
		b.clients.notifyIDsChanged(group, b.clients.unregisterConsumer(group, c, notify))
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Ext = remoting.ExtFields{} // Java's empty response header: "extFields":{}
	return resp
}
