package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// DELETE_TOPIC_IN_NAMESRV (216): drop a topic's route, or only its queues on
// one cluster's brokers when clusterName is given.

func (ns *NameServer) deleteTopicInNamesrv(_ context.Context, c *server.Conn, h *remoting.DeleteTopicFromNamesrvRequestHeader) *remoting.Command {
	cluster := ""
	if h.ClusterName != nil {
		cluster = *h.ClusterName
	}
	ns.routes.deleteTopic(h.Topic, cluster)
	ns.log.Info("topic deleted", "topic", h.Topic, logKeyCluster, cluster, logKeyRemote, c.String())
	return success(nil)
}
