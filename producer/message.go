package producer

import (
	"fmt"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// MessageOption sets one attribute of a message built by NewMessage.
type MessageOption func(*rocketmq.Message) error

// NewMessage returns a message for topic with body (WAIT=true, like
// Java's Message) after applying opts. It checks what it can at
// construction: the topic name (rocketmq.ValidateTopic, and not a topic
// clients may not send to) and each option; it fails on the first error.
//
// A Message is a plain struct that may also be built or changed by hand,
// so Send still checks the whole message: the topic again, a body that is
// not empty and fits WithMaxMessageSize, the DELAY property's syntax, the
// 32767-byte limit of the encoded properties and, for a batch, that all
// messages share one topic and WAIT value and carry no delay or reply.
func NewMessage(topic string, body []byte, opts ...MessageOption) (*rocketmq.Message, error) {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return nil, err
	}
	if err := rocketmq.CheckSendAllowed(topic); err != nil {
		return nil, err
	}
	m := &rocketmq.Message{
		Topic:      topic,
		Body:       body,
		Properties: map[string]string{rocketmq.PropertyWaitStoreMsgOK: "true"},
	}
	for _, o := range opts {
		if err := o(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Tag sets the message tag (one per message).
func Tag(tag string) MessageOption {
	return func(m *rocketmq.Message) error {
		if err := rocketmq.CheckProperty(rocketmq.PropertyTags, tag); err != nil {
			return err
		}
		m.SetTag(tag)
		return nil
	}
}

// Keys sets the business keys, indexed by the broker for queries.
func Keys(keys ...string) MessageOption {
	return func(m *rocketmq.Message) error {
		for _, k := range keys {
			if err := rocketmq.CheckProperty(rocketmq.PropertyKeys, k); err != nil {
				return err
			}
		}
		m.SetKeys(keys...)
		return nil
	}
}

// Property sets a user property; reserved system names are refused with
// rocketmq.ErrReservedProperty.
func Property(name, value string) MessageOption {
	return func(m *rocketmq.Message) error { return m.SetUserProperty(name, value) }
}

// Flag sets the user flag carried opaquely with the message.
func Flag(f int32) MessageOption {
	return func(m *rocketmq.Message) error { m.Flag = f; return nil }
}

// WaitStoreMsgOK sets WAIT: false lets a broker answer before flushing or
// replicating. Default true.
func WaitStoreMsgOK(wait bool) MessageOption {
	return func(m *rocketmq.Message) error { m.SetWaitStoreMsgOK(wait); return nil }
}

// DelayLevel delays delivery by a broker delay level, 1..18 with the
// default table (1s 5s 10s 30s 1m ... 2h; docs/PROTOCOL.md §9.5). Every broker
// version supports it.
func DelayLevel(level int) MessageOption {
	return func(m *rocketmq.Message) error {
		if level < 1 || level > rocketmq.MaxDelayLevel {
			return fmt.Errorf("%w: %d (want 1..%d)", ErrInvalidDelayLevel, level, rocketmq.MaxDelayLevel)
		}
		m.SetDelayLevel(level)
		return nil
	}
}

// DeliverAt asks a 5.x broker to deliver the message at t
// (TIMER_DELIVER_MS; docs/PROTOCOL.md §9.6), with the broker's timer precision
// (1 s by default) and at most 3 days ahead. A 4.x broker would ignore it
// and deliver at once; see WithTimerCheck.
func DeliverAt(t time.Time) MessageOption {
	return func(m *rocketmq.Message) error {
		if t.IsZero() {
			return fmt.Errorf("rocketmq: zero delivery time")
		}
		m.SetDeliverTimeMS(t.UnixMilli())
		return nil
	}
}

// DeliverAfter asks a 5.x broker to deliver the message d from when it
// stores it (TIMER_DELAY_MS). See DeliverAt.
func DeliverAfter(d time.Duration) MessageOption {
	return func(m *rocketmq.Message) error {
		if d <= 0 {
			return fmt.Errorf("rocketmq: delivery delay %v must be positive", d)
		}
		m.SetDelayTimeMS(d.Milliseconds())
		return nil
	}
}

// NewReply builds the reply to a request message received by a consumer
// (Java MessageUtil.createReplyMessage): topic <cluster>_REPLY_TOPIC,
// MSG_TYPE=reply, and the request's CORRELATION_ID, REPLY_TO_CLIENT and
// TTL. Send it with any producer; it goes out as SEND_REPLY_MESSAGE_V2 and
// the broker pushes it to the requester.
func NewReply(request *rocketmq.MessageExt, body []byte) (*rocketmq.Message, error) {
	cluster := request.Property(rocketmq.PropertyCluster)
	corr := request.Property(rocketmq.PropertyCorrelationID)
	if cluster == "" || corr == "" {
		return nil, ErrNotRequest
	}
	m := &rocketmq.Message{
		Topic:      rocketmq.ReplyTopic(cluster),
		Body:       body,
		Properties: map[string]string{rocketmq.PropertyWaitStoreMsgOK: "true"},
	}
	m.SetProperty(rocketmq.PropertyMessageType, rocketmq.ReplyMessageFlag)
	m.SetProperty(rocketmq.PropertyCorrelationID, corr)
	if v := request.Property(rocketmq.PropertyReplyToClient); v != "" {
		m.SetProperty(rocketmq.PropertyReplyToClient, v)
	}
	if v := request.Property(rocketmq.PropertyMessageTTL); v != "" {
		m.SetProperty(rocketmq.PropertyMessageTTL, v)
	}
	return m, nil
}

// isTimer reports whether m carries a 5.x timer property and no delay
// level (a level wins on the broker).
func isTimer(m *rocketmq.Message) bool {
	if m.Properties == nil {
		return false
	}
	if d, ok := m.Properties[rocketmq.PropertyDelayLevel]; ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return false
		}
	}
	for _, k := range [...]string{rocketmq.PropertyTimerDeliverMS, rocketmq.PropertyTimerDelaySec, rocketmq.PropertyTimerDelayMS} {
		if _, ok := m.Properties[k]; ok {
			return true
		}
	}
	return false
}
