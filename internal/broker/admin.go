package broker

import "github.com/go-rocketmq/rocketmq/remoting"

// registerAdminHandlers registers the topic administration and broker
// statistics codes.
func (b *Broker) registerAdminHandlers() {
	b.handle(remoting.UpdateAndCreateTopic, b.handleUpdateAndCreateTopic)
	b.handle(remoting.DeleteTopicInBroker, b.handleDeleteTopicInBroker)
	b.handle(remoting.GetAllTopicConfig, b.handleGetAllTopicConfig)
	b.handle(remoting.GetBrokerRuntimeInfo, b.handleGetBrokerRuntimeInfo)
	b.handle(remoting.GetTopicStatsInfo, b.handleGetTopicStatsInfo)
}

// adminHeaderError answers an admin request whose header does not decode.
func adminHeaderError(err error) *remoting.Command {
	return remoting.NewResponse(remoting.SystemError, headerErrorRemark(err))
}
