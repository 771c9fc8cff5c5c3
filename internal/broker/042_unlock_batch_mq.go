package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUnlockBatchMQ is UNLOCK_BATCH_MQ (42), Java AdminBrokerProcessor.
// unlockBatchMQ: release the requested queues the caller holds; locks of
// other clients stay (docs/PROTOCOL.md §9.9).
func (b *Broker) handleUnlockBatchMQ(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var body remoting.UnlockBatchRequestBody
	if resp := decodeLockBody(&body, req, "unlock batch mq"); resp != nil {
		return resp
	}
	b.locks.unlock(body.ConsumerGroup, body.ClientID, body.MQSet)
	return remoting.NewResponse(remoting.Success, "")
}
