package admin

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/metrics"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// The options below are shared by every client package (producer, consumer,
// admin): same names, meaning and defaults, defined once in the client core.

func shared(s mqclient.Setting) Option {
	return mqclient.Apply(func(c *config) *mqclient.Config { return &c.client }, s)
}

// WithNameServers sets the NameServer addresses (host:port, or "a:9876;b:9876").
// Default: the NAMESRV_ADDR environment variable.
func WithNameServers(addrs ...string) Option { return shared(mqclient.NameServers(addrs...)) }

// WithNamespace puts topics and groups in namespace ns ("ns%name" on the
// wire, stripped from results). Default: none.
func WithNamespace(ns string) Option { return shared(mqclient.Namespace(ns)) }

// WithInstanceName sets the instance part of the client id (ip@instance).
// Default: "<pid>#<random>".
func WithInstanceName(name string) Option { return shared(mqclient.InstanceName(name)) }

// WithUnitName appends "@unit" to the client id. Default: none.
func WithUnitName(unit string) Option { return shared(mqclient.UnitName(unit)) }

// WithClientIP sets the address part of the client id. Default: the first
// non-loopback IPv4 address of the host.
func WithClientIP(ip string) Option { return shared(mqclient.ClientIP(ip)) }

// WithLogger sets the logger. Default: discard everything.
func WithLogger(l *slog.Logger) Option { return shared(mqclient.Logger(l)) }

// WithDialer replaces the TCP dialer. Default: net.Dialer with keep-alive.
func WithDialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return shared(mqclient.Dialer(d))
}

// WithTLS makes every connection TLS. Default: plain TCP.
func WithTLS(cfg *tls.Config) Option { return shared(mqclient.TLS(cfg)) }

// WithACL signs every request with the credentials (Java
// AclClientRPCHook). Default: no signing.
func WithACL(cred remoting.ACLCredentials) Option { return shared(mqclient.ACL(cred)) }

// WithSerializeType sets the header encoding of requests. Default JSON.
func WithSerializeType(t remoting.SerializeType) Option { return shared(mqclient.SerializeType(t)) }

// WithCallTimeout bounds calls without a timeout of their own (route
// lookups, heartbeats, admin calls). Default 3 s.
func WithCallTimeout(d time.Duration) Option { return shared(mqclient.CallTimeout(d)) }

// WithHeartbeatInterval sets the period of heartbeats to brokers. Default 30 s.
func WithHeartbeatInterval(d time.Duration) Option { return shared(mqclient.HeartbeatInterval(d)) }

// WithRouteRefreshInterval sets the period of route refreshes from the NameServer.
// Default 30 s.
func WithRouteRefreshInterval(d time.Duration) Option {
	return shared(mqclient.RouteRefreshInterval(d))
}

// WithMetrics sends measurements to h (package metrics). Default: none,
// and then nothing is measured.
func WithMetrics(h metrics.Hook) Option { return shared(mqclient.Metrics(h)) }
