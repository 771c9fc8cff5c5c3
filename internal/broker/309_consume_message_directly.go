package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleConsumeMessageDirectly is CONSUME_MESSAGE_DIRECTLY (309) from an
// admin: the broker reads the message named by msgId (an offset id), puts
// its own name into the header as brokerName and hands the request, with
// the stored record as body, to the named consumer, whose answer (a
// ConsumeMessageDirectlyResult) comes back as is (broker2client.go).
func (b *Broker) handleConsumeMessageDirectly(ctx context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.ConsumeMessageDirectlyResultRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return stamped(adminHeaderError(err))
	}
	ext := req.Ext.Clone()
	ext.Set("brokerName", b.cfg.BrokerName)
	// Java leaves the body alone when the id's host does not resolve; a
	// missing id or one that names no stored record fails there with an
	// exception, here with a remark.
	if h.MsgID == nil {
		return stamped(remoting.NewResponse(remoting.SystemError, "msgId is null"))
	}
	body := req.Body
	if _, phys, err := rocketmq.DecodeOffsetMsgID(*h.MsgID); err == nil {
		rec, err := b.store.MessageAt(phys)
		if err != nil {
			return stamped(remoting.NewResponse(remoting.SystemError, "look message by offset failed, "+orZero(h.MsgID)))
		}
		body = rec
	}
	return b.callConsumer(ctx, remoting.ConsumeMessageDirectly, ext, body, h.ConsumerGroup, orZero(h.ClientID))
}
