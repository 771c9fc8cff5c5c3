package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// DialFunc opens a connection. It must return promptly once ctx is done:
// Client.Close waits for dials in progress.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// RPCHook runs on every outgoing request just before it is encoded, after
// the transport has set its opaque, language, version and flags. It may add
// or change extFields (ACL signing does).
type RPCHook func(addr string, req *remoting.Command)

// Option configures a Client.
type Option func(*config)

type config struct {
	dial          DialFunc
	dialTimeout   time.Duration
	tls           *tls.Config
	timeout       time.Duration
	maxFrame      int
	log           *slog.Logger
	hooks         []RPCHook
	language      remoting.LanguageCode
	version       int32
	serialize     remoting.SerializeType
	maxAsync      int
	asyncFailFast bool
	maxHandlers   int
	idleTimeout   time.Duration
	idleRead      time.Duration // see idleReadDelay; tests change it
	timeoutClose  TimeoutClose
	onReconnect   func(addr string)
}

func defaultConfig() config {
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	return config{
		dial:        d.DialContext,
		dialTimeout: 3 * time.Second,
		timeout:     3 * time.Second,
		maxFrame:    remoting.DefaultMaxFrameSize,
		language:    remoting.LanguageGo,
		version:     remoting.DefaultVersion,
		serialize:   remoting.SerializeJSON,
		maxAsync:    65535,
		maxHandlers: 64,
		idleRead:    idleReadDelay,
	}
}

func (c *config) validate() error {
	switch {
	case c.dial == nil:
		return errors.New("rocketmq: transport: nil dialer")
	case c.dialTimeout <= 0:
		return fmt.Errorf("rocketmq: transport: dial timeout %v must be positive", c.dialTimeout)
	case c.timeout <= 0:
		return fmt.Errorf("rocketmq: transport: request timeout %v must be positive", c.timeout)
	case c.maxFrame < 64:
		return fmt.Errorf("rocketmq: transport: max frame size %d too small", c.maxFrame)
	case c.serialize != remoting.SerializeJSON && c.serialize != remoting.SerializeRocketMQ:
		return fmt.Errorf("rocketmq: transport: unknown serialize type %d", c.serialize)
	case c.maxAsync <= 0:
		return fmt.Errorf("rocketmq: transport: max async in-flight %d must be positive", c.maxAsync)
	case c.maxHandlers <= 0:
		return fmt.Errorf("rocketmq: transport: max handlers %d must be positive", c.maxHandlers)
	case c.idleTimeout < 0:
		return fmt.Errorf("rocketmq: transport: idle timeout %v is negative", c.idleTimeout)
	case c.timeoutClose < CloseSilent || c.timeoutClose > CloseNever:
		return fmt.Errorf("rocketmq: transport: unknown timeout close mode %d", c.timeoutClose)
	}
	return nil
}

// WithDialer replaces the TCP dialer (tests use net.Pipe or scripted peers).
// Default: a net.Dialer with 30 s keep-alive.
func WithDialer(d DialFunc) Option { return func(c *config) { c.dial = d } }

// WithDialTimeout bounds one dial including the TLS handshake. Default 3 s
// (Java connectTimeoutMillis).
func WithDialTimeout(d time.Duration) Option { return func(c *config) { c.dialTimeout = d } }

// WithTLS makes every connection of this client TLS, with a clone of cfg.
// ServerName defaults to the host of the address. Verification stays on
// unless cfg itself sets InsecureSkipVerify. Default nil: plain TCP.
func WithTLS(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// WithTimeout is the request timeout used when a call gives none; the
// effective deadline is the earlier of it and the ctx deadline. Default 3 s
// (Java's default for most RPCs).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxFrameSize bounds frames in both directions, length prefix
// included. Default remoting.DefaultMaxFrameSize (16 MiB).
func WithMaxFrameSize(n int) Option { return func(c *config) { c.maxFrame = n } }

// WithLogger sets the logger. Default: discard everything.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithRPCHook adds a hook run on every outgoing request; hooks run in the
// order added. Default: none.
func WithRPCHook(h RPCHook) Option {
	return func(c *config) {
		if h != nil {
			c.hooks = append(c.hooks, h)
		}
	}
}

// WithACL signs every outgoing request with cred (docs/PROTOCOL.md §8.13); it is
// WithRPCHook(ACLHook(cred)). Default: no signing.
func WithACL(cred remoting.ACLCredentials) Option { return WithRPCHook(ACLHook(cred)) }

// WithLanguage sets the language code written in every command this client
// sends. Default remoting.LanguageGo.
func WithLanguage(l remoting.LanguageCode) Option { return func(c *config) { c.language = l } }

// WithVersion sets the version written in every command this client sends.
// Default remoting.DefaultVersion (409, V4_9_8; docs/PROTOCOL.md §1.7).
func WithVersion(v int32) Option { return func(c *config) { c.version = v } }

// WithSerializeType sets the header encoding of requests. Default JSON, like
// the Java client. Replies to server requests use the request's encoding.
func WithSerializeType(t remoting.SerializeType) Option {
	return func(c *config) { c.serialize = t }
}

// WithMaxAsyncInflight bounds the async calls outstanding at once on this
// client. When the bound is reached InvokeAsync waits for a slot until the
// call's deadline, or with failFast returns ErrTooManyInflight at once.
// Default 65535 (Java clientAsyncSemaphoreValue), waiting.
func WithMaxAsyncInflight(n int, failFast bool) Option {
	return func(c *config) { c.maxAsync, c.asyncFailFast = n, failFast }
}

// WithMaxHandlers bounds how many server→client requests are handled at
// once. A request beyond the bound is answered SYSTEM_BUSY (or dropped if
// oneway). Default 64.
func WithMaxHandlers(n int) Option { return func(c *config) { c.maxHandlers = n } }

// WithIdleTimeout closes a connection that has had no traffic and no
// pending call for d. Default 0: never.
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = d } }

// TimeoutClose says when a timed-out call closes its connection, so that
// the next call dials again instead of waiting on a peer that is gone.
type TimeoutClose int

const (
	// CloseSilent (the default) closes the connection when nothing at all
	// was received on it since the timed-out call's request was written:
	// the peer is dead or the path drops everything. A slow peer that
	// answers other calls keeps its connection and their pipelined calls.
	// Sync and async timeouts alike; oneway calls never time out.
	CloseSilent TimeoutClose = iota
	// CloseAlways closes the connection on every sync timeout, as Java's
	// NettyRemotingClient.invokeSync does (clientCloseSocketIfTimeout);
	// async timeouts close it as with CloseSilent.
	CloseAlways
	// CloseNever keeps the connection whatever times out.
	CloseNever
)

// WithTimeoutClose sets when a timed-out call closes its connection; the
// connection's other pending calls then fail at once with ErrConnClosed.
// Default CloseSilent.
func WithTimeoutClose(m TimeoutClose) Option { return func(c *config) { c.timeoutClose = m } }

type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }

// WithReconnectHook calls f (which must not block) after a connection to an
// address this client was connected to before is established again. A
// broker forgets a client whose connection closed, so the client core
// heartbeats at once instead of waiting for its next period.
func WithReconnectHook(f func(addr string)) Option { return func(c *config) { c.onReconnect = f } }
