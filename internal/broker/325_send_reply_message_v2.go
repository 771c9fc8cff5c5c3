package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleSendReplyMessageV2 serves SEND_REPLY_MESSAGE_V2 (325): a reply with
// the one-letter V2 send header (Java clients).
func (b *Broker) handleSendReplyMessageV2(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.sendReply(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}
