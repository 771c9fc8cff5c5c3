package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleCheckClientConfig is CHECK_CLIENT_CONFIG (46), which a consumer
// sends at start for a subscription that is not by tag (Java
// ClientManageProcessor.checkClientConfig). Tag subscriptions are
// accepted. Without EnablePropertyFilter (Java's default) every other
// type is refused with Java's remark; with it the expression is compiled
// and a failure answers SUBSCRIPTION_PARSE_FAILED with the error
// (docs/PROTOCOL.md §9.16).
func (b *Broker) handleCheckClientConfig(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var body remoting.CheckClientRequestBody
	if err := body.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, "check client config: "+err.Error())
	}
	sd := &body.SubscriptionData
	if isTagType(sd.ExpressionType) {
		return remoting.NewResponse(remoting.Success, "")
	}
	if !b.cfg.EnablePropertyFilter {
		return remoting.NewResponse(remoting.SystemError, remarkFilterNotByType+sd.ExpressionType)
	}
	if _, err := b.compileFilter(body.Group, sd.Topic, sd.SubString, sd.ExpressionType); err != nil {
		return remoting.NewResponse(remoting.SubscriptionParseFailed, err.Error())
	}
	return remoting.NewResponse(remoting.Success, "")
}
