package remoting

// Admin and query headers (docs/PROTOCOL.md §3.17). Key order follows Java's
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
	// content, and so does SignACL (docs/PROTOCOL.md §8.13).
	UniqueKeyQuery *bool
}

// AppendExt implements CustomHeader.
func (h *QueryMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryMessageRequestFields)
}

// FromExt implements CustomHeader.
func (h *QueryMessageRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryMessageRequestFields)
}

var queryMessageRequestFields = hdrTableOf(func(h *QueryMessageRequestHeader, l *hdrList) {
	l.optBool("_UNIQUE_KEY_QUERY", &h.UniqueKeyQuery)
	l.i64("beginTimestamp", &h.BeginTimestamp)
	l.str("topic", &h.Topic)
	l.i32("maxNum", &h.MaxNum)
	l.i64("endTimestamp", &h.EndTimestamp)
	l.str("key", &h.Key)
})

// QueryMessageResponseHeader answers QUERY_MESSAGE.
type QueryMessageResponseHeader struct {
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// AppendExt implements CustomHeader.
func (h *QueryMessageResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryMessageResponseFields)
}

// FromExt implements CustomHeader.
func (h *QueryMessageResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryMessageResponseFields)
}

var queryMessageResponseFields = hdrTableOf(func(h *QueryMessageResponseHeader, l *hdrList) {
	l.i64("indexLastUpdatePhyoffset", &h.IndexLastUpdatePhyoffset)
	l.i64("indexLastUpdateTimestamp", &h.IndexLastUpdateTimestamp)
})

// ViewMessageRequestHeader is VIEW_MESSAGE_BY_ID (33).
type ViewMessageRequestHeader struct {
	Offset     int64   // commit-log offset
	Topic      *string // 5.x
	BrokerName *string // 5.x
}

// AppendExt implements CustomHeader.
func (h *ViewMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, viewMessageRequestFields)
}

// FromExt implements CustomHeader.
func (h *ViewMessageRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, viewMessageRequestFields)
}

var viewMessageRequestFields = hdrTableOf(func(h *ViewMessageRequestHeader, l *hdrList) {
	l.i64("offset", &h.Offset)
	l.optStr("bname", &h.BrokerName)
	l.optStr("topic", &h.Topic)
})

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
	return hdrAppend(ext, h, createTopicRequestFields)
}

// FromExt implements CustomHeader.
func (h *CreateTopicRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, createTopicRequestFields)
}

var createTopicRequestFields = hdrTableOf(func(h *CreateTopicRequestHeader, l *hdrList) {
	l.i32("readQueueNums", &h.ReadQueueNums)
	l.i32("perm", &h.Perm)
	l.i32("writeQueueNums", &h.WriteQueueNums)
	l.str("topicFilterType", &h.TopicFilterType)
	l.str("topic", &h.Topic)
	l.optStr("attributes", &h.Attributes)
	l.optBool("force", &h.Force)
	l.str("defaultTopic", &h.DefaultTopic)
	l.optI32("topicSysFlag", &h.TopicSysFlag)
	l.boolReq("order", &h.Order)
})

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
	return hdrAppend(ext, h, topicRequestFields)
}

// FromExt implements CustomHeader.
func (h *TopicRequestHeader) FromExt(ext ExtFields) error { return hdrRead(ext, h, topicRequestFields) }

var topicRequestFields = hdrTableOf(func(h *TopicRequestHeader, l *hdrList) {
	l.str("topic", &h.Topic)
})

// GetProducerConnectionListRequestHeader is GET_PRODUCER_CONNECTION_LIST (204).
type GetProducerConnectionListRequestHeader struct {
	ProducerGroup string
}

// AppendExt implements CustomHeader.
func (h *GetProducerConnectionListRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getProducerConnectionListRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetProducerConnectionListRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getProducerConnectionListRequestFields)
}

var getProducerConnectionListRequestFields = hdrTableOf(func(h *GetProducerConnectionListRequestHeader, l *hdrList) {
	l.str("producerGroup", &h.ProducerGroup)
})

// GetConsumeStatsRequestHeader is GET_CONSUME_STATS (208).
type GetConsumeStatsRequestHeader struct {
	ConsumerGroup string
	Topic         *string
	TopicList     *string // 5.x
}

// AppendExt implements CustomHeader.
func (h *GetConsumeStatsRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getConsumeStatsRequestFields)
}

// FromExt implements CustomHeader.
func (h *GetConsumeStatsRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getConsumeStatsRequestFields)
}

var getConsumeStatsRequestFields = hdrTableOf(func(h *GetConsumeStatsRequestHeader, l *hdrList) {
	l.optStr("topic", &h.Topic)
	l.str("consumerGroup", &h.ConsumerGroup)
	l.optStr("topicList", &h.TopicList)
})

// DeleteSubscriptionGroupRequestHeader is DELETE_SUBSCRIPTIONGROUP (207).
// 4.9.8 calls the offset flag "removeOffset" and 5.x "cleanOffset"; both
// keys are written and either one set to true reads as true.
type DeleteSubscriptionGroupRequestHeader struct {
	GroupName   string
	CleanOffset bool
}

// AppendExt implements CustomHeader.
func (h *DeleteSubscriptionGroupRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, deleteSubscriptionGroupRequestFields)
}

// FromExt implements CustomHeader.
func (h *DeleteSubscriptionGroupRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, deleteSubscriptionGroupRequestFields)
}

// fields writes CleanOffset under both keys; it reads as their OR.
var deleteSubscriptionGroupRequestFields = hdrTableOf(func(h *DeleteSubscriptionGroupRequestHeader, l *hdrList) {
	l.str("groupName", &h.GroupName)
	l.boolPrim("removeOffset", &h.CleanOffset)
	l.boolPrim("cleanOffset", &h.CleanOffset)
})

// GetBrokerConfigResponseHeader answers GET_BROKER_CONFIG (26); the body is
// Java properties text.
type GetBrokerConfigResponseHeader struct {
	Version string // the config DataVersion as JSON text
}

// AppendExt implements CustomHeader.
func (h *GetBrokerConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getBrokerConfigResponseFields)
}

// FromExt implements CustomHeader.
func (h *GetBrokerConfigResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getBrokerConfigResponseFields)
}

var getBrokerConfigResponseFields = hdrTableOf(func(h *GetBrokerConfigResponseHeader, l *hdrList) {
	l.str("version", &h.Version)
})

// GetAllTopicConfigResponseHeader answers GET_ALL_TOPIC_CONFIG (21) on 5.x
// brokers; 4.x sends no header, so the field is optional here.
type GetAllTopicConfigResponseHeader struct {
	TotalTopicNum *int32
}

// AppendExt implements CustomHeader.
func (h *GetAllTopicConfigResponseHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getAllTopicConfigResponseFields)
}

// FromExt implements CustomHeader.
func (h *GetAllTopicConfigResponseHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getAllTopicConfigResponseFields)
}

var getAllTopicConfigResponseFields = hdrTableOf(func(h *GetAllTopicConfigResponseHeader, l *hdrList) {
	l.optI32("totalTopicNum", &h.TotalTopicNum)
})

// CloneGroupOffsetRequestHeader is CLONE_GROUP_OFFSET (314).
type CloneGroupOffsetRequestHeader struct {
	SrcGroup  string
	DestGroup string
	Topic     *string
	Offline   bool
}

// AppendExt implements CustomHeader.
func (h *CloneGroupOffsetRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, cloneGroupOffsetRequestFields)
}

// FromExt implements CustomHeader.
func (h *CloneGroupOffsetRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, cloneGroupOffsetRequestFields)
}

var cloneGroupOffsetRequestFields = hdrTableOf(func(h *CloneGroupOffsetRequestHeader, l *hdrList) {
	l.str("srcGroup", &h.SrcGroup)
	l.boolPrim("offline", &h.Offline)
	l.str("destGroup", &h.DestGroup)
	l.optStr("topic", &h.Topic)
})

// QueryConsumeTimeSpanRequestHeader is QUERY_CONSUME_TIME_SPAN (303).
type QueryConsumeTimeSpanRequestHeader struct {
	Topic string
	Group string
}

// AppendExt implements CustomHeader.
func (h *QueryConsumeTimeSpanRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryConsumeTimeSpanRequestFields)
}

// FromExt implements CustomHeader.
func (h *QueryConsumeTimeSpanRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryConsumeTimeSpanRequestFields)
}

var queryConsumeTimeSpanRequestFields = hdrTableOf(func(h *QueryConsumeTimeSpanRequestHeader, l *hdrList) {
	l.str("topic", &h.Topic)
	l.str("group", &h.Group)
})

// QueryCorrectionOffsetHeader is QUERY_CORRECTION_OFFSET (308).
type QueryCorrectionOffsetHeader struct {
	FilterGroups *string // comma-separated
	CompareGroup string
	Topic        string
}

// AppendExt implements CustomHeader.
func (h *QueryCorrectionOffsetHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, queryCorrectionOffsetFields)
}

// FromExt implements CustomHeader.
func (h *QueryCorrectionOffsetHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryCorrectionOffsetFields)
}

var queryCorrectionOffsetFields = hdrTableOf(func(h *QueryCorrectionOffsetHeader, l *hdrList) {
	l.str("compareGroup", &h.CompareGroup)
	l.str("topic", &h.Topic)
	l.optStr("filterGroups", &h.FilterGroups)
})

// ViewBrokerStatsDataRequestHeader is VIEW_BROKER_STATS_DATA (315).
type ViewBrokerStatsDataRequestHeader struct {
	StatsName string
	StatsKey  string
}

// AppendExt implements CustomHeader.
func (h *ViewBrokerStatsDataRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, viewBrokerStatsDataRequestFields)
}

// FromExt implements CustomHeader.
func (h *ViewBrokerStatsDataRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, viewBrokerStatsDataRequestFields)
}

var viewBrokerStatsDataRequestFields = hdrTableOf(func(h *ViewBrokerStatsDataRequestHeader, l *hdrList) {
	l.str("statsName", &h.StatsName)
	l.str("statsKey", &h.StatsKey)
})

// GetConsumeStatsInBrokerHeader is GET_BROKER_CONSUME_STATS (317). Note the
// key "isOrder".
type GetConsumeStatsInBrokerHeader struct {
	IsOrder bool
}

// AppendExt implements CustomHeader.
func (h *GetConsumeStatsInBrokerHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, getConsumeStatsInBrokerFields)
}

// FromExt implements CustomHeader.
func (h *GetConsumeStatsInBrokerHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, getConsumeStatsInBrokerFields)
}

var getConsumeStatsInBrokerFields = hdrTableOf(func(h *GetConsumeStatsInBrokerHeader, l *hdrList) {
	l.boolReq("isOrder", &h.IsOrder)
})

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
	return hdrAppend(ext, h, queryConsumeQueueRequestFields)
}

// FromExt implements CustomHeader.
func (h *QueryConsumeQueueRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, queryConsumeQueueRequestFields)
}

var queryConsumeQueueRequestFields = hdrTableOf(func(h *QueryConsumeQueueRequestHeader, l *hdrList) {
	l.i32Prim("queueId", &h.QueueID)
	l.i32Prim("count", &h.Count)
	l.optStr("topic", &h.Topic)
	l.i64Prim("index", &h.Index)
	l.optStr("consumerGroup", &h.ConsumerGroup)
})

// ResumeCheckHalfMessageRequestHeader is RESUME_CHECK_HALF_MESSAGE (323).
type ResumeCheckHalfMessageRequestHeader struct {
	MsgID *string
}

// AppendExt implements CustomHeader.
func (h *ResumeCheckHalfMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, resumeCheckHalfMessageRequestFields)
}

// FromExt implements CustomHeader.
func (h *ResumeCheckHalfMessageRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, resumeCheckHalfMessageRequestFields)
}

var resumeCheckHalfMessageRequestFields = hdrTableOf(func(h *ResumeCheckHalfMessageRequestHeader, l *hdrList) {
	l.optStr("msgId", &h.MsgID)
})
