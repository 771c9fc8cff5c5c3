package broker

import (
	"errors"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/filter/sql92"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The pull path (PULL_MESSAGE 11, LITE_PULL_MESSAGE 361) follows 4.9.8's
// PullMessageProcessor (docs/PROTOCOL.md §9.3): the checks in Java's order with
// its codes and remarks, broker-side tag filtering by hash, the store
// status mapped to a response code, long polling through pullHold, and the
// piggy-backed offset commit.

// Remarks of a 4.9.8 broker.
const (
	remarkSubParseFailed  = "parse the consumer's subscription failed"
	remarkSubNotLatest    = "the consumer's subscription not latest"
	remarkFilterNotByType = "The broker does not support consumer to filter message by "
	remarkStoreGetNull    = "store getMessage return null"
)

// reply executes a pull and answers it on c. A body is written from the
// scratch buffer it was read into, which Reply has copied into the
// connection's output when it returns, so the buffer goes back to the pool
// and the body costs no allocation. Without a body the response is
// returned for the caller to send.
func (b *Broker) reply(c *server.Conn, req *remoting.Command, allowSuspend bool) *remoting.Command {
	resp, buf := b.pull(c, req, allowSuspend)
	stampResponse(resp)
	if buf == nil {
		return resp
	}
	if err := c.Reply(req, resp); err != nil {
		b.log.Debug("pull: reply failed", "remote", c.String(), "err", err)
	}
	b.pulls.putBuf(buf, resp.Body)
	return nil
}

// pull executes a pull request. allowSuspend is true on the first arrival
// and false when a held pull is re-executed: then it is never held again and
// commits no offset (Java's brokerAllowSuspend). A nil response means the
// pull is held. A non-nil buf is the pooled scratch buffer the response
// body lies in; the caller returns it with putBuf once the body is sent.
func (b *Broker) pull(c *server.Conn, req *remoting.Command, allowSuspend bool) (resp *remoting.Command, buf *[]byte) {
	var h remoting.PullMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return remoting.NewResponse(remoting.SystemError, headerErrorRemark(err)), nil
	}
	if b.brokerPermission()&rocketmq.PermRead == 0 {
		ip := b.brokerIP()
		return remoting.NewResponse(remoting.NoPermission, "the broker["+ip+"] pulling message is forbidden"), nil
	}
	gc, ok := b.groups.findOrCreate(h.ConsumerGroup)
	if !ok {
		return remoting.NewResponse(remoting.SubscriptionGroupNotExist,
			"subscription group ["+h.ConsumerGroup+"] does not exist, "+faqSuffix), nil
	}
	if !gc.ConsumeEnable {
		return remoting.NewResponse(remoting.NoPermission, "subscription group no permission, "+h.ConsumerGroup), nil
	}
	tc, ok := b.topics.get(h.Topic)
	if !ok {
		return remoting.NewResponse(remoting.TopicNotExist, "topic["+h.Topic+"] not exist, apply first please! "+faqSuffix), nil
	}
	if tc.Perm&rocketmq.PermRead == 0 {
		return remoting.NewResponse(remoting.NoPermission, "the topic["+h.Topic+"] pulling message is forbidden"), nil
	}
	if h.QueueID < 0 || h.QueueID >= tc.ReadQueueNums {
		return remoting.NewResponse(remoting.SystemError, "queueId["+strconv.Itoa(int(h.QueueID))+"] is illegal, topic:["+
			h.Topic+"] topicConfig.readQueueNums:["+strconv.Itoa(int(tc.ReadQueueNums))+"] consumer:[/"+remoteAddrString(c)+"]"), nil
	}
	filter, resp := b.pullFilter(&h, &gc)
	if resp != nil {
		return resp, nil
	}

	get := store.GetRequest{
		Topic:   h.Topic,
		QueueID: h.QueueID,
		Offset:  h.QueueOffset,
		// Java answers at least one message whatever maxMsgNums says.
		MaxMessages: max(int(h.MaxMsgNums), 1),
	}
	if h.MaxMsgBytes != nil && *h.MaxMsgBytes > 0 {
		get.MaxBytes = int(*h.MaxMsgBytes)
	}
	if filter.sql != nil {
		get.RecordFilter = filter.matchRecord
	} else if !filter.all {
		get.Filter = filter.match
	}
	buf = b.pulls.getBuf()
	res, err := b.store.GetMessages((*buf)[:0], &get)
	if err != nil {
		b.pulls.putBuf(buf, nil)
		b.log.Warn("pull: store read failed", "topic", h.Topic, "queue", h.QueueID, "offset", h.QueueOffset, "err", err)
		return remoting.NewResponse(remoting.SystemError, remarkStoreGetNull), nil
	}
	code := pullCode(res.Status, h.QueueOffset)
	resp = remoting.NewResponse(code, res.Status.String())
	rh := remoting.PullMessageResponseHeader{
		NextBeginOffset: res.NextBeginOffset,
		MinOffset:       res.MinOffset,
		MaxOffset:       res.MaxOffset,
	}
	rh.SuggestWhichBrokerID = b.pullSuggestion(&gc, &res)
	if b.isSlave() && !b.cfg.SlaveReadEnable {
		code, rh.SuggestWhichBrokerID = remoting.PullRetryImmediately, 0
	}
	resp.Code = code
	resp.Ext = rh.AppendExt(make(remoting.ExtFields, 0, 4))
	switch code {
	case remoting.Success:
		resp.Body = res.Data
		b.stats.addGet(res.Messages)
		b.metrics.out(h.Topic, res.Messages, len(res.Data))
		b.offsets.gets.add(h.ConsumerGroup, h.Topic, res.Messages, time.Now())
	case remoting.PullNotFound:
		if allowSuspend && h.SysFlag&remoting.PullFlagSuspend != 0 {
			timeout := b.pulls.holdTime(h.SuspendTimeoutMillis)
			if b.cfg.DisableLongPolling {
				timeout = b.cfg.ShortPollingTime
			}
			// A message may have landed between the read and the hold;
			// recheck then, unless the offset lies below the max already
			// (a consume-queue hole, which only new messages or the
			// periodic check should wake).
			recheck := res.MaxOffset <= h.QueueOffset
			if b.pulls.suspend(c, req, holdKey{h.Topic, h.QueueID}, h.QueueOffset, filter, timeout, recheck) {
				b.metrics.holds.Inc()
				resp = nil
			}
		}
	case remoting.PullOffsetMoved:
		b.log.Info("pull: offset moved", "group", h.ConsumerGroup, "topic", h.Topic, "queue", h.QueueID,
			"requested", h.QueueOffset, "next", res.NextBeginOffset, "status", res.Status.String())
	}
	if resp != nil { // a held pull counts once, when answered
		b.metrics.pulls.inc(code)
	}
	if code != remoting.Success {
		b.pulls.putBuf(buf, res.Data)
		buf = nil
	}
	if allowSuspend && h.SysFlag&remoting.PullFlagCommitOffset != 0 && !b.isSlave() {
		b.offsets.commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	}
	return resp, buf
}

// pullCode maps a store status to the pull response code (docs/PROTOCOL.md §9.3).
func pullCode(s store.GetStatus, offset int64) int32 {
	switch s {
	case store.GetFound:
		return remoting.Success
	case store.GetMessageWasRemoving, store.GetNoMatchedMessage:
		return remoting.PullRetryImmediately
	case store.GetNoMatchedLogicQueue, store.GetNoMessageInQueue:
		if offset != 0 {
			return remoting.PullOffsetMoved
		}
		return remoting.PullNotFound
	case store.GetOffsetFoundNull, store.GetOffsetOverflowOne:
		return remoting.PullNotFound
	case store.GetOffsetOverflowBadly, store.GetOffsetTooSmall:
		return remoting.PullOffsetMoved
	}
	return remoting.SystemError
}

// tagFilter is the broker-side filter of a pull. For a TAG subscription
// a consume queue entry matches when the subscription is "*" or its tags
// code, cut to 32 bits as Java's tagsCode.intValue() does, is in the code
// set. For SQL92 (sql set) every entry passes the consume queue and the
// record's properties decide (Java ExpressionMessageFilter, no bloom
// filter; docs/PROTOCOL.md §9.16).
type tagFilter struct {
	all   bool
	codes []int32
	sql   *sql92.Expr
}

func (f *tagFilter) match(tagsCode int64) bool {
	if f.all || f.sql != nil {
		return true
	}
	c := int32(tagsCode)
	for _, x := range f.codes {
		if x == c {
			return true
		}
	}
	return false
}

// matchRecord evaluates the SQL92 expression over a stored record's
// properties; a record whose properties cannot be read has none.
func (f *tagFilter) matchRecord(rec []byte) bool {
	var props string
	if v, err := message.ScanRecord(rec); err == nil {
		props = string(v.Properties)
	}
	return f.sql.Match(func(name string) (string, bool) { return message.PropertyValue(props, name) })
}

// isTagType is Java's ExpressionType.isTagType: absent, empty or TAG.
func isTagType(t string) bool { return t == "" || t == remoting.ExpressionTypeTag }

// Remarks of a 4.9.8 broker with enablePropertyFilter on.
const remarkFilterDataNotExist = "The broker's consumer filter data is not exist!Your expression may be wrong!"

// pullFilter finds the subscription of a pull: from the request when it
// carries the subscription flag, else from the group's heartbeats, with
// 4.9.8's answers when there is none or it is stale. A SQL92 subscription
// is answered SYSTEM_ERROR unless EnablePropertyFilter is on; then it is
// compiled (once, cached) and filters by properties (docs/PROTOCOL.md §9.16).
func (b *Broker) pullFilter(h *remoting.PullMessageRequestHeader, gc *remoting.SubscriptionGroupConfig) (tagFilter, *remoting.Command) {
	if h.SysFlag&remoting.PullFlagSubscription != 0 {
		expr, typ := orZero(h.Subscription), orZero(h.ExpressionType)
		if isTagType(typ) {
			s := message.BuildSubscription(expr)
			return tagFilter{all: s.MatchAll(), codes: s.Codes}, nil
		}
		if expr == "" {
			return tagFilter{}, remoting.NewResponse(remoting.SubscriptionParseFailed, remarkSubParseFailed)
		}
		if !b.cfg.EnablePropertyFilter {
			return tagFilter{}, remoting.NewResponse(remoting.SystemError, remarkFilterNotByType+typ)
		}
		x, err := b.compileFilter(h.ConsumerGroup, h.Topic, expr, typ)
		if err != nil {
			// Java builds no filter data then and, without assertions,
			// filters nothing; an expression that does not compile is
			// refused here instead (docs/PROTOCOL.md §9.16).
			return tagFilter{}, remoting.NewResponse(remoting.SubscriptionParseFailed, remarkSubParseFailed)
		}
		return tagFilter{sql: x}, nil
	}
	sd, ok, groupKnown := b.clients.subscription(h.ConsumerGroup, h.Topic)
	if !groupKnown {
		return tagFilter{}, remoting.NewResponse(remoting.SubscriptionNotExist, "the consumer's group info not exist"+faqSuffix)
	}
	if !gc.ConsumeBroadcastEnable {
		if model, ok := b.clients.consumeType(h.ConsumerGroup); ok && model == remoting.MessageModelBroadcasting {
			return tagFilter{}, remoting.NewResponse(remoting.NoPermission,
				"the consumer group["+h.ConsumerGroup+"] can not consume by broadcast way")
		}
	}
	if !ok {
		return tagFilter{}, remoting.NewResponse(remoting.SubscriptionNotExist, "the consumer's subscription not exist"+faqSuffix)
	}
	if sd.SubVersion < h.SubVersion {
		return tagFilter{}, remoting.NewResponse(remoting.SubscriptionNotLatest, remarkSubNotLatest)
	}
	if isTagType(sd.ExpressionType) {
		return tagFilter{all: sd.ClassFilterMode || sd.SubString == message.SubscriptionAll, codes: sd.CodeSet}, nil
	}
	if !b.cfg.EnablePropertyFilter {
		return tagFilter{}, remoting.NewResponse(remoting.SystemError, remarkFilterNotByType+sd.ExpressionType)
	}
	// Java's filter data is built from the heartbeat's subscription, with
	// its version, so it is never older than the subscription checked
	// above: FILTER_DATA_NOT_LATEST cannot arise here.
	x, err := b.compileFilter(h.ConsumerGroup, h.Topic, sd.SubString, sd.ExpressionType)
	if err != nil {
		return tagFilter{}, remoting.NewResponse(remoting.FilterDataNotExist, remarkFilterDataNotExist)
	}
	if sd.ClassFilterMode {
		return tagFilter{all: true}, nil
	}
	return tagFilter{sql: x}, nil
}

// errFilterType is an expression type without a filter (Java's
// FilterFactory knows only SQL92).
var errFilterType = errors.New("rocketmq: no filter for this expression type")

// compileFilter compiles a subscription's expression of type typ, cached
// per (group, topic, expression).
func (b *Broker) compileFilter(group, topic, expr, typ string) (*sql92.Expr, error) {
	if typ != remoting.ExpressionTypeSQL92 {
		return nil, errFilterType
	}
	if expr == "" {
		return nil, sql92.ErrSyntax
	}
	return b.clients.filters.compile(group, topic, expr)
}
