package namesrv

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Topic list queries, all answered with a TopicList body (docs/PROTOCOL.md §4.9):
// GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206), GET_TOPICS_BY_CLUSTER (224),
// GET_SYSTEM_TOPIC_LIST_FROM_NS (304), GET_UNIT_TOPIC_LIST (311),
// GET_HAS_UNIT_SUB_TOPIC_LIST (312), GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313).

func (ns *NameServer) getAllTopicList(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	return success(encodeTopicList(ns.routes.allTopics(), ""))
}

func (ns *NameServer) getTopicsByCluster(_ context.Context, _ *server.Conn, h *remoting.GetTopicsByClusterRequestHeader) *remoting.Command {
	return success(encodeTopicList(ns.routes.topicsByCluster(h.Cluster), ""))
}

func (ns *NameServer) getSystemTopicList(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	topics, addr := ns.routes.systemTopics()
	return success(encodeTopicList(topics, addr))
}

func (ns *NameServer) getUnitTopicList(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	return success(encodeTopicList(ns.routes.topicsBySysFlag(func(f int32) bool {
		return f&topicFlagUnit != 0
	}), ""))
}

func (ns *NameServer) getHasUnitSubTopicList(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	return success(encodeTopicList(ns.routes.topicsBySysFlag(func(f int32) bool {
		return f&topicFlagUnitSub != 0
	}), ""))
}

func (ns *NameServer) getHasUnitSubUnunitTopicList(_ context.Context, _ *server.Conn, _ *remoting.Command) *remoting.Command {
	return success(encodeTopicList(ns.routes.topicsBySysFlag(func(f int32) bool {
		return f&topicFlagUnit == 0 && f&topicFlagUnitSub != 0
	}), ""))
}
