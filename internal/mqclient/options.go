package mqclient

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/go-rocketmq/rocketmq/metrics"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Setting changes the shared Config. The options every client package
// offers (producer, consumer, admin) are defined here once; each package
// turns them into its own Option with Apply, under the same With… name.
// OptionNames lists them; a test checks that every package offers all.
type Setting func(*Config)

// Apply returns an option of a client package that applies s to the Config
// that client reaches through get.
func Apply[C any](get func(*C) *Config, s Setting) func(*C) {
	return func(c *C) { s(get(c)) }
}

// OptionNames are the With… names of the shared options, in the order of
// their definition below.
var OptionNames = []string{
	"WithNameServers", "WithNamespace", "WithInstanceName", "WithUnitName",
	"WithClientIP", "WithLogger", "WithDialer", "WithTLS", "WithACL",
	"WithSerializeType", "WithCallTimeout", "WithHeartbeatInterval",
	"WithRouteRefreshInterval",
	"WithMetrics",
}

// NameServers sets the NameServer addresses (host:port; host names are
// resolved when dialed; "a:9876;b:9876" lists are split). A failing
// NameServer is skipped for the next. Default: the NAMESRV_ADDR
// environment variable; creating the client fails when neither is set.
func NameServers(addrs ...string) Setting {
	return func(c *Config) { c.NameServers = append([]string(nil), addrs...) }
}

// Namespace prefixes every topic and group with "namespace%" on the wire,
// once (a name that already carries it is left alone; %RETRY% and %DLQ%
// stay in front), and strips it from results (Java NamespaceUtil).
// Default: none.
func Namespace(ns string) Setting { return func(c *Config) { c.Namespace = ns } }

// InstanceName sets the instance part of the client id (ip@instance).
// Default: "<pid>#<random>", unique per client.
func InstanceName(name string) Setting { return func(c *Config) { c.InstanceName = name } }

// UnitName appends "@unit" to the client id. Default: none.
func UnitName(unit string) Setting { return func(c *Config) { c.UnitName = unit } }

// ClientIP sets the address part of the client id. Default: the first
// non-loopback IPv4 address of the host.
func ClientIP(ip string) Setting { return func(c *Config) { c.ClientIP = ip } }

// Logger sets the logger. Default: discard everything.
func Logger(l *slog.Logger) Setting { return func(c *Config) { c.Logger = l } }

// Dialer replaces the TCP dialer (tests use net.Pipe or scripted peers).
// It must return promptly once ctx is done. Default: a net.Dialer with
// 30 s keep-alive and a 3 s dial timeout.
func Dialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) Setting {
	return func(c *Config) { c.Dialer = d }
}

// TLS makes every connection TLS with a clone of cfg; ServerName defaults
// to the host of each address. Default: plain TCP.
func TLS(cfg *tls.Config) Setting { return func(c *Config) { c.TLS = cfg } }

// ACL signs every request with the credentials, like Java's
// AclClientRPCHook (docs/PROTOCOL.md §8.13). Default: no signing.
func ACL(cred remoting.ACLCredentials) Setting { return func(c *Config) { c.ACL = &cred } }

// SerializeType sets the header encoding of requests. Default JSON, like
// the Java client.
func SerializeType(t remoting.SerializeType) Setting {
	return func(c *Config) { c.Serialize = t }
}

// CallTimeout bounds each call that has no timeout of its own: route
// lookups, heartbeats, unregistering, admin calls (Java
// mqClientApiTimeout). A ctx deadline that comes earlier wins. Default 3 s.
func CallTimeout(d time.Duration) Setting { return func(c *Config) { c.RequestTimeout = d } }

// HeartbeatInterval sets the period of heartbeats to brokers. Default 30 s.
func HeartbeatInterval(d time.Duration) Setting {
	return func(c *Config) { c.HeartbeatInterval = d }
}

// RouteRefreshInterval sets the period of route refreshes from the
// NameServer (Java pollNameServerInterval). Default 30 s.
func RouteRefreshInterval(d time.Duration) Setting {
	return func(c *Config) { c.PollNameServerInterval = d }
}

// Metrics sends the client's measurements to h (package metrics): sends,
// consumption, cached messages, lag, rebalances and connection events.
// Default: none, and then nothing is measured.
func Metrics(h metrics.Hook) Setting { return func(c *Config) { c.Metrics = h } }
