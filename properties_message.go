package rocketmq

import (
	"errors"
	"strconv"
	"strings"
)

var (
	ErrReservedProperty  = errors.New("rocketmq: property name is reserved for system use")
	ErrEmptyProperty     = errors.New("rocketmq: property name or value is blank")
	ErrPropertySeparator = errors.New("rocketmq: property name or value contains 0x01 or 0x02")
)

// Property returns the value of a property, "" when absent.
func (m *Message) Property(name string) string { return m.Properties[name] }

// SetProperty sets a property, system or user, without any check.
func (m *Message) SetProperty(name, value string) {
	if m.Properties == nil {
		m.Properties = make(map[string]string, 4)
	}
	m.Properties[name] = value
}

// DelProperty removes a property.
func (m *Message) DelProperty(name string) { delete(m.Properties, name) }

// SetUserProperty sets a user property. Like Java's putUserProperty it
// refuses reserved names and blank names or values; it also refuses the
// separators 0x01 and 0x02, which would corrupt the properties string.
func (m *Message) SetUserProperty(name, value string) error {
	if IsReservedProperty(name) {
		return ErrReservedProperty
	}
	if strings.TrimSpace(name) == "" || strings.TrimSpace(value) == "" {
		return ErrEmptyProperty
	}
	if err := CheckProperty(name, value); err != nil {
		return err
	}
	m.SetProperty(name, value)
	return nil
}

// Tag returns the message tag (TAGS).
func (m *Message) Tag() string { return m.Properties[PropertyTags] }

// SetTag sets the tag; an empty tag removes it. One tag per message.
func (m *Message) SetTag(tag string) { m.setOrDel(PropertyTags, tag) }

// Keys returns the business keys (KEYS, space separated).
func (m *Message) Keys() []string {
	s := m.Properties[PropertyKeys]
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// SetKeys sets the business keys, joined by single spaces. No keys removes
// the property.
func (m *Message) SetKeys(keys ...string) { m.setOrDel(PropertyKeys, strings.Join(keys, KeySeparator)) }

// DelayLevel returns the delay level (DELAY), 0 when absent or malformed.
func (m *Message) DelayLevel() int {
	n, _ := strconv.Atoi(m.Properties[PropertyDelayLevel])
	return n
}

// SetDelayLevel sets the delay level (1..18 with the default table); 0
// removes it.
func (m *Message) SetDelayLevel(level int) {
	if level == 0 {
		m.DelProperty(PropertyDelayLevel)
		return
	}
	m.SetProperty(PropertyDelayLevel, strconv.Itoa(level))
}

// WaitStoreMsgOK reports the WAIT property; absent means true, as brokers
// read it.
func (m *Message) WaitStoreMsgOK() bool {
	v, ok := m.Properties[PropertyWaitStoreMsgOK]
	return !ok || v == "true"
}

// SetWaitStoreMsgOK sets WAIT.
func (m *Message) SetWaitStoreMsgOK(wait bool) {
	m.SetProperty(PropertyWaitStoreMsgOK, strconv.FormatBool(wait))
}

// UniqKey returns the client unique id (UNIQ_KEY).
func (m *Message) UniqKey() string { return m.Properties[PropertyUniqKey] }

// SetUniqKey sets UNIQ_KEY.
func (m *Message) SetUniqKey(id string) { m.setOrDel(PropertyUniqKey, id) }

// TransactionPrepared reports TRAN_MSG=true (a transactional half message).
func (m *Message) TransactionPrepared() bool {
	return m.Properties[PropertyTransactionPrepared] == "true"
}

// ShardingKey returns the 5.x FIFO sharding key.
func (m *Message) ShardingKey() string { return m.Properties[PropertyShardingKey] }

// SetShardingKey sets the 5.x FIFO sharding key.
func (m *Message) SetShardingKey(key string) { m.setOrDel(PropertyShardingKey, key) }

// SetDelayTimeSec asks a 5.x broker to deliver the message after sec
// seconds (TIMER_DELAY_SEC).
func (m *Message) SetDelayTimeSec(sec int64) {
	m.SetProperty(PropertyTimerDelaySec, strconv.FormatInt(sec, 10))
}

// SetDelayTimeMS asks a 5.x broker to deliver the message after ms
// milliseconds (TIMER_DELAY_MS).
func (m *Message) SetDelayTimeMS(ms int64) {
	m.SetProperty(PropertyTimerDelayMS, strconv.FormatInt(ms, 10))
}

// SetDeliverTimeMS asks a 5.x broker to deliver the message at the given
// epoch milliseconds (TIMER_DELIVER_MS).
func (m *Message) SetDeliverTimeMS(ms int64) {
	m.SetProperty(PropertyTimerDeliverMS, strconv.FormatInt(ms, 10))
}

// DeliverTimeMS returns TIMER_DELIVER_MS, 0 when absent or malformed.
func (m *Message) DeliverTimeMS() int64 {
	n, _ := strconv.ParseInt(m.Properties[PropertyTimerDeliverMS], 10, 64)
	return n
}

func (m *Message) setOrDel(name, value string) {
	if value == "" {
		m.DelProperty(name)
		return
	}
	m.SetProperty(name, value)
}

// RealTopic returns the topic the message was sent to: for a message
// delivered from a %RETRY% topic, the original topic kept in RETRY_TOPIC;
// otherwise Topic.
func (m *MessageExt) RealTopic() string {
	if IsRetryTopic(m.Topic) {
		if t := m.Properties[PropertyRetryTopic]; t != "" {
			return t
		}
	}
	return m.Topic
}

// TransactionID returns the transaction id of a transactional message: the
// __transactionId__ property when set, else its UNIQ_KEY, as the Java
// client derives it.
func (m *MessageExt) TransactionID() string {
	if id := m.Properties[PropertyTransactionID]; id != "" {
		return id
	}
	return m.Properties[PropertyUniqKey]
}

// CheckProperty reports whether name and value can be carried in a
// properties string: both non-empty and free of its separators 0x01 and
// 0x02 (docs/PROTOCOL.md §5.1).
func CheckProperty(name, value string) error {
	if name == "" || value == "" {
		return ErrEmptyProperty
	}
	if hasSeparator(name) || hasSeparator(value) {
		return ErrPropertySeparator
	}
	return nil
}

// hasSeparator reports whether s holds 0x01 or 0x02 (a plain loop: much
// cheaper than strings.ContainsAny on every property of every message).
func hasSeparator(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 1 || s[i] == 2 {
			return true
		}
	}
	return false
}
