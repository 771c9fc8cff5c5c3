package admin

import (
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
)

// Option configures an admin client.
type Option func(*config)

type config struct {
	client mqclient.Config
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
	return cfg, cfg.client.Validate()
}
