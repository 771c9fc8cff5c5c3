package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// UNREGISTER_BROKER (104), docs/PROTOCOL.md §3.16, §9.12.

func (ns *NameServer) unregisterBroker(_ context.Context, _ *server.Conn, h *remoting.UnregisterBrokerRequestHeader) *remoting.Command {
	ns.routes.unregister(h.ClusterName, h.BrokerAddr, h.BrokerName, h.BrokerID)
	ns.log.Info("broker unregistered", logKeyBroker, h.BrokerName, logKeyAddr, h.BrokerAddr,
		logKeyCluster, h.ClusterName, "id", h.BrokerID)
	return success(nil)
}
