package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleDeleteTopicInBroker serves DELETE_TOPIC_IN_BROKER (215): drop the
// config (persisted, re-registered), the consume queues and the topic's
// committed offsets (as 5.x does; 4.9.8 keeps them). Like 4.9.8 it
// answers SUCCESS for an unknown topic too.
func (b *Broker) handleDeleteTopicInBroker(_ context.Context, c *server.Conn, h *remoting.DeleteTopicRequestHeader) *remoting.Command {
	existed, perr := b.topics.remove(h.Topic)
	if err := b.store.DeleteTopic(h.Topic); err != nil {
		b.log.Warn("delete topic from store", "topic", h.Topic, "err", err)
	}
	b.offsets.removeTopic(h.Topic)
	b.log.Info("topic deleted by admin", "topic", h.Topic, "existed", existed, "remote", c.String())
	if perr != nil {
		return remoting.NewResponse(remoting.SystemError, "delete topic config failed: "+perr.Error())
	}
	return remoting.NewResponse(remoting.Success, "")
}
