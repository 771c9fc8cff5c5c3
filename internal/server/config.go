package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// Defaults used when a Config field is zero.
const (
	DefaultMaxHandlers   = 4096
	DefaultInvokeTimeout = 3 * time.Second // Java's default RPC timeout

	// DefaultMaxConnPending and DefaultMaxConnOutbound bound what one
	// connection can make the server hold before its input is paused.
	DefaultMaxConnPending  = 64
	DefaultMaxConnOutbound = 16 << 20
	// DefaultMaxConnStall is how long a connection may stay paused with
	// its replies not drained.
	DefaultMaxConnStall = 60 * time.Second
	// DefaultMaxConnInbound bounds the input a paused connection that
	// reads its replies may have waiting: 400,000 offset commits.
	DefaultMaxConnInbound = 64 << 20
	// DefaultMaxLargeRequests bounds the large requests held at once.
	DefaultMaxLargeRequests = 32 << 20
	// DefaultMaxPushQueued is the queue over which Conn.Push drops.
	DefaultMaxPushQueued = 1 << 20
)

// Config configures a Server. The zero value is usable.
type Config struct {
	// Logger receives the server's logs and gnet's. nil discards them.
	Logger *slog.Logger

	// MaxFrameSize bounds a whole inbound frame, length prefix included.
	// Zero means remoting.DefaultMaxFrameSize. A larger frame closes the
	// connection that sent it, as Java's frame decoder does.
	MaxFrameSize int

	// MaxHandlers bounds the handlers running at once, across connections.
	// A request arriving while the bound is reached is answered with
	// SYSTEM_BUSY instead of waiting (the event loop never blocks).
	// Zero means DefaultMaxHandlers.
	MaxHandlers int

	// Multicore runs one event loop per CPU; otherwise one loop serves every
	// connection. EventLoops > 0 sets the number of loops explicitly.
	Multicore  bool
	EventLoops int

	// InvokeTimeout bounds Conn.Invoke when its ctx has no deadline.
	// Zero means DefaultInvokeTimeout.
	InvokeTimeout time.Duration

	// TCPKeepAlive enables TCP keep-alive with this idle time; zero leaves
	// it off, like Java's NettyRemotingServer.
	TCPKeepAlive time.Duration

	// TCPDelay turns Nagle's algorithm back on (TCP_NODELAY is set by default).
	TCPDelay bool

	// MaxConns caps open connections; one accepted over the cap is closed
	// at once (counted in Stats.Refused, logged at most once a second).
	// Zero sizes it from the open-files limit (three quarters of it, the
	// rest left for store files and the other server of the process); a
	// negative value means no cap.
	MaxConns int

	// MaxConnPending bounds a connection's requests being handled at once
	// and MaxConnOutbound the reply bytes queued for it. Over either, the
	// server stops decoding that connection's input until replies drain
	// (back-pressure on a client that pipelines and does not read). Zero
	// means DefaultMaxConnPending and DefaultMaxConnOutbound.
	MaxConnPending  int
	MaxConnOutbound int

	// MaxConnStall closes a paused connection whose queued replies have
	// not drained for this long; one whose replies do not drain is also
	// closed when it sends MaxFrameSize bytes more. Zero means
	// DefaultMaxConnStall.
	MaxConnStall time.Duration

	// MaxConnInbound closes a paused connection that has this much input
	// waiting although it reads its replies: it sends faster than the
	// server serves it. Zero means DefaultMaxConnInbound, or twice
	// MaxFrameSize if that is more.
	MaxConnInbound int

	// MaxLargeRequests bounds the bytes of requests over 1 MiB held at
	// once, across connections, from the moment one is taken off the
	// connection's input until its handler returns; a connection whose
	// next request does not fit waits, its input paused (one request is
	// always let through alone). Zero means DefaultMaxLargeRequests.
	MaxLargeRequests int

	// MaxPushQueued makes Conn.Push drop its request while this many
	// bytes wait to be written to the connection. Zero means
	// DefaultMaxPushQueued.
	MaxPushQueued int

	// TLS, when set, holds the server certificate and lets clients connect
	// with TLS. TLSMode is TLSPermissive when TLS is set and TLSDisabled
	// otherwise unless given: permissive is Java's server default once TLS
	// is configured (plain and TLS on one port).
	TLS     *tls.Config
	TLSMode TLSMode
	// TLSHandshakeTimeout closes a connection that has not sent its first
	// byte or finished its TLS handshake in time. Zero means
	// DefaultTLSHandshakeTimeout.
	TLSHandshakeTimeout time.Duration
	// MaxTLSHandshakes bounds connections waiting for their first byte or
	// in a TLS handshake; one accepted over it is closed at once. Zero
	// means DefaultMaxTLSHandshakes.
	MaxTLSHandshakes int

	// OnPanic, when set, is called on the handler's goroutine with each
	// handler panic, after it is logged and before SYSTEM_ERROR is sent
	// (rmqtest fails the test that caused it).
	OnPanic func(code int32, v any)
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(discardHandler{})
	}
	if c.MaxFrameSize <= 0 {
		c.MaxFrameSize = remoting.DefaultMaxFrameSize
	}
	if c.MaxHandlers <= 0 {
		c.MaxHandlers = DefaultMaxHandlers
	}
	if c.MaxConns == 0 {
		c.MaxConns = fdLimit() * 3 / 4
	}
	if c.MaxConnPending <= 0 {
		c.MaxConnPending = DefaultMaxConnPending
	}
	if c.MaxConnOutbound <= 0 {
		c.MaxConnOutbound = DefaultMaxConnOutbound
	}
	if c.MaxConnStall <= 0 {
		c.MaxConnStall = DefaultMaxConnStall
	}
	if c.MaxLargeRequests <= 0 {
		c.MaxLargeRequests = DefaultMaxLargeRequests
	}
	if c.MaxPushQueued <= 0 {
		c.MaxPushQueued = DefaultMaxPushQueued
	}
	if c.MaxConnInbound <= 0 {
		c.MaxConnInbound = max(DefaultMaxConnInbound, 2*c.MaxFrameSize)
	}
	if c.TLSMode == "" {
		c.TLSMode = TLSDisabled
		if c.TLS != nil {
			c.TLSMode = TLSPermissive
		}
	}
	if c.TLSHandshakeTimeout <= 0 {
		c.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if c.MaxTLSHandshakes <= 0 {
		c.MaxTLSHandshakes = DefaultMaxTLSHandshakes
	}
	if c.InvokeTimeout <= 0 {
		c.InvokeTimeout = DefaultInvokeTimeout
	}
	return c
}

// discardHandler is a slog.Handler that drops everything (slog.DiscardHandler
// needs Go 1.24; go.mod says 1.22).
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }

// gnetLogger adapts slog to gnet's logging.Logger. gnet's Info lines are
// start-up chatter, so they go to Debug; Fatalf never exits the process.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(format string, args ...any) { g.log(slog.LevelDebug, format, args) }
func (g gnetLogger) Infof(format string, args ...any)  { g.log(slog.LevelDebug, format, args) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.log(slog.LevelWarn, format, args) }
func (g gnetLogger) Errorf(format string, args ...any) { g.log(slog.LevelError, format, args) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.log(slog.LevelError, format, args) }

func (g gnetLogger) log(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !g.l.Enabled(ctx, level) {
		return
	}
	g.l.Log(ctx, level, fmt.Sprintf(format, args...))
}
