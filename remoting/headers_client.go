package remoting

// Headers of consumer, transaction and broker-to-client RPCs (docs/PROTOCOL.md
// §3.8 – §3.13, §3.17). Key order follows Java's HashMap iteration (as
// captured where a capture exists).

// ConsumerSendMsgBackRequestHeader is CONSUMER_SEND_MSG_BACK (36).
type ConsumerSendMsgBackRequestHeader struct {
	Offset            int64 // commit-log offset of the message
	Group             string
	DelayLevel        int32 // 0: broker chooses; < 0: straight to DLQ
	OriginMsgID       *string
	OriginTopic       *string
	UnitMode          bool
	MaxReconsumeTimes *int32
	BrokerName        *string
}

// AppendExt implements CustomHeader.
func (h *ConsumerSendMsgBackRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, consumerSendMsgBackRequestFields)
}

// FromExt implements CustomHeader.
func (h *ConsumerSendMsgBackRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, consumerSendMsgBackRequestFields)
}

var consumerSendMsgBackRequestFields = hdrTableOf(func(h *ConsumerSendMsgBackRequestHeader, l *hdrList) {
	l.optI32("maxReconsumeTimes", &h.MaxReconsumeTimes)
	l.i64("offset", &h.Offset)
	l.optStr("bname", &h.BrokerName)
	l.i32("delayLevel", &h.DelayLevel)
	l.optStr("originTopic", &h.OriginTopic)
	l.optStr("originMsgId", &h.OriginMsgID)
	l.boolPrim("unitMode", &h.UnitMode)
	l.str("group", &h.Group)
})

// Transaction states of EndTransactionRequestHeader.CommitOrRollback.
const (
	TransactionNotType  int32 = 0        // unknown: the broker will check back
	TransactionCommit   int32 = 0x2 << 2 // 8
	TransactionRollback int32 = 0x3 << 2 // 12
)

// EndTransactionRequestHeader is END_TRANSACTION (37), sent oneway.
type EndTransactionRequestHeader struct {
	Topic                *string // 5.x
	ProducerGroup        string
	TranStateTableOffset int64
	CommitLogOffset      int64
	CommitOrRollback     int32 // TransactionCommit, TransactionRollback or TransactionNotType
	FromTransactionCheck bool  // Java initializes it to false, so it is always written
	MsgID                string
	TransactionID        *string
	BrokerName           *string
}

// AppendExt implements CustomHeader.
func (h *EndTransactionRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, endTransactionRequestFields)
}

// FromExt implements CustomHeader.
func (h *EndTransactionRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, endTransactionRequestFields)
}

var endTransactionRequestFields = hdrTableOf(func(h *EndTransactionRequestHeader, l *hdrList) {
	l.str("producerGroup", &h.ProducerGroup)
	l.optStr("bname", &h.BrokerName)
	l.i64("commitLogOffset", &h.CommitLogOffset)
	l.optStr("topic", &h.Topic)
	l.str("msgId", &h.MsgID)
	l.i64("tranStateTableOffset", &h.TranStateTableOffset)
	l.i32("commitOrRollback", &h.CommitOrRollback)
	l.optStr("transactionId", &h.TransactionID)
	l.boolPrim("fromTransactionCheck", &h.FromTransactionCheck)
})

// CheckTransactionStateRequestHeader is CHECK_TRANSACTION_STATE (39),
// broker to producer, oneway. The body is the half message.
type CheckTransactionStateRequestHeader struct {
	Topic                *string // 5.x
	TranStateTableOffset int64
	CommitLogOffset      int64
	MsgID                *string // UNIQ_KEY
	TransactionID        *string
	OffsetMsgID          *string
	BrokerName           *string // 5.x
}

// AppendExt implements CustomHeader.
func (h *CheckTransactionStateRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, checkTransactionStateRequestFields)
}

// FromExt implements CustomHeader.
func (h *CheckTransactionStateRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, checkTransactionStateRequestFields)
}

var checkTransactionStateRequestFields = hdrTableOf(func(h *CheckTransactionStateRequestHeader, l *hdrList) {
	l.optStr("bname", &h.BrokerName)
	l.i64("commitLogOffset", &h.CommitLogOffset)
	l.optStr("topic", &h.Topic)
	l.optStr("msgId", &h.MsgID)
	l.i64("tranStateTableOffset", &h.TranStateTableOffset)
	l.optStr("offsetMsgId", &h.OffsetMsgID)
	l.optStr("transactionId", &h.TransactionID)
})

// UnregisterClientRequestHeader is UNREGISTER_CLIENT (35). Note the key
// "clientID" with a capital ID.
type UnregisterClientRequestHeader struct {
	ClientID      string
	ProducerGroup *string
	ConsumerGroup *string
}

// AppendExt implements CustomHeader.
func (h *UnregisterClientRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, unregisterClientRequestFields)
}

// FromExt implements CustomHeader.
func (h *UnregisterClientRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, unregisterClientRequestFields)
}

var unregisterClientRequestFields = hdrTableOf(func(h *UnregisterClientRequestHeader, l *hdrList) {
	l.optStr("producerGroup", &h.ProducerGroup)
	l.str("clientID", &h.ClientID)
	l.optStr("consumerGroup", &h.ConsumerGroup)
})

// ConsumerGroupRequestHeader is a header whose only field is consumerGroup.
type ConsumerGroupRequestHeader struct {
	ConsumerGroup string
}

// Java's names for ConsumerGroupRequestHeader.
type (
	GetConsumerListByGroupRequestHeader    = ConsumerGroupRequestHeader // 38
	NotifyConsumerIdsChangedRequestHeader  = ConsumerGroupRequestHeader // 40
	GetConsumerConnectionListRequestHeader = ConsumerGroupRequestHeader // 203
)

// AppendExt implements CustomHeader.
func (h *ConsumerGroupRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, consumerGroupRequestFields)
}

// FromExt implements CustomHeader.
func (h *ConsumerGroupRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, consumerGroupRequestFields)
}

var consumerGroupRequestFields = hdrTableOf(func(h *ConsumerGroupRequestHeader, l *hdrList) {
	l.str("consumerGroup", &h.ConsumerGroup)
})

// GetConsumerRunningInfoRequestHeader is GET_CONSUMER_RUNNING_INFO (307).
type GetConsumerRunningInfoRequestHeader struct {
	ConsumerGroup string
	ClientID      string // key "clientId"
	JstackEnable  bool
}

// AppendExt implements CustomHeader.
func (h *GetConsumerRunningInfoRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getConsumerRunningInfoRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetConsumerRunningInfoRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getConsumerRunningInfoRequestFields)
}

var getConsumerRunningInfoRequestFields = hdrTableOf(func(h *GetConsumerRunningInfoRequestHeader, l *hdrList) {
	l.str("clientId", &h.ClientID)
	l.boolPrim("jstackEnable", &h.JstackEnable)
	l.str("consumerGroup", &h.ConsumerGroup)
})

// ConsumeMessageDirectlyResultRequestHeader is CONSUME_MESSAGE_DIRECTLY
// (309); the request body is one stored message.
type ConsumeMessageDirectlyResultRequestHeader struct {
	ConsumerGroup string
	ClientID      *string
	MsgID         *string
	BrokerName    *string // key "brokerName" (not bname)
	Topic         *string // 5.x
	TopicSysFlag  *int32  // 5.x
	GroupSysFlag  *int32  // 5.x
}

// AppendExt implements CustomHeader.
func (h *ConsumeMessageDirectlyResultRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, consumeMessageDirectlyResultRequestFields)
}

// FromExt implements CustomHeader.
func (h *ConsumeMessageDirectlyResultRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, consumeMessageDirectlyResultRequestFields)
}

var consumeMessageDirectlyResultRequestFields = hdrTableOf(func(h *ConsumeMessageDirectlyResultRequestHeader, l *hdrList) {
	l.optStr("clientId", &h.ClientID)
	l.optI32("groupSysFlag", &h.GroupSysFlag)
	l.optStr("msgId", &h.MsgID)
	l.optStr("topic", &h.Topic)
	l.optStr("brokerName", &h.BrokerName)
	l.str("consumerGroup", &h.ConsumerGroup)
	l.optI32("topicSysFlag", &h.TopicSysFlag)
})
