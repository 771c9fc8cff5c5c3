package broker

import (
	"context"
	"slices"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleQueryTopicConsumeByWho is QUERY_TOPIC_CONSUME_BY_WHO (300): the
// groups with a live member subscribed to the topic and the groups with a
// committed offset of it (Java AdminBrokerProcessor.queryTopicConsumeByWho).
// The admin tool's topicList -c and its message track ask it. Sorted here;
// Java's order is a HashSet's.
func (b *Broker) handleQueryTopicConsumeByWho(_ context.Context, _ *server.Conn, h *remoting.QueryTopicConsumeByWhoRequestHeader) *remoting.Command {
	groups := append(b.clients.groupsSubscribedTo(h.Topic), b.offsets.groupsOf(h.Topic)...)
	slices.Sort(groups)
	return jsonResponse(&remoting.GroupList{GroupList: slices.Compact(groups)})
}
