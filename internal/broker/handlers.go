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
// server. A handler wrapped in server.Decoded takes its decoded header; a
// header that does not decode gets adminHeaderError.
func (b *Broker) routes() []route {
	return []route{
		{remoting.SendMessage, b.handleSendMessage, b.sendMessageInline},
		{remoting.PullMessage, b.handlePullMessage, nil},
		{remoting.QueryMessage, foundInJSON(b.handleQueryMessage), nil},
		{remoting.QueryConsumerOffset, server.Decoded(b.handleQueryConsumerOffset, adminHeaderError), nil},
		{remoting.UpdateConsumerOffset, server.Decoded(b.handleUpdateConsumerOffset, adminHeaderError), nil},
		{remoting.UpdateAndCreateTopic, server.Decoded(b.handleUpdateAndCreateTopic, adminHeaderError), nil},
		{remoting.GetAllTopicConfig, b.handleGetAllTopicConfig, nil},
		{remoting.UpdateBrokerConfig, b.handleUpdateBrokerConfig, nil},
		{remoting.GetBrokerConfig, b.handleGetBrokerConfig, nil},
		{remoting.GetBrokerRuntimeInfo, b.handleGetBrokerRuntimeInfo, nil},
		{remoting.SearchOffsetByTimestamp, server.Decoded(b.handleSearchOffsetByTimestamp, adminHeaderError), nil},
		{remoting.GetMaxOffset, server.Decoded(b.handleGetMaxOffset, adminHeaderError), nil},
		{remoting.GetMinOffset, server.Decoded(b.handleGetMinOffset, adminHeaderError), nil},
		{remoting.GetEarliestMsgStoreTime, server.Decoded(b.handleGetEarliestMsgStoretime, adminHeaderError), nil},
		{remoting.ViewMessageByID, foundInJSON(server.Decoded(b.handleViewMessageByID, adminHeaderError)), nil},
		{remoting.HeartBeat, b.handleHeartBeat, nil},
		{remoting.UnregisterClient, server.Decoded(b.handleUnregisterClient, adminHeaderError), nil},
		{remoting.ConsumerSendMsgBack, b.handleConsumerSendMsgBack, nil},
		{remoting.EndTransaction, b.handleEndTransaction, b.endTransactionInline},
		{remoting.GetConsumerListByGroup, server.Decoded(b.handleGetConsumerListByGroup, adminHeaderError), nil},
		{remoting.LockBatchMQ, b.handleLockBatchMQ, nil},
		{remoting.UnlockBatchMQ, b.handleUnlockBatchMQ, nil},
		{remoting.GetAllConsumerOffset, b.handleGetAllConsumerOffset, nil},
		{remoting.GetAllDelayOffset, b.handleGetAllDelayOffset, nil},
		{remoting.CheckClientConfig, b.handleCheckClientConfig, nil},
		{remoting.UpdateAndCreateSubscriptionGroup, b.handleUpdateAndCreateSubscriptionGroup, nil},
		{remoting.GetAllSubscriptionGroupConfig, b.handleGetAllSubscriptionGroupConfig, nil},
		{remoting.GetTopicStatsInfo, server.Decoded(b.handleGetTopicStatsInfo, adminHeaderError), nil},
		{remoting.GetConsumerConnectionList, server.Decoded(b.handleGetConsumerConnectionList, adminHeaderError), nil},
		{remoting.GetProducerConnectionList, server.Decoded(b.handleGetProducerConnectionList, adminHeaderError), nil},
		{remoting.DeleteSubscriptionGroup, server.Decoded(b.handleDeleteSubscriptionGroup, adminHeaderError), nil},
		{remoting.GetConsumeStats, server.Decoded(b.handleGetConsumeStats, adminHeaderError), nil},
		{remoting.DeleteTopicInBroker, server.Decoded(b.handleDeleteTopicInBroker, adminHeaderError), nil},
		{remoting.InvokeBrokerToResetOffset, b.handleInvokeBrokerToResetOffset, nil},
		{remoting.InvokeBrokerToGetConsumerStatus, server.Decoded(b.handleInvokeBrokerToGetConsumerStatus, adminHeaderError), nil},
		{remoting.QueryTopicConsumeByWho, server.Decoded(b.handleQueryTopicConsumeByWho, adminHeaderError), nil},
		{remoting.GetConsumerRunningInfo, b.handleGetConsumerRunningInfo, nil},
		{remoting.ConsumeMessageDirectly, b.handleConsumeMessageDirectly, nil},
		{remoting.SendMessageV2, b.handleSendMessageV2, b.sendMessageV2Inline},
		{remoting.SendBatchMessage, b.handleSendBatchMessage, b.sendBatchMessageInline},
		{remoting.SendReplyMessage, b.handleSendReplyMessage, nil},
		{remoting.SendReplyMessageV2, b.handleSendReplyMessageV2, nil},
		{remoting.LitePullMessage, b.handleLitePullMessage, nil},
	}
}

// relaysClientAnswer reports whether code is answered with a consumer's
// own response, which keeps the consumer's language and version as Java
// relays it (the broker's own error answers are stamped where made).
func relaysClientAnswer(code int32) bool {
	return code == remoting.GetConsumerRunningInfo || code == remoting.ConsumeMessageDirectly
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

// jsonResponse answers SUCCESS with body in fastjson's syntax, as Java's
// RemotingSerializable.encode writes it.
func jsonResponse(body interface {
	AppendJSON([]byte, remoting.JSONStyle) []byte
}) *remoting.Command {
	resp := remoting.NewResponse(remoting.Success, "")
	resp.Body = body.AppendJSON(nil, remoting.JSONFastjson)
	return resp
}
