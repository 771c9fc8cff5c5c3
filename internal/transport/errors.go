package transport

import (
	"net"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
)

// The sentinels are the module's public ones, so that errors.Is works from
// user code on any error a Client returns.
var (
	// ErrClosed: the Client was closed (before or during the call).
	ErrClosed = rocketmq.ErrClosed
	// ErrTimeout: no response before the deadline.
	ErrTimeout = rocketmq.ErrTimeout
	// ErrConnClosed: the connection broke or was closed while the call was
	// pending or being sent.
	ErrConnClosed = rocketmq.ErrConnClosed
	// ErrDial: the connection could not be opened.
	ErrDial = rocketmq.ErrDial
	// ErrTooManyInflight: the async in-flight bound was reached.
	ErrTooManyInflight = rocketmq.ErrTooManyInflight
)

// Error is the failure of one call. Kind is one of the sentinels above or
// the ctx error; Cause is the underlying error, if any. Both are matchable
// with errors.Is.
type Error struct {
	Op     string // "dial", "send" or "wait"
	Addr   string
	Opaque int32 // 0 until one is assigned; not part of the text
	Kind   error
	Cause  error
}

// Error reads "rocketmq: <addr>: <what happened>[: <cause>]", one line.
func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, "rocketmq: "...)
	b = append(b, e.Addr...)
	if pe, ok := e.Cause.(*ProtocolError); ok {
		// The cause says it all: the peer is not what we expected.
		b = append(b, ' ')
		return string(append(b, pe.Error()...))
	}
	b = append(b, ": "...)
	b = append(b, trimPrefix(e.Kind.Error())...)
	if e.Cause != nil {
		cause := e.Cause
		if oe, ok := cause.(*net.OpError); ok && oe.Op == "dial" && oe.Err != nil {
			cause = oe.Err // "dial tcp <addr>: " would repeat what is said
		}
		b = append(b, ": "...)
		b = append(b, trimPrefix(cause.Error())...)
	}
	return string(b)
}

func trimPrefix(s string) string {
	const p = "rocketmq: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
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
// client, a cancelled ctx, an exhausted in-flight bound and a peer that
// does not speak the protocol are not.
func (e *Error) Retriable() bool {
	if _, ok := e.Cause.(*ProtocolError); ok {
		return false
	}
	return e.Kind == ErrDial || e.Kind == ErrConnClosed || e.Kind == ErrTimeout
}

func newErr(op, addr string, opaque int32, kind, cause error) *Error {
	return &Error{Op: op, Addr: addr, Opaque: opaque, Kind: kind, Cause: cause}
}

// ProtocolError is a peer whose first bytes cannot be a RocketMQ frame:
// most often a wrong port. It matches rocketmq.ErrProtocol and wraps the
// frame error.
type ProtocolError struct {
	Answered string // what the bytes look like: "HTTP", "TLS", "text \"...\"" or ""
	Err      error  // the frame error
}

func (e *ProtocolError) Error() string {
	s := "does not speak the RocketMQ protocol"
	if e.Answered != "" {
		s += " (it answered " + e.Answered + ")"
	}
	return s
}

// Unwrap returns rocketmq.ErrProtocol and the frame error.
func (e *ProtocolError) Unwrap() []error { return []error{rocketmq.ErrProtocol, e.Err} }

// sniff names what the first bytes received on a connection look like
// when they are not a frame; nil when they may be one that is merely bad.
func sniff(b []byte, err error) *ProtocolError {
	if len(b) < 4 {
		return nil
	}
	switch {
	case len(b) >= 5 && string(b[:5]) == "HTTP/":
		return &ProtocolError{Answered: "HTTP", Err: err}
	case b[0] == 0x15 || b[0] == 0x16:
		if b[1] == 3 { // TLS record: alert or handshake, version 3.x
			return &ProtocolError{Answered: "TLS; is the client missing WithTLS?", Err: err}
		}
	}
	n := 0
	for n < len(b) && n < 32 && b[n] >= 0x20 && b[n] < 0x7f {
		n++
	}
	if n >= 4 {
		return &ProtocolError{Answered: "text " + strconv.Quote(string(b[:n])), Err: err}
	}
	return nil
}
