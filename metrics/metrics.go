package metrics

import "time"

// Result is how one send or one consumed batch ended.
type Result uint8

const (
	// OK: sent and stored, or consumed and acknowledged.
	OK Result = iota
	// Error: the send failed after its retries, or the handler returned
	// an error or panicked.
	Error
	// Retry: the handler asked for the messages again later (RetryLater,
	// or an orderly SuspendCurrentQueueAMoment), without an error.
	Retry
)

// String returns the label used by adapters: "ok", "error" or "retry".
func (r Result) String() string {
	switch r {
	case OK:
		return "ok"
	case Error:
		return "error"
	case Retry:
		return "retry"
	}
	return "unknown"
}

// ConnEvent is what happened to a client's connection to one address.
type ConnEvent uint8

const (
	// Connected: a dial (and TLS handshake, if any) succeeded.
	Connected ConnEvent = iota
	// DialFailed: a dial failed.
	DialFailed
	// Closed: an open connection was closed, by either side.
	Closed
)

// String returns the label used by adapters: "connected", "dial_failed"
// or "closed".
func (e ConnEvent) String() string {
	switch e {
	case Connected:
		return "connected"
	case DialFailed:
		return "dial_failed"
	case Closed:
		return "closed"
	}
	return "unknown"
}

// Queue names one message queue of a consumer group.
type Queue struct {
	Topic  string
	Group  string
	Broker string // broker name
	ID     int    // queue id
}

// Hook receives measurements. Every method must be safe for concurrent use
// and must not block; names are as on the wire (with the namespace, if
// any, and %RETRY% topics as they are).
type Hook interface {
	// Send reports one send call after its retries: sync, async, oneway
	// or batch of msgs messages, its result and how long it took.
	Send(topic string, r Result, msgs int, d time.Duration)
	// Consume reports one handler call of a push consumer on msgs
	// messages of topic, its result and how long the handler took; a
	// lite pull consumer reports each Poll that returned messages as OK.
	Consume(topic, group string, r Result, msgs int, d time.Duration)
	// Cached reports the number of messages a consumer holds for q,
	// pulled and not yet acknowledged (0 when the queue is dropped).
	Cached(q Queue, msgs int)
	// Lag reports, after a pull from q, the queue's max offset minus the
	// consumer's next offset.
	Lag(q Queue, lag int64)
	// Rebalance reports a rebalance of group that changed its queues of
	// topic: it now holds queues of them.
	Rebalance(topic, group string, queues int)
	// Conn reports a connection event for addr.
	Conn(addr string, e ConnEvent)
}

// Nop is a Hook that does nothing; embed it to implement only some
// methods.
type Nop struct{}

func (Nop) Send(string, Result, int, time.Duration)            {}
func (Nop) Consume(string, string, Result, int, time.Duration) {}
func (Nop) Cached(Queue, int)                                  {}
func (Nop) Lag(Queue, int64)                                   {}
func (Nop) Rebalance(string, string, int)                      {}
func (Nop) Conn(string, ConnEvent)                             {}
