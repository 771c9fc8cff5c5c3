package remoting

// SendMessageRequestHeader is the SEND_MESSAGE (10) header, Java's "V1"
// (docs/PROTOCOL.md §3.1). The letters are the keys of the V2 form.
type SendMessageRequestHeader struct {
	ProducerGroup         string  // a
	Topic                 string  // b
	DefaultTopic          string  // c, normally TBW102
	DefaultTopicQueueNums int32   // d
	QueueID               int32   // e; negative lets the broker choose
	SysFlag               int32   // f
	BornTimestamp         int64   // g, ms
	Flag                  int32   // h, user Message.Flag
	Properties            *string // i, the 0x01/0x02 properties string
	ReconsumeTimes        *int32  // j
	UnitMode              bool    // k (Java primitive: always written)
	MaxReconsumeTimes     *int32  // l, only for %RETRY% topics
	Batch                 bool    // m (Java primitive: always written)
	BrokerName            *string // n; "bname" in V1
}

// SendMessageRequestHeaderV2 is the same header with one-letter keys, used
// by SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) and
// SEND_REPLY_MESSAGE_V2 (325) (docs/PROTOCOL.md §3.2). It is fast-coded: its keys
// go out in the fixed order a … n.
//
// The two types share one layout, so converting is a plain conversion; V1
// and V2 methods exist for symmetry with Java's createSendMessageRequestHeaderV1/V2.
type SendMessageRequestHeaderV2 SendMessageRequestHeader

// V2 returns the header in its V2 form (Java createSendMessageRequestHeaderV2).
func (h *SendMessageRequestHeader) V2() *SendMessageRequestHeaderV2 {
	v := SendMessageRequestHeaderV2(*h)
	return &v
}

// V1 returns the header in its V1 form (Java createSendMessageRequestHeaderV1).
func (h *SendMessageRequestHeaderV2) V1() *SendMessageRequestHeader {
	v := SendMessageRequestHeader(*h)
	return &v
}

var sendV1Keys = [14]string{
	"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
	"bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch", "bname",
}

var sendV2Keys = [14]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"}

// appendSend writes the fields in slot order (a … n), which is Java's fast
// order for V2 and the declared order for V1.
func (h *SendMessageRequestHeader) appendSend(ext ExtFields, keys *[14]string) ExtFields {
	ext = hdrStr(ext, keys[0], h.ProducerGroup)
	ext = hdrStr(ext, keys[1], h.Topic)
	ext = hdrStr(ext, keys[2], h.DefaultTopic)
	ext = hdrI32(ext, keys[3], h.DefaultTopicQueueNums)
	ext = hdrI32(ext, keys[4], h.QueueID)
	ext = hdrI32(ext, keys[5], h.SysFlag)
	ext = hdrI64(ext, keys[6], h.BornTimestamp)
	ext = hdrI32(ext, keys[7], h.Flag)
	ext = hdrOptStr(ext, keys[8], h.Properties)
	ext = hdrOptI32(ext, keys[9], h.ReconsumeTimes)
	ext = hdrBool(ext, keys[10], h.UnitMode)
	ext = hdrOptI32(ext, keys[11], h.MaxReconsumeTimes)
	ext = hdrBool(ext, keys[12], h.Batch)
	ext = hdrOptStr(ext, keys[13], h.BrokerName)
	return ext
}

func (h *SendMessageRequestHeader) fromSend(ext ExtFields, idx *[14]int, keys *[14]string) error {
	r := hdrReader{ext: ext}
	*h = SendMessageRequestHeader{
		ProducerGroup:         r.strAt(keys[0], idx[0]),
		Topic:                 r.strAt(keys[1], idx[1]),
		DefaultTopic:          r.strAt(keys[2], idx[2]),
		DefaultTopicQueueNums: r.i32At(keys[3], idx[3]),
		QueueID:               r.i32At(keys[4], idx[4]),
		SysFlag:               r.i32At(keys[5], idx[5]),
		BornTimestamp:         r.i64At(keys[6], idx[6]),
		Flag:                  r.i32At(keys[7], idx[7]),
		Properties:            r.optStrAt(idx[8]),
		ReconsumeTimes:        r.optI32At(keys[9], idx[9]),
		UnitMode:              r.boolOrAt(idx[10], false),
		MaxReconsumeTimes:     r.optI32At(keys[11], idx[11]),
		Batch:                 r.boolOrAt(idx[12], false),
		BrokerName:            r.optStrAt(idx[13]),
	}
	return r.err
}

// AppendExt implements CustomHeader.
func (h *SendMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return h.appendSend(ext, &sendV1Keys)
}

// FromExt implements CustomHeader.
func (h *SendMessageRequestHeader) FromExt(ext ExtFields) error {
	idx := [14]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	for i := range ext {
		if j := sendV1Slot(ext[i].Key); j >= 0 {
			idx[j] = i
		}
	}
	return h.fromSend(ext, &idx, &sendV1Keys)
}

// sendV1Slot is the index of k in sendV1Keys, or -1. A switch (the
// compiler's length-then-value search) instead of comparing each key with
// all fourteen names: SEND_MESSAGE is the official Go client's send.
func sendV1Slot(k string) int {
	switch k {
	case "producerGroup":
		return 0
	case "topic":
		return 1
	case "defaultTopic":
		return 2
	case "defaultTopicQueueNums":
		return 3
	case "queueId":
		return 4
	case "sysFlag":
		return 5
	case "bornTimestamp":
		return 6
	case "flag":
		return 7
	case "properties":
		return 8
	case "reconsumeTimes":
		return 9
	case "unitMode":
		return 10
	case "maxReconsumeTimes":
		return 11
	case "batch":
		return 12
	case "bname":
		return 13
	}
	return -1
}

// AppendExt implements CustomHeader, in the fast-coded order a … n.
func (h *SendMessageRequestHeaderV2) AppendExt(ext ExtFields) ExtFields {
	return (*SendMessageRequestHeader)(h).appendSend(ext, &sendV2Keys)
}

// FromExt implements CustomHeader.
func (h *SendMessageRequestHeaderV2) FromExt(ext ExtFields) error {
	idx := [14]int{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
	for i := range ext {
		if k := ext[i].Key; len(k) == 1 && k[0] >= 'a' && k[0] <= 'n' {
			idx[k[0]-'a'] = i
		}
	}
	return (*SendMessageRequestHeader)(h).fromSend(ext, &idx, &sendV2Keys)
}

// SendMessageResponseHeader answers SEND_MESSAGE, SEND_MESSAGE_V2 and
// SEND_BATCH_MESSAGE (docs/PROTOCOL.md §3.3). It is fast-coded: msgId, queueId,
// queueOffset, transactionId (then 5.x batchUniqId, recallHandle) in that
// order, followed by the broker's TRACE_ON and MSG_REGION extFields, which
// this type carries too because the client needs them for SendResult.
type SendMessageResponseHeader struct {
	MsgID         string // offset message id(s), comma-joined for a batch
	QueueID       int32
	QueueOffset   int64
	TransactionID *string
	BatchUniqID   *string // 5.x
	RecallHandle  *string // 5.3, delayed messages only
	TraceOn       *bool   // extField TRACE_ON
	MsgRegion     *string // extField MSG_REGION
}

// AppendExt implements CustomHeader.
func (h *SendMessageResponseHeader) AppendExt(ext ExtFields) ExtFields {
	ext = hdrStr(ext, "msgId", h.MsgID)
	ext = hdrI32(ext, "queueId", h.QueueID)
	ext = hdrI64(ext, "queueOffset", h.QueueOffset)
	ext = hdrOptStr(ext, "transactionId", h.TransactionID)
	ext = hdrOptStr(ext, "batchUniqId", h.BatchUniqID)
	ext = hdrOptStr(ext, "recallHandle", h.RecallHandle)
	ext = hdrOptBool(ext, "TRACE_ON", h.TraceOn)
	ext = hdrOptStr(ext, "MSG_REGION", h.MsgRegion)
	return ext
}

// FromExt implements CustomHeader.
func (h *SendMessageResponseHeader) FromExt(ext ExtFields) error {
	r := hdrReader{ext: ext}
	*h = SendMessageResponseHeader{
		MsgID:         r.str("msgId"),
		QueueID:       r.i32("queueId"),
		QueueOffset:   r.i64("queueOffset"),
		TransactionID: r.optStr("transactionId"),
		BatchUniqID:   r.optStr("batchUniqId"),
		RecallHandle:  r.optStr("recallHandle"),
		TraceOn:       r.optBool("TRACE_ON"),
		MsgRegion:     r.optStr("MSG_REGION"),
	}
	return r.err
}

// ReplyMessageRequestHeader is sent by the broker to the requesting client
// with PUSH_REPLY_MESSAGE_TO_CLIENT (326) for request-reply messages.
type ReplyMessageRequestHeader struct {
	ProducerGroup         string
	Topic                 string
	DefaultTopic          string
	DefaultTopicQueueNums int32
	QueueID               int32
	SysFlag               int32
	BornTimestamp         int64
	Flag                  int32
	Properties            *string
	ReconsumeTimes        *int32
	UnitMode              bool
	BornHost              string
	StoreHost             string
	StoreTimestamp        int64
}

// AppendExt implements CustomHeader.
func (h *ReplyMessageRequestHeader) AppendExt(ext ExtFields) ExtFields {
	return hdrAppend(ext, h, replyMessageRequestFields)
}

// FromExt implements CustomHeader.
func (h *ReplyMessageRequestHeader) FromExt(ext ExtFields) error {
	return hdrRead(ext, h, replyMessageRequestFields)
}

var replyMessageRequestFields = hdrTableOf(func(h *ReplyMessageRequestHeader, l *hdrList) {
	l.str("producerGroup", &h.ProducerGroup)
	l.str("topic", &h.Topic)
	l.str("defaultTopic", &h.DefaultTopic)
	l.i32("defaultTopicQueueNums", &h.DefaultTopicQueueNums)
	l.i32("queueId", &h.QueueID)
	l.i32("sysFlag", &h.SysFlag)
	l.i64("bornTimestamp", &h.BornTimestamp)
	l.i32("flag", &h.Flag)
	l.optStr("properties", &h.Properties)
	l.optI32("reconsumeTimes", &h.ReconsumeTimes)
	l.boolPrim("unitMode", &h.UnitMode)
	l.str("bornHost", &h.BornHost)
	l.str("storeHost", &h.StoreHost)
	l.i64("storeTimestamp", &h.StoreTimestamp)
})
