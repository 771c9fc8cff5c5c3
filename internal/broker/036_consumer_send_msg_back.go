package broker

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// CONSUMER_SEND_MSG_BACK (36): a consumer hands back a message it failed to
// consume (Java SendMessageProcessor.asyncConsumerSendMsgBack,
// docs/PROTOCOL.md §9.4). The broker reads the message at the header's
// commit-log offset and stores a copy in %RETRY%group behind a delay level,
// or in %DLQ%group once it has been reconsumed too often.

// topicSysFlagUnitSub is TopicSysFlag.buildSysFlag(false, true): the
// %RETRY% topic of a unit-mode consumer.
const topicSysFlagUnitSub int32 = 1 << 1

// dlqQueueNums is Java's DLQ_NUMS_PER_GROUP.
const dlqQueueNums = 1

// handleConsumerSendMsgBack serves CONSUMER_SEND_MSG_BACK.
func (b *Broker) handleConsumerSendMsgBack(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.ConsumerSendMsgBackRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return adminHeaderError(err)
	}
	gc, ok := b.groups.findOrCreate(h.Group)
	if !ok {
		return remoting.NewResponse(remoting.SubscriptionGroupNotExist, "subscription group not exist, "+h.Group+" "+faqSuffix)
	}
	if b.brokerPermission()&rocketmq.PermWrite == 0 {
		return remoting.NewResponse(remoting.NoPermission, "the broker["+b.brokerIP()+"] sending message is forbidden")
	}
	if gc.RetryQueueNums <= 0 {
		return remoting.NewResponse(remoting.Success, "")
	}

	topic := rocketmq.RetryTopic(h.Group)
	queueID := rand.Int32N(99999999) % gc.RetryQueueNums
	var sysFlag int32
	if h.UnitMode {
		sysFlag = topicSysFlagUnitSub
	}
	tc := b.topics.ensureSys(topic, gc.RetryQueueNums, rocketmq.PermRead|rocketmq.PermWrite, sysFlag)
	if tc.Perm&rocketmq.PermWrite == 0 {
		return remoting.NewResponse(remoting.NoPermission, "the topic["+topic+"] sending message is forbidden")
	}
	m, err := b.lookMessageByOffset(h.Offset)
	if err != nil {
		b.log.Debug("send back: message not found", "group", h.Group, "offset", h.Offset, "err", err)
		return remoting.NewResponse(remoting.SystemError, "look message by offset failed, "+strconv.FormatInt(h.Offset, 10))
	}

	props := m.Properties
	if props == nil {
		props = make(map[string]string, 6)
	}
	if _, ok := props[rocketmq.PropertyRetryTopic]; !ok {
		props[rocketmq.PropertyRetryTopic] = m.Topic
	}
	props[rocketmq.PropertyWaitStoreMsgOK] = "false"
	maxTimes := gc.RetryMaxTimes
	if req.Version >= versionV349 && h.MaxReconsumeTimes != nil {
		maxTimes = *h.MaxReconsumeTimes
	}
	delay := int(h.DelayLevel)
	if m.ReconsumeTimes >= maxTimes || delay < 0 {
		topic = rocketmq.DLQTopic(h.Group)
		queueID = rand.Int32N(99999999) % dlqQueueNums
		b.topics.ensure(topic, dlqQueueNums, rocketmq.PermRead|rocketmq.PermWrite)
		delay = 0
	} else if delay == 0 {
		delay = 3 + int(m.ReconsumeTimes)
	}
	props[rocketmq.PropertyDelayLevel] = strconv.Itoa(delay) // "0" into the DLQ, as Java stores it
	if id := props[rocketmq.PropertyOriginMessageID]; strings.TrimSpace(id) == "" {
		props[rocketmq.PropertyOriginMessageID] = m.OffsetMsgID
	}

	put := copyOf(m, topic, queueID, props) // the store host stays the original's, as Java
	put.ReconsumeTimes++
	if t := message.TransactionType(m.SysFlag); delay > 0 && (t == message.FlagTransactionNot || t == message.FlagTransactionCommit) {
		b.parkDelayed(&put, props, delay)
	}
	put.Properties = message.EncodeProperties(props)
	res, err := b.store.PutMessage(ctx, &put)
	if err != nil {
		return remoting.NewResponse(remoting.SystemError, putStatusName(err))
	}
	b.stats.addPut(res.MsgCount, res.WroteBytes)
	return remoting.NewResponse(remoting.Success, "")
}

// lookMessageByOffset reads and decodes the record at a commit-log offset,
// its body left as stored (Java lookMessageByOffset).
func (b *Broker) lookMessageByOffset(phys int64) (*rocketmq.MessageExt, error) {
	rec, err := b.store.MessageAt(phys)
	if err != nil {
		return nil, err
	}
	m, _, err := message.DecodeOptions{KeepCompressed: true}.DecodeRecord(rec)
	return m, err
}

// parkDelayed redirects put to SCHEDULE_TOPIC_XXXX as the store does for a
// message with a delay level (Java CommitLog.asyncPutMessage): a level past
// the table is clamped, REAL_TOPIC and REAL_QID keep the destination, and
// the consume-queue tags code is the delivery time (docs/PROTOCOL.md §9.5).
func (b *Broker) parkDelayed(put *store.PutRequest, props map[string]string, delay int) {
	if delay > len(b.delayLevels) {
		delay = len(b.delayLevels)
		props[rocketmq.PropertyDelayLevel] = strconv.Itoa(delay)
	}
	props[rocketmq.PropertyRealTopic] = put.Topic
	props[rocketmq.PropertyRealQueueID] = strconv.Itoa(int(put.QueueID))
	put.Topic = rocketmq.TopicSchedule
	put.QueueID = int32(DelayLevelQueueID(delay))
	put.TagsCode = DelayDeliverTimestamp(b.delayLevels, delay, b.now())
}

// putStatusName is the name of Java's PutMessageStatus for a failed put,
// the remark of a failed send-back.
func putStatusName(err error) string {
	switch {
	case errors.Is(err, store.ErrMessageTooLarge), errors.Is(err, store.ErrInvalidMessage):
		return "MESSAGE_ILLEGAL"
	case errors.Is(err, store.ErrClosed), errors.Is(err, store.ErrNotWritable):
		return "SERVICE_NOT_AVAILABLE"
	case errors.Is(err, store.ErrIO):
		return "CREATE_MAPEDFILE_FAILED"
	}
	return "UNKNOWN_ERROR"
}
