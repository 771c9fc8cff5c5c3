package producer

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
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
	ErrTooManyInflight   = rocketmq.ErrTooManyInflight
	ErrSendTimeout       = errors.New("rocketmq: send timed out")
	ErrNoQueue           = errors.New("rocketmq: no queue to send to")
	ErrBrokerNotFound    = errors.New("rocketmq: broker address not found")
	ErrWrongQueue        = errors.New("rocketmq: queue does not belong to the message's topic")
	ErrRequestTimeout    = errors.New("rocketmq: request timed out waiting for the reply")
	ErrNotRequest        = errors.New("rocketmq: message is not a request (no CLUSTER or CORRELATION_ID)")
)

// sizeError is ErrTooLarge with the sizes, said once; it also matches
// the validation error behind it (rocketmq.ErrBodyTooLarge), if any.
type sizeError struct {
	what        string // "message body" or "batch"
	size, limit int
	cause       error
}

func (e *sizeError) Error() string {
	return "rocketmq: " + e.what + " too large: " + strconv.Itoa(e.size) + " bytes, over the limit of " +
		strconv.Itoa(e.limit) + " bytes (WithMaxMessageSize)"
}

func (e *sizeError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrTooLarge}
	}
	return []error{ErrTooLarge, e.cause}
}

// SendError is the failure of a send after every attempt. Err is the last
// attempt's error (a *remoting.Error for broker answers, a transport
// error, ErrSendTimeout, ...).
type SendError struct {
	Topic    string
	Attempts int
	Brokers  []string // broker of each attempt
	Err      error
}

// Error reads "rocketmq: send to <topic> failed[ after N attempts (brokers
// a,b)]: <cause>", on one line.
func (e *SendError) Error() string {
	var b strings.Builder
	b.WriteString("send to ")
	b.WriteString(e.Topic)
	b.WriteString(" failed")
	if e.Attempts > 1 {
		b.WriteString(" after ")
		b.WriteString(strconv.Itoa(e.Attempts))
		b.WriteString(" attempts")
	}
	if len(e.Brokers) > 0 {
		if e.Attempts > 1 {
			b.WriteString(" (brokers ")
		} else {
			b.WriteString(" (broker ")
		}
		b.WriteString(strings.Join(e.Brokers, ","))
		b.WriteString(")")
	}
	b.WriteString(": ")
	msg := e.Err.Error()
	if errors.Is(e.Err, ErrNoQueue) {
		// The route error behind it says why there is no queue.
		if rest, ok := strings.CutPrefix(msg, ErrNoQueue.Error()+": "); ok {
			msg = rest
		}
	}
	b.WriteString(msg)
	return mqclient.OneLine(b.String())
}

func (e *SendError) Unwrap() error { return e.Err }
