package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// SEND_MESSAGE (10) carries the V1 send header with long key names (the
// official Go client sends every single message this way). It is served by
// the send pipeline (send.go), on the event loop when sendInline allows.

// handleSendMessage serves SEND_MESSAGE on a worker.
func (b *Broker) handleSendMessage(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.send(ctx, c, req, &h)
}

// sendMessageInline is SEND_MESSAGE's event-loop fast path.
func (b *Broker) sendMessageInline(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
	var h remoting.SendMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err), true
	}
	return b.sendInline(ctx, c, req, &h)
}
