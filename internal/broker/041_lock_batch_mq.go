package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleLockBatchMQ is LOCK_BATCH_MQ (41), Java AdminBrokerProcessor.
// lockBatchMQ: lock the requested queues for the client in its group and
// answer the subset it now holds (docs/PROTOCOL.md §9.9). 4.9.8 ignores
// onlyThisBroker; 5.x uses it to also ask the slaves of the same broker
// name, which this broker, a lone master, does not have.
func (b *Broker) handleLockBatchMQ(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var body remoting.LockBatchRequestBody
	if resp := decodeLockBody(&body, req, "lock batch mq"); resp != nil {
		return resp
	}
	granted := b.locks.tryLock(body.ConsumerGroup, body.ClientID, body.MQSet)
	return jsonResponse(&remoting.LockBatchResponseBody{LockOKMQSet: granted})
}

// decodeLockBody decodes a lock or unlock body; Java answers a missing
// body, group or client id with SYSTEM_ERROR (its lookup throws).
func decodeLockBody(body *remoting.LockBatchRequestBody, req *remoting.Command, what string) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(remoting.SystemError, what+": missing body")
	}
	if err := body.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, what+": "+err.Error())
	}
	if body.ConsumerGroup == "" || body.ClientID == "" {
		return remoting.NewResponse(remoting.SystemError, what+": consumerGroup and clientId are required")
	}
	return nil
}
