package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetProducerConnectionList is GET_PRODUCER_CONNECTION_LIST (204):
// the producer group's connections, SYSTEM_ERROR when it has none.
func (b *Broker) handleGetProducerConnectionList(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetProducerConnectionListRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	pc, ok := b.clients.producerConnection(h.ProducerGroup)
	if !ok {
		return remoting.NewResponse(remoting.SystemError, "the producer group["+h.ProducerGroup+"] not exist")
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = pc.AppendJSON(nil, remoting.JSONFastjson)
	return resp
}
