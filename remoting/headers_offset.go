package remoting

// Headers of the offset RPCs (PROTOCOL.md §3.6, §3.7, §3.17). Keys are
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
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrOptBool(ext, "setZeroIfNotFound", h.SetZeroIfNotFound)
	ext = hdrStr(ext, "consumerGroup", h.ConsumerGroup)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryConsumerOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryConsumerOffsetRequestHeader{
		ConsumerGroup:     r.str("consumerGroup"),
		Topic:             r.str("topic"),
		QueueID:           r.i32("queueId"),
		SetZeroIfNotFound: r.optBool("setZeroIfNotFound"),
		BrokerName:        r.optStr("bname"),
	}
	return r.err
}

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
	return hdrI64(ext, "offset", h.Offset)
}

// FromExt implements CustomHeader.
func (h *OffsetResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Offset = r.i64("offset")
	return r.err
}

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
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrI64(ext, "commitOffset", h.CommitOffset)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrStr(ext, "consumerGroup", h.ConsumerGroup)
	return ext
}

// FromExt implements CustomHeader.
func (h *UpdateConsumerOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.str("topic"),
		QueueID:       r.i32("queueId"),
		CommitOffset:  r.i64("commitOffset"),
		BrokerName:    r.optStr("bname"),
	}
	return r.err
}

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
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrOptStr(ext, "boundaryType", h.BoundaryType)
	ext = hdrI64(ext, "timestamp", h.Timestamp)
	return ext
}

// FromExt implements CustomHeader.
func (h *SearchOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = SearchOffsetRequestHeader{
		Topic:        r.str("topic"),
		QueueID:      r.i32("queueId"),
		Timestamp:    r.i64("timestamp"),
		BoundaryType: r.optStr("boundaryType"),
		BrokerName:   r.optStr("bname"),
	}
	return r.err
}

// GetMaxOffsetRequestHeader is GET_MAX_OFFSET (30).
type GetMaxOffsetRequestHeader struct {
	Topic      string
	QueueID    int32
	Committed  *bool // 5.x; absent means true
	BrokerName *string
}

// AppendExt implements CustomHeader.
func (h *GetMaxOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrOptBool(ext, "committed", h.Committed)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrStr(ext, "topic", h.Topic)
	return ext
}

// FromExt implements CustomHeader.
func (h *GetMaxOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = GetMaxOffsetRequestHeader{
		Topic:      r.str("topic"),
		QueueID:    r.i32("queueId"),
		Committed:  r.optBool("committed"),
		BrokerName: r.optStr("bname"),
	}
	return r.err
}

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
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrStr(ext, "topic", h.Topic)
	return ext
}

// FromExt implements CustomHeader.
func (h *TopicQueueRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = TopicQueueRequestHeader{
		Topic:      r.str("topic"),
		QueueID:    r.i32("queueId"),
		BrokerName: r.optStr("bname"),
	}
	return r.err
}

// GetEarliestMsgStoretimeResponseHeader answers GET_EARLIEST_MSG_STORETIME.
type GetEarliestMsgStoretimeResponseHeader struct {
	Timestamp int64
}

// AppendExt implements CustomHeader.
func (h *GetEarliestMsgStoretimeResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrI64(ext, "timestamp", h.Timestamp)
}

// FromExt implements CustomHeader.
func (h *GetEarliestMsgStoretimeResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Timestamp = r.i64("timestamp")
	return r.err
}

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
	ext = hdrOptI32(ext, "queueId", h.QueueID)
	ext = hdrOptI64(ext, "offset", h.Offset)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrBool(ext, "isForce", h.IsForce)
	ext = hdrStr(ext, "group", h.Group)
	ext = hdrI64(ext, "timestamp", h.Timestamp)
	return ext
}

// FromExt implements CustomHeader.
func (h *ResetOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = ResetOffsetRequestHeader{
		Topic:     r.str("topic"),
		Group:     r.str("group"),
		QueueID:   r.optI32("queueId"),
		Offset:    r.optI64("offset"),
		Timestamp: r.i64("timestamp"),
		IsForce:   r.boolean("isForce"),
	}
	return r.err
}

// GetConsumerStatusRequestHeader is GET_CONSUMER_STATUS_FROM_CLIENT (221)
// and INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusRequestHeader struct {
	Topic      string
	Group      string
	ClientAddr *string
}

// AppendExt implements CustomHeader.
func (h *GetConsumerStatusRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptStr(ext, "clientAddr", h.ClientAddr)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrStr(ext, "group", h.Group)
	return ext
}

// FromExt implements CustomHeader.
func (h *GetConsumerStatusRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = GetConsumerStatusRequestHeader{
		Topic:      r.str("topic"),
		Group:      r.str("group"),
		ClientAddr: r.optStr("clientAddr"),
	}
	return r.err
}
