package consumer

import (
	"context"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// Result is what a Handler returns for a batch of messages.
//
// The zero value is not Success: a handler that forgets to set its result
// gets its messages again.
type Result int

const (
	// RetryLater asks for the whole batch again later: in clustering mode
	// the messages go back to the broker (CONSUMER_SEND_MSG_BACK) and return
	// after a delay that grows with each attempt, moving to %DLQ%group after
	// the maximum reconsume times; in broadcasting mode they are dropped,
	// as in Java.
	RetryLater Result = iota
	// Success acknowledges the batch.
	Success
)

func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case RetryLater:
		return "retry-later"
	}
	return "unknown"
}

// Handler consumes a batch of messages of one queue (at most the consume
// batch size, default 1). A non-nil error, or a panic, counts as
// RetryLater and is logged.
//
// Topics are without the namespace, and a redelivered message carries its
// original topic (not %RETRY%group); ReconsumeTimes counts earlier
// deliveries. ctx is cancelled when the consume timeout passes or the
// queue is taken away by a rebalance; the handler should then return.
type Handler func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error)

// OrderlyResult is what an OrderlyHandler returns for a batch of messages.
//
// The zero value is not OrderlySuccess: a handler that forgets to set its
// result has its queue suspended and the same messages delivered again.
type OrderlyResult int

const (
	// SuspendQueue stops the queue for the suspend time (WithSuspendTime,
	// default 1 s) and then delivers the same messages again, before any
	// later message of the queue (Java SUSPEND_CURRENT_QUEUE_A_MOMENT).
	// After the maximum reconsume times, when one is set, the messages go
	// to %DLQ%group and the queue moves on.
	SuspendQueue OrderlyResult = iota
	// OrderlySuccess acknowledges the batch; the queue moves on.
	OrderlySuccess
)

func (r OrderlyResult) String() string {
	switch r {
	case OrderlySuccess:
		return "success"
	case SuspendQueue:
		return "suspend"
	}
	return "unknown"
}

// OrderlyHandler consumes a batch of consecutive messages of one queue
// (Java MessageListenerOrderly). One handler call at a time runs per
// queue, in queue-offset order; different queues run in parallel up to
// the consume goroutines. In clustering mode a queue is consumed only
// while this consumer holds its lock on the broker, so no other member
// of the group consumes it meanwhile. A non-nil error, or a panic, counts
// as SuspendQueue and is logged.
//
// ReconsumeTimes counts the earlier deliveries of a suspended message.
// ctx ends at the consume timeout or when Shutdown gives up waiting; a
// rebalance that takes the queue away waits for the call in hand, so that
// its result is committed before the queue is unlocked. A call that
// ignores the ctx Shutdown cancelled keeps its queue locked until the
// broker expires the lock.
type OrderlyHandler func(ctx context.Context, msgs []*rocketmq.MessageExt) (OrderlyResult, error)

// Interceptor runs around every handler call. It must call next at most
// once and return its result, or return a result of its own. Around an
// OrderlyHandler, Success stands for OrderlySuccess and RetryLater for
// SuspendQueue.
type Interceptor func(ctx context.Context, msgs []*rocketmq.MessageExt, next Handler) (Result, error)

// Selector chooses the messages of a topic a consumer receives.
type Selector struct {
	// Type is "TAG" or "SQL92".
	Type string
	// Expression is "*" (everything), "A || B" (tags) or an SQL92
	// expression over message properties.
	Expression string
}

// Selector types (Java ExpressionType).
const (
	SelectorTag   = "TAG"
	SelectorSQL92 = "SQL92"
)

// All selects every message of the topic.
var All = Selector{Type: SelectorTag, Expression: "*"}

// Tags selects messages with one of the tags ("A", "A || B").
func Tags(expr string) Selector { return Selector{Type: SelectorTag, Expression: expr} }

// SQL92 selects messages whose properties match expr; the broker must
// have enablePropertyFilter set.
func SQL92(expr string) Selector { return Selector{Type: SelectorSQL92, Expression: expr} }

// Model is how the members of a group share a topic.
type Model int

const (
	// Clustering splits the queues between the members of the group; each
	// message is consumed by one member. Offsets are kept by the broker.
	Clustering Model = iota
	// Broadcasting gives every message to every member. Offsets are kept
	// in a local file per member.
	Broadcasting
)

func (m Model) String() string {
	switch m {
	case Clustering:
		return "CLUSTERING"
	case Broadcasting:
		return "BROADCASTING"
	}
	return "unknown"
}

// From is where a group starts reading a queue for which it has no stored
// offset yet.
type From int

const (
	// FromLast starts after the last message at the time of the first
	// rebalance (Java CONSUME_FROM_LAST_OFFSET, the default).
	FromLast From = iota
	// FromFirst starts at the first message still stored.
	FromFirst
	// FromTimestamp starts at the first message stored at or after the
	// time set by WithConsumeTimestamp.
	FromTimestamp
)

// Stats are the consume statistics of one topic of a consumer, over the
// last minute (rates) and since the start (totals). RetryTopic traffic
// counts under the original topic.
type Stats struct {
	Topic string

	PullTPS     float64       // messages pulled per second
	PullRT      time.Duration // mean pull round-trip time
	ConsumeRT   time.Duration // mean handler time per batch
	OKTPS       float64       // messages acknowledged per second
	FailedTPS   float64       // messages given back per second
	OKTotal     int64
	FailedTotal int64
}
