package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetConsumerRunningInfo is GET_CONSUMER_RUNNING_INFO (307) from an
// admin: the request goes as is to the named consumer of the group, whose
// answer (a ConsumerRunningInfo body) comes back as is (broker2client.go).
func (b *Broker) handleGetConsumerRunningInfo(ctx context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.GetConsumerRunningInfoRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return stamped(adminHeaderError(err))
	}
	return b.callConsumer(ctx, remoting.GetConsumerRunningInfo, req.Ext, req.Body, h.ConsumerGroup, h.ClientID)
}
