package remoting

// PullSysFlag bits of PullMessageRequestHeader.SysFlag (docs/PROTOCOL.md §3.4).
const (
	PullFlagCommitOffset    int32 = 0x1
	PullFlagSuspend         int32 = 0x2
	PullFlagSubscription    int32 = 0x4
	PullFlagClassFilter     int32 = 0x8
	PullFlagLitePullMessage int32 = 0x10
)

// PullMessageRequestHeader is the PULL_MESSAGE (11) / LITE_PULL_MESSAGE
// (361) header (docs/PROTOCOL.md §3.4). It is fast-coded: its keys go out in the
// fixed Java order, 5.x fields before bname as 5.x writes them.
type PullMessageRequestHeader struct {
	ConsumerGroup        string
	Topic                string
	QueueID              int32
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         *string
	SubVersion           int64
	ExpressionType       *string // TAG or SQL92
	MaxMsgBytes          *int32  // 5.x
	RequestSource        *int32  // 5.x proxy
	ProxyForwardClientID *string // 5.x proxy; key "proxyFrowardClientId" (sic)
	BrokerName           *string // bname
}

var pullReqKeys = [15]string{
	"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset",
	"suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "maxMsgBytes",
	"requestSource", "proxyFrowardClientId", "bname",
}

// AppendExt implements CustomHeader.
func (h *PullMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	k := &pullReqKeys
	ext = hdrStr(ext, k[0], h.ConsumerGroup)
	ext = hdrStr(ext, k[1], h.Topic)
	ext = hdrI32(ext, k[2], h.QueueID)
	ext = hdrI64(ext, k[3], h.QueueOffset)
	ext = hdrI32(ext, k[4], h.MaxMsgNums)
	ext = hdrI32(ext, k[5], h.SysFlag)
	ext = hdrI64(ext, k[6], h.CommitOffset)
	ext = hdrI64(ext, k[7], h.SuspendTimeoutMillis)
	ext = hdrOptStr(ext, k[8], h.Subscription)
	ext = hdrI64(ext, k[9], h.SubVersion)
	ext = hdrOptStr(ext, k[10], h.ExpressionType)
	ext = hdrOptI32(ext, k[11], h.MaxMsgBytes)
	ext = hdrOptI32(ext, k[12], h.RequestSource)
	ext = hdrOptStr(ext, k[13], h.ProxyForwardClientID)
	ext = hdrOptStr(ext, k[14], h.BrokerName)
	return ext
}

// FromExt implements CustomHeader. One pass over ext finds the last copy of
// every key (this is the broker's hottest header).
func (h *PullMessageRequestHeader) FromExt(ext ExtFields) error {
	idx := [15]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	for i := range ext {
		for j := range pullReqKeys {
			if ext[i].Key == pullReqKeys[j] {
				idx[j] = i
				break
			}
		}
	}
	k := &pullReqKeys
	r := hdrReader{ext: ext}
	*h = PullMessageRequestHeader{
		ConsumerGroup:        r.strAt(k[0], idx[0]),
		Topic:                r.strAt(k[1], idx[1]),
		QueueID:              r.i32At(k[2], idx[2]),
		QueueOffset:          r.i64At(k[3], idx[3]),
		MaxMsgNums:           r.i32At(k[4], idx[4]),
		SysFlag:              r.i32At(k[5], idx[5]),
		CommitOffset:         r.i64At(k[6], idx[6]),
		SuspendTimeoutMillis: r.i64At(k[7], idx[7]),
		Subscription:         r.optStrAt(idx[8]),
		SubVersion:           r.i64At(k[9], idx[9]),
		ExpressionType:       r.optStrAt(idx[10]),
		MaxMsgBytes:          r.optI32At(k[11], idx[11]),
		RequestSource:        r.optI32At(k[12], idx[12]),
		ProxyForwardClientID: r.optStrAt(idx[13]),
		BrokerName:           r.optStrAt(idx[14]),
	}
	return r.err
}

// PullMessageResponseHeader answers PULL_MESSAGE (docs/PROTOCOL.md §3.5). It is
// fast-coded: suggestWhichBrokerId, nextBeginOffset, minOffset, maxOffset,
// then the 5.x fields.
type PullMessageResponseHeader struct {
	SuggestWhichBrokerID int64
	NextBeginOffset      int64
	MinOffset            int64
	MaxOffset            int64
	OffsetDelta          *int64 // 5.x static topics
	TopicSysFlag         *int32 // 5.x
	GroupSysFlag         *int32 // 5.x
	ForbiddenType        *int32 // 5.x, with NO_PERMISSION
}

// AppendExt implements CustomHeader.
func (h *PullMessageResponseHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrI64(ext, "suggestWhichBrokerId", h.SuggestWhichBrokerID)
	ext = hdrI64(ext, "nextBeginOffset", h.NextBeginOffset)
	ext = hdrI64(ext, "minOffset", h.MinOffset)
	ext = hdrI64(ext, "maxOffset", h.MaxOffset)
	ext = hdrOptI64(ext, "offsetDelta", h.OffsetDelta)
	ext = hdrOptI32(ext, "topicSysFlag", h.TopicSysFlag)
	ext = hdrOptI32(ext, "groupSysFlag", h.GroupSysFlag)
	ext = hdrOptI32(ext, "forbiddenType", h.ForbiddenType)
	return ext
}

// FromExt implements CustomHeader.
func (h *PullMessageResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = PullMessageResponseHeader{
		SuggestWhichBrokerID: r.i64("suggestWhichBrokerId"),
		NextBeginOffset:      r.i64("nextBeginOffset"),
		MinOffset:            r.i64("minOffset"),
		MaxOffset:            r.i64("maxOffset"),
		OffsetDelta:          r.optI64("offsetDelta"),
		TopicSysFlag:         r.optI32("topicSysFlag"),
		GroupSysFlag:         r.optI32("groupSysFlag"),
		ForbiddenType:        r.optI32("forbiddenType"),
	}
	return r.err
}
