package rmqtest

import (
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
)

// WithClientExpiry sets how long the brokers keep a client connection
// that sends no heartbeat (channelExpiredTimeout, Java 120 s) and how often
// they look for such connections (the ClientHousekeepingService scan,
// Java 10 s), so that a consumer killed without shutdown loses its queues
// to the rest of its group within seconds.
func WithClientExpiry(expiry, scan time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) {
			b.ChannelExpiry, b.ClientScanInterval = expiry, scan
		})
	}
}

// WithOffsetFlushInterval sets how often the brokers write consumer
// offsets to disk (flushConsumerOffsetInterval, Java 5 s). Offsets
// committed since the last write are lost when a broker process is killed.
func WithOffsetFlushInterval(d time.Duration) Option {
	return func(c *config) {
		c.tweaks = append(c.tweaks, func(b *broker.Config) { b.OffsetFlushInterval = d })
	}
}
