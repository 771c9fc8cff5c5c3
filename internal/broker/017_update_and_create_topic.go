package broker

import (
	"context"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// handleUpdateAndCreateTopic serves UPDATE_AND_CREATE_TOPIC (17): validate
// the name as 4.9.8 does, the perm as 5.x's admin does (PermName.isValid)
// and the queue counts against Config.MaxQueueNums, store the config
// (persisted, DataVersion bumped) and re-register with the NameServers
// before answering.
// Every refusal is SYSTEM_ERROR, 4.9.8's code on this path; a config that
// could not be persisted is refused too.
func (b *Broker) handleUpdateAndCreateTopic(ctx context.Context, c *server.Conn, h *remoting.CreateTopicRequestHeader) *remoting.Command {
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
	if h.Perm < 0 || h.Perm >= rocketmq.PermPriority {
		return remoting.NewResponse(remoting.SystemError, "topicPermission value: "+strconv.Itoa(int(h.Perm))+" is invalid.")
	}
	if r := queueNumsRemark("readQueueNums", h.ReadQueueNums, b.cfg.MaxQueueNums); r != "" {
		return remoting.NewResponse(remoting.SystemError, r)
	}
	if r := queueNumsRemark("writeQueueNums", h.WriteQueueNums, b.cfg.MaxQueueNums); r != "" {
		return remoting.NewResponse(remoting.SystemError, r)
	}
	tc := remoting.NewTopicConfig(h.Topic)
	tc.ReadQueueNums, tc.WriteQueueNums = h.ReadQueueNums, h.WriteQueueNums
	tc.Perm = h.Perm
	tc.TopicFilterType = h.TopicFilterType
	if h.TopicSysFlag != nil {
		tc.TopicSysFlag = *h.TopicSysFlag
	}
	tc.Order = h.Order
	if err := b.topics.put(tc); err != nil {
		return remoting.NewResponse(remoting.SystemError, "update topic config failed: "+err.Error())
	}
	b.log.Info("topic created or updated by admin", "topic", tc.TopicName, "read", tc.ReadQueueNums,
		"write", tc.WriteQueueNums, "perm", tc.Perm, "remote", c.String())
	// Answer once the NameServers have the topic, as 4.9.8 registers
	// (BrokerController.registerIncrementBrokerData) before it answers: a
	// client told the topic exists finds its route at once. The change
	// already started a round; this one, after it, carries the topic too.
	b.registerAll(ctx)
	// 4.9.8 leaves createResponseCommand's remark on the SUCCESS answer
	// (wire 0006).
	return remoting.NewResponse(remoting.Success, "not set any response code")
}

// queueNumsRemark is the remark refusing a queue count outside 1..limit,
// "" for a valid one. Java checks no bound and has no remark for it.
func queueNumsRemark(field string, n, limit int32) string {
	if n >= 1 && n <= limit {
		return ""
	}
	return "The " + field + "[" + strconv.Itoa(int(n)) + "] is out of range [1, " + strconv.Itoa(int(limit)) + "]."
}
