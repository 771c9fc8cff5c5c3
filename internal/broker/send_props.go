package broker

import (
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The send path never parses a properties string into a map: it scans the
// raw string once for the few keys it needs and rebuilds the stored string
// by copying pairs. The parse rules are Java's string2messageProperties
// (PROTOCOL.md §5.1): pairs split at 0x02, key and value at the first 0x01,
// pairs with an empty key or value do not exist, the last duplicate wins.

// sendProps are the values the broker reads from a message's properties.
type sendProps struct {
	tags, keys, uniq string
	delay            string
	wait             string
	hasWait          bool
	tranMsg          string
	timer            bool // TIMER_DELIVER_MS, TIMER_DELAY_SEC or TIMER_DELAY_MS
}

// nextProp cuts the first pair off s. ok is false for a segment that is no
// pair (empty key or value); the caller skips it.
func nextProp(s string) (key, val, rest string, ok bool) {
	seg := s
	if i := strings.IndexByte(s, message.PropertySeparator); i >= 0 {
		seg, rest = s[:i], s[i+1:]
	}
	kv := strings.IndexByte(seg, message.NameValueSeparator)
	if kv <= 0 || kv == len(seg)-1 {
		return "", "", rest, false
	}
	return seg[:kv], seg[kv+1:], rest, true
}

func scanSendProps(s string) (p sendProps) {
	for len(s) > 0 {
		k, v, rest, ok := nextProp(s)
		s = rest
		if !ok {
			continue
		}
		switch k {
		case rocketmq.PropertyTags:
			p.tags = v
		case rocketmq.PropertyKeys:
			p.keys = v
		case rocketmq.PropertyUniqKey:
			p.uniq = v
		case rocketmq.PropertyDelayLevel:
			p.delay = v
		case rocketmq.PropertyWaitStoreMsgOK:
			p.wait, p.hasWait = v, true
		case rocketmq.PropertyTransactionPrepared:
			p.tranMsg = v
		case rocketmq.PropertyTimerDeliverMS, rocketmq.PropertyTimerDelaySec, rocketmq.PropertyTimerDelayMS:
			p.timer = true
		}
	}
	return p
}

// waitStoreMsgOK is Message.isWaitStoreMsgOK: true unless WAIT is present
// and not "true".
func (p *sendProps) waitStoreMsgOK() bool {
	return !p.hasWait || javaBool(p.wait)
}

// javaBool is Boolean.parseBoolean.
func javaBool(s string) bool { return len(s) == 4 && strings.EqualFold(s, "true") }

// delayLevel is Message.getDelayTimeLevel; text that is no int counts as 0.
func (p *sendProps) delayLevel() int {
	if p.delay == "" {
		return 0
	}
	n, neg, i := 0, false, 0
	if p.delay[0] == '-' || p.delay[0] == '+' {
		neg, i = p.delay[0] == '-', 1
	}
	if i == len(p.delay) || len(p.delay) > 10 {
		return 0
	}
	for ; i < len(p.delay); i++ {
		c := p.delay[i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// Keys appendProps leaves out.
const (
	propDropWait  = 1 << iota // WAIT
	propDropDelay             // DELAY
)

// appendProps appends the pairs of raw (without its trailing separator and
// without pairs that do not parse) except the dropped keys.
func appendProps(dst []byte, raw string, drop int) []byte {
	start := len(dst)
	for len(raw) > 0 {
		k, v, rest, ok := nextProp(raw)
		raw = rest
		if !ok {
			continue
		}
		if drop != 0 && (drop&propDropWait != 0 && k == rocketmq.PropertyWaitStoreMsgOK ||
			drop&propDropDelay != 0 && k == rocketmq.PropertyDelayLevel) {
			continue
		}
		dst = appendProp(dst, start, k, v)
	}
	return dst
}

// appendProp appends one pair, with a separator unless it is the first
// since start.
func appendProp(dst []byte, start int, k, v string) []byte {
	if len(dst) > start {
		dst = append(dst, message.PropertySeparator)
	}
	dst = append(dst, k...)
	dst = append(dst, message.NameValueSeparator)
	return append(dst, v...)
}

// propValue returns the value of key in a properties string (recovery and
// the store's tags-code hook).
func propValue(s, key string) string {
	val := ""
	for len(s) > 0 {
		k, v, rest, ok := nextProp(s)
		s = rest
		if ok && k == key {
			val = v
		}
	}
	return val
}
