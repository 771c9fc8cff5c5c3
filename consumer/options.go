package consumer

import (
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/rebalance"
)

// Option configures a consumer.
type Option func(*config)

type config struct {
	client mqclient.Config
	group  string

	model         Model
	from          From
	fromTimestamp time.Time
	strategy      rebalance.Strategy

	rebalanceInterval time.Duration
	consumeGoroutines int
	consumeBatchSize  int
	pullBatchSize     int
	pullInterval      time.Duration

	pullThresholdForQueue     int
	pullThresholdSizeForQueue int // MiB
	pullThresholdForTopic     int // -1: unset
	pullThresholdSizeForTopic int // MiB, -1: unset
	maxSpan                   int

	maxReconsumeTimes   int
	consumeTimeout      time.Duration
	persistInterval     time.Duration
	offsetDir           string // "": $HOME/.rocketmq_offsets
	interceptors        []Interceptor
	suspendTime         time.Duration // orderly: how long SuspendQueue stops a queue
	suspendBrokerMillis time.Duration // long-poll hold asked of the broker

	// Orderly clustering queue locks (Java RebalanceImpl's constants, not
	// options there either; tests shorten them).
	lockInterval time.Duration // renewal period, REBALANCE_LOCK_INTERVAL
	lockMaxLive  time.Duration // client-side expiry, REBALANCE_LOCK_MAX_LIVE_TIME

	lite liteConfig // the pull consumer's own settings

	trace *traceConfig // WithTrace (push consumers); nil: off
}

func defaultConfig() config {
	return config{
		client:   mqclient.DefaultConfig(),
		model:    Clustering,
		from:     FromLast,
		strategy: rebalance.Averagely{},

		rebalanceInterval: 20 * time.Second,
		consumeGoroutines: 20,
		consumeBatchSize:  1,
		pullBatchSize:     32,

		pullThresholdForQueue:     1000,
		pullThresholdSizeForQueue: 100,
		pullThresholdForTopic:     -1,
		pullThresholdSizeForTopic: -1,
		maxSpan:                   2000,

		maxReconsumeTimes:   -1,
		suspendTime:         time.Second,
		consumeTimeout:      15 * time.Minute,
		persistInterval:     5 * time.Second,
		suspendBrokerMillis: 15 * time.Second,
		lockInterval:        20 * time.Second,
		lockMaxLive:         30 * time.Second,
		lite:                defaultLiteConfig(),
	}
}

// newConfig applies opts to the defaults and validates the result.
func newConfig(opts ...Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.fromTimestamp.IsZero() {
		// Java's consumeTimestamp default: half an hour before start.
		cfg.fromTimestamp = time.Now().Add(-30 * time.Minute)
	}
	return cfg, cfg.validate()
}

func (c *config) validate() error {
	switch {
	case c.group == "":
		return fmt.Errorf("rocketmq: consumer group: none given (WithGroup)")
	case c.group == defaultGroup:
		// Java DefaultMQPushConsumerImpl.checkConfig refuses it too: every
		// application would share its offsets.
		return fmt.Errorf("rocketmq: consumer group: %q is reserved, name your own", defaultGroup)
	}
	if err := rocketmq.ValidateGroup(c.group); err != nil {
		return fmt.Errorf("rocketmq: consumer group: %w", err)
	}
	// Ranges as Java DefaultMQPushConsumerImpl.checkConfig.
	switch {
	case c.model != Clustering && c.model != Broadcasting:
		return fmt.Errorf("rocketmq: consumer model %d: want Clustering or Broadcasting", c.model)
	case c.from < FromLast || c.from > FromTimestamp:
		return fmt.Errorf("rocketmq: consume from %d: want FromLast, FromFirst or FromTimestamp", c.from)
	case c.strategy == nil:
		return fmt.Errorf("rocketmq: allocate strategy: nil")
	case c.rebalanceInterval <= 0:
		return fmt.Errorf("rocketmq: rebalance interval %v: want > 0", c.rebalanceInterval)
	case c.consumeGoroutines < 1 || c.consumeGoroutines > 1000:
		return fmt.Errorf("rocketmq: consume goroutines %d: want 1..1000", c.consumeGoroutines)
	case c.consumeBatchSize < 1 || c.consumeBatchSize > 1024:
		return fmt.Errorf("rocketmq: consume batch size %d: want 1..1024", c.consumeBatchSize)
	case c.pullBatchSize < 1 || c.pullBatchSize > 1024:
		return fmt.Errorf("rocketmq: pull batch size %d: want 1..1024", c.pullBatchSize)
	case c.pullInterval < 0 || c.pullInterval > 65535*time.Millisecond:
		return fmt.Errorf("rocketmq: pull interval %v: want 0..65535ms", c.pullInterval)
	case c.pullThresholdForQueue < 1 || c.pullThresholdForQueue > 65535:
		return fmt.Errorf("rocketmq: pull threshold for queue %d: want 1..65535", c.pullThresholdForQueue)
	case c.pullThresholdSizeForQueue < 1 || c.pullThresholdSizeForQueue > 1024:
		return fmt.Errorf("rocketmq: pull threshold size for queue %d MiB: want 1..1024", c.pullThresholdSizeForQueue)
	case c.pullThresholdForTopic != -1 && (c.pullThresholdForTopic < 1 || c.pullThresholdForTopic > 6553500):
		return fmt.Errorf("rocketmq: pull threshold for topic %d: want 1..6553500 or -1", c.pullThresholdForTopic)
	case c.pullThresholdSizeForTopic != -1 && (c.pullThresholdSizeForTopic < 1 || c.pullThresholdSizeForTopic > 102400):
		return fmt.Errorf("rocketmq: pull threshold size for topic %d MiB: want 1..102400 or -1", c.pullThresholdSizeForTopic)
	case c.maxSpan < 1 || c.maxSpan > 65535:
		return fmt.Errorf("rocketmq: consume max span %d: want 1..65535", c.maxSpan)
	case c.maxReconsumeTimes < -1:
		return fmt.Errorf("rocketmq: max reconsume times %d: want -1 (the default) or more", c.maxReconsumeTimes)
	case c.suspendTime < 10*time.Millisecond || c.suspendTime > 30*time.Second:
		return fmt.Errorf("rocketmq: suspend time %v: want 10ms..30s", c.suspendTime)
	case c.consumeTimeout <= 0:
		return fmt.Errorf("rocketmq: consume timeout %v: want > 0", c.consumeTimeout)
	case c.persistInterval <= 0:
		return fmt.Errorf("rocketmq: offset persist interval %v: want > 0", c.persistInterval)
	}
	return c.client.Validate()
}

// defaultGroup is Java's MixAll.DEFAULT_CONSUMER_GROUP.
const defaultGroup = "DEFAULT_CONSUMER"

// WithGroup sets the consumer group, which consumers of one application
// share: they split the queues between them (clustering) and share their
// offsets. Required; there is no default.
func WithGroup(group string) Option { return func(c *config) { c.group = group } }

// WithModel sets Clustering or Broadcasting. Default Clustering.
func WithModel(m Model) Option { return func(c *config) { c.model = m } }

// WithConsumeFrom sets where a queue without a stored offset starts.
// Default FromLast.
func WithConsumeFrom(f From) Option { return func(c *config) { c.from = f } }

// WithConsumeTimestamp sets the time FromTimestamp starts at (second
// precision, in the local time zone as Java). Default: half an hour before
// NewPush.
func WithConsumeTimestamp(t time.Time) Option { return func(c *config) { c.fromTimestamp = t } }

// WithStrategy sets how the queues of a topic are split between the
// members of a group. Default rebalance.Averagely{}.
func WithStrategy(s rebalance.Strategy) Option { return func(c *config) { c.strategy = s } }

// WithRebalanceInterval sets the period of rebalances (besides those the
// broker triggers when members come and go). Default 20 s.
func WithRebalanceInterval(d time.Duration) Option {
	return func(c *config) { c.rebalanceInterval = d }
}

// WithConsumeGoroutines sets how many handler calls run at once.
// Default 20.
func WithConsumeGoroutines(n int) Option { return func(c *config) { c.consumeGoroutines = n } }

// WithConsumeBatchSize sets the most messages passed to one handler call.
// Default 1.
func WithConsumeBatchSize(n int) Option { return func(c *config) { c.consumeBatchSize = n } }

// WithPullBatchSize sets the most messages asked for in one pull.
// Default 32 (brokers cap it at 32 by default).
func WithPullBatchSize(n int) Option { return func(c *config) { c.pullBatchSize = n } }

// WithPullInterval sets a pause between the pulls of a queue. Default 0.
func WithPullInterval(d time.Duration) Option { return func(c *config) { c.pullInterval = d } }

// WithPullThresholdForQueue caps the messages held per queue before its
// pulls pause. Default 1000.
func WithPullThresholdForQueue(n int) Option {
	return func(c *config) { c.pullThresholdForQueue = n }
}

// WithPullThresholdSizeForQueue caps the body MiB held per queue before
// its pulls pause. Default 100.
func WithPullThresholdSizeForQueue(mib int) Option {
	return func(c *config) { c.pullThresholdSizeForQueue = mib }
}

// WithPullThresholdForTopic caps the messages held per topic; when set,
// each queue's cap is this divided by the topic's queues held (at least
// 1), replacing WithPullThresholdForQueue for that topic. Default unset.
func WithPullThresholdForTopic(n int) Option {
	return func(c *config) { c.pullThresholdForTopic = n }
}

// WithPullThresholdSizeForTopic caps the body MiB held per topic, split
// over its queues as WithPullThresholdForTopic. Default unset.
func WithPullThresholdSizeForTopic(mib int) Option {
	return func(c *config) { c.pullThresholdSizeForTopic = mib }
}

// WithConsumeMaxSpan pauses a queue's pulls while the offsets it holds
// span more than n (a slow message holds the offset back). Default 2000.
func WithConsumeMaxSpan(n int) Option { return func(c *config) { c.maxSpan = n } }

// WithMaxReconsumeTimes sets how many times a message is given back
// (concurrent) or suspended (orderly) before it moves to %DLQ%group.
// Default -1: 16 for concurrent consumption, no limit for orderly, as
// Java.
func WithMaxReconsumeTimes(n int) Option { return func(c *config) { c.maxReconsumeTimes = n } }

// WithSuspendTime sets how long SuspendQueue stops an orderly queue
// before its messages are delivered again. Default 1 s; 10ms..30s (Java
// suspendCurrentQueueTimeMillis).
func WithSuspendTime(d time.Duration) Option { return func(c *config) { c.suspendTime = d } }

// WithConsumeTimeout sets how long a message may wait in the consumer
// after its handler started before it is given back. Default 15 min.
func WithConsumeTimeout(d time.Duration) Option { return func(c *config) { c.consumeTimeout = d } }

// WithOffsetPersistInterval sets the period at which consume offsets are
// sent to the broker (clustering) or written to the local file
// (broadcasting). Default 5 s.
func WithOffsetPersistInterval(d time.Duration) Option {
	return func(c *config) { c.persistInterval = d }
}

// WithOffsetStoreDir sets the directory of the broadcasting offset files.
// Default $HOME/.rocketmq_offsets. A member's file is named by the client
// IP, the instance name (DEFAULT when none is set, never the PID) and the
// group, so set WithInstanceName to run two broadcasting members of one
// group on one host.
func WithOffsetStoreDir(dir string) Option { return func(c *config) { c.offsetDir = dir } }

// WithInterceptors adds interceptors around every handler call, the first
// outermost.
func WithInterceptors(in ...Interceptor) Option {
	return func(c *config) { c.interceptors = append(c.interceptors, in...) }
}
