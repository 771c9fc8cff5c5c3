package consumer

import (
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

// liteConfig holds the settings only the pull consumer has (Java
// DefaultLitePullConsumer's own fields).
type liteConfig struct {
	autoCommit         bool
	autoCommitInterval time.Duration
	thresholdForAll    int // messages held by the whole consumer
	listener           QueueListener
}

func defaultLiteConfig() liteConfig {
	return liteConfig{autoCommit: true, autoCommitInterval: 5 * time.Second, thresholdForAll: 10000}
}

func (c *liteConfig) validate() error {
	switch {
	case c.autoCommitInterval < time.Millisecond:
		return fmt.Errorf("rocketmq: auto-commit interval %v: want at least 1ms", c.autoCommitInterval)
	case c.thresholdForAll < 1:
		return fmt.Errorf("rocketmq: pull threshold for all %d: want at least 1", c.thresholdForAll)
	}
	return nil
}

// QueueListener is told the queues of topic a PullConsumer holds each time
// they change, by Assign or by a rebalance of its group. It runs on the
// consumer's own goroutine and must not block long.
type QueueListener func(topic string, held []rocketmq.MessageQueue)

// WithAutoCommit sets whether a PullConsumer commits the offsets of what
// Poll returned on its own, every auto-commit interval and at Shutdown
// (default true). Without it offsets move only by CommitSync and Commit.
// Push consumers ignore it.
func WithAutoCommit(on bool) Option { return func(c *config) { c.lite.autoCommit = on } }

// WithAutoCommitInterval sets how often a PullConsumer commits with
// auto-commit on (default 5 s, Java autoCommitIntervalMillis).
func WithAutoCommitInterval(d time.Duration) Option {
	return func(c *config) { c.lite.autoCommitInterval = d }
}

// WithPullThresholdForAll caps the messages a PullConsumer holds pulled but
// not yet polled, over all its queues (default 10000, Java
// pullThresholdForAll). WithPullThresholdForQueue and
// WithPullThresholdSizeForQueue cap each queue.
func WithPullThresholdForAll(n int) Option { return func(c *config) { c.lite.thresholdForAll = n } }

// WithQueueListener sets the listener a PullConsumer tells of its held
// queues.
func WithQueueListener(l QueueListener) Option { return func(c *config) { c.lite.listener = l } }
