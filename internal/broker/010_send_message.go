package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSendMessage serves SEND_MESSAGE (10): the V1 header with long key
// names (the official Go client sends every single message this way).
func (b *Broker) handleSendMessage(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.send(ctx, c, req, &h)
}
