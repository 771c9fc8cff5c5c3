package rocketmq

import "strings"

// Message property keys (docs/PROTOCOL.md §5.2, Java MessageConst).
const (
	PropertyKeys                           = "KEYS"
	PropertyTags                           = "TAGS"
	PropertyWaitStoreMsgOK                 = "WAIT"
	PropertyDelayLevel                     = "DELAY"
	PropertyRetryTopic                     = "RETRY_TOPIC"
	PropertyRealTopic                      = "REAL_TOPIC"
	PropertyRealQueueID                    = "REAL_QID"
	PropertyTransactionPrepared            = "TRAN_MSG"
	PropertyProducerGroup                  = "PGROUP"
	PropertyMinOffset                      = "MIN_OFFSET"
	PropertyMaxOffset                      = "MAX_OFFSET"
	PropertyBuyerID                        = "BUYER_ID"
	PropertyOriginMessageID                = "ORIGIN_MESSAGE_ID"
	PropertyTransferFlag                   = "TRANSFER_FLAG"
	PropertyCorrectionFlag                 = "CORRECTION_FLAG"
	PropertyMQ2Flag                        = "MQ2_FLAG"
	PropertyReconsumeTime                  = "RECONSUME_TIME"
	PropertyMsgRegion                      = "MSG_REGION"
	PropertyTraceSwitch                    = "TRACE_ON"
	PropertyUniqKey                        = "UNIQ_KEY"
	PropertyExtendUniqInfo                 = "EXTEND_UNIQ_INFO"
	PropertyMaxReconsumeTimes              = "MAX_RECONSUME_TIMES"
	PropertyConsumeStartTimestamp          = "CONSUME_START_TIME"
	PropertyInnerNum                       = "INNER_NUM"
	PropertyInnerBase                      = "INNER_BASE"
	PropertyDupInfo                        = "DUP_INFO"
	PropertyCheckImmunityTimeInSeconds     = "CHECK_IMMUNITY_TIME_IN_SECONDS"
	PropertyTransactionPreparedQueueOffset = "TRAN_PREPARED_QUEUE_OFFSET"
	PropertyTransactionID                  = "__transactionId__"
	PropertyTransactionCheckTimes          = "TRANSACTION_CHECK_TIMES"
	PropertyInstanceID                     = "INSTANCE_ID"
	PropertyCorrelationID                  = "CORRELATION_ID"
	PropertyReplyToClient                  = "REPLY_TO_CLIENT"
	PropertyMessageTTL                     = "TTL"
	PropertyReplyMessageArriveTime         = "ARRIVE_TIME"
	PropertyPushReplyTime                  = "PUSH_REPLY_TIME"
	PropertyCluster                        = "CLUSTER"
	PropertyMessageType                    = "MSG_TYPE"
	PropertyPopCK                          = "POP_CK"
	PropertyPopCKOffset                    = "POP_CK_OFFSET"
	PropertyFirstPopTime                   = "1ST_POP_TIME"
	PropertyShardingKey                    = "__SHARDINGKEY"
	PropertyForwardQueueID                 = "PROPERTY_FORWARD_QUEUE_ID"
	PropertyRedirect                       = "REDIRECT"
	PropertyInnerMultiDispatch             = "INNER_MULTI_DISPATCH"
	PropertyInnerMultiQueueOffset          = "INNER_MULTI_QUEUE_OFFSET"
	PropertyTraceContext                   = "TRACE_CONTEXT"
	PropertyTimerDelaySec                  = "TIMER_DELAY_SEC"
	PropertyTimerDeliverMS                 = "TIMER_DELIVER_MS"
	PropertyTimerDelayMS                   = "TIMER_DELAY_MS"
	PropertyTimerEnqueueMS                 = "TIMER_ENQUEUE_MS"
	PropertyTimerDequeueMS                 = "TIMER_DEQUEUE_MS"
	PropertyTimerRollTimes                 = "TIMER_ROLL_TIMES"
	PropertyTimerOutMS                     = "TIMER_OUT_MS"
	PropertyTimerDelUniqKey                = "TIMER_DEL_UNIQKEY"
	PropertyTimerDelayLevel                = "TIMER_DELAY_LEVEL"
	PropertyBornHost                       = "__BORNHOST"
	PropertyBornTimestamp                  = "BORN_TIMESTAMP"
	PropertyDLQOriginTopic                 = "DLQ_ORIGIN_TOPIC"
	PropertyDLQOriginMessageID             = "DLQ_ORIGIN_MESSAGE_ID"
	PropertyCRC32                          = "__CRC32#"
	PropertyTransientPrefix                = "__RMQ.TRANSIENT."
	PropertyTransientTopicConfig           = PropertyTransientPrefix + "TOPIC_SYS_FLAG"
	PropertyTransientGroupConfig           = PropertyTransientPrefix + "GROUP_SYS_FLAG"
	PropertyStartDeliverTime               = "__STARTDELIVERTIME"
)

// KeySeparator joins several business keys in the KEYS property.
const KeySeparator = " "

// ReplyMessageFlag is the MSG_TYPE value of a reply message.
const ReplyMessageFlag = "reply"

// IsReservedProperty reports whether name is a system property that user
// code may not set as a user property (Java MessageConst.STRING_HASH_SET, as
// of 5.x: a superset of the 4.9.8 set).
func IsReservedProperty(name string) bool {
	switch name {
	case PropertyTraceSwitch, PropertyMsgRegion, PropertyKeys, PropertyTags,
		PropertyWaitStoreMsgOK, PropertyDelayLevel, PropertyRetryTopic, PropertyRealTopic,
		PropertyRealQueueID, PropertyTransactionPrepared, PropertyProducerGroup,
		PropertyMinOffset, PropertyMaxOffset, PropertyBuyerID, PropertyOriginMessageID,
		PropertyTransferFlag, PropertyCorrectionFlag, PropertyMQ2Flag, PropertyReconsumeTime,
		PropertyUniqKey, PropertyMaxReconsumeTimes, PropertyConsumeStartTimestamp,
		PropertyPopCK, PropertyPopCKOffset, PropertyFirstPopTime,
		PropertyTransactionPreparedQueueOffset, PropertyDupInfo, PropertyExtendUniqInfo,
		PropertyInstanceID, PropertyCorrelationID, PropertyReplyToClient, PropertyMessageTTL,
		PropertyReplyMessageArriveTime, PropertyPushReplyTime, PropertyCluster,
		PropertyMessageType, PropertyInnerMultiQueueOffset, PropertyTimerDelayMS,
		PropertyTimerDelaySec, PropertyTimerDeliverMS, PropertyTimerEnqueueMS,
		PropertyTimerDequeueMS, PropertyTimerRollTimes, PropertyTimerOutMS,
		PropertyTimerDelUniqKey, PropertyTimerDelayLevel, PropertyBornHost,
		PropertyBornTimestamp, PropertyDLQOriginTopic, PropertyDLQOriginMessageID,
		PropertyCRC32:
		return true
	}
	return false
}

// Well-known topics (docs/PROTOCOL.md §7.4, Java TopicValidator).
const (
	TopicAutoCreate        = "TBW102"
	TopicSchedule          = "SCHEDULE_TOPIC_XXXX"
	TopicBenchmark         = "BenchmarkTest"
	TopicTransHalf         = "RMQ_SYS_TRANS_HALF_TOPIC"
	TopicTrace             = "RMQ_SYS_TRACE_TOPIC"
	TopicTransOpHalf       = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	TopicTransCheckMaxTime = "TRANS_CHECK_MAX_TIME_TOPIC"
	TopicSelfTest          = "SELF_TEST_TOPIC"
	TopicOffsetMovedEvent  = "OFFSET_MOVED_EVENT"
	SystemTopicPrefix      = "rmq_sys_"
)

// Prefixes, suffixes and flags of MixAll.
const (
	RetryGroupTopicPrefix = "%RETRY%"
	DLQGroupTopicPrefix   = "%DLQ%"
	LMQPrefix             = "%LMQ%"
	ReplyTopicPostfix     = "REPLY_TOPIC"
	UniqueMsgQueryFlag    = "_UNIQUE_KEY_QUERY"
	DefaultTraceRegionID  = "DefaultRegion"
	CIDRMQSysPrefix       = "CID_RMQ_SYS_"
)

// Groups a client uses by default (MixAll).
const (
	GroupDefaultProducer     = "DEFAULT_PRODUCER"
	GroupDefaultConsumer     = "DEFAULT_CONSUMER"
	GroupClientInnerProducer = "CLIENT_INNER_PRODUCER"
)

// SystemTopics lists the fixed system topics of 4.9.8 (TopicValidator's
// SYSTEM_TOPIC_SET). Any topic with SystemTopicPrefix is a system topic too.
// The function returns a fresh slice; callers may keep or modify it.
func SystemTopics() []string {
	return []string{
		TopicAutoCreate, TopicSchedule, TopicBenchmark, TopicTransHalf, TopicTrace,
		TopicTransOpHalf, TopicTransCheckMaxTime, TopicSelfTest, TopicOffsetMovedEvent,
	}
}

// NotAllowedSendTopics lists the topics clients may not send to.
func NotAllowedSendTopics() []string {
	return []string{
		TopicSchedule, TopicTransHalf, TopicTransOpHalf, TopicTransCheckMaxTime,
		TopicSelfTest, TopicOffsetMovedEvent,
	}
}

// IsSystemTopic reports whether topic is a system topic (TBW102 and the
// rmq_sys_ prefix included; both may still be sent to).
func IsSystemTopic(topic string) bool {
	switch topic {
	case TopicAutoCreate, TopicSchedule, TopicBenchmark, TopicTransHalf, TopicTrace,
		TopicTransOpHalf, TopicTransCheckMaxTime, TopicSelfTest, TopicOffsetMovedEvent:
		return true
	}
	return strings.HasPrefix(topic, SystemTopicPrefix)
}

// IsNotAllowedSendTopic reports whether clients are refused sending to topic.
func IsNotAllowedSendTopic(topic string) bool {
	switch topic {
	case TopicSchedule, TopicTransHalf, TopicTransOpHalf, TopicTransCheckMaxTime,
		TopicSelfTest, TopicOffsetMovedEvent:
		return true
	}
	return false
}

// RetryTopic returns the retry topic of a consumer group.
func RetryTopic(group string) string { return RetryGroupTopicPrefix + group }

// DLQTopic returns the dead-letter topic of a consumer group.
func DLQTopic(group string) string { return DLQGroupTopicPrefix + group }

// ReplyTopic returns the request-reply topic of a cluster.
func ReplyTopic(cluster string) string { return cluster + "_" + ReplyTopicPostfix }

// IsRetryTopic reports whether topic is a %RETRY% topic.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupTopicPrefix) }

// IsDLQTopic reports whether topic is a %DLQ% topic.
func IsDLQTopic(topic string) bool { return strings.HasPrefix(topic, DLQGroupTopicPrefix) }

// IsLMQ reports whether topic is a light message queue.
func IsLMQ(topic string) bool { return strings.HasPrefix(topic, LMQPrefix) }

// IsSysConsumerGroup reports whether group is a broker-internal group.
func IsSysConsumerGroup(group string) bool { return strings.HasPrefix(group, CIDRMQSysPrefix) }

// Permission bits of topics and brokers (docs/PROTOCOL.md §7.2, Java PermName).
const (
	PermPriority = 1 << 3
	PermRead     = 1 << 2
	PermWrite    = 1 << 1
	PermInherit  = 1
)

// PermReadable reports whether perm has the READ bit.
func PermReadable(perm int) bool { return perm&PermRead != 0 }

// PermWriteable reports whether perm has the WRITE bit.
func PermWriteable(perm int) bool { return perm&PermWrite != 0 }

// PermInherited reports whether perm has the INHERIT bit.
func PermInherited(perm int) bool { return perm&PermInherit != 0 }

// PermValid reports whether perm is a valid topic permission (0..7).
func PermValid(perm int) bool { return perm >= 0 && perm < PermPriority }

// PermString renders perm like Java's perm2String: "RWX" with '-' for a
// missing bit.
func PermString(perm int) string {
	b := [3]byte{'-', '-', '-'}
	if PermReadable(perm) {
		b[0] = 'R'
	}
	if PermWriteable(perm) {
		b[1] = 'W'
	}
	if PermInherited(perm) {
		b[2] = 'X'
	}
	return string(b[:])
}

// Sizes and limits (docs/PROTOCOL.md §7.6).
const (
	// DefaultMaxMessageSize is the default producer and broker limit on a
	// (possibly compressed) body: 4 MiB.
	DefaultMaxMessageSize = 4 << 20
	// TopicMaxLength is the longest topic name clients and brokers accept.
	TopicMaxLength = 127
	// GroupMaxLength is the longest group name a 4.x client accepts.
	GroupMaxLength = 255
	// DefaultCompressOverSize is the body size from which producers
	// compress (compressMsgBodyOverHowmuch).
	DefaultCompressOverSize = 4096
	// DefaultCompressLevel is the zlib level producers use.
	DefaultCompressLevel = 5
	// RecordMaxExtraSize is how much a stored record may exceed the body
	// limit (headers, topic, properties).
	RecordMaxExtraSize = 64 << 10
	// MaxDelayLevel is the highest default delay level.
	MaxDelayLevel = 18
	// DefaultQueryMaxNum is the broker's cap on unique-key query results.
	DefaultQueryMaxNum = 32
)
