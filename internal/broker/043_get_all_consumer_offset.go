package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetAllConsumerOffset serves GET_ALL_CONSUMER_OFFSET (43): the whole
// offset table as a 4.9.8 broker encodes it for slaves (fastjson, compact,
// bare integer queue keys).
func (b *Broker) handleGetAllConsumerOffset(context.Context, *server.Conn, *remoting.Command) *remoting.Command {
	w, _ := b.offsets.wrapper()
	return jsonResponse(&w)
}
