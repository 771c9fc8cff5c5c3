package broker

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The send path (SEND_MESSAGE 10, SEND_MESSAGE_V2 310, SEND_BATCH_MESSAGE
// 320) follows a 4.9.8 broker: the checks of msgCheck in Java's order and
// with its codes and remarks (docs/PROTOCOL.md §9.1), %RETRY% and DLQ handling,
// then the store. Where 4.9.8 differs from 5.x the 4.9.8 answer is given
// unless noted.

// msgIllegalRemark is the remark of a MESSAGE_ILLEGAL refusal of a body
// or properties over the limits. It states the limits this broker
// applies, where 4.9.8 quotes a fixed "128k" whatever maxMessageSize is.
func msgIllegalRemark(maxMessageSize int) string {
	return "the message is illegal, maybe msg body or properties length not matched. msg body length limit " +
		strconv.Itoa(maxMessageSize) + "B, msg properties length limit " + strconv.Itoa(message.MaxPropertiesLength) + "B."
}

// Remarks of a 4.9.8 broker.
const (
	faqSuffix          = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	remarkMappedFile   = "create mapped file failed, server is busy or broken."
	remarkNoWriteQueue = "topic has no write queue"
	remarkTxTooMany    = "[TRANSACTION] too many undecided transactions on this broker, try later"
)

// versionV349 is MQVersion.Version.V3_4_9.ordinal(): from this client
// version on a %RETRY% send's maxReconsumeTimes header is honoured.
const versionV349 = 121

// sendInline is the send codes' fast path on the event loop, once the
// header is decoded: a send to an existing topic other than a %RETRY% one,
// whose only shared state is the store's append lock. Auto-creation (which
// writes config and re-registers with the NameServer) and %RETRY% sends
// (which may create a group) are left to a worker. With sync flush too: the
// wait for the device is syncReplies'.
func (b *Broker) sendInline(ctx context.Context, c *server.Conn, req *remoting.Command, h *remoting.SendMessageRequestHeader) (*remoting.Command, bool) {
	if rocketmq.IsRetryTopic(h.Topic) {
		return nil, false
	}
	if _, ok := b.topics.get(h.Topic); !ok {
		return nil, false
	}
	return b.send(ctx, c, req, h), true
}

// send dispatches a decoded send header like Java's asyncProcessRequest:
// the batch flag, not the code, picks the batch path.
func (b *Broker) send(ctx context.Context, c *server.Conn, req *remoting.Command, h *remoting.SendMessageRequestHeader) *remoting.Command {
	if h.Batch {
		return b.sendBatch(ctx, c, req, h)
	}
	return b.sendOne(ctx, c, req, h)
}

// sendResp is a send response and its extFields in one allocation.
type sendResp struct {
	cmd remoting.Command
	ext [5]remoting.Field
}

// newSendResponse returns a response of code with room for the header.
// Like a 4.9.8 broker it says JAVA.
func newSendResponse(code int32, remark string) *remoting.Command {
	r := &sendResp{cmd: remoting.Command{
		Code: code, Language: remoting.LanguageJava, Version: remoting.DefaultVersion,
		Flag: remoting.FlagResponse, Remark: remark,
	}}
	r.cmd.Ext = r.ext[:0]
	return &r.cmd
}

// sendResponse is a failed send's response: every send response carries
// MSG_REGION and TRACE_ON, success or not.
func (b *Broker) sendResponse(code int32, remark string) *remoting.Command {
	resp := newSendResponse(code, remark)
	if code != remoting.Success {
		b.metrics.refused.inc(code)
	}
	resp.Ext = append(resp.Ext,
		remoting.Field{Key: rocketmq.PropertyTraceSwitch, Value: b.traceOn},
		remoting.Field{Key: rocketmq.PropertyMsgRegion, Value: b.cfg.RegionID})
	return resp
}

// sendHeaderError answers a header that does not decode: SYSTEM_ERROR with
// the text Java's @CFNotNull check gives.
func (b *Broker) sendHeaderError(err error) *remoting.Command {
	return b.sendResponse(remoting.SystemError, headerErrorRemark(err))
}

// headerErrorRemark is the remark for a header decoding error.
func headerErrorRemark(err error) string {
	var fe *remoting.HeaderFieldError
	if errors.As(err, &fe) {
		return fe.Remark()
	}
	return err.Error()
}

// sendCheck is Java's msgCheck: broker permission for order topics, topic
// name, forbidden topics, lookup or auto-creation, queue id range. Then,
// beyond 4.9.8, the topic's write permission. It returns the topic config
// and the queue to write (the requested one, else a random write queue, as
// SendMessageProcessor picks it after msgCheck), or the error response.
func (b *Broker) sendCheck(c *server.Conn, h *remoting.SendMessageRequestHeader) (remoting.TopicConfig, int32, *remoting.Command) {
	topic := h.Topic
	tc, ok := b.topics.get(topic)
	if ok && tc.Order && b.brokerPermission()&rocketmq.PermWrite == 0 {
		return tc, 0, b.sendResponse(remoting.NoPermission, "the broker["+b.brokerIP()+"] sending message is forbidden")
	}
	if err := ValidateTopicBroker(topic); err != nil {
		return tc, 0, b.sendResponse(remoting.SystemError, validationReason(err))
	}
	if sendForbidden(topic) {
		return tc, 0, b.sendResponse(remoting.NoPermission, "Sending message to topic["+topic+"] is forbidden.")
	}
	if !ok {
		var err error
		tc, ok, err = b.topics.createFromTemplate(topic, h.DefaultTopic, h.DefaultTopicQueueNums, 0)
		if err != nil {
			return tc, 0, b.sendResponse(remoting.SystemError, "create topic["+topic+"] failed: "+err.Error())
		}
		if !ok && rocketmq.IsRetryTopic(topic) {
			tc, ok = b.topics.ensure(topic, 1, rocketmq.PermRead|rocketmq.PermWrite), true
		}
		if !ok {
			return tc, 0, b.sendResponse(remoting.TopicNotExist, "topic["+topic+"] not exist, apply first please!"+faqSuffix)
		}
		b.log.Debug("topic auto-created by send", "topic", topic, "queues", tc.WriteQueueNums, "remote", c.String())
	}
	if n := max(tc.WriteQueueNums, tc.ReadQueueNums); h.QueueID >= n {
		return tc, 0, b.sendResponse(remoting.SystemError, "request queueId["+strconv.Itoa(int(h.QueueID))+"] is illegal, "+
			javaTopicConfigString(&tc)+" Producer: "+remoteAddrString(c))
	}
	if tc.Perm&rocketmq.PermWrite == 0 {
		return tc, 0, b.sendResponse(remoting.NoPermission, "the topic["+topic+"] sending message is forbidden")
	}
	queueID, ok := pickQueue(h.QueueID, &tc)
	if !ok {
		return tc, 0, b.sendResponse(remoting.SystemError, remarkNoWriteQueue)
	}
	return tc, queueID, nil
}

// sendForbidden reports whether clients may not send to topic: Java's
// TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET and, beyond Java, every
// rmq_sys_ topic. Those are the broker's own (rmq_sys_wheel_timer): it
// trusts the REAL_TOPIC and REAL_QID of their records. TBW102, BenchmarkTest
// and RMQ_SYS_TRACE_TOPIC stay open, as in Java.
func sendForbidden(topic string) bool {
	return rocketmq.IsNotAllowedSendTopic(topic) || strings.HasPrefix(topic, rocketmq.SystemTopicPrefix)
}

// orZero is *p, or the zero value for an optional header field the
// client left out.
func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// pickQueue resolves a negative queue id to a random write queue.
func pickQueue(id int32, tc *remoting.TopicConfig) (int32, bool) {
	if id >= 0 {
		return id, true
	}
	if tc.WriteQueueNums <= 0 {
		return 0, false
	}
	return rand.Int32N(tc.WriteQueueNums), true
}

// sendRetry applies Java's handleRetryAndDLQ to a single send: the
// consumer group must exist (or be auto-created), and a message consumed
// too often goes to the group's DLQ, queue 0 (docs/PROTOCOL.md §9.4). 4.9.8
// compares with >=, as here.
func (b *Broker) sendRetry(req *remoting.Command, h *remoting.SendMessageRequestHeader, topic *string, queueID *int32, tc *remoting.TopicConfig) *remoting.Command {
	group := (*topic)[len(rocketmq.RetryGroupTopicPrefix):]
	gc, ok := b.groups.findOrCreate(group)
	if !ok {
		return b.sendResponse(remoting.SubscriptionGroupNotExist, "subscription group not exist, "+group+" "+faqSuffix)
	}
	maxTimes := gc.RetryMaxTimes
	if req.Version >= versionV349 && h.MaxReconsumeTimes != nil {
		maxTimes = *h.MaxReconsumeTimes
	}
	reconsume := orZero(h.ReconsumeTimes)
	if reconsume < maxTimes {
		return nil
	}
	*topic = rocketmq.DLQTopic(group)
	*queueID = rand.Int32N(99999999) % dlqQueueNums
	*tc = b.topics.ensure(*topic, dlqQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
	return nil
}

// propsBuf holds scratch space for building a stored properties string,
// and for a batch its store requests and property ends (sendBatch), which
// PutMessages does not keep.
type propsBuf struct {
	b    []byte
	reqs []store.PutRequest
	ends []int
}

var propsBufs = sync.Pool{New: func() any { return &propsBuf{b: make([]byte, 0, 512)} }}

// sendOne stores one message (docs/PROTOCOL.md §9.1, §9.5).
func (b *Broker) sendOne(ctx context.Context, c *server.Conn, req *remoting.Command, h *remoting.SendMessageRequestHeader) *remoting.Command {
	tc, queueID, resp := b.sendCheck(c, h)
	if resp != nil {
		return resp
	}
	respQueueID := queueID // Java answers with the requested queue, even after a rewrite
	topic := h.Topic
	if rocketmq.IsRetryTopic(topic) {
		if resp = b.sendRetry(req, h, &topic, &queueID, &tc); resp != nil {
			return resp
		}
	}
	sysFlag := h.SysFlag
	if tc.TopicFilterType == "MULTI_TAG" {
		sysFlag |= message.FlagMultiTags
	}

	raw := orZero(h.Properties)
	p := scanSendProps(raw)
	reconsume := orZero(h.ReconsumeTimes)
	// A half message (docs/PROTOCOL.md §9.7); Java takes a retried message
	// with a delay level for an old-style retry, not a transaction.
	half := javaBool(p.tranMsg) && !(reconsume > 0 && p.delayLevel() > 0)
	// A DLQ-bound message keeps the client's DELAY and is parked like any
	// other (Java's handleRetryAndDLQ sets level 0 on a message whose
	// properties the client's then replace): the fallback send of a Java
	// consumer reaches %DLQ% after its delay level. A half message keeps its
	// DELAY for the commit.
	delay := 0
	if t := sysFlag & message.FlagTransactionMask; !half && (t == message.FlagTransactionNot || t == message.FlagTransactionCommit) {
		delay = p.delayLevel()
	}
	var timer timerSpec // a 5.x timer message (timer.go)
	if !half && delay <= 0 && p.timer {
		if timer, resp = b.timerPrepare(raw); resp != nil {
			return resp
		}
	}

	// The stored properties: the client's pairs, a UNIQ_KEY if it sent none,
	// CLUSTER. A plain message loses WAIT (4.9.8 saves the bytes); a delayed
	// one keeps it and gains REAL_TOPIC and REAL_QID (docs/PROTOCOL.md §9.5).
	pb := propsBufs.Get().(*propsBuf)
	defer propsBufs.Put(pb)
	drop := propDropWait
	switch {
	case half:
		// Java rebuilds a half message's properties from its map: WAIT
		// stays, and its own REAL_TOPIC and REAL_QID replace the client's.
		drop = propDropReal
	case delay > 0:
		drop = 0
		if delay > len(b.delayLevels) {
			delay = len(b.delayLevels)
			drop = propDropDelay
		}
	}
	buf := appendProps(pb.b[:0], raw, drop)
	uniq := p.uniq
	if uniq == "" {
		uniq = b.ids.NewID()
		buf = message.AppendProperty(buf, 0, rocketmq.PropertyUniqKey, uniq)
	}
	buf = message.AppendProperty(buf, 0, rocketmq.PropertyCluster, b.cfg.ClusterName)
	tagsCode := message.TagHash(p.tags) // 0 without a tag
	if delay > 0 {
		if drop&propDropDelay != 0 {
			buf = message.AppendProperty(buf, 0, rocketmq.PropertyDelayLevel, strconv.Itoa(delay))
		}
		buf = message.AppendProperty(buf, 0, rocketmq.PropertyRealTopic, topic)
		buf = message.AppendProperty(buf, 0, rocketmq.PropertyRealQueueID, strconv.Itoa(int(queueID)))
		topic = rocketmq.TopicSchedule
		queueID = int32(DelayLevelQueueID(delay))
		// The store takes the tags code before it stamps the record; the
		// recovery hook recomputes it from the store time (a few ms later).
		tagsCode = DelayDeliverTimestamp(b.delayLevels, delay, b.now())
	}
	if timer.outMs != 0 {
		buf = timerPark(buf, &timer, topic, queueID)
		topic, queueID = topicTimer, 0
	}
	if half {
		buf = message.AppendProperty(buf, 0, rocketmq.PropertyRealTopic, topic)
		buf = message.AppendProperty(buf, 0, rocketmq.PropertyRealQueueID, strconv.Itoa(int(queueID)))
		topic, queueID = rocketmq.TopicTransHalf, 0
		sysFlag &^= message.FlagTransactionMask // stored as a plain message, so it is dispatched
	}
	pb.b = buf
	if len(buf) > message.MaxPropertiesLength {
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	}
	if len(req.Body) > b.cfg.MaxMessageSize {
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	}

	put := store.PutRequest{
		RecordFields: message.RecordFields{
			QueueID:        queueID,
			Flag:           h.Flag,
			SysFlag:        sysFlag,
			BornTimestamp:  h.BornTimestamp,
			BornHost:       bornHost(c),
			StoreHost:      b.storeHost,
			ReconsumeTimes: reconsume,
			Body:           req.Body,
			Topic:          topic,
			Properties:     string(buf),
		},
		TagsCode: tagsCode,
		UniqKey:  uniq,
		Keys:     p.keys,
		// With sync flush the wait is syncReplies', not the store's.
	}
	var res store.PutResult
	var err error
	if half {
		res, err = b.tx.putHalf(ctx, &put, propValue(raw, rocketmq.PropertyProducerGroup))
	} else {
		res, err = b.store.PutMessage(ctx, &put)
	}
	if err != nil {
		if errors.Is(err, errTxTooMany) {
			return b.sendResponse(remoting.SystemBusy, remarkTxTooMany)
		}
		return b.storeErrorResponse(err)
	}
	b.stats.addPut(res.MsgCount, res.WroteBytes)
	b.metrics.in(h.Topic, res.MsgCount, res.WroteBytes) // the topic sent to, before a delay or retry rewrite
	if timer.outMs != 0 {
		b.timers.added(&timer, res.QueueOffset)
	}
	return b.replyWhenDurable(c, req, b.sendOKResponse(&res, respQueueID, nil), &res, p.waitStoreMsgOK())
}

// replyWhenDurable returns a stored send's response, or (with sync flush,
// unless the message said WAIT=false) nil after handing it to syncReplies,
// which sends it once the store has synced the records.
func (b *Broker) replyWhenDurable(c *server.Conn, req, resp *remoting.Command, res *store.PutResult, wait bool) *remoting.Command {
	if !wait || req.IsOneway() {
		return resp
	}
	if b.waitForSlave(c, req, resp, res.End()) {
		return nil // SYNC_MASTER: answered once a slave has it (then synced)
	}
	if b.syncs == nil {
		return resp
	}
	stampResponse(resp)
	b.syncs.add(c, req, resp, res.End())
	return nil
}

// sendOKResponse answers a stored send: SUCCESS, or FLUSH_DISK_TIMEOUT when
// the sync flush did not finish (the message is stored either way). msgIDs
// is the comma-joined offset id list of a batch; nil means the single id of
// res.PhysicalOffset. 4.9.8 sends no transactionId (wire 0080, 0116).
func (b *Broker) sendOKResponse(res *store.PutResult, queueID int32, msgIDs []byte) *remoting.Command {
	code := remoting.Success
	if res.Status == store.PutFlushDiskTimeout {
		code = remoting.FlushDiskTimeout
	}
	// The three values share one string.
	var a [128]byte
	buf := a[:0]
	if msgIDs != nil {
		buf = append(buf, msgIDs...)
	} else {
		buf = rocketmq.AppendOffsetMsgID(buf, b.storeHost, res.PhysicalOffset)
	}
	idEnd := len(buf)
	buf = strconv.AppendInt(buf, int64(queueID), 10)
	qEnd := len(buf)
	buf = strconv.AppendInt(buf, res.QueueOffset, 10)
	vals := string(buf)
	resp := newSendResponse(code, "")
	resp.Ext = append(resp.Ext,
		remoting.Field{Key: "msgId", Value: vals[:idEnd]},
		remoting.Field{Key: "queueId", Value: vals[idEnd:qEnd]},
		remoting.Field{Key: "queueOffset", Value: vals[qEnd:]},
		remoting.Field{Key: rocketmq.PropertyTraceSwitch, Value: b.traceOn},
		remoting.Field{Key: rocketmq.PropertyMsgRegion, Value: b.cfg.RegionID})
	return resp
}

// storeErrorResponse maps a store failure to Java's put-status answers.
func (b *Broker) storeErrorResponse(err error) *remoting.Command {
	switch {
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrInvalidMessage):
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotWritable):
		// A full disk or a failed write not yet retried: Java's RunningFlags
		// not writeable gives PutMessageStatus.SERVICE_NOT_AVAILABLE.
		return b.sendResponse(remoting.ServiceNotAvailable,
			"service not available now. It may be caused by one of the following reasons: the broker's disk is full ["+
				b.diskUtil()+"], messages are put to the slave, message store has been shut down, etc.")
	case errors.Is(err, store.ErrIO):
		b.log.Error("store put failed", "err", err)
		return b.sendResponse(remoting.SystemError, remarkMappedFile)
	}
	b.log.Error("store put failed", "err", err)
	return b.sendResponse(remoting.SystemError, "UNKNOWN_ERROR")
}

// validationReason is the Java remark carried by a validator's error.
func validationReason(err error) string {
	var ve *rocketmq.ValidationError
	if errors.As(err, &ve) {
		return ve.Reason
	}
	return err.Error()
}

// javaTopicConfigString is TopicConfig.toString() of 4.9.8.
func javaTopicConfigString(tc *remoting.TopicConfig) string {
	filter := tc.TopicFilterType
	if filter == "" {
		filter = "SINGLE_TAG"
	}
	return "TopicConfig [topicName=" + tc.TopicName +
		", readQueueNums=" + strconv.Itoa(int(tc.ReadQueueNums)) +
		", writeQueueNums=" + strconv.Itoa(int(tc.WriteQueueNums)) +
		", perm=" + rocketmq.PermString(int(tc.Perm)) +
		", topicFilterType=" + filter +
		", topicSysFlag=" + strconv.Itoa(int(tc.TopicSysFlag)) +
		", order=" + strconv.FormatBool(tc.Order) + "]"
}

// bornHost is the client's address for the record; a connection without a
// TCP address gets 0.0.0.0:0.
func bornHost(c *server.Conn) netip.AddrPort {
	if ap := c.RemoteAddrPort(); ap.IsValid() {
		return ap
	}
	return netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
}

// remoteAddrString is the client's ip:port as Java's parseChannelRemoteAddr
// gives it (IPv4 unmapped).
func remoteAddrString(c *server.Conn) string {
	ap := c.RemoteAddrPort()
	if !ap.IsValid() {
		return c.String()
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
}

func (b *Broker) now() int64 { return time.Now().UnixMilli() }

// brokerIP is the host part of the published address (Java brokerIP1).
func (b *Broker) brokerIP() string {
	if b.storeHost.IsValid() {
		return b.storeHost.Addr().String()
	}
	return b.addr
}

// recoveredTagsCode is the store's tags-code hook for rebuilt consume
// queues: a parked delayed message's entry holds its delivery time.
func (b *Broker) recoveredTagsCode(topic string, properties []byte, storeTimestamp int64) int64 {
	props := string(properties)
	if topic == rocketmq.TopicSchedule {
		p := sendProps{delay: propValue(props, rocketmq.PropertyDelayLevel)}
		return DelayDeliverTimestamp(b.delayLevels, p.delayLevel(), storeTimestamp)
	}
	return message.TagHash(propValue(props, rocketmq.PropertyTags))
}
