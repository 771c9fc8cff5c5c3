package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleDeleteSubscriptionGroup is DELETE_SUBSCRIPTIONGROUP (207): drop the
// group's config and, with removeOffset/cleanOffset, its committed
// offsets. Deleting an unknown group succeeds, as in Java.
func (b *Broker) handleDeleteSubscriptionGroup(_ context.Context, c *server.Conn, h *remoting.DeleteSubscriptionGroupRequestHeader) *remoting.Command {
	removed, perr := b.groups.remove(h.GroupName)
	if h.CleanOffset {
		b.offsets.removeGroup(h.GroupName)
	}
	b.log.Info("subscription group deleted", "group", h.GroupName, "existed", removed, "cleanOffset", h.CleanOffset, "remote", remoteAddrString(c))
	if perr != nil {
		return remoting.NewResponse(remoting.SystemError, "delete subscription group config failed: "+perr.Error())
	}
	return remoting.NewResponse(remoting.Success, "")
}
