package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// GET_BROKER_CLUSTER_INFO (106), docs/PROTOCOL.md §4.8. Java always writes it in
// fastjson's default form (unquoted brokerAddrs keys, wire 0014).

func (ns *NameServer) getBrokerClusterInfo(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	ci := ns.routes.clusterInfo()
	return success(ci.AppendJSON(nil, remoting.JSONFastjson))
}
