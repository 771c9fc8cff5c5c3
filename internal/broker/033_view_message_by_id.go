package broker

import (
	"context"
	"strconv"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleViewMessageByID is VIEW_MESSAGE_BY_ID (33): the stored record at a
// commit-log offset, the offset an offsetMsgId carries (Java
// QueryMessageProcessor.viewMessageById, docs/PROTOCOL.md §9.10).
func (b *Broker) handleViewMessageByID(_ context.Context, _ *server.Conn, h *remoting.ViewMessageRequestHeader) *remoting.Command {
	rec, err := b.store.MessageAt(h.Offset)
	if err != nil {
		return remoting.NewResponse(remoting.SystemError, "can not find message by the offset, "+strconv.FormatInt(h.Offset, 10))
	}
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = rec
	return resp
}
