package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleCheckClientConfig is CHECK_CLIENT_CONFIG (46), which a consumer
// sends at start for a subscription that is not by tag (Java
// ClientManageProcessor.checkClientConfig). This broker has no property
// filter (enablePropertyFilter is off, Java's default), so it refuses
// every SQL92 subscription with Java's remark and accepts tag ones.
func (b *Broker) handleCheckClientConfig(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var body remoting.CheckClientRequestBody
	if err := body.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, "check client config: "+err.Error())
	}
	if typ := body.SubscriptionData.ExpressionType; !isTagType(typ) {
		return remoting.NewResponse(remoting.SystemError, "The broker does not support consumer to filter message by "+typ)
	}
	return remoting.NewResponse(remoting.Success, "")
}
