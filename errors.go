package rocketmq

import "errors"

// Client errors, matchable with errors.Is on any error the producer, the
// consumers and the admin client return. The errors themselves carry
// context (the address, the topic, the cause) and wrap one of these.
//
// A broker or NameServer answering with a non-success code is not among
// them: that is a *remoting.Error, matchable by code (remoting.ErrSystemBusy,
// remoting.ErrTopicNotExist, ...).
var (
	// ErrTimeout: no answer before the deadline (the request timeout or
	// the ctx deadline, whichever came first).
	ErrTimeout = errors.New("rocketmq: request timed out")
	// ErrConnClosed: the connection broke or was closed while a request
	// was pending or being sent.
	ErrConnClosed = errors.New("rocketmq: connection closed")
	// ErrDial: a connection could not be opened.
	ErrDial = errors.New("rocketmq: dial failed")
	// ErrClosed: the client was closed (shut down) before or during the
	// call.
	ErrClosed = errors.New("rocketmq: client closed")
	// ErrTooManyInflight: the bound on asynchronous requests in flight was
	// reached (fail-fast), or ctx ended while waiting for a slot.
	ErrTooManyInflight = errors.New("rocketmq: too many async requests in flight")
	// ErrNoNameServer: no NameServer address is configured, neither by
	// option nor by the NAMESRV_ADDR environment variable.
	ErrNoNameServer = errors.New("rocketmq: no NameServer address configured")
	// ErrNoRoute: the NameServer has no usable route for the topic.
	ErrNoRoute = errors.New("rocketmq: no route for topic")
	// ErrNotNameServer: the configured NameServer address answers, but is
	// not a NameServer (a broker, or another program).
	ErrNotNameServer = errors.New("rocketmq: not a NameServer")
	// ErrProtocol: the peer does not speak the RocketMQ remoting protocol
	// (it answered HTTP, TLS or something else).
	ErrProtocol = errors.New("rocketmq: peer does not speak the RocketMQ protocol")
)
