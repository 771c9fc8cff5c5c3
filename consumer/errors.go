package consumer

import (
	"errors"

	"github.com/go-rocketmq/rocketmq"
)

// Errors of the push consumer, matchable with errors.Is.
var (
	ErrNotStarted     = errors.New("rocketmq: consumer not started")
	ErrAlreadyStarted = errors.New("rocketmq: consumer already started")
	// ErrClosed: the consumer has been shut down; it cannot start again.
	ErrClosed = rocketmq.ErrClosed
)
