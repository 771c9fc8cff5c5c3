package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUnregisterClient is UNREGISTER_CLIENT (35): remove the connection
// from the named producer and/or consumer group; the consumer group's
// remaining members are notified unless the group disabled it, and the
// client's queue locks in the consumer group are released.
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
		// Java keeps the departed client's queue locks until they expire;
		// releasing them here lets the group's others take the queues at
		// once, and only a client that said it left loses them.
		b.locks.unlockClient(group, h.ClientID)
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Ext = remoting.ExtFields{} // Java's empty response header: "extFields":{}
	return resp
}
