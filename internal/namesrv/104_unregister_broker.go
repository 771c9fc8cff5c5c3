package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// UNREGISTER_BROKER (104), PROTOCOL.md §3.16, §9.12.

func (ns *NameServer) unregisterBroker(_ context.Context, _ *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.UnregisterBrokerRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return badRequest(err)
	}
	ns.routes.unregister(h.ClusterName, h.BrokerAddr, h.BrokerName, h.BrokerID)
	ns.log.Info("broker unregistered", logKeyBroker, h.BrokerName, logKeyAddr, h.BrokerAddr,
		logKeyCluster, h.ClusterName, "id", h.BrokerID)
	return success(nil)
}
