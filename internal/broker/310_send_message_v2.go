package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSendMessageV2 serves SEND_MESSAGE_V2 (310): the same header with
// one-letter keys, which Java clients use for every single message.
func (b *Broker) handleSendMessageV2(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.send(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}
