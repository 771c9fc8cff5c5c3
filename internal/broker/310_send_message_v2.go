package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// SEND_MESSAGE_V2 (310) carries the send header with one-letter keys, which
// Java clients use for every single message. It is served by the send
// pipeline (send.go), on the event loop when sendInline allows; like Java,
// the header's batch flag, not the code, picks the batch path.

// handleSendMessageV2 serves SEND_MESSAGE_V2 on a worker.
func (b *Broker) handleSendMessageV2(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.send(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}

// sendMessageV2Inline is SEND_MESSAGE_V2's event-loop fast path.
func (b *Broker) sendMessageV2Inline(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err), true
	}
	return b.sendInline(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}
