package producer

import (
	"errors"
	"strconv"
	"strings"
)

// Errors of the producer, matchable with errors.Is. Validation failures
// of messages wrap the rocketmq package's sentinels (rocketmq.ErrEmptyBody,
// rocketmq.ErrReservedProperty, ...) instead.
var (
	ErrNotStarted        = errors.New("rocketmq: producer not started")
	ErrAlreadyStarted    = errors.New("rocketmq: producer already started")
	ErrNoMessage         = errors.New("rocketmq: no message to send")
	ErrBatchTopics       = errors.New("rocketmq: batch messages must share one topic")
	ErrBatchWait         = errors.New("rocketmq: batch messages must share one WAIT setting")
	ErrBatchDelay        = errors.New("rocketmq: batch messages cannot be delayed")
	ErrBatchRetryTopic   = errors.New("rocketmq: batch messages cannot go to a retry topic")
	ErrBatchReply        = errors.New("rocketmq: reply messages cannot be batched")
	ErrTooLarge          = errors.New("rocketmq: message or batch too large")
	ErrInvalidDelayLevel = errors.New("rocketmq: delay level out of range")
	ErrTimerNotSupported = errors.New("rocketmq: broker does not support timer messages")
	ErrTooManyInflight   = errors.New("rocketmq: too many async sends in flight")
	ErrSendTimeout       = errors.New("rocketmq: send timed out")
	ErrNoQueue           = errors.New("rocketmq: no queue to send to")
	ErrBrokerNotFound    = errors.New("rocketmq: broker address not found")
	ErrWrongQueue        = errors.New("rocketmq: queue does not belong to the message's topic")
	ErrRequestTimeout    = errors.New("rocketmq: request timed out waiting for the reply")
	ErrNotRequest        = errors.New("rocketmq: message is not a request (no CLUSTER or CORRELATION_ID)")
)

// SendError is the failure of a send after every attempt. Err is the last
// attempt's error (a *remoting.Error for broker answers, a transport
// error, ErrSendTimeout, ...).
type SendError struct {
	Topic    string
	Attempts int
	Brokers  []string // broker of each attempt
	Err      error
}

func (e *SendError) Error() string {
	var b strings.Builder
	b.WriteString("rocketmq: send to ")
	b.WriteString(e.Topic)
	b.WriteString(" failed after ")
	b.WriteString(strconv.Itoa(e.Attempts))
	b.WriteString(" attempt(s)")
	if len(e.Brokers) > 0 {
		b.WriteString(" (brokers ")
		b.WriteString(strings.Join(e.Brokers, ","))
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *SendError) Unwrap() error { return e.Err }
