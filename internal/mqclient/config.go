package mqclient

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/metrics"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// EnvNameServer is the environment variable read for NameServer addresses
// when none are configured, as the Java client does.
const EnvNameServer = "NAMESRV_ADDR"

// Config is the shared part of producer and consumer configuration. The
// public packages fill it from their options; DefaultConfig has the
// defaults.
type Config struct {
	// NameServers are host:port addresses; host names are resolved when
	// dialed. Empty means the NAMESRV_ADDR environment variable.
	NameServers []string
	// InstanceName is the middle part of the client id. Empty means
	// "<pid>#<random number>", unique per client (Java replaces DEFAULT
	// with pid#nanoTime for producers and clustering consumers).
	InstanceName string
	// Namespace is prefixed to topic and group names on the wire
	// (WrapNamespace) and removed from names in results.
	Namespace string
	// UnitName is appended to the client id as "@unit" when set.
	UnitName string
	// ClientIP is the address part of the client id. Empty means the first
	// non-loopback IPv4 address of this host.
	ClientIP string
	// Logger receives the client's logs; nil discards them.
	Logger *slog.Logger
	// Dialer replaces the TCP dialer (tests).
	Dialer transport.DialFunc
	// TLS, when set, makes every connection TLS.
	TLS *tls.Config
	// ACL, when set, signs every request (docs/PROTOCOL.md §8.13).
	ACL *remoting.ACLCredentials
	// Serialize is the header encoding of requests (default JSON).
	Serialize remoting.SerializeType
	// Version is the version claimed in every request (0: transport default,
	// 409 = V4_9_8).
	Version int32
	// RequestTimeout bounds NameServer, heartbeat and unregister calls.
	RequestTimeout time.Duration
	// PollNameServerInterval is the period of the route refresh (30 s).
	PollNameServerInterval time.Duration
	// HeartbeatInterval is the period of heartbeats to brokers (30 s).
	HeartbeatInterval time.Duration
	// MaxAsyncInflight bounds the transport's outstanding async calls.
	MaxAsyncInflight int
	// Metrics, when set, receives the client's measurements; the client
	// core reports connection events to it.
	Metrics metrics.Hook
}

// DefaultConfig returns Java's defaults.
func DefaultConfig() Config {
	return Config{
		Serialize:              remoting.SerializeJSON,
		RequestTimeout:         3 * time.Second,
		PollNameServerInterval: 30 * time.Second,
		HeartbeatInterval:      30 * time.Second,
		MaxAsyncInflight:       65535,
	}
}

// ParseNameServers splits a NameServer list as Java's NAMESRV_ADDR is
// written ("a:9876;b:9876"); commas and spaces are accepted too. Each entry
// must be host:port; host names are allowed.
func ParseNameServers(s string) ([]string, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' })
	out := make([]string, 0, len(f))
	for _, a := range f {
		if err := checkAddr(a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func checkAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return fmt.Errorf("%w: %q", ErrBadNameServer, a)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("%w: %q: bad port", ErrBadNameServer, a)
	}
	return nil
}

// ResolveNameServers returns the configured addresses, or those of the
// NAMESRV_ADDR environment variable when none are configured, checked.
func (c *Config) ResolveNameServers() ([]string, error) {
	if len(c.NameServers) > 0 {
		out := make([]string, 0, len(c.NameServers))
		for _, a := range c.NameServers {
			l, err := ParseNameServers(a)
			if err != nil {
				return nil, err
			}
			out = append(out, l...)
		}
		if len(out) == 0 {
			return nil, ErrNoNameServer
		}
		return out, nil
	}
	l, err := ParseNameServers(os.Getenv(EnvNameServer))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvNameServer, err)
	}
	if len(l) == 0 {
		return nil, ErrNoNameServer
	}
	return l, nil
}

// Validate checks the configuration, NameServers included.
func (c *Config) Validate() error {
	if _, err := c.ResolveNameServers(); err != nil {
		return err
	}
	switch {
	case c.RequestTimeout <= 0:
		return fmt.Errorf("rocketmq: request timeout %v must be positive", c.RequestTimeout)
	case c.PollNameServerInterval < 10*time.Millisecond:
		return fmt.Errorf("rocketmq: route poll interval %v too small", c.PollNameServerInterval)
	case c.HeartbeatInterval < 10*time.Millisecond:
		return fmt.Errorf("rocketmq: heartbeat interval %v too small", c.HeartbeatInterval)
	case c.Serialize != remoting.SerializeJSON && c.Serialize != remoting.SerializeRocketMQ:
		return fmt.Errorf("rocketmq: unknown serialize type %d", c.Serialize)
	case c.MaxAsyncInflight < 0:
		return fmt.Errorf("rocketmq: max async in-flight %d is negative", c.MaxAsyncInflight)
	case strings.ContainsAny(c.Namespace, "%@ \x00"):
		return fmt.Errorf("rocketmq: namespace %q must not contain '%%', '@' or spaces", c.Namespace)
	case strings.ContainsAny(c.InstanceName, "@ \x00") || strings.ContainsAny(c.UnitName, "@ \x00"):
		return errors.New("rocketmq: instance and unit names must not contain '@' or spaces")
	}
	return nil
}

func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}
