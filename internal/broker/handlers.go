package broker

import (
	"context"

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
		{remoting.QueryConsumerOffset, withHeader(b.handleQueryConsumerOffset), nil},
		{remoting.UpdateConsumerOffset, withHeader(b.handleUpdateConsumerOffset), nil},
		{remoting.UpdateAndCreateTopic, withHeader(b.handleUpdateAndCreateTopic), nil},
		{remoting.GetAllTopicConfig, b.handleGetAllTopicConfig, nil},
		{remoting.GetBrokerRuntimeInfo, b.handleGetBrokerRuntimeInfo, nil},
		{remoting.SearchOffsetByTimestamp, withHeader(b.handleSearchOffsetByTimestamp), nil},
		{remoting.GetMaxOffset, withHeader(b.handleGetMaxOffset), nil},
		{remoting.GetMinOffset, withHeader(b.handleGetMinOffset), nil},
		{remoting.GetEarliestMsgStoreTime, withHeader(b.handleGetEarliestMsgStoretime), nil},
		{remoting.HeartBeat, b.handleHeartBeat, nil},
		{remoting.UnregisterClient, b.handleUnregisterClient, nil},
		{remoting.GetConsumerListByGroup, b.handleGetConsumerListByGroup, nil},
		{remoting.GetAllConsumerOffset, b.handleGetAllConsumerOffset, nil},
		{remoting.GetAllDelayOffset, b.handleGetAllDelayOffset, nil},
		{remoting.UpdateAndCreateSubscriptionGroup, b.handleUpdateAndCreateSubscriptionGroup, nil},
		{remoting.GetAllSubscriptionGroupConfig, b.handleGetAllSubscriptionGroupConfig, nil},
		{remoting.GetTopicStatsInfo, withHeader(b.handleGetTopicStatsInfo), nil},
		{remoting.GetConsumerConnectionList, withHeader(b.handleGetConsumerConnectionList), nil},
		{remoting.GetProducerConnectionList, withHeader(b.handleGetProducerConnectionList), nil},
		{remoting.DeleteSubscriptionGroup, withHeader(b.handleDeleteSubscriptionGroup), nil},
		{remoting.GetConsumeStats, withHeader(b.handleGetConsumeStats), nil},
		{remoting.DeleteTopicInBroker, withHeader(b.handleDeleteTopicInBroker), nil},
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

// withHeader serves a code whose handler takes its decoded request
// header; a header that does not decode is answered like Java's failed
// decodeCommandCustomHeader.
func withHeader[H any, P interface {
	*H
	FromExt(remoting.ExtFields) error
}](serve func(context.Context, *server.Conn, P) *remoting.Command) server.Handler {
	return func(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
		h := P(new(H))
		if err := h.FromExt(req.Ext); err != nil {
			return adminHeaderError(err)
		}
		return serve(ctx, c, h)
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
