package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleGetAllSubscriptionGroupConfig is GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201): the whole table with its data version, in fastjson's form.
func (b *Broker) handleGetAllSubscriptionGroupConfig(context.Context, *server.Conn, *remoting.Command) *remoting.Command {
	w := b.groups.wrapper()
	return jsonResponse(&w)
}
