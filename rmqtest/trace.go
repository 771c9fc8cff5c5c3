package rmqtest

import "github.com/go-rocketmq/rocketmq/internal/broker"

// WithTraceTopic turns the brokers' traceTopicEnable on: each creates the
// message trace topic (RMQ_SYS_TRACE_TOPIC when topic is empty) with one
// queue at start, as a Java broker does.
func WithTraceTopic(topic string) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) {
			b.TraceTopicEnable, b.MsgTraceTopicName = true, topic
		})
	}
}
