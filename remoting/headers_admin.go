package remoting

// Admin and query headers (PROTOCOL.md §3.17). Key order follows Java's
// HashMap iteration (as captured where a capture exists).

// QueryMessageRequestHeader is QUERY_MESSAGE (12).
type QueryMessageRequestHeader struct {
	Topic          string
	Key            string
	MaxNum         int32
	BeginTimestamp int64
	EndTimestamp   int64
	// UniqueKeyQuery is the extField _UNIQUE_KEY_QUERY the Java client adds
	// (true: Key is a UNIQ_KEY). 4.x ACL brokers leave it out of the signed
	// content, and so does SignACL (PROTOCOL.md §8.13).
	UniqueKeyQuery *bool
}

// AppendExt implements CustomHeader.
func (h *QueryMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptBool(ext, "_UNIQUE_KEY_QUERY", h.UniqueKeyQuery)
	ext = hdrI64(ext, "beginTimestamp", h.BeginTimestamp)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrI32(ext, "maxNum", h.MaxNum)
	ext = hdrI64(ext, "endTimestamp", h.EndTimestamp)
	ext = hdrStr(ext, "key", h.Key)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryMessageRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryMessageRequestHeader{
		Topic:          r.str("topic"),
		Key:            r.str("key"),
		MaxNum:         r.i32("maxNum"),
		BeginTimestamp: r.i64("beginTimestamp"),
		EndTimestamp:   r.i64("endTimestamp"),
		UniqueKeyQuery: r.optBool("_UNIQUE_KEY_QUERY"),
	}
	return r.err
}

// QueryMessageResponseHeader answers QUERY_MESSAGE.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// AppendExt implements CustomHeader.
func (h *QueryMessageResponseHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI64(ext, "indexLastUpdatePhyoffset", h.IndexLastUpdatePhyoffset)
	ext = hdrI64(ext, "indexLastUpdateTimestamp", h.IndexLastUpdateTimestamp)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryMessageResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: r.i64("indexLastUpdateTimestamp"),
		IndexLastUpdatePhyoffset: r.i64("indexLastUpdatePhyoffset"),
	}
	return r.err
}

// ViewMessageRequestHeader is VIEW_MESSAGE_BY_ID (33).
type ViewMessageRequestHeader struct {
	Offset     int64   // commit-log offset
	Topic      *string // 5.x
	BrokerName *string // 5.x
}

// AppendExt implements CustomHeader.
func (h *ViewMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI64(ext, "offset", h.Offset)
	ext = hdrOptStr(ext, "bname", h.BrokerName)
	ext = hdrOptStr(ext, "topic", h.Topic)
	return ext
}

// FromExt implements CustomHeader.
func (h *ViewMessageRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = ViewMessageRequestHeader{
		Offset:     r.i64("offset"),
		Topic:      r.optStr("topic"),
		BrokerName: r.optStr("bname"),
	}
	return r.err
}

// CreateTopicRequestHeader is UPDATE_AND_CREATE_TOPIC (17).
type CreateTopicRequestHeader struct {
	Topic           string
	DefaultTopic    string
	ReadQueueNums   int32
	WriteQueueNums  int32
	Perm            int32
	TopicFilterType string // SINGLE_TAG or MULTI_TAG
	TopicSysFlag    *int32
	Order           bool
	Attributes      *string // 5.x: "+key=value,+k2=v2"
	Force           *bool   // 5.x
}

// AppendExt implements CustomHeader.
func (h *CreateTopicRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI32(ext, "readQueueNums", h.ReadQueueNums)
	ext = hdrI32(ext, "perm", h.Perm)
	ext = hdrI32(ext, "writeQueueNums", h.WriteQueueNums)
	ext = hdrStr(ext, "topicFilterType", h.TopicFilterType)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrOptStr(ext, "attributes", h.Attributes)
	ext = hdrOptBool(ext, "force", h.Force)
	ext = hdrStr(ext, "defaultTopic", h.DefaultTopic)
	ext = hdrOptI32(ext, "topicSysFlag", h.TopicSysFlag)
	ext = hdrBool(ext, "order", h.Order)
	return ext
}

// FromExt implements CustomHeader.
func (h *CreateTopicRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = CreateTopicRequestHeader{
		Topic:           r.str("topic"),
		DefaultTopic:    r.str("defaultTopic"),
		ReadQueueNums:   r.i32("readQueueNums"),
		WriteQueueNums:  r.i32("writeQueueNums"),
		Perm:            r.i32("perm"),
		TopicFilterType: r.str("topicFilterType"),
		TopicSysFlag:    r.optI32("topicSysFlag"),
		Order:           r.boolean("order"),
		Attributes:      r.optStr("attributes"),
		Force:           r.optBool("force"),
	}
	return r.err
}

// TopicRequestHeader is a header whose only field is topic.
type TopicRequestHeader struct {
	Topic string
}

// Java's names for TopicRequestHeader.
type (
	DeleteTopicRequestHeader            = TopicRequestHeader // 215
	GetTopicStatsInfoRequestHeader      = TopicRequestHeader // 202
	QueryTopicConsumeByWhoRequestHeader = TopicRequestHeader // 300
)

// AppendExt implements CustomHeader.
func (h *TopicRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "topic", h.Topic)
}

// FromExt implements CustomHeader.
func (h *TopicRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Topic = r.str("topic")
	return r.err
}

// GetProducerConnectionListRequestHeader is GET_PRODUCER_CONNECTION_LIST (204).
type GetProducerConnectionListRequestHeader struct {
	ProducerGroup string
}

// AppendExt implements CustomHeader.
func (h *GetProducerConnectionListRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "producerGroup", h.ProducerGroup)
}

// FromExt implements CustomHeader.
func (h *GetProducerConnectionListRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.ProducerGroup = r.str("producerGroup")
	return r.err
}

// GetConsumeStatsRequestHeader is GET_CONSUME_STATS (208).
type GetConsumeStatsRequestHeader struct {
	ConsumerGroup string
	Topic         *string
	TopicList     *string // 5.x
}

// AppendExt implements CustomHeader.
func (h *GetConsumeStatsRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrOptStr(ext, "topic", h.Topic)
	ext = hdrStr(ext, "consumerGroup", h.ConsumerGroup)
	ext = hdrOptStr(ext, "topicList", h.TopicList)
	return ext
}

// FromExt implements CustomHeader.
func (h *GetConsumeStatsRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = GetConsumeStatsRequestHeader{
		ConsumerGroup: r.str("consumerGroup"),
		Topic:         r.optStr("topic"),
		TopicList:     r.optStr("topicList"),
	}
	return r.err
}

// DeleteSubscriptionGroupRequestHeader is DELETE_SUBSCRIPTIONGROUP (207).
// 4.9.8 calls the offset flag "removeOffset" and 5.x "cleanOffset"; both
// keys are written and either one set to true reads as true.
type DeleteSubscriptionGroupRequestHeader struct {
	GroupName   string
	CleanOffset bool
}

// AppendExt implements CustomHeader.
func (h *DeleteSubscriptionGroupRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "groupName", h.GroupName)
	ext = hdrBool(ext, "removeOffset", h.CleanOffset)
	ext = hdrBool(ext, "cleanOffset", h.CleanOffset)
	return ext
}

// FromExt implements CustomHeader.
func (h *DeleteSubscriptionGroupRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = DeleteSubscriptionGroupRequestHeader{
		GroupName:   r.str("groupName"),
		CleanOffset: r.boolOr("removeOffset", false) || r.boolOr("cleanOffset", false),
	}
	return r.err
}

// GetBrokerConfigResponseHeader answers GET_BROKER_CONFIG (26); the body is
// Java properties text.
type GetBrokerConfigResponseHeader struct {
	Version string // the config DataVersion as JSON text
}

// AppendExt implements CustomHeader.
func (h *GetBrokerConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrStr(ext, "version", h.Version)
}

// FromExt implements CustomHeader.
func (h *GetBrokerConfigResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.Version = r.str("version")
	return r.err
}

// GetAllTopicConfigResponseHeader answers GET_ALL_TOPIC_CONFIG (21) on 5.x
// brokers; 4.x sends no header, so the field is optional here.
type GetAllTopicConfigResponseHeader struct {
	TotalTopicNum *int32
}

// AppendExt implements CustomHeader.
func (h *GetAllTopicConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrOptI32(ext, "totalTopicNum", h.TotalTopicNum)
}

// FromExt implements CustomHeader.
func (h *GetAllTopicConfigResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.TotalTopicNum = r.optI32("totalTopicNum")
	return r.err
}

// CloneGroupOffsetRequestHeader is CLONE_GROUP_OFFSET (314).
type CloneGroupOffsetRequestHeader struct {
	SrcGroup  string
	DestGroup string
	Topic     *string
	Offline   bool
}

// AppendExt implements CustomHeader.
func (h *CloneGroupOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "srcGroup", h.SrcGroup)
	ext = hdrBool(ext, "offline", h.Offline)
	ext = hdrStr(ext, "destGroup", h.DestGroup)
	ext = hdrOptStr(ext, "topic", h.Topic)
	return ext
}

// FromExt implements CustomHeader.
func (h *CloneGroupOffsetRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = CloneGroupOffsetRequestHeader{
		SrcGroup:  r.str("srcGroup"),
		DestGroup: r.str("destGroup"),
		Topic:     r.optStr("topic"),
		Offline:   r.boolOr("offline", false),
	}
	return r.err
}

// QueryConsumeTimeSpanRequestHeader is QUERY_CONSUME_TIME_SPAN (303).
type QueryConsumeTimeSpanRequestHeader struct {
	Topic string
	Group string
}

// AppendExt implements CustomHeader.
func (h *QueryConsumeTimeSpanRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrStr(ext, "group", h.Group)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryConsumeTimeSpanRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryConsumeTimeSpanRequestHeader{Topic: r.str("topic"), Group: r.str("group")}
	return r.err
}

// QueryCorrectionOffsetHeader is QUERY_CORRECTION_OFFSET (308).
type QueryCorrectionOffsetHeader struct {
	FilterGroups *string // comma-separated
	CompareGroup string
	Topic        string
}

// AppendExt implements CustomHeader.
func (h *QueryCorrectionOffsetHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "compareGroup", h.CompareGroup)
	ext = hdrStr(ext, "topic", h.Topic)
	ext = hdrOptStr(ext, "filterGroups", h.FilterGroups)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryCorrectionOffsetHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryCorrectionOffsetHeader{
		FilterGroups: r.optStr("filterGroups"),
		CompareGroup: r.str("compareGroup"),
		Topic:        r.str("topic"),
	}
	return r.err
}

// ViewBrokerStatsDataRequestHeader is VIEW_BROKER_STATS_DATA (315).
type ViewBrokerStatsDataRequestHeader struct {
	StatsName string
	StatsKey  string
}

// AppendExt implements CustomHeader.
func (h *ViewBrokerStatsDataRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "statsName", h.StatsName)
	ext = hdrStr(ext, "statsKey", h.StatsKey)
	return ext
}

// FromExt implements CustomHeader.
func (h *ViewBrokerStatsDataRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = ViewBrokerStatsDataRequestHeader{StatsName: r.str("statsName"), StatsKey: r.str("statsKey")}
	return r.err
}

// GetConsumeStatsInBrokerHeader is GET_BROKER_CONSUME_STATS (317). Note the
// key "isOrder".
type GetConsumeStatsInBrokerHeader struct {
	IsOrder bool
}

// AppendExt implements CustomHeader.
func (h *GetConsumeStatsInBrokerHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrBool(ext, "isOrder", h.IsOrder)
}

// FromExt implements CustomHeader.
func (h *GetConsumeStatsInBrokerHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.IsOrder = r.boolean("isOrder")
	return r.err
}

// QueryConsumeQueueRequestHeader is QUERY_CONSUME_QUEUE (321). Java declares
// no field required; the primitives are always written.
type QueryConsumeQueueRequestHeader struct {
	Topic         *string
	QueueID       int32
	Index         int64
	Count         int32
	ConsumerGroup *string
}

// AppendExt implements CustomHeader.
func (h *QueryConsumeQueueRequestHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrI32(ext, "count", h.Count)
	ext = hdrOptStr(ext, "topic", h.Topic)
	ext = hdrI64(ext, "index", h.Index)
	ext = hdrOptStr(ext, "consumerGroup", h.ConsumerGroup)
	return ext
}

// FromExt implements CustomHeader.
func (h *QueryConsumeQueueRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = QueryConsumeQueueRequestHeader{
		Topic:         r.optStr("topic"),
		QueueID:       r.i32Or("queueId", 0),
		Index:         r.i64Or("index", 0),
		Count:         r.i32Or("count", 0),
		ConsumerGroup: r.optStr("consumerGroup"),
	}
	return r.err
}

// ResumeCheckHalfMessageRequestHeader is RESUME_CHECK_HALF_MESSAGE (323).
type ResumeCheckHalfMessageRequestHeader struct {
	MsgID *string
}

// AppendExt implements CustomHeader.
func (h *ResumeCheckHalfMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrOptStr(ext, "msgId", h.MsgID)
}

// FromExt implements CustomHeader.
func (h *ResumeCheckHalfMessageRequestHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	h.MsgID = r.optStr("msgId")
	return r.err
}
