package producer

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Option configures a Producer.
type Option func(*config)

type config struct {
	client mqclient.Config

	group                 string
	wireGroup             string // group in the namespace: what the broker sees (Java withNamespace)
	namespace             string // client.Namespace, where the send path reads it
	sendTimeout           time.Duration
	retries               int
	retryNotStoreOK       bool
	compressOver          int
	compressLevel         int
	compressType          message.CompressionType
	maxMessageSize        int
	createTopicKey        string
	defaultTopicQueueNums int
	latencyFault          bool
	latencyMax            []time.Duration
	notAvailable          []time.Duration
	selector              QueueSelector
	maxInflight           int
	maxInflightBytes      int64
	inflightFailFast      bool
	interceptors          []Interceptor
	requestTimeout        time.Duration
	timerCheck            bool
	checkGoroutines       int
	checkQueue            int

	trace *traceConfig // WithTrace; nil: off

	api brokerAPI // tests only: replaces the mqclient adapter
}

func defaultConfig() config {
	const ms = time.Millisecond
	return config{
		client:                mqclient.DefaultConfig(),
		group:                 rocketmq.GroupDefaultProducer,
		sendTimeout:           3 * time.Second,
		retries:               2,
		compressOver:          rocketmq.DefaultCompressOverSize,
		compressLevel:         rocketmq.DefaultCompressLevel,
		compressType:          message.CompressionZLIB,
		maxMessageSize:        rocketmq.DefaultMaxMessageSize,
		createTopicKey:        rocketmq.TopicAutoCreate,
		defaultTopicQueueNums: 4,
		latencyFault:          true,
		// Java 5.x MQFaultStrategy tables (docs/PROTOCOL.md §8.4).
		latencyMax:       []time.Duration{50 * ms, 100 * ms, 550 * ms, 1800 * ms, 3000 * ms, 5000 * ms, 15000 * ms},
		notAvailable:     []time.Duration{0, 0, 2000 * ms, 5000 * ms, 6000 * ms, 10000 * ms, 30000 * ms},
		maxInflight:      10000,
		maxInflightBytes: 100 << 20,
		requestTimeout:   3 * time.Second,
		timerCheck:       true,
		checkGoroutines:  1,    // Java checkThreadPoolMaxSize
		checkQueue:       2000, // Java checkRequestHoldMax
	}
}

func (c *config) validate() error {
	c.namespace = c.client.Namespace
	if err := rocketmq.ValidateGroup(c.group); err != nil {
		return fmt.Errorf("rocketmq: producer group: %w", err)
	}
	c.wireGroup = mqclient.WrapNamespace(c.namespace, c.group)
	if c.api == nil {
		if err := c.client.Validate(); err != nil {
			return err
		}
	}
	switch {
	case c.sendTimeout <= 0:
		return fmt.Errorf("rocketmq: send timeout %v must be positive", c.sendTimeout)
	case c.requestTimeout <= 0:
		return fmt.Errorf("rocketmq: request timeout %v must be positive", c.requestTimeout)
	case c.retries < 0:
		return fmt.Errorf("rocketmq: retries %d is negative", c.retries)
	case c.compressOver <= 0:
		return fmt.Errorf("rocketmq: compression threshold %d must be positive", c.compressOver)
	case c.compressLevel < 1 || c.compressLevel > 9 && c.compressType != message.CompressionZSTD:
		return fmt.Errorf("rocketmq: compression level %d out of range", c.compressLevel)
	case c.maxMessageSize <= 0:
		return fmt.Errorf("rocketmq: max message size %d must be positive", c.maxMessageSize)
	case c.defaultTopicQueueNums <= 0:
		return fmt.Errorf("rocketmq: default topic queue count %d must be positive", c.defaultTopicQueueNums)
	case len(c.latencyMax) == 0 || len(c.latencyMax) != len(c.notAvailable):
		return errors.New("rocketmq: latency tables must be non-empty and of equal length")
	case c.maxInflight <= 0 || c.maxInflightBytes <= 0:
		return errors.New("rocketmq: async in-flight bounds must be positive")
	case c.checkGoroutines <= 0 || c.checkQueue <= 0:
		return errors.New("rocketmq: transaction check goroutines and queue size must be positive")
	}
	if c.createTopicKey != "" {
		if err := rocketmq.ValidateTopic(c.createTopicKey); err != nil {
			return fmt.Errorf("rocketmq: create-topic key: %w", err)
		}
	}
	return nil
}

// WithGroup sets the producer group. Default "DEFAULT_PRODUCER".
func WithGroup(group string) Option { return func(c *config) { c.group = group } }

// WithSendTimeout sets the total time budget of one send, all retries
// included (Java sendMsgTimeout). A ctx deadline that comes earlier wins.
// Default 3 s.
func WithSendTimeout(d time.Duration) Option { return func(c *config) { c.sendTimeout = d } }

// WithRetries sets how many times a failed sync or async send is retried,
// on another broker when there is one (Java retryTimesWhenSendFailed).
// Oneway sends are never retried. Default 2 (3 attempts).
func WithRetries(n int) Option { return func(c *config) { c.retries = n } }

// WithRetryOnNotStoreOK retries sends the broker stored with a non-OK
// status (FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE) on
// another broker (Java retryAnotherBrokerWhenNotStoreOK). The message may
// then be stored twice. Default false: the status is returned in
// SendResult.Status.
func WithRetryOnNotStoreOK(on bool) Option { return func(c *config) { c.retryNotStoreOK = on } }

// WithCompression compresses single-message bodies of at least overBytes
// with zlib at level (1..9). Batches are never compressed. Default 4096
// bytes, level 5 (Java's).
func WithCompression(overBytes, level int) Option {
	return func(c *config) { c.compressOver, c.compressLevel = overBytes, level }
}

// WithCompressionType selects the codec; consumers before 4.9.4 read only
// zlib. Default zlib (sysFlag 0x301).
func WithCompressionType(t message.CompressionType) Option {
	return func(c *config) { c.compressType = t }
}

// WithMaxMessageSize sets the largest body (or encoded batch) accepted
// before sending. Default 4 MiB, the broker's default limit.
func WithMaxMessageSize(n int) Option { return func(c *config) { c.maxMessageSize = n } }

// WithCreateTopicKey sets the template topic whose route is used for a
// topic that has none yet, so that a broker auto-creates it; "" disables
// that fallback. Default "TBW102".
func WithCreateTopicKey(topic string) Option { return func(c *config) { c.createTopicKey = topic } }

// WithDefaultTopicQueueNums sets the queue count asked for auto-created
// topics. Default 4.
func WithDefaultTopicQueueNums(n int) Option { return func(c *config) { c.defaultTopicQueueNums = n } }

// WithLatencyFaultTolerance switches the latency fault strategy (Java
// sendLatencyFaultEnable, docs/PROTOCOL.md §8.4): a broker that failed or
// answered slowly is avoided for a while, then tried again. Default true
// (Java's default is false): it costs nothing with one broker and keeps
// sends away from a broker that just timed out when there are several.
func WithLatencyFaultTolerance(on bool) Option { return func(c *config) { c.latencyFault = on } }

// WithLatencyTable replaces the fault strategy's tables: a latency of at
// least latencyMax[i] makes the broker unavailable for notAvailable[i];
// a failure counts as 10 s of latency. Both ascending, same length.
// Default Java 5.x: 50ms/0, 100ms/0, 550ms/2s, 1.8s/5s, 3s/6s, 5s/10s,
// 15s/30s.
func WithLatencyTable(latencyMax, notAvailable []time.Duration) Option {
	return func(c *config) {
		c.latencyMax = append([]time.Duration(nil), latencyMax...)
		c.notAvailable = append([]time.Duration(nil), notAvailable...)
	}
}

// WithQueueSelector sets the producer's default queue selector; a send
// may still pick another with Select, ShardBy or ToQueue. Default
// RoundRobin (with the fault strategy).
func WithQueueSelector(s QueueSelector) Option { return func(c *config) { c.selector = s } }

// WithAsyncInflight bounds the async sends (and async requests) in flight:
// at most n messages and at most bytes of bodies (a single larger send is
// still let through alone). When a bound is reached SendAsync waits for a
// slot until its ctx ends, or with failFast returns ErrTooManyInflight at
// once. Default 10000 sends, 100 MiB, waiting (Java 5.x back-pressure
// defaults).
func WithAsyncInflight(n int, bytes int64, failFast bool) Option {
	return func(c *config) { c.maxInflight, c.maxInflightBytes, c.inflightFailFast = n, bytes, failFast }
}

// WithInterceptors adds interceptors run around every send attempt, in
// the order given (the first is outermost). Default: none.
func WithInterceptors(in ...Interceptor) Option {
	return func(c *config) { c.interceptors = append(c.interceptors, in...) }
}

// WithRequestTimeout sets how long Request waits for a reply when ctx has
// no earlier deadline; it is also the TTL sent with the request. Default
// 3 s.
func WithRequestTimeout(d time.Duration) Option { return func(c *config) { c.requestTimeout = d } }

// WithTimerCheck makes sends of timer messages (TIMER_DELIVER_MS,
// TIMER_DELAY_SEC, TIMER_DELAY_MS) fail with ErrTimerNotSupported when the
// target broker reported a version below 5.0 in its heartbeat reply: such
// a broker would deliver the message at once. Default true.
func WithTimerCheck(on bool) Option { return func(c *config) { c.timerCheck = on } }

// WithTransactionChecks sets how a transactional producer answers the
// broker's transaction checks: on at most goroutines goroutines, with at
// most queue checks waiting; a check that finds the queue full is dropped
// and the broker asks again at its next check interval. Plain producers
// ignore it. Default 1 goroutine, 2000 waiting (Java's
// checkThreadPoolMaxSize and checkRequestHoldMax).
func WithTransactionChecks(goroutines, queue int) Option {
	return func(c *config) { c.checkGoroutines, c.checkQueue = goroutines, queue }
}
