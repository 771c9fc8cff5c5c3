package broker

import (
	"errors"
	"fmt"

	"github.com/go-rocketmq/rocketmq"
)

// Groups a 4.9.8 broker knows by name (Java MixAll).
const (
	GroupToolsConsumer     = "TOOLS_CONSUMER"
	GroupScheduleConsumer  = "SCHEDULE_CONSUMER"
	GroupFilterSrvConsumer = "FILTERSRV_CONSUMER"
	GroupMonitorConsumer   = "__MONITOR_CONSUMER"
	GroupSelfTestProducer  = "SELF_TEST_P_GROUP"
	GroupSelfTestConsumer  = "SELF_TEST_C_GROUP"
	GroupONSHTTPProxy      = "CID_ONS-HTTP-PROXY"
	GroupONSAPIPermission  = "CID_ONSAPI_PERMISSION"
	GroupONSAPIOwner       = "CID_ONSAPI_OWNER"
	GroupONSAPIPull        = "CID_ONSAPI_PULL"
	GroupSysRMQTrans       = "CID_RMQ_SYS_TRANS"
)

// ValidateTopicBroker checks a topic as a 4.9.8 broker does
// (TopicValidator.validateTopic, answered with SYSTEM_ERROR): blank, then
// illegal characters, then length; the client checks length before
// characters. Reason is the broker's remark.
func ValidateTopicBroker(topic string) error {
	err := rocketmq.ValidateTopic(topic)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rocketmq.ErrBlankName):
		return &rocketmq.ValidationError{Reason: "The specified topic is blank.", Err: rocketmq.ErrBlankName}
	case rocketmq.IsTopicOrGroupIllegal(topic):
		return &rocketmq.ValidationError{Reason: "The specified topic contains illegal characters, allowing only " + rocketmq.ValidNamePattern, Err: rocketmq.ErrIllegalName}
	}
	return &rocketmq.ValidationError{Reason: "The specified topic is longer than topic max length.", Err: rocketmq.ErrNameTooLong}
}

// CheckNotSystemTopic fails for a system topic (creating one is refused).
func CheckNotSystemTopic(topic string) error {
	if rocketmq.IsSystemTopic(topic) {
		return &rocketmq.ValidationError{Reason: fmt.Sprintf("The topic[%s] is conflict with system topic.", topic), Err: rocketmq.ErrSystemTopic}
	}
	return nil
}
