package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSendReplyMessage serves SEND_REPLY_MESSAGE (324): a reply with the
// V1 send header (the official Go client replies this way).
func (b *Broker) handleSendReplyMessage(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.sendReply(ctx, c, req, &h)
}
