package admin

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// DefaultQueryMaxNum is the number of messages QueryMessage asks each
// broker for when maxNum is not positive (Java mqadmin queryMsgByKey asks
// for 64).
const DefaultQueryMaxNum = 64

// QueryMessage returns the messages of topic indexed under key (one of
// their KEYS) stored within [begin, end] (zero times: unbounded), asking
// each broker of the topic's route for up to maxNum (QUERY_MESSAGE,
// docs/PROTOCOL.md §9.10). Index hash collisions are filtered out. No
// match is an empty result, not an error.
func (a *Admin) QueryMessage(ctx context.Context, topic, key string, maxNum int, begin, end time.Time) ([]*rocketmq.MessageExt, error) {
	if maxNum <= 0 {
		maxNum = DefaultQueryMaxNum
	}
	return a.query(ctx, topic, key, int32(min(maxNum, math.MaxInt32)), begin, end, false)
}

func (a *Admin) query(ctx context.Context, topic, key string, maxNum int32, begin, end time.Time, uniq bool) ([]*rocketmq.MessageExt, error) {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errorf("query of topic %s: the key is empty", topic)
	}
	r, err := a.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	addrs := routeMasters(r)
	if len(addrs) == 0 {
		return nil, errorf("topic %q: %w", topic, ErrNoBroker)
	}
	h := remoting.QueryMessageRequestHeader{Topic: a.wrap(topic), Key: key, MaxNum: maxNum, BeginTimestamp: 0, EndTimestamp: math.MaxInt64}
	if !begin.IsZero() {
		h.BeginTimestamp = begin.UnixMilli()
	}
	if !end.IsZero() {
		h.EndTimestamp = end.UnixMilli()
	}
	if uniq {
		h.UniqueKeyQuery = remoting.Ptr(true)
	}
	what := "query of key " + key + " in topic " + topic
	var mu sync.Mutex
	var out []*rocketmq.MessageExt
	err = each(addrs, func(addr string) error {
		resp, err := a.invoke(ctx, addr, remoting.NewRequest(remoting.QueryMessage, h.AppendExt(nil), nil), what)
		if errors.Is(err, remoting.ErrQueryNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		msgs, err := message.DecodeRecords(resp.Body)
		if err != nil {
			return errorf("%s at %s: %w", what, addr, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if m.Topic != h.Topic {
				continue
			}
			if uniq && m.Property(rocketmq.PropertyUniqKey) != key || !uniq && !slices.Contains(m.Keys(), key) {
				continue
			}
			m.Topic = a.unwrap(m.Topic)
			m.BrokerName = brokerOf(r, addr)
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(x, y *rocketmq.MessageExt) int {
		return cmp.Or(strings.Compare(x.BrokerName, y.BrokerName), cmp.Compare(x.CommitLogOffset, y.CommitLogOffset))
	})
	return out, nil
}

func brokerOf(r *remoting.TopicRouteData, addr string) string {
	for _, bd := range r.BrokerDatas {
		if bd.MasterAddr() == addr {
			return bd.BrokerName
		}
	}
	return ""
}

// ViewMessageByOffsetID returns the message an offset message id names,
// from the broker the id names (VIEW_MESSAGE_BY_ID). An id that does not
// parse fails with an error matching rocketmq.ErrInvalidMsgID.
func (a *Admin) ViewMessageByOffsetID(ctx context.Context, offsetMsgID string) (*rocketmq.MessageExt, error) {
	host, off, err := rocketmq.DecodeOffsetMsgID(offsetMsgID)
	if err != nil {
		return nil, errorf("view message %s: %w", offsetMsgID, err)
	}
	h := remoting.ViewMessageRequestHeader{Offset: off}
	what := "view message " + offsetMsgID
	resp, err := a.invoke(ctx, host.String(), remoting.NewRequest(remoting.ViewMessageByID, h.AppendExt(nil), nil), what)
	if err != nil {
		return nil, err
	}
	m, _, err := message.DecodeRecord(resp.Body)
	if err != nil {
		return nil, errorf("%s: %w", what, err)
	}
	m.Topic = a.unwrap(m.Topic)
	return m, nil
}

// MessageByUniqKey returns the message of topic whose client id (UNIQ_KEY,
// SendResult.MsgID) is msgID, the earliest stored when a retry stored it
// twice. None found gives an error matching remoting.ErrQueryNotFound.
func (a *Admin) MessageByUniqKey(ctx context.Context, topic, msgID string) (*rocketmq.MessageExt, error) {
	msgs, err := a.query(ctx, topic, msgID, rocketmq.DefaultQueryMaxNum, time.Time{}, time.Time{}, true)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, errorf("no message %s in topic %s: %w", msgID, topic,
			&remoting.Error{Code: remoting.QueryNotFound, Remark: "query message by key finished, but no message"})
	}
	return slices.MinFunc(msgs, func(x, y *rocketmq.MessageExt) int { return cmp.Compare(x.StoreTimestamp, y.StoreTimestamp) }), nil
}

// ViewMessage returns the message msgID names in topic, as Java's admin
// viewMessage: by offset id when msgID is one whose host is a broker of
// the cluster, else by UNIQ_KEY. Both kinds are 32 hex digits; checking
// the host first avoids dialing an address made of a client id.
func (a *Admin) ViewMessage(ctx context.Context, topic, msgID string) (*rocketmq.MessageExt, error) {
	if host, _, err := rocketmq.DecodeOffsetMsgID(msgID); err == nil {
		known, err := a.isBroker(ctx, host)
		if err != nil {
			return nil, err
		}
		if known {
			m, err := a.ViewMessageByOffsetID(ctx, msgID)
			if err == nil && m.Topic == topic {
				return m, nil
			}
		}
	}
	return a.MessageByUniqKey(ctx, topic, msgID)
}

// isBroker reports whether host is the address of a broker the NameServer
// knows.
func (a *Admin) isBroker(ctx context.Context, host netip.AddrPort) (bool, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return false, err
	}
	for _, bd := range ci.BrokerAddrTable {
		for _, addr := range bd.BrokerAddrs {
			if ap, err := netip.ParseAddrPort(addr); err == nil && ap == host {
				return true, nil
			}
		}
	}
	return false, nil
}

// Consumed reports whether group has consumed msg, a message as QueryMessage
// or ViewMessage return it: whether the group's committed offset of msg's
// queue is past msg (Java DefaultMQAdminExtImpl.consumed).
func (a *Admin) Consumed(ctx context.Context, group string, msg *rocketmq.MessageExt) (bool, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return false, err
	}
	broker := msg.BrokerName
	if broker == "" {
		for name, bd := range ci.BrokerAddrTable {
			if ap, err := netip.ParseAddrPort(bd.MasterAddr()); err == nil && ap == msg.StoreHost {
				broker = name
			}
		}
	}
	if broker == "" {
		return false, errorf("message %s: no broker of the cluster stored it: %w", msg.MsgID, ErrNoBroker)
	}
	cs, err := a.ConsumeStats(ctx, group, msg.Topic)
	if err != nil {
		return false, err
	}
	w, ok := cs.Queues[rocketmq.MessageQueue{Topic: msg.Topic, BrokerName: broker, QueueID: int(msg.QueueID)}]
	return ok && w.ConsumerOffset > msg.QueueOffset, nil
}

// TrackType says where a message stands for one consumer group (Java
// TrackType).
type TrackType int

// The track types, as Java's messageTrackDetail sets them.
const (
	TrackUnknown             TrackType = iota // the group's state could not be read
	TrackConsumed                             // committed past the message
	TrackConsumedButFiltered                  // committed past it, but the group's tags exclude it
	TrackPull                                 // a pull group: its progress is its own
	TrackNotConsumeYet                        // not committed past it yet
	TrackNotOnline                            // the group has no live member
)

var trackNames = [...]string{"UNKNOWN", "CONSUMED", "CONSUMED_BUT_FILTERED", "PULL", "NOT_CONSUME_YET", "NOT_ONLINE"}

// String returns Java's name of the track type.
func (t TrackType) String() string {
	if t >= 0 && int(t) < len(trackNames) {
		return trackNames[t]
	}
	return "TrackType(" + strconv.Itoa(int(t)) + ")"
}

// MessageTrack is where a message stands for one group.
type MessageTrack struct {
	Group string
	Type  TrackType
	// Err is why Type is TrackUnknown or TrackNotOnline.
	Err error
}

// MessageTrack tells, for every group consuming msg's topic
// (TopicConsumers), whether it consumed msg (Java messageTrackDetail, the
// track of mqadmin queryMsgById): a group without live members is
// TrackNotOnline, a pull group TrackPull, else Consumed decides, and a
// consumed message whose tag the group's subscription excludes is
// TrackConsumedButFiltered.
func (a *Admin) MessageTrack(ctx context.Context, msg *rocketmq.MessageExt) ([]MessageTrack, error) {
	groups, err := a.TopicConsumers(ctx, msg.Topic)
	if err != nil {
		return nil, err
	}
	out := make([]MessageTrack, 0, len(groups))
	for _, g := range groups {
		mt := MessageTrack{Group: g}
		cc, err := a.ConsumerConnection(ctx, g)
		switch {
		case errors.Is(err, remoting.ErrConsumerNotOnline):
			mt.Type, mt.Err = TrackNotOnline, err
		case err != nil:
			mt.Err = err
		case cc.ConsumeType == "CONSUME_ACTIVELY":
			mt.Type = TrackPull
		default:
			consumed, err := a.Consumed(ctx, g, msg)
			switch {
			case err != nil:
				mt.Err = err
			case !consumed:
				mt.Type = TrackNotConsumeYet
			default:
				mt.Type = TrackConsumed
				if sd, ok := cc.SubscriptionTable[msg.Topic]; ok && len(sd.TagsSet) > 0 &&
					!slices.Contains(sd.TagsSet, "*") && !slices.Contains(sd.TagsSet, msg.Tag()) {
					mt.Type = TrackConsumedButFiltered
				}
			}
		}
		out = append(out, mt)
	}
	return out, nil
}
