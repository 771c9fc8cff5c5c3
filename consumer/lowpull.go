package consumer

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// PullStatus is what the broker answered a pull (Java PullStatus).
type PullStatus int

const (
	// PullFound: messages were returned.
	PullFound PullStatus = iota
	// PullNoNewMsg: the offset is the queue's end (PULL_NOT_FOUND).
	PullNoNewMsg
	// PullNoMatchedMsg: messages were read but none matched the selector
	// (PULL_RETRY_IMMEDIATELY); NextOffset moves past them.
	PullNoMatchedMsg
	// PullOffsetIllegal: the offset is outside the queue
	// (PULL_OFFSET_MOVED); NextOffset is where to continue.
	PullOffsetIllegal
)

func (s PullStatus) String() string {
	switch s {
	case PullFound:
		return "FOUND"
	case PullNoNewMsg:
		return "NO_NEW_MSG"
	case PullNoMatchedMsg:
		return "NO_MATCHED_MSG"
	case PullOffsetIllegal:
		return "OFFSET_ILLEGAL"
	}
	return "unknown"
}

// PullResult is the answer to one pull (Java PullResult).
type PullResult struct {
	Status PullStatus
	// Messages are those of the queue from the offset asked, tags
	// re-checked on the client; empty unless Status is PullFound.
	Messages []*rocketmq.MessageExt
	// NextOffset is the offset to pull next.
	NextOffset int64
	// MinOffset and MaxOffset bound the queue on the broker when it
	// answered (MaxOffset is one past its last message).
	MinOffset, MaxOffset int64
}

// liteSub is the subscription a pull carries.
type liteSub struct {
	sel    Selector
	data   remoting.SubscriptionData
	filter message.Subscription
}

func newLiteSub(wireTopic string, sel Selector) (*liteSub, error) {
	sel, err := checkSelector(wireTopic, sel)
	if err != nil {
		return nil, err
	}
	s := newSubscription(wireTopic, wireTopic, sel, nil)
	return &liteSub{sel: sel, data: s.data, filter: s.filter}, nil
}

// checkSelector defaults an empty type to TAG and refuses what a broker
// would.
func checkSelector(topic string, sel Selector) (Selector, error) {
	switch sel.Type {
	case "":
		sel.Type = SelectorTag
	case SelectorTag, SelectorSQL92:
	default:
		return sel, fmt.Errorf("rocketmq: selector of %s: type %q: want TAG or SQL92", topic, sel.Type)
	}
	if sel.Type == SelectorTag && sel.Expression == "" {
		sel.Expression = "*"
	}
	if sel.Type == SelectorSQL92 && sel.Expression == "" {
		return sel, fmt.Errorf("rocketmq: selector of %s: empty SQL92 expression", topic)
	}
	return sel, nil
}

// pullQueue sends one PULL_MESSAGE of mq from offset (Java
// PullAPIWrapper.pullKernelImpl, docs/PROTOCOL.md §8.8, §8.15). With suspend the
// broker holds the request up to suspendMax when nothing is there yet.
// No offset is committed with it: a lite pull consumer commits on its own.
func pullQueue(ctx context.Context, cli *mqclient.Client, group string, mq rocketmq.MessageQueue, brokerID int64,
	s *liteSub, offset int64, maxNums int, suspend bool, suspendMax time.Duration) (PullResult, int64, error) {
	br, ok := cli.FindBroker(mq.BrokerName, brokerID, false)
	if !ok {
		_ = cli.UpdateRoute(ctx, mq.Topic)
		if br, ok = cli.FindBroker(mq.BrokerName, brokerID, false); !ok {
			return PullResult{}, brokerID, errNoBroker(mq)
		}
	}
	sysFlag := remoting.PullFlagSubscription
	suspendMillis := int64(0)
	timeout := time.Duration(0)
	if suspend {
		sysFlag |= remoting.PullFlagSuspend
		suspendMillis = suspendMax.Milliseconds()
		timeout = suspendMax + 15*time.Second
	}
	expr, typ := s.data.SubString, s.data.ExpressionType
	hdr := remoting.PullMessageRequestHeader{
		ConsumerGroup:        group,
		Topic:                mq.Topic,
		QueueID:              int32(mq.QueueID),
		QueueOffset:          offset,
		MaxMsgNums:           int32(maxNums),
		SysFlag:              sysFlag,
		SuspendTimeoutMillis: suspendMillis,
		Subscription:         &expr,
		SubVersion:           s.data.SubVersion,
		ExpressionType:       &typ,
		BrokerName:           &mq.BrokerName,
	}
	req := remoting.NewRequest(remoting.PullMessage, hdr.AppendExt(make(remoting.ExtFields, 0, 12)), nil)
	resp, err := cli.Invoke(ctx, br.Addr, req, timeout)
	if err != nil {
		return PullResult{}, brokerID, err
	}
	var rh remoting.PullMessageResponseHeader
	switch resp.Code {
	case remoting.Success, remoting.PullNotFound, remoting.PullRetryImmediately, remoting.PullOffsetMoved:
		if err := rh.FromExt(resp.Ext); err != nil {
			return PullResult{}, brokerID, err
		}
	default:
		return PullResult{}, brokerID, remoting.ResponseError(resp)
	}
	res := PullResult{NextOffset: rh.NextBeginOffset, MinOffset: rh.MinOffset, MaxOffset: rh.MaxOffset}
	switch resp.Code {
	case remoting.Success:
		res.Status = PullFound
		msgs, derr := message.DecodeRecords(resp.Body)
		if derr != nil && len(msgs) == 0 {
			return PullResult{}, rh.SuggestWhichBrokerID, fmt.Errorf("rocketmq: pull %s: %w", queueLog(mq), derr)
		}
		res.Messages = completePulled(mq, s, msgs, rh.MinOffset, rh.MaxOffset)
		if len(res.Messages) == 0 {
			// Java processPullResult: all filtered out on the client.
			res.Status = PullNoMatchedMsg
		}
	case remoting.PullNotFound:
		res.Status = PullNoNewMsg
	case remoting.PullRetryImmediately:
		res.Status = PullNoMatchedMsg
	default:
		res.Status = PullOffsetIllegal
	}
	return res, rh.SuggestWhichBrokerID, nil
}

// completePulled re-checks tags (the broker filters by hash only) and
// sets each message's broker name and the queue's min/max offsets, as
// Java processPullResult.
func completePulled(mq rocketmq.MessageQueue, s *liteSub, msgs []*rocketmq.MessageExt, minOff, maxOff int64) []*rocketmq.MessageExt {
	filter := s.sel.Type == SelectorTag && !s.filter.MatchAll()
	minS, maxS := strconv.FormatInt(minOff, 10), strconv.FormatInt(maxOff, 10)
	out := msgs[:0]
	for _, m := range msgs {
		if filter && !s.filter.Matches(m.Tag()) {
			continue
		}
		m.BrokerName = mq.BrokerName
		if m.Properties == nil {
			m.Properties = make(map[string]string, 2)
		}
		m.Properties[rocketmq.PropertyMinOffset] = minS
		m.Properties[rocketmq.PropertyMaxOffset] = maxS
		out = append(out, m)
	}
	clear(msgs[len(out):])
	return out
}
