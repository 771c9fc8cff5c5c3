package namesrv

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
)

// Defaults used when a Config field is zero.
const (
	// DefaultBrokerExpiry is how long a broker address stays routable
	// without re-registering (Java's BROKER_CHANNEL_EXPIRED_TIME).
	DefaultBrokerExpiry = 120 * time.Second
	// DefaultScanInterval is how often expired brokers are looked for
	// (scanNotActiveBrokerInterval).
	DefaultScanInterval = 5 * time.Second
)

// ErrInvalidConfig reports a Config that New rejects.
var ErrInvalidConfig = errors.New("rocketmq: invalid name server config")

// Config configures a NameServer. The zero value is usable.
type Config struct {
	// Logger receives the server's logs. nil discards them.
	Logger *slog.Logger

	// BrokerExpiry removes a broker address that has not registered for
	// this long. Zero means DefaultBrokerExpiry.
	BrokerExpiry time.Duration

	// ScanInterval is the period of the expiry scan. Zero means
	// DefaultScanInterval.
	ScanInterval time.Duration

	// KVConfigPath, when set, is the file the KV config is loaded from at
	// New and saved to after every change, as Java's kvConfig.json:
	// {"configTable":{"<namespace>":{"<key>":"<value>"}}}. Empty keeps the
	// KV config in memory only.
	KVConfigPath string

	// OrderMessageEnable adds orderTopicConf (the KV value of namespace
	// ORDER_TOPIC_CONFIG for the topic) to route responses. Default false,
	// as in Java.
	OrderMessageEnable bool

	// MaxFrameSize bounds an inbound frame, length prefix included. Zero
	// means remoting.DefaultMaxFrameSize.
	MaxFrameSize int

	// MaxHandlers bounds the requests served at once. Zero means the
	// server's default.
	MaxHandlers int

	// Network limits of the server, each zero for the server's default
	// (see internal/server.Config): MaxConns caps open connections
	// (negative: no cap); MaxConnPending and MaxConnOutbound bound one
	// connection's running requests and queued reply bytes before its
	// input is paused; MaxConnStall closes a connection paused that long.
	MaxConns        int
	MaxConnPending  int
	MaxConnOutbound int
	MaxConnStall    time.Duration

	// TLS holds the server certificate of the NameServer's port; TLSMode
	// defaults to server.TLSPermissive when TLS is set (Java's
	// tls.server.mode default) and to disabled otherwise.
	TLS     *tls.Config
	TLSMode server.TLSMode

	// Now is the clock for liveness timestamps. nil means time.Now.
	Now func() time.Time

	// OnPanic is server.Config.OnPanic, for tests.
	OnPanic func(code int32, v any)
	// Intercept, when set, wraps every request handler, for tests' fault
	// controls.
	Intercept func(code int32, h server.Handler) server.Handler
}

func (c Config) withDefaults() (Config, error) {
	if c.BrokerExpiry < 0 || c.ScanInterval < 0 || c.MaxFrameSize < 0 || c.MaxHandlers < 0 ||
		c.MaxConnPending < 0 || c.MaxConnOutbound < 0 || c.MaxConnStall < 0 {
		return c, fmt.Errorf("%w: negative duration or size", ErrInvalidConfig)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.BrokerExpiry == 0 {
		c.BrokerExpiry = DefaultBrokerExpiry
	}
	if c.ScanInterval == 0 {
		c.ScanInterval = DefaultScanInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}
