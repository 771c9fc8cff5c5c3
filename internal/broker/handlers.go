package broker

import (
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// route is one row of the request table: the code, its handler on a worker
// and, for the send codes, its fast path on the event loop.
type route struct {
	code   int32
	serve  server.Handler
	inline server.InlineHandler // nil: always served on a worker
}

// routes is the request table (Java BrokerController.registerProcessor):
// every code the broker serves, in code order; the handler of code NNN is
// in NNN_name.go. Codes not listed get REQUEST_CODE_NOT_SUPPORTED from the
// server.
func (b *Broker) routes() []route {
	return []route{
		{remoting.SendMessage, b.handleSendMessage, b.sendMessageInline},
		{remoting.PullMessage, b.handlePullMessage, nil},
		{remoting.QueryConsumerOffset, b.handleQueryConsumerOffset, nil},
		{remoting.UpdateConsumerOffset, b.handleUpdateConsumerOffset, nil},
		{remoting.UpdateAndCreateTopic, b.handleUpdateAndCreateTopic, nil},
		{remoting.GetAllTopicConfig, b.handleGetAllTopicConfig, nil},
		{remoting.GetBrokerRuntimeInfo, b.handleGetBrokerRuntimeInfo, nil},
		{remoting.SearchOffsetByTimestamp, b.handleSearchOffsetByTimestamp, nil},
		{remoting.GetMaxOffset, b.handleGetMaxOffset, nil},
		{remoting.GetMinOffset, b.handleGetMinOffset, nil},
		{remoting.GetEarliestMsgStoreTime, b.handleGetEarliestMsgStoretime, nil},
		{remoting.HeartBeat, b.handleHeartBeat, nil},
		{remoting.UnregisterClient, b.handleUnregisterClient, nil},
		{remoting.GetConsumerListByGroup, b.handleGetConsumerListByGroup, nil},
		{remoting.GetAllConsumerOffset, b.handleGetAllConsumerOffset, nil},
		{remoting.GetAllDelayOffset, b.handleGetAllDelayOffset, nil},
		{remoting.UpdateAndCreateSubscriptionGroup, b.handleUpdateAndCreateSubscriptionGroup, nil},
		{remoting.GetAllSubscriptionGroupConfig, b.handleGetAllSubscriptionGroupConfig, nil},
		{remoting.GetTopicStatsInfo, b.handleGetTopicStatsInfo, nil},
		{remoting.GetConsumerConnectionList, b.handleGetConsumerConnectionList, nil},
		{remoting.GetProducerConnectionList, b.handleGetProducerConnectionList, nil},
		{remoting.DeleteSubscriptionGroup, b.handleDeleteSubscriptionGroup, nil},
		{remoting.GetConsumeStats, b.handleGetConsumeStats, nil},
		{remoting.DeleteTopicInBroker, b.handleDeleteTopicInBroker, nil},
		{remoting.SendMessageV2, b.handleSendMessageV2, b.sendMessageV2Inline},
		{remoting.SendBatchMessage, b.handleSendBatchMessage, b.sendBatchMessageInline},
		{remoting.SendReplyMessage, b.handleSendReplyMessage, nil},
		{remoting.SendReplyMessageV2, b.handleSendReplyMessageV2, nil},
		{remoting.LitePullMessage, b.handleLitePullMessage, nil},
	}
}

// serveRoutes registers the request table with the server.
func (b *Broker) serveRoutes() {
	for _, r := range b.routes() {
		b.handle(r.code, r.serve)
		if r.inline != nil {
			b.handleInline(r.code, r.inline)
		}
	}
}

// adminHeaderError answers an admin request whose header does not decode.
func adminHeaderError(err error) *remoting.Command {
	return remoting.NewResponse(remoting.SystemError, headerErrorRemark(err))
}
