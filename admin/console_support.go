package admin

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// ConsumeMessageDirectly has the member clientID of group consume the
// message msgID of topic again, through the broker that stored it
// (CONSUME_MESSAGE_DIRECTLY, Java DefaultMQAdminExtImpl
// consumeMessageDirectly): the broker reads the message by its offset id
// and hands it to the member, whose answer is returned.
func (a *Admin) ConsumeMessageDirectly(ctx context.Context, group, clientID, topic, msgID string) (*remoting.ConsumeMessageDirectlyResult, error) {
	if err := rocketmq.ValidateGroup(group); err != nil {
		return nil, err
	}
	if clientID == "" {
		return nil, errorf("consume message %s directly: the client id is empty", msgID)
	}
	m, err := a.ViewMessage(ctx, topic, msgID)
	if err != nil {
		return nil, err
	}
	addr := m.StoreHost.String()
	h := remoting.ConsumeMessageDirectlyResultRequestHeader{
		ConsumerGroup: a.wrap(group), ClientID: &clientID, MsgID: &m.OffsetMsgID,
	}
	if m.BrokerName != "" {
		h.BrokerName = &m.BrokerName
	}
	what := "consume message " + msgID + " directly in " + clientID + " of group " + group
	resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.ConsumeMessageDirectly, h.AppendExt(nil), nil), what)
	if err != nil {
		return nil, err
	}
	res := new(remoting.ConsumeMessageDirectlyResult)
	if err := decode(resp, res, what); err != nil {
		return nil, err
	}
	return res, nil
}

// toolsConsumerGroup is the group Java's tools pull under (MixAll
// TOOLS_CONSUMER_GROUP); no offset is committed for it.
const toolsConsumerGroup = "TOOLS_CONSUMER"

// pullBatch is the messages asked per PULL_MESSAGE.
const pullBatch = 32

// MessagesByTime returns up to maxNum messages of topic stored within
// [begin, end], earliest first, as rocketmq-dashboard's topic query
// finds them: on every readable queue the offset of begin
// (SEARCH_OFFSET_BY_TIMESTAMP), then PULL_MESSAGE from there until a
// message stored after end, the queue's end or maxNum messages of that
// queue. No offset is committed. maxNum not positive means
// DefaultQueryMaxNum.
func (a *Admin) MessagesByTime(ctx context.Context, topic string, begin, end time.Time, maxNum int) ([]*rocketmq.MessageExt, error) {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return nil, err
	}
	if maxNum <= 0 {
		maxNum = DefaultQueryMaxNum
	}
	if end.IsZero() {
		end = time.Now()
	}
	if end.Before(begin) {
		return nil, errorf("messages of topic %s: the end %s is before the begin %s", topic, end.Format(time.RFC3339), begin.Format(time.RFC3339))
	}
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	type queues struct {
		broker string
		n      int32
	}
	byAddr := map[string]queues{}
	for _, qd := range r.QueueDatas {
		if qd.Perm&rocketmq.PermRead == 0 {
			continue
		}
		for _, bd := range r.BrokerDatas {
			if bd.BrokerName == qd.BrokerName && bd.MasterAddr() != "" {
				byAddr[bd.MasterAddr()] = queues{qd.BrokerName, qd.ReadQueueNums}
			}
		}
	}
	addrs := make([]string, 0, len(byAddr))
	for addr := range byAddr {
		addrs = append(addrs, addr)
	}
	if len(addrs) == 0 {
		return nil, errorf("topic %q: %w", topic, ErrNoBroker)
	}
	var mu sync.Mutex
	var out []*rocketmq.MessageExt
	err = each(addrs, func(addr string) error {
		q := byAddr[addr]
		for id := range q.n {
			msgs, err := a.pullRange(ctx, addr, q.broker, topic, id, begin.UnixMilli(), end.UnixMilli(), maxNum)
			if err != nil {
				return err
			}
			mu.Lock()
			out = append(out, msgs...)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(x, y *rocketmq.MessageExt) int {
		return cmp.Or(cmp.Compare(x.StoreTimestamp, y.StoreTimestamp), cmp.Compare(x.BrokerName, y.BrokerName),
			cmp.Compare(x.QueueID, y.QueueID), cmp.Compare(x.QueueOffset, y.QueueOffset))
	})
	return out[:min(len(out), maxNum)], nil
}

// pullRange reads one queue's messages stored within [begin, end] ms.
func (a *Admin) pullRange(ctx context.Context, addr, broker, topic string, queueID int32, begin, end int64, maxNum int) ([]*rocketmq.MessageExt, error) {
	what := "messages of topic " + topic + " queue " + broker + "/" + strconv.Itoa(int(queueID))
	sh := remoting.SearchOffsetRequestHeader{Topic: a.wrap(topic), QueueID: queueID, Timestamp: begin}
	resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.SearchOffsetByTimestamp, sh.AppendExt(nil), nil), what)
	if err != nil {
		return nil, err
	}
	var oh remoting.OffsetResponseHeader
	if err := oh.FromExt(resp.Ext); err != nil {
		return nil, errorf("%s: bad response header: %w", what, err)
	}
	offset := oh.Offset
	expr, typ := "*", remoting.ExpressionTypeTag
	var out []*rocketmq.MessageExt
	for len(out) < maxNum {
		h := remoting.PullMessageRequestHeader{
			ConsumerGroup: toolsConsumerGroup, Topic: a.wrap(topic), QueueID: queueID, QueueOffset: offset,
			MaxMsgNums: pullBatch, SysFlag: remoting.PullFlagSubscription, Subscription: &expr, ExpressionType: &typ, BrokerName: &broker,
		}
		if err := a.check(); err != nil {
			return nil, err
		}
		resp, err := a.cli.Invoke(ctx, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil), 0)
		if err != nil {
			return nil, errorf("%s at %s: %w", what, addr, err)
		}
		switch resp.Code {
		case remoting.Success:
		case remoting.PullNotFound, remoting.PullOffsetMoved, remoting.PullRetryImmediately:
			return out, nil
		default:
			return nil, errorf("%s at %s: %w", what, addr, remoting.ResponseError(resp))
		}
		var rh remoting.PullMessageResponseHeader
		if err := rh.FromExt(resp.Ext); err != nil {
			return nil, errorf("%s: bad response header: %w", what, err)
		}
		msgs, err := message.DecodeRecords(resp.Body)
		if err != nil && len(msgs) == 0 {
			return nil, errorf("%s: %w", what, err)
		}
		for _, m := range msgs {
			if m.StoreTimestamp > end {
				return out, nil
			}
			if m.StoreTimestamp >= begin && len(out) < maxNum {
				m.Topic = a.unwrap(m.Topic)
				m.BrokerName = broker
				out = append(out, m)
			}
		}
		if rh.NextBeginOffset <= offset || len(msgs) == 0 {
			return out, nil
		}
		offset = rh.NextBeginOffset
	}
	return out, nil
}
