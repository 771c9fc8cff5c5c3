package remoting

import "github.com/go-rocketmq/rocketmq"

// Consumer enum values as Java writes them (their name()).
const (
	ConsumeTypeActively  = "CONSUME_ACTIVELY"  // pull consumers
	ConsumeTypePassively = "CONSUME_PASSIVELY" // push consumers
	ConsumeTypePop       = "CONSUME_POP"       // 5.x

	MessageModelClustering   = "CLUSTERING"
	MessageModelBroadcasting = "BROADCASTING"

	ConsumeFromLastOffset  = "CONSUME_FROM_LAST_OFFSET"
	ConsumeFromFirstOffset = "CONSUME_FROM_FIRST_OFFSET"
	ConsumeFromTimestamp   = "CONSUME_FROM_TIMESTAMP"

	ExpressionTypeTag   = "TAG"
	ExpressionTypeSQL92 = "SQL92"

	// SubAll is the subscription expression that matches every tag.
	SubAll = "*"
)

// HeartbeatData is the HEART_BEAT (34) body (docs/PROTOCOL.md §4.3).
type HeartbeatData struct {
	ClientID        string // key "clientID"
	ProducerDataSet []ProducerData
	ConsumerDataSet []ConsumerData
	// 5.x; written only when non-zero.
	HeartbeatFingerprint int32
	WithoutSub           bool
}

// ProducerData names one producer group of a client.
type ProducerData struct {
	GroupName string
}

// ConsumerData describes one consumer group of a client.
type ConsumerData struct {
	GroupName           string
	ConsumeType         string // ConsumeTypeActively, ConsumeTypePassively, ConsumeTypePop
	MessageModel        string // MessageModelClustering or MessageModelBroadcasting
	ConsumeFromWhere    string // ConsumeFromLastOffset, …
	SubscriptionDataSet []SubscriptionData
	UnitMode            bool
}

// SubscriptionData is one topic subscription of a consumer group.
type SubscriptionData struct {
	Topic           string
	SubString       string   // the expression; "*" = all
	TagsSet         []string // trimmed tags, empty for "*"
	CodeSet         []int32  // Java String.hashCode of each tag; read from numbers or strings
	SubVersion      int64    // ms (Java) or ns (official Go client) timestamp; must not decrease
	ExpressionType  string   // ExpressionTypeTag or ExpressionTypeSQL92
	ClassFilterMode bool
}

// AppendJSON implements JSONBody.
func (h *HeartbeatData) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	h.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (h *HeartbeatData) DecodeJSON(data []byte) error { return fjDecode(data, h.decode) }

func (h *HeartbeatData) write(w *fjWriter) {
	w.open()
	w.fStr("clientID", h.ClientID)
	w.key("consumerDataSet")
	fjWriteArr(w, len(h.ConsumerDataSet), func(i int) { h.ConsumerDataSet[i].write(w) })
	if h.HeartbeatFingerprint != 0 {
		w.fI32("heartbeatFingerprint", h.HeartbeatFingerprint)
	}
	w.key("producerDataSet")
	w.openArr()
	for _, p := range h.ProducerDataSet {
		w.elem()
		w.open()
		w.fStr("groupName", p.GroupName)
		w.close()
	}
	w.closeArr()
	if h.WithoutSub {
		w.fBool("withoutSub", true)
	}
	w.close()
}

func (h *HeartbeatData) decode(r *fjReader) {
	*h = HeartbeatData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "clientID":
			h.ClientID = r.str()
		case "producerDataSet":
			h.ProducerDataSet = nil
			r.array(func() {
				var p ProducerData
				r.object(func(k []byte) {
					if string(k) == "groupName" {
						p.GroupName = r.str()
					} else {
						r.skip()
					}
				})
				h.ProducerDataSet = append(h.ProducerDataSet, p)
			})
		case "consumerDataSet":
			fjReadArr(r, &h.ConsumerDataSet, (*ConsumerData).decode)
		case "heartbeatFingerprint":
			h.HeartbeatFingerprint = r.i32()
		case "withoutSub":
			h.WithoutSub = r.bool()
		default:
			r.skip()
		}
	})
}

func (c *ConsumerData) write(w *fjWriter) {
	w.open()
	w.fOptStr("consumeFromWhere", c.ConsumeFromWhere)
	w.fOptStr("consumeType", c.ConsumeType)
	w.fStr("groupName", c.GroupName)
	w.fOptStr("messageModel", c.MessageModel)
	w.key("subscriptionDataSet")
	fjWriteArr(w, len(c.SubscriptionDataSet), func(i int) { c.SubscriptionDataSet[i].write(w) })
	w.fBool("unitMode", c.UnitMode)
	w.close()
}

func (c *ConsumerData) decode(r *fjReader) {
	*c = ConsumerData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "groupName":
			c.GroupName = r.str()
		case "consumeType":
			c.ConsumeType = r.str()
		case "messageModel":
			c.MessageModel = r.str()
		case "consumeFromWhere":
			c.ConsumeFromWhere = r.str()
		case "subscriptionDataSet":
			c.SubscriptionDataSet = fjReadSubs(r)
		case "unitMode":
			c.UnitMode = r.bool()
		default:
			r.skip()
		}
	})
}

func fjReadSubs(r *fjReader) []SubscriptionData {
	var out []SubscriptionData
	fjReadArr(r, &out, (*SubscriptionData).decode)
	return out
}

func fjWriteSubs(w *fjWriter, subs []SubscriptionData) {
	fjWriteArr(w, len(subs), func(i int) { subs[i].write(w) })
}

func (s *SubscriptionData) write(w *fjWriter) {
	w.open()
	w.fBool("classFilterMode", s.ClassFilterMode)
	w.key("codeSet")
	w.openArr()
	for _, c := range s.CodeSet {
		w.elem()
		w.i32(c)
	}
	w.closeArr()
	w.fOptStr("expressionType", s.ExpressionType)
	w.fStr("subString", s.SubString)
	w.fI64("subVersion", s.SubVersion)
	w.key("tagsSet")
	w.strList(s.TagsSet)
	w.fStr("topic", s.Topic)
	w.close()
}

func (s *SubscriptionData) decode(r *fjReader) {
	*s = SubscriptionData{}
	r.object(func(k []byte) {
		switch string(k) {
		case "topic":
			s.Topic = r.str()
		case "subString":
			s.SubString = r.str()
		case "tagsSet":
			s.TagsSet = r.strList()
		case "codeSet":
			s.CodeSet = nil
			r.array(func() { s.CodeSet = append(s.CodeSet, r.i32()) })
		case "subVersion":
			s.SubVersion = r.i64()
		case "expressionType":
			s.ExpressionType = r.str()
		case "classFilterMode":
			s.ClassFilterMode = r.bool()
		default:
			r.skip()
		}
	})
}

// ConsumerListByGroupBody answers GET_CONSUMER_LIST_BY_GROUP (§4.4). The
// order is not meaningful; clients sort it before allocating queues.
type ConsumerListByGroupBody struct {
	ConsumerIDList []string // key "consumerIdList"
}

// AppendJSON implements JSONBody.
func (c *ConsumerListByGroupBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "consumerIdList", func(w *fjWriter) { w.strList(c.ConsumerIDList) })
}

// DecodeJSON implements JSONBody.
func (c *ConsumerListByGroupBody) DecodeJSON(data []byte) error {
	*c = ConsumerListByGroupBody{}
	return fjDecodeOneField(data, "consumerIdList", func(r *fjReader) { c.ConsumerIDList = r.strList() })
}

// LockBatchRequestBody is the LOCK_BATCH_MQ (41) body (§3.14, §4.5).
type LockBatchRequestBody struct {
	ConsumerGroup  string
	ClientID       string // key "clientId"
	OnlyThisBroker bool   // 5.x; written when true
	MQSet          []rocketmq.MessageQueue
}

// UnlockBatchRequestBody is the UNLOCK_BATCH_MQ (42) body, same fields.
type UnlockBatchRequestBody = LockBatchRequestBody

// AppendJSON implements JSONBody.
func (l *LockBatchRequestBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fStr("clientId", l.ClientID)
	w.fStr("consumerGroup", l.ConsumerGroup)
	w.key("mqSet")
	w.mqList(l.MQSet)
	if l.OnlyThisBroker {
		w.fBool("onlyThisBroker", true)
	}
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (l *LockBatchRequestBody) DecodeJSON(data []byte) error {
	*l = LockBatchRequestBody{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "consumerGroup":
				l.ConsumerGroup = r.str()
			case "clientId":
				l.ClientID = r.str()
			case "onlyThisBroker":
				l.OnlyThisBroker = r.bool()
			case "mqSet":
				l.MQSet = fjReadMQList(r)
			default:
				r.skip()
			}
		})
	})
}

// LockBatchResponseBody answers LOCK_BATCH_MQ with the queues now locked
// by the caller.
type LockBatchResponseBody struct {
	LockOKMQSet []rocketmq.MessageQueue
}

// AppendJSON implements JSONBody.
func (l *LockBatchResponseBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "lockOKMQSet", func(w *fjWriter) { w.mqList(l.LockOKMQSet) })
}

// DecodeJSON implements JSONBody.
func (l *LockBatchResponseBody) DecodeJSON(data []byte) error {
	*l = LockBatchResponseBody{}
	return fjDecodeOneField(data, "lockOKMQSet", func(r *fjReader) { l.LockOKMQSet = fjReadMQList(r) })
}

// fjReadMQ reads a MessageQueue object.
func fjReadMQ(r *fjReader) rocketmq.MessageQueue {
	var mq rocketmq.MessageQueue
	r.object(func(k []byte) {
		switch string(k) {
		case "topic":
			mq.Topic = r.str()
		case "brokerName":
			mq.BrokerName = r.str()
		case "queueId":
			mq.QueueID = int(r.i32())
		default:
			r.skip()
		}
	})
	return mq
}

func fjReadMQList(r *fjReader) []rocketmq.MessageQueue {
	var out []rocketmq.MessageQueue
	r.array(func() { out = append(out, fjReadMQ(r)) })
	return out
}

// fjReadMQMap reads a Map<MessageQueue,V>. fastjson writes the keys as
// object literals; a key may also be a string holding that literal, and
// Gson-era brokers wrote the map as an array of [key, value] pairs.
func fjReadMQMap[V any](r *fjReader, val func() V) map[rocketmq.MessageQueue]V {
	var m map[rocketmq.MessageQueue]V
	put := func(mq rocketmq.MessageQueue, v V) {
		if m == nil {
			m = map[rocketmq.MessageQueue]V{}
		}
		m[mq] = v
	}
	if r.peek() == '[' {
		r.array(func() {
			var mq rocketmq.MessageQueue
			var v V
			n := 0
			r.array(func() {
				switch n {
				case 0:
					mq = fjReadMQ(r)
				case 1:
					v = val()
				default:
					r.fail("map entry with more than two elements")
				}
				n++
			})
			if n != 2 {
				r.fail("map entry is not a [key, value] pair")
			}
			put(mq, v)
		})
		return m
	}
	r.object(func(k []byte) {
		mq, ok := fjParseMQKey(k)
		if !ok {
			r.fail("bad MessageQueue map key")
			return
		}
		put(mq, val())
	})
	return m
}

func fjParseMQKey(k []byte) (rocketmq.MessageQueue, bool) {
	if len(k) == 0 || k[0] != '{' {
		return rocketmq.MessageQueue{}, false
	}
	var mq rocketmq.MessageQueue
	err := fjDecode(k, func(r *fjReader) { mq = fjReadMQ(r) })
	return mq, err == nil
}

// fjWriteMQMap writes a Map<MessageQueue,V> with object-literal keys.
func fjWriteMQMap[V any](w *fjWriter, m map[rocketmq.MessageQueue]V, val func(V)) {
	w.open()
	for _, mq := range fjSortedMQs(m) {
		w.mapKeyMQ(mq)
		val(m[mq])
	}
	w.close()
}

// CheckClientRequestBody is the CHECK_CLIENT_CONFIG (46) body: a consumer
// asks a broker whether it accepts one subscription (Java
// CheckClientRequestBody, sent at start for SQL92 subscriptions).
type CheckClientRequestBody struct {
	ClientID         string
	Group            string
	SubscriptionData SubscriptionData
}

// AppendJSON implements JSONBody.
func (c *CheckClientRequestBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fStr("clientId", c.ClientID)
	w.fStr("group", c.Group)
	w.key("subscriptionData")
	c.SubscriptionData.write(&w)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *CheckClientRequestBody) DecodeJSON(data []byte) error {
	return fjDecode(data, func(r *fjReader) {
		*c = CheckClientRequestBody{}
		r.object(func(k []byte) {
			switch string(k) {
			case "clientId":
				c.ClientID = r.str()
			case "group":
				c.Group = r.str()
			case "subscriptionData":
				c.SubscriptionData.decode(r)
			default:
				r.skip()
			}
		})
	})
}
