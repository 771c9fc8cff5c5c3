package remoting

// Headers of consumer, transaction and broker-to-client RPCs (PROTOCOL.md
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
	ext = hdrOptI32(ext, "maxReconsumeTimes", h.MaxReconsumeTimes)
	ext = hdrI64(ext, "offset", h.Offset)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrI32(ext, "delayLevel", h.DelayLevel)
	ext = hdrOptStr(ext, "originTopic", h.OriginTopic)
	ext = hdrOptStr(ext, "originMsgId", h.OriginMsgID)
	ext = hdrBool(ext, "unitMode", h.UnitMode)
	ext = hdrStr(ext, "group", h.Group)
	return ext
}

// FromExt implements CustomHeader.
func (h *ConsumerSendMsgBackRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = ConsumerSendMsgBackRequestHeader{
		Offset:            r.i64("offset"),
		Group:             r.str("group"),
		DelayLevel:        r.i32("delayLevel"),
		OriginMsgID:       r.optStr("originMsgId"),
		OriginTopic:       r.optStr("originTopic"),
		UnitMode:          r.boolOr("unitMode", false),
		MaxReconsumeTimes: r.optI32("maxReconsumeTimes"),
		BrokerName:        r.optStr("bname"),
	}
	return r.err
}

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
	ext = hdrStr(ext, "producerGroup", h.ProducerGroup)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrI64(ext, "commitLogOffset", h.CommitLogOffset)
	ext = hdrOptStr(ext, "topic", h.Topic)
	ext = hdrStr(ext, "msgId", h.MsgID)
	ext = hdrI64(ext, "tranStateTableOffset", h.TranStateTableOffset)
	ext = hdrI32(ext, "commitOrRollback", h.CommitOrRollback)
	ext = hdrOptStr(ext, "transactionId", h.TransactionID)
	ext = hdrBool(ext, "fromTransactionCheck", h.FromTransactionCheck)
	return ext
}

// FromExt implements CustomHeader.
func (h *EndTransactionRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = EndTransactionRequestHeader{
		Topic:                r.optStr("topic"),
		ProducerGroup:        r.str("producerGroup"),
		TranStateTableOffset: r.i64("tranStateTableOffset"),
		CommitLogOffset:      r.i64("commitLogOffset"),
		CommitOrRollback:     r.i32("commitOrRollback"),
		FromTransactionCheck: r.boolOr("fromTransactionCheck", false),
		MsgID:                r.str("msgId"),
		TransactionID:        r.optStr("transactionId"),
		BrokerName:           r.optStr("bname"),
	}
	return r.err
}

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
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrI64(ext, "commitLogOffset", h.CommitLogOffset)
	ext = hdrOptStr(ext, "topic", h.Topic)
	ext = hdrOptStr(ext, "msgId", h.MsgID)
	ext = hdrI64(ext, "tranStateTableOffset", h.TranStateTableOffset)
	ext = hdrOptStr(ext, "offsetMsgId", h.OffsetMsgID)
	ext = hdrOptStr(ext, "transactionId", h.TransactionID)
	return ext
}

// FromExt implements CustomHeader.
func (h *CheckTransactionStateRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = CheckTransactionStateRequestHeader{
		Topic:                r.optStr("topic"),
		TranStateTableOffset: r.i64("tranStateTableOffset"),
		CommitLogOffset:      r.i64("commitLogOffset"),
		MsgID:                r.optStr("msgId"),
		TransactionID:        r.optStr("transactionId"),
		OffsetMsgID:          r.optStr("offsetMsgId"),
		BrokerName:           r.optStr("bname"),
	}
	return r.err
}

// UnregisterClientRequestHeader is UNREGISTER_CLIENT (35). Note the key
// "clientID" with a capital ID.
type UnregisterClientRequestHeader struct {
	ClientID      string
	ProducerGroup *string
	ConsumerGroup *string
}

// AppendExt implements CustomHeader.
func (h *UnregisterClientRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptStr(ext, "producerGroup", h.ProducerGroup)
	ext = hdrStr(ext, "clientID", h.ClientID)
	ext = hdrOptStr(ext, "consumerGroup", h.ConsumerGroup)
	return ext
}

// FromExt implements CustomHeader.
func (h *UnregisterClientRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = UnregisterClientRequestHeader{
		ClientID:      r.str("clientID"),
		ProducerGroup: r.optStr("producerGroup"),
		ConsumerGroup: r.optStr("consumerGroup"),
	}
	return r.err
}

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
	return hdrStr(ext, "consumerGroup", h.ConsumerGroup)
}

// FromExt implements CustomHeader.
func (h *ConsumerGroupRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.ConsumerGroup = r.str("consumerGroup")
	return r.err
}

// GetConsumerRunningInfoRequestHeader is GET_CONSUMER_RUNNING_INFO (307).
type GetConsumerRunningInfoRequestHeader struct {
	ConsumerGroup string
	ClientID      string // key "clientId"
	JstackEnable  bool
}

// AppendExt implements CustomHeader.
func (h *GetConsumerRunningInfoRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "clientId", h.ClientID)
	ext = hdrBool(ext, "jstackEnable", h.JstackEnable)
	ext = hdrStr(ext, "consumerGroup", h.ConsumerGroup)
	return ext
}

// FromExt implements CustomHeader.
func (h *GetConsumerRunningInfoRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = GetConsumerRunningInfoRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		ClientID:      r.str("clientId"),
		JstackEnable:  r.boolOr("jstackEnable", false),
	}
	return r.err
}

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
	ext = hdrOptStr(ext, "clientId", h.ClientID)
	ext = hdrOptI32(ext, "groupSysFlag", h.GroupSysFlag)
	ext = hdrOptStr(ext, "msgId", h.MsgID)
	ext = hdrOptStr(ext, "topic", h.Topic)
	ext = hdrOptStr(ext, "brokerName", h.BrokerName)
	ext = hdrStr(ext, "consumerGroup", h.ConsumerGroup)
	ext = hdrOptI32(ext, "topicSysFlag", h.TopicSysFlag)
	return ext
}

// FromExt implements CustomHeader.
func (h *ConsumeMessageDirectlyResultRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = ConsumeMessageDirectlyResultRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		ClientID:      r.optStr("clientId"),
		MsgID:         r.optStr("msgId"),
		BrokerName:    r.optStr("brokerName"),
		Topic:         r.optStr("topic"),
		TopicSysFlag:  r.optI32("topicSysFlag"),
		GroupSysFlag:  r.optI32("groupSysFlag"),
	}
	return r.err
}
