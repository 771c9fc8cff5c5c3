package consumer

import (
	"fmt"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
)

// Option configures a consumer.
type Option func(*config)

type config struct {
	client mqclient.Config
	group  string
}

func defaultConfig() config {
	return config{client: mqclient.DefaultConfig()}
}

// newConfig applies opts to the defaults and validates the result.
func newConfig(opts ...Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
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
	return c.client.Validate()
}

// defaultGroup is Java's MixAll.DEFAULT_CONSUMER_GROUP.
const defaultGroup = "DEFAULT_CONSUMER"

// WithGroup sets the consumer group, which consumers of one application
// share: they split the queues between them (clustering) and share their
// offsets. Required; there is no default.
func WithGroup(group string) Option { return func(c *config) { c.group = group } }
