package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUpdateAndCreateSubscriptionGroup is
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): the body is one
// SubscriptionGroupConfig, which replaces the group's config. Keys the
// body leaves out take Java's defaults. An empty body changes nothing.
func (b *Broker) handleUpdateAndCreateSubscriptionGroup(_ context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	if len(req.Body) == 0 {
		return remoting.NewResponse(remoting.Success, "")
	}
	var g remoting.SubscriptionGroupConfig
	if err := g.DecodeJSON(req.Body); err != nil {
		return remoting.NewResponse(remoting.SystemError, "decode subscription group config: "+err.Error())
	}
	if g.GroupName == "" {
		return remoting.NewResponse(remoting.SystemError, "subscription group config without groupName")
	}
	if err := b.groups.put(g); err != nil {
		return remoting.NewResponse(remoting.SystemError, "update subscription group config failed: "+err.Error())
	}
	b.log.Info("subscription group updated", "group", g.GroupName, "remote", remoteAddrString(c))
	return remoting.NewResponse(remoting.Success, "")
}
