package broker

import (
	"context"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUpdateAndCreateTopic serves UPDATE_AND_CREATE_TOPIC (17): validate
// the name as 4.9.8 does, store the config (persisted, DataVersion bumped)
// and re-register with the NameServers.
func (b *Broker) handleUpdateAndCreateTopic(_ context.Context, c *server.Conn, h *remoting.CreateTopicRequestHeader) *remoting.Command {
	if err := ValidateTopicBroker(h.Topic); err != nil {
		return remoting.NewResponse(remoting.SystemError, validationReason(err))
	}
	if err := CheckNotSystemTopic(h.Topic); err != nil {
		return remoting.NewResponse(remoting.SystemError, validationReason(err))
	}
	switch h.TopicFilterType {
	case "SINGLE_TAG", "MULTI_TAG":
	default: // Java's TopicFilterType.valueOf fails
		return remoting.NewResponse(remoting.SystemError,
			"java.lang.IllegalArgumentException: No enum constant org.apache.rocketmq.common.TopicFilterType."+h.TopicFilterType)
	}
	tc := remoting.NewTopicConfig(h.Topic)
	tc.ReadQueueNums, tc.WriteQueueNums = h.ReadQueueNums, h.WriteQueueNums
	tc.Perm = h.Perm
	tc.TopicFilterType = h.TopicFilterType
	if h.TopicSysFlag != nil {
		tc.TopicSysFlag = *h.TopicSysFlag
	}
	tc.Order = h.Order
	b.topics.put(tc)
	b.log.Info("topic created or updated by admin", "topic", tc.TopicName, "read", tc.ReadQueueNums,
		"write", tc.WriteQueueNums, "perm", tc.Perm, "remote", c.String())
	// 4.9.8 leaves createResponseCommand's remark on the SUCCESS answer
	// (wire 0006).
	return remoting.NewResponse(remoting.Success, "not set any response code")
}
