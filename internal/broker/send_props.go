package broker

import (
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The send path never parses a properties string into a map: it scans the
// raw string once with message.Properties for the few keys it needs and
// rebuilds the stored string by copying pairs.

// sendProps are the values the broker reads from a message's properties.
type sendProps struct {
	tags, keys, uniq string
	delay            string
	wait             string
	hasWait          bool
	tranMsg          string
	timer            bool // TIMER_DELIVER_MS, TIMER_DELAY_SEC or TIMER_DELAY_MS
}

func scanSendProps(s string) (p sendProps) {
	for it := message.Properties(s); it.Next(); {
		switch v := it.Value(); it.Key() {
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
	propDropReal              // REAL_TOPIC, REAL_QID (a half message sets its own)
)

// appendProps appends the pairs of raw (without its trailing separator and
// without pairs that do not parse) except the dropped keys.
func appendProps(dst []byte, raw string, drop int) []byte {
	start := len(dst)
	for it := message.Properties(raw); it.Next(); {
		k := it.Key()
		if drop != 0 && (drop&propDropWait != 0 && k == rocketmq.PropertyWaitStoreMsgOK ||
			drop&propDropDelay != 0 && k == rocketmq.PropertyDelayLevel ||
			drop&propDropReal != 0 && (k == rocketmq.PropertyRealTopic || k == rocketmq.PropertyRealQueueID)) {
			continue
		}
		dst = message.AppendProperty(dst, start, k, it.Value())
	}
	return dst
}

// propValue returns the value of key in a properties string, "" when
// absent.
func propValue(s, key string) string {
	v, _ := message.PropertyValue(s, key)
	return v
}
