package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetProducerConnectionList is GET_PRODUCER_CONNECTION_LIST (204):
// the producer group's connections, SYSTEM_ERROR when it has none.
func (b *Broker) handleGetProducerConnectionList(_ context.Context, _ *server.Conn, h *remoting.GetProducerConnectionListRequestHeader) *remoting.Command {
	pc, ok := b.clients.producerConnection(h.ProducerGroup)
	if !ok {
		return remoting.NewResponse(remoting.SystemError, "the producer group["+h.ProducerGroup+"] not exist")
	}
	return jsonResponse(&pc)
}
