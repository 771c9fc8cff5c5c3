package remoting

import "github.com/go-rocketmq/rocketmq"

// ResetOffsetBody is the body of RESET_CONSUMER_CLIENT_OFFSET (220) and the
// response of INVOKE_BROKER_TO_RESET_OFFSET (222) (docs/PROTOCOL.md §4.10).
type ResetOffsetBody struct {
	OffsetTable map[rocketmq.MessageQueue]int64
}

// AppendJSON implements JSONBody.
func (b *ResetOffsetBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "offsetTable", func(w *fjWriter) { fjWriteMQMap(w, b.OffsetTable, w.i64) })
}

// DecodeJSON implements JSONBody.
func (b *ResetOffsetBody) DecodeJSON(data []byte) error {
	*b = ResetOffsetBody{}
	return fjDecodeOneField(data, "offsetTable", func(r *fjReader) { b.OffsetTable = fjReadMQMap(r, r.i64) })
}

// ResetOffsetBodyForC is the body of RESET_CONSUMER_CLIENT_OFFSET (220) a
// broker sends a C++ client instead of ResetOffsetBody: a list rather than
// a map keyed by message queue.
type ResetOffsetBodyForC struct {
	OffsetTable []MessageQueueForC
}

// MessageQueueForC is one entry of ResetOffsetBodyForC.
type MessageQueueForC struct {
	Topic      string
	BrokerName string
	QueueID    int32
	Offset     int64
}

// AppendJSON implements JSONBody.
func (b *ResetOffsetBodyForC) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "offsetTable", func(w *fjWriter) {
		w.openArr()
		for _, q := range b.OffsetTable {
			w.elem()
			w.open()
			w.fStr("brokerName", q.BrokerName)
			w.fI64("offset", q.Offset)
			w.fI32("queueId", q.QueueID)
			w.fStr("topic", q.Topic)
			w.close()
		}
		w.closeArr()
	})
}

// DecodeJSON implements JSONBody.
func (b *ResetOffsetBodyForC) DecodeJSON(data []byte) error {
	*b = ResetOffsetBodyForC{}
	return fjDecodeOneField(data, "offsetTable", func(r *fjReader) {
		r.array(func() {
			var q MessageQueueForC
			r.object(func(k []byte) {
				switch string(k) {
				case "topic":
					q.Topic = r.str()
				case "brokerName":
					q.BrokerName = r.str()
				case "queueId":
					q.QueueID = r.i32()
				case "offset":
					q.Offset = r.i64()
				default:
					r.skip()
				}
			})
			b.OffsetTable = append(b.OffsetTable, q)
		})
	})
}

// GetConsumerStatusBody answers GET_CONSUMER_STATUS_FROM_CLIENT (221) and
// INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223).
type GetConsumerStatusBody struct {
	MessageQueueTable map[rocketmq.MessageQueue]int64
	ConsumerTable     map[string]map[rocketmq.MessageQueue]int64 // client id → table
}

// AppendJSON implements JSONBody.
func (b *GetConsumerStatusBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("consumerTable")
	w.open()
	for _, cid := range fjSortedKeys(b.ConsumerTable) {
		w.mapKeyStr(cid)
		fjWriteMQMap(&w, b.ConsumerTable[cid], w.i64)
	}
	w.close()
	w.key("messageQueueTable")
	fjWriteMQMap(&w, b.MessageQueueTable, w.i64)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (b *GetConsumerStatusBody) DecodeJSON(data []byte) error {
	*b = GetConsumerStatusBody{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "messageQueueTable":
				b.MessageQueueTable = fjReadMQMap(r, r.i64)
			case "consumerTable":
				b.ConsumerTable = fjReadStrMap(r, func() map[rocketmq.MessageQueue]int64 {
					return fjReadMQMap(r, r.i64)
				})
			default:
				r.skip()
			}
		})
	})
}

// ConsumerRunningInfo answers GET_CONSUMER_RUNNING_INFO (307) (§4.10).
type ConsumerRunningInfo struct {
	Properties      map[string]string // PROP_NAMESERVER_ADDR, PROP_CONSUME_TYPE, …
	SubscriptionSet []SubscriptionData
	MQTable         map[rocketmq.MessageQueue]ProcessQueueInfo
	StatusTable     map[string]ConsumeStatus // topic → status
	Jstack          string                   // written when not empty
	// 5.x fields, kept as raw JSON (nil when absent).
	MQPopTable       []byte
	UserConsumerInfo map[string]string
}

// Property keys of ConsumerRunningInfo.Properties.
const (
	PropNamesrvAddr            = "PROP_NAMESERVER_ADDR"
	PropThreadPoolCoreSize     = "PROP_THREADPOOL_CORE_SIZE"
	PropConsumeOrderly         = "PROP_CONSUMEORDERLY"
	PropConsumeType            = "PROP_CONSUME_TYPE"
	PropClientVersion          = "PROP_CLIENT_VERSION"
	PropConsumerStartTimestamp = "PROP_CONSUMER_START_TIMESTAMP"
)

// ProcessQueueInfo is a consumer's view of one queue. "Droped" is Java's
// spelling of the JSON key.
type ProcessQueueInfo struct {
	CommitOffset            int64
	CachedMsgMinOffset      int64
	CachedMsgMaxOffset      int64
	CachedMsgCount          int32
	CachedMsgSizeInMiB      int32
	TransactionMsgMinOffset int64
	TransactionMsgMaxOffset int64
	TransactionMsgCount     int32
	Locked                  bool
	TryUnlockTimes          int64
	LastLockTimestamp       int64
	Droped                  bool
	LastPullTimestamp       int64
	LastConsumeTimestamp    int64
}

// ConsumeStatus is a consumer's statistics for one topic.
type ConsumeStatus struct {
	PullRT            float64
	PullTPS           float64
	ConsumeRT         float64
	ConsumeOKTPS      float64
	ConsumeFailedTPS  float64
	ConsumeFailedMsgs int64
}

// AppendJSON implements JSONBody.
func (c *ConsumerRunningInfo) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fOptStr("jstack", c.Jstack)
	w.fRaw("mqPopTable", c.MQPopTable)
	w.key("mqTable")
	fjWriteMQMap(&w, c.MQTable, func(p ProcessQueueInfo) { p.write(&w) })
	w.key("properties")
	w.strMap(c.Properties)
	w.key("statusTable")
	w.open()
	for _, topic := range fjSortedKeys(c.StatusTable) {
		w.mapKeyStr(topic)
		s := c.StatusTable[topic]
		w.open()
		w.fI64("consumeFailedMsgs", s.ConsumeFailedMsgs)
		w.fF64("consumeFailedTPS", s.ConsumeFailedTPS)
		w.fF64("consumeOKTPS", s.ConsumeOKTPS)
		w.fF64("consumeRT", s.ConsumeRT)
		w.fF64("pullRT", s.PullRT)
		w.fF64("pullTPS", s.PullTPS)
		w.close()
	}
	w.close()
	w.key("subscriptionSet")
	fjWriteSubs(&w, c.SubscriptionSet)
	if len(c.UserConsumerInfo) > 0 {
		w.key("userConsumerInfo")
		w.strMap(c.UserConsumerInfo)
	}
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ConsumerRunningInfo) DecodeJSON(data []byte) error {
	*c = ConsumerRunningInfo{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "properties":
				c.Properties = r.strMap()
			case "subscriptionSet":
				c.SubscriptionSet = fjReadSubs(r)
			case "mqTable":
				c.MQTable = fjReadMQMap(r, func() ProcessQueueInfo {
					var p ProcessQueueInfo
					p.decode(r)
					return p
				})
			case "statusTable":
				c.StatusTable = fjReadStrMap(r, func() ConsumeStatus {
					var s ConsumeStatus
					r.object(func(k []byte) {
						switch string(k) {
						case "pullRT":
							s.PullRT = r.f64()
						case "pullTPS":
							s.PullTPS = r.f64()
						case "consumeRT":
							s.ConsumeRT = r.f64()
						case "consumeOKTPS":
							s.ConsumeOKTPS = r.f64()
						case "consumeFailedTPS":
							s.ConsumeFailedTPS = r.f64()
						case "consumeFailedMsgs":
							s.ConsumeFailedMsgs = r.i64()
						default:
							r.skip()
						}
					})
					return s
				})
			case "jstack":
				c.Jstack = r.str()
			case "mqPopTable":
				c.MQPopTable = fjCopy(r.raw())
			case "userConsumerInfo":
				c.UserConsumerInfo = r.strMap()
			default:
				r.skip()
			}
		})
	})
}

func (p *ProcessQueueInfo) write(w *fjWriter) {
	w.open()
	w.fI32("cachedMsgCount", p.CachedMsgCount)
	w.fI64("cachedMsgMaxOffset", p.CachedMsgMaxOffset)
	w.fI64("cachedMsgMinOffset", p.CachedMsgMinOffset)
	w.fI32("cachedMsgSizeInMiB", p.CachedMsgSizeInMiB)
	w.fI64("commitOffset", p.CommitOffset)
	w.fBool("droped", p.Droped)
	w.fI64("lastConsumeTimestamp", p.LastConsumeTimestamp)
	w.fI64("lastLockTimestamp", p.LastLockTimestamp)
	w.fI64("lastPullTimestamp", p.LastPullTimestamp)
	w.fBool("locked", p.Locked)
	w.fI32("transactionMsgCount", p.TransactionMsgCount)
	w.fI64("transactionMsgMaxOffset", p.TransactionMsgMaxOffset)
	w.fI64("transactionMsgMinOffset", p.TransactionMsgMinOffset)
	w.fI64("tryUnlockTimes", p.TryUnlockTimes)
	w.close()
}

func (p *ProcessQueueInfo) decode(r *fjReader) {
	*p = ProcessQueueInfo{}
	r.object(func(k []byte) {
		switch string(k) {
		case "commitOffset":
			p.CommitOffset = r.i64()
		case "cachedMsgMinOffset":
			p.CachedMsgMinOffset = r.i64()
		case "cachedMsgMaxOffset":
			p.CachedMsgMaxOffset = r.i64()
		case "cachedMsgCount":
			p.CachedMsgCount = r.i32()
		case "cachedMsgSizeInMiB":
			p.CachedMsgSizeInMiB = r.i32()
		case "transactionMsgMinOffset":
			p.TransactionMsgMinOffset = r.i64()
		case "transactionMsgMaxOffset":
			p.TransactionMsgMaxOffset = r.i64()
		case "transactionMsgCount":
			p.TransactionMsgCount = r.i32()
		case "locked":
			p.Locked = r.bool()
		case "tryUnlockTimes":
			p.TryUnlockTimes = r.i64()
		case "lastLockTimestamp":
			p.LastLockTimestamp = r.i64()
		case "droped":
			p.Droped = r.bool()
		case "lastPullTimestamp":
			p.LastPullTimestamp = r.i64()
		case "lastConsumeTimestamp":
			p.LastConsumeTimestamp = r.i64()
		default:
			r.skip()
		}
	})
}

// ConsumeResult values of ConsumeMessageDirectlyResult (Java CMResult).
const (
	ConsumeResultSuccess        = "CR_SUCCESS"
	ConsumeResultLater          = "CR_LATER"
	ConsumeResultRollback       = "CR_ROLLBACK"
	ConsumeResultCommit         = "CR_COMMIT"
	ConsumeResultThrowException = "CR_THROW_EXCEPTION"
	ConsumeResultReturnNull     = "CR_RETURN_NULL"
)

// ConsumeMessageDirectlyResult answers CONSUME_MESSAGE_DIRECTLY (309).
type ConsumeMessageDirectlyResult struct {
	Order          bool
	AutoCommit     bool // Java default true
	ConsumeResult  string
	Remark         string
	SpentTimeMills int64 // sic
}

// AppendJSON implements JSONBody.
func (c *ConsumeMessageDirectlyResult) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.fBool("autoCommit", c.AutoCommit)
	w.fOptStr("consumeResult", c.ConsumeResult)
	w.fBool("order", c.Order)
	w.fOptStr("remark", c.Remark)
	w.fI64("spentTimeMills", c.SpentTimeMills)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (c *ConsumeMessageDirectlyResult) DecodeJSON(data []byte) error {
	*c = ConsumeMessageDirectlyResult{AutoCommit: true}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "order":
				c.Order = r.bool()
			case "autoCommit":
				c.AutoCommit = r.bool()
			case "consumeResult":
				c.ConsumeResult = r.str()
			case "remark":
				c.Remark = r.str()
			case "spentTimeMills":
				c.SpentTimeMills = r.i64()
			default:
				r.skip()
			}
		})
	})
}

// QueryCorrectionOffsetBody answers QUERY_CORRECTION_OFFSET (308).
type QueryCorrectionOffsetBody struct {
	CorrectionOffsets map[int32]int64 // queue id → offset
}

// AppendJSON implements JSONBody.
func (q *QueryCorrectionOffsetBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	return fjAppendOneField(dst, style, "correctionOffsets", func(w *fjWriter) { fjWriteInt32Map(w, q.CorrectionOffsets) })
}

// DecodeJSON implements JSONBody.
func (q *QueryCorrectionOffsetBody) DecodeJSON(data []byte) error {
	*q = QueryCorrectionOffsetBody{}
	return fjDecodeOneField(data, "correctionOffsets", func(r *fjReader) { q.CorrectionOffsets = fjReadInt32Map(r, r.i64) })
}

// fjWriteInt32Map writes a Map<Integer,Long>.
func fjWriteInt32Map(w *fjWriter, m map[int32]int64) {
	w.open()
	for _, k := range fjSortedIntKeys(m) {
		w.mapKeyInt(int64(k))
		w.i64(m[k])
	}
	w.close()
}
