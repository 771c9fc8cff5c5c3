package transport

import (
	"errors"
	"strconv"
)

// Sentinel errors, matchable with errors.Is on any error a Client returns.
var (
	// ErrClosed: the Client was closed (before or during the call).
	ErrClosed = errors.New("rocketmq: transport closed")
	// ErrTimeout: no response before the deadline.
	ErrTimeout = errors.New("rocketmq: request timed out")
	// ErrConnClosed: the connection broke or was closed while the call was
	// pending or being sent.
	ErrConnClosed = errors.New("rocketmq: connection closed")
	// ErrDial: the connection could not be opened.
	ErrDial = errors.New("rocketmq: dial failed")
	// ErrTooManyInflight: the async in-flight bound was reached.
	ErrTooManyInflight = errors.New("rocketmq: too many async requests in flight")
)

// Error is the failure of one call. Kind is one of the sentinels above or
// the ctx error; Cause is the underlying error, if any. Both are matchable
// with errors.Is.
type Error struct {
	Op     string // "dial", "send" or "wait"
	Addr   string
	Opaque int32 // 0 until one is assigned
	Kind   error
	Cause  error
}

func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, e.Kind.Error()...)
	b = append(b, ": "...)
	b = append(b, e.Op...)
	b = append(b, ' ')
	b = append(b, e.Addr...)
	if e.Opaque != 0 {
		b = append(b, " opaque "...)
		b = strconv.AppendInt(b, int64(e.Opaque), 10)
	}
	if e.Cause != nil {
		b = append(b, ": "...)
		b = append(b, e.Cause.Error()...)
	}
	return string(b)
}

// Unwrap returns Kind and Cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

// Retriable reports whether another attempt (usually to another broker)
// may succeed: dial failures, lost connections and timeouts. A closed
// client, a cancelled ctx and an exhausted in-flight bound are not.
func (e *Error) Retriable() bool {
	return e.Kind == ErrDial || e.Kind == ErrConnClosed || e.Kind == ErrTimeout
}

func newErr(op, addr string, opaque int32, kind, cause error) *Error {
	return &Error{Op: op, Addr: addr, Opaque: opaque, Kind: kind, Cause: cause}
}
