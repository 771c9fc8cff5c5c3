package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327): take
// a broker name's write permission away on every topic (before shutting it
// down), or give it back.

func (ns *NameServer) wipeWritePermOfBroker(_ context.Context, c *server.Conn, h *remoting.WipeWritePermOfBrokerRequestHeader) *remoting.Command {
	n := ns.routes.setWritePerm(h.BrokerName, false)
	ns.log.Info("wiped write permission", logKeyBroker, h.BrokerName, "topics", n, logKeyRemote, c.String())
	return withHeader(success(nil), &remoting.WipeWritePermOfBrokerResponseHeader{WipeTopicCount: int32(n)})
}

func (ns *NameServer) addWritePermOfBroker(_ context.Context, c *server.Conn, h *remoting.AddWritePermOfBrokerRequestHeader) *remoting.Command {
	n := ns.routes.setWritePerm(h.BrokerName, true)
	ns.log.Info("added write permission", logKeyBroker, h.BrokerName, "topics", n, logKeyRemote, c.String())
	return withHeader(success(nil), &remoting.AddWritePermOfBrokerResponseHeader{AddTopicCount: int32(n)})
}
