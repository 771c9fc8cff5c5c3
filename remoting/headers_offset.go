package remoting

// Headers of the offset RPCs (docs/PROTOCOL.md §3.6, §3.7, §3.17). Keys are
// written in the order a Java HashMap iterates them (as captured where a
// capture exists), which makes Go frames look like Java's; the order has no
// meaning on the wire.

// QueryConsumerOffsetRequestHeader is QUERY_CONSUMER_OFFSET (14).
type QueryConsumerOffsetRequestHeader struct {
	ConsumerGroup     string
	Topic             string
	QueueID           int32
	SetZeroIfNotFound *bool // 5.x: false makes the broker answer QUERY_NOT_FOUND
	BrokerName        *string
}

// AppendExt implements CustomHeader.
func (h *QueryConsumerOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryConsumerOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *QueryConsumerOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryConsumerOffsetRequestFields)
}

var queryConsumerOffsetRequestFields = hdrTableOf(func(h *QueryConsumerOffsetRequestHeader, l *hdrList) {
	l.i32("queueId", &h.QueueID)
	l.optStr("bname", &h.BrokerName)
	l.str("topic", &h.Topic)
	l.optBool("setZeroIfNotFound", &h.SetZeroIfNotFound)
	l.str("consumerGroup", &h.ConsumerGroup)
})

// OffsetResponseHeader carries `offset`: the response of
// QUERY_CONSUMER_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_MAX_OFFSET and
// GET_MIN_OFFSET (Java has one class per code with this single field).
type OffsetResponseHeader struct {
	Offset int64
}

// Java's names for OffsetResponseHeader.
type (
	QueryConsumerOffsetResponseHeader = OffsetResponseHeader
	SearchOffsetResponseHeader        = OffsetResponseHeader
	GetMaxOffsetResponseHeader        = OffsetResponseHeader
	GetMinOffsetResponseHeader        = OffsetResponseHeader
)

// AppendExt implements CustomHeader.
func (h *OffsetResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, offsetResponseFields)
}

// FromExt implements CustomHeader.
func (h *OffsetResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, offsetResponseFields)
}

var offsetResponseFields = hdrTableOf(func(h *OffsetResponseHeader, l *hdrList) {
	l.i64("offset", &h.Offset)
})

// UpdateConsumerOffsetRequestHeader is UPDATE_CONSUMER_OFFSET (15).
type UpdateConsumerOffsetRequestHeader struct {
	ConsumerGroup string
	Topic         string
	QueueID       int32
	CommitOffset  int64
	BrokerName    *string
}

// AppendExt implements CustomHeader.
func (h *UpdateConsumerOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, updateConsumerOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *UpdateConsumerOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, updateConsumerOffsetRequestFields)
}

var updateConsumerOffsetRequestFields = hdrTableOf(func(h *UpdateConsumerOffsetRequestHeader, l *hdrList) {
	l.i32("queueId", &h.QueueID)
	l.optStr("bname", &h.BrokerName)
	l.i64("commitOffset", &h.CommitOffset)
	l.str("topic", &h.Topic)
	l.str("consumerGroup", &h.ConsumerGroup)
})

// SearchOffsetRequestHeader is SEARCH_OFFSET_BY_TIMESTAMP (29).
type SearchOffsetRequestHeader struct {
	Topic        string
	QueueID      int32
	Timestamp    int64   // ms
	BoundaryType *string // 5.x: LOWER (default) or UPPER
	BrokerName   *string
}

// AppendExt implements CustomHeader.
func (h *SearchOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, searchOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *SearchOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, searchOffsetRequestFields)
}

var searchOffsetRequestFields = hdrTableOf(func(h *SearchOffsetRequestHeader, l *hdrList) {
	l.i32("queueId", &h.QueueID)
	l.optStr("bname", &h.BrokerName)
	l.str("topic", &h.Topic)
	l.optStr("boundaryType", &h.BoundaryType)
	l.i64("timestamp", &h.Timestamp)
})

// GetMaxOffsetRequestHeader is GET_MAX_OFFSET (30).
type GetMaxOffsetRequestHeader struct {
	Topic      string
	QueueID    int32
	Committed  *bool // 5.x; absent means true
	BrokerName *string
}

// AppendExt implements CustomHeader.
func (h *GetMaxOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getMaxOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetMaxOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getMaxOffsetRequestFields)
}

var getMaxOffsetRequestFields = hdrTableOf(func(h *GetMaxOffsetRequestHeader, l *hdrList) {
	l.i32("queueId", &h.QueueID)
	l.optBool("committed", &h.Committed)
	l.optStr("bname", &h.BrokerName)
	l.str("topic", &h.Topic)
})

// TopicQueueRequestHeader is the topic + queueId header of GET_MIN_OFFSET
// (31) and GET_EARLIEST_MSG_STORETIME (32).
type TopicQueueRequestHeader struct {
	Topic      string
	QueueID    int32
	BrokerName *string
}

// Java's names for TopicQueueRequestHeader.
type (
	GetMinOffsetRequestHeader            = TopicQueueRequestHeader
	GetEarliestMsgStoretimeRequestHeader = TopicQueueRequestHeader
)

// AppendExt implements CustomHeader.
func (h *TopicQueueRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, topicQueueRequestFields)
}

// FromExt implements CustomHeader.
func (h *TopicQueueRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, topicQueueRequestFields)
}

var topicQueueRequestFields = hdrTableOf(func(h *TopicQueueRequestHeader, l *hdrList) {
	l.i32("queueId", &h.QueueID)
	l.optStr("bname", &h.BrokerName)
	l.str("topic", &h.Topic)
})

// GetEarliestMsgStoretimeResponseHeader answers GET_EARLIEST_MSG_STORETIME.
type GetEarliestMsgStoretimeResponseHeader struct {
	Timestamp int64
}

// AppendExt implements CustomHeader.
func (h *GetEarliestMsgStoretimeResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getEarliestMsgStoretimeResponseFields)
}

// FromExt implements CustomHeader.
func (h *GetEarliestMsgStoretimeResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getEarliestMsgStoretimeResponseFields)
}

var getEarliestMsgStoretimeResponseFields = hdrTableOf(func(h *GetEarliestMsgStoretimeResponseHeader, l *hdrList) {
	l.i64("timestamp", &h.Timestamp)
})

// ResetOffsetRequestHeader is RESET_CONSUMER_CLIENT_OFFSET (220, broker to
// client) and INVOKE_BROKER_TO_RESET_OFFSET (222). Note the key "isForce".
type ResetOffsetRequestHeader struct {
	Topic     string
	Group     string
	QueueID   *int32 // 5.x; absent means -1 (all queues)
	Offset    *int64 // 5.x
	Timestamp int64
	IsForce   bool
}

// AppendExt implements CustomHeader.
func (h *ResetOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, resetOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *ResetOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, resetOffsetRequestFields)
}

var resetOffsetRequestFields = hdrTableOf(func(h *ResetOffsetRequestHeader, l *hdrList) {
	l.optI32("queueId", &h.QueueID)
	l.optI64("offset", &h.Offset)
	l.str("topic", &h.Topic)
	l.boolReq("isForce", &h.IsForce)
	l.str("group", &h.Group)
	l.i64("timestamp", &h.Timestamp)
})

// GetConsumerStatusRequestHeader is GET_CONSUMER_STATUS_FROM_CLIENT (221)
// and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusRequestHeader struct {
	Topic      string
	Group      string
	ClientAddr *string
}

// AppendExt implements CustomHeader.
func (h *GetConsumerStatusRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getConsumerStatusRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetConsumerStatusRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getConsumerStatusRequestFields)
}

var getConsumerStatusRequestFields = hdrTableOf(func(h *GetConsumerStatusRequestHeader, l *hdrList) {
	l.optStr("clientAddr", &h.ClientAddr)
	l.str("topic", &h.Topic)
	l.str("group", &h.Group)
})
