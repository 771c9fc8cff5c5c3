package rebalance

import (
	"errors"
	"slices"

	"github.com/go-rocketmq/rocketmq"
)

// Strategy allocates queues to one consumer of a group.
//
// Allocate returns the queues of mqAll that the consumer currentCID owns,
// given that the consumers of group are cidAll. Every consumer calls it
// with the same mqAll and cidAll and gets a disjoint share (ByConfig aside).
// It returns nil when currentCID is not in cidAll, when an input is empty,
// or when nothing is assigned. The returned slice is newly allocated and
// never aliases mqAll. Implementations must be safe for concurrent use.
//
// Name returns the Java strategy name (AllocateMessageQueueStrategy.getName).
type Strategy interface {
	Name() string
	Allocate(group, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue
}

// Errors returned by Validate and the constructors.
var (
	ErrEmptyClientID = errors.New("rocketmq: rebalance: current client id is empty")
	ErrNoQueues      = errors.New("rocketmq: rebalance: no message queues to allocate")
	ErrNoConsumers   = errors.New("rocketmq: rebalance: consumer id list is empty")
	ErrNilStrategy   = errors.New("rocketmq: rebalance: nil strategy")
	ErrNilResolver   = errors.New("rocketmq: rebalance: nil machine room resolver")
	ErrVirtualNodes  = errors.New("rocketmq: rebalance: negative virtual node count")
)

// Validate reports the inputs for which Java's allocators throw instead of
// returning a list (AbstractAllocateMessageQueueStrategy.check). Allocate
// returns nil for them; a consumer that gets an error here should keep its
// current assignment, as Java's RebalanceImpl does.
//
// A currentCID missing from cidAll is not an error: it gets no queues.
func Validate(currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) error {
	switch {
	case currentCID == "":
		return ErrEmptyClientID
	case len(mqAll) == 0:
		return ErrNoQueues
	case len(cidAll) == 0:
		return ErrNoConsumers
	}
	return nil
}

// consumerIndex is Java's shared check followed by indexOf: the position of
// currentCID in cidAll, or -1 if the strategy must return nothing.
func consumerIndex(currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) int {
	if Validate(currentCID, mqAll, cidAll) != nil {
		return -1
	}
	return slices.Index(cidAll, currentCID)
}

// Averagely gives each consumer one contiguous block of queues; the first
// len(mqAll)%len(cidAll) consumers get one queue more. It is Java's default
// strategy, AVG.
type Averagely struct{}

// Name returns "AVG".
func (Averagely) Name() string { return "AVG" }

// Allocate implements Strategy.
func (Averagely) Allocate(_, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	index := consumerIndex(currentCID, mqAll, cidAll)
	if index < 0 {
		return nil
	}
	n, c := len(mqAll), len(cidAll)
	mod := n % c
	size := n / c
	if n <= c {
		size = 1
	} else if index < mod {
		size++
	}
	start := index*size + mod
	if index < mod {
		start = index * size
	}
	// With fewer queues than consumers the tail consumers start past the end.
	end := min(start+size, n)
	if start >= end {
		return nil
	}
	return slices.Clone(mqAll[start:end])
}

// AveragelyByCircle deals the queues out one at a time, round robin:
// consumer i gets queues i, i+C, i+2C, ... (AVG_BY_CIRCLE).
type AveragelyByCircle struct{}

// Name returns "AVG_BY_CIRCLE".
func (AveragelyByCircle) Name() string { return "AVG_BY_CIRCLE" }

// Allocate implements Strategy.
func (AveragelyByCircle) Allocate(_, currentCID string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	index := consumerIndex(currentCID, mqAll, cidAll)
	if index < 0 || index >= len(mqAll) {
		return nil
	}
	c := len(cidAll)
	out := make([]rocketmq.MessageQueue, 0, (len(mqAll)-index+c-1)/c)
	for i := index; i < len(mqAll); i += c {
		out = append(out, mqAll[i])
	}
	return out
}

// ByConfig always returns a fixed list of queues, whatever the inputs, even
// to a consumer that is not in cidAll (CONFIG). Java behaves the same way.
type ByConfig struct {
	queues []rocketmq.MessageQueue
}

// NewByConfig returns a strategy that assigns queues to every caller. It
// keeps a copy of queues.
func NewByConfig(queues []rocketmq.MessageQueue) *ByConfig {
	return &ByConfig{queues: slices.Clone(queues)}
}

// Name returns "CONFIG".
func (*ByConfig) Name() string { return "CONFIG" }

// Allocate implements Strategy. It ignores its arguments.
func (s *ByConfig) Allocate(_, _ string, _ []rocketmq.MessageQueue, _ []string) []rocketmq.MessageQueue {
	return slices.Clone(s.queues)
}
