package mqclient

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Goroutines counts and knows goroutines, so that a shutdown called from
// one of them returns (see transport.Goroutines).
type Goroutines = transport.Goroutines

// ReplyHandler receives request-reply messages pushed by a broker
// (PUSH_REPLY_MESSAGE_TO_CLIENT).
type ReplyHandler func(msg *rocketmq.MessageExt)

type topicRoute struct {
	route *remoting.TopicRouteData
	pub   *PublishInfo
	subs  []rocketmq.MessageQueue
}

type flight struct {
	done chan struct{}
	err  error
}

// Client is one client instance: connections, routes, heartbeats and the
// registry of its producers and consumers.
type Client struct {
	cfg     Config
	log     *slog.Logger
	id      string
	tr      *transport.Client
	namesrv []string
	nsIdx   atomic.Int32

	mu       sync.RWMutex
	routes   map[string]*topicRoute
	brokers  map[string]map[int64]string // broker name → id → address
	versions map[string]int32            // broker address → version from its heartbeat reply
	flights  map[string]*flight
	pending  map[string]struct{} // topics to refresh soon

	regMu     sync.Mutex
	producers map[string]Producer // a nil Producer has no transaction checks
	consumers map[string]Consumer
	admins    map[string]struct{}
	reply     ReplyHandler

	lifeMu  sync.Mutex
	started bool
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	stop       chan struct{} // closed by Close: the loops end after their current round
	hbNow      chan struct{}
	refreshNow chan struct{}
}

// New validates cfg and returns a Client that has dialed nothing yet.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ns, _ := cfg.ResolveNameServers()
	log := cfg.logger()
	topts := []transport.Option{
		transport.WithLogger(log),
		transport.WithSerializeType(cfg.Serialize),
		transport.WithTimeout(cfg.RequestTimeout),
	}
	if cfg.Dialer != nil || cfg.Metrics != nil {
		topts = append(topts, transport.WithDialer(measuredDialer(cfg.Dialer, cfg.Metrics)))
	}
	if cfg.TLS != nil {
		topts = append(topts, transport.WithTLS(cfg.TLS))
	}
	if cfg.ACL != nil {
		topts = append(topts, transport.WithACL(*cfg.ACL))
	}
	if cfg.Version != 0 {
		topts = append(topts, transport.WithVersion(cfg.Version))
	}
	if cfg.MaxAsyncInflight > 0 {
		topts = append(topts, transport.WithMaxAsyncInflight(cfg.MaxAsyncInflight, false))
	}
	// A broker drops a client whose connection closed (Java's
	// doChannelCloseEvent); a reconnect heartbeats at once so the client's
	// groups do not lose it until the next period.
	hbNow := make(chan struct{}, 1)
	topts = append(topts, transport.WithReconnectHook(func(string) {
		select {
		case hbNow <- struct{}{}:
		default:
		}
	}))
	tr, err := transport.New(topts...)
	if err != nil {
		return nil, err
	}
	ip := cfg.ClientIP
	if ip == "" {
		ip = LocalIP()
	}
	inst := cfg.InstanceName
	if inst == "" || inst == "DEFAULT" {
		inst = DefaultInstanceName()
	}
	c := &Client{
		cfg:        cfg,
		log:        log,
		id:         BuildClientID(ip, inst, cfg.UnitName),
		tr:         tr,
		namesrv:    ns,
		routes:     make(map[string]*topicRoute),
		brokers:    make(map[string]map[int64]string),
		versions:   make(map[string]int32),
		flights:    make(map[string]*flight),
		pending:    make(map[string]struct{}),
		producers:  make(map[string]Producer),
		consumers:  make(map[string]Consumer),
		admins:     make(map[string]struct{}),
		stop:       make(chan struct{}),
		hbNow:      hbNow,
		refreshNow: make(chan struct{}, 1),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.registerHandlers()
	return c, nil
}

// ClientID returns ip@instance[@unit].
func (c *Client) ClientID() string { return c.id }

// NameServers returns the NameServer addresses in use.
func (c *Client) NameServers() []string { return slices.Clone(c.namesrv) }

// Logger returns the client's logger.
func (c *Client) Logger() *slog.Logger { return c.log }

// Start launches the route poller and the heartbeat loop and asks for a
// heartbeat at once. Starting twice is a no-op; after Close it fails.
func (c *Client) Start(ctx context.Context) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.started {
		return nil
	}
	c.started = true
	c.wg.Add(2)
	go c.routeLoop()
	go c.heartbeatLoop()
	c.TriggerHeartbeat()
	return ctx.Err()
}

// Close stops the client: the route poller and the heartbeat loop finish
// the round they are in, for as long as ctx allows; then their calls are
// cancelled, every connection is closed and Close waits for every
// goroutine of the client (transport callbacks and handlers included, but
// for the caller's own when a callback or handler calls Close). It returns
// ctx's error when the loops had to be cut short. Members should
// unregister first. Close is idempotent.
func (c *Client) Close(ctx context.Context) error {
	c.lifeMu.Lock()
	if c.closed {
		c.lifeMu.Unlock()
		return nil
	}
	c.closed = true
	c.lifeMu.Unlock()
	close(c.stop)
	loops := make(chan struct{})
	go func() { c.wg.Wait(); close(loops) }()
	var err error
	select {
	case <-loops:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.cancel()
	_ = c.tr.Close() // here, not on another goroutine: the caller may be a callback
	<-loops
	return err
}

func (c *Client) isClosed() bool {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	return c.closed
}

// SetReplyHandler sets the receiver of pushed reply messages (nil: none).
func (c *Client) SetReplyHandler(h ReplyHandler) {
	c.regMu.Lock()
	c.reply = h
	c.regMu.Unlock()
}

// RegisterHandler sets the handler of a broker→client request code.
func (c *Client) RegisterHandler(code int32, h transport.Handler) { c.tr.RegisterHandler(code, h) }

// Invoke sends a request to addr and waits for its response, bounded by
// ctx and timeout (<= 0: the configured request timeout).
func (c *Client) Invoke(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration) (*remoting.Command, error) {
	if timeout <= 0 {
		timeout = c.cfg.RequestTimeout
	}
	return c.tr.InvokeTimeout(ctx, addr, req, timeout)
}

// InvokeAsync sends a request and calls cb once with the outcome, unless it
// returns an error.
func (c *Client) InvokeAsync(ctx context.Context, addr string, req *remoting.Command, timeout time.Duration, cb func(*remoting.Command, error)) error {
	if timeout <= 0 {
		timeout = c.cfg.RequestTimeout
	}
	return c.tr.InvokeAsyncTimeout(ctx, addr, req, timeout, cb)
}

// InvokeOneway sends a request without waiting for a response.
func (c *Client) InvokeOneway(ctx context.Context, addr string, req *remoting.Command) error {
	return c.tr.InvokeOneway(ctx, addr, req)
}

// ReadSoon asks the connection to addr to be read now rather than after
// its idle delay, for a server request expected shortly (see
// transport.Client.ReadSoon).
func (c *Client) ReadSoon(addr string) { c.tr.ReadSoon(addr) }

// InvokeNameServer sends the request built by mk to the NameServers, the
// current one first, moving to the next on a transport error until one
// answers or ctx ends. mk is called once per attempt.
func (c *Client) InvokeNameServer(ctx context.Context, mk func() *remoting.Command) (*remoting.Command, error) {
	resp, _, err := c.invokeNameServer(ctx, mk)
	return resp, err
}

// InvokeNameServerFrom is InvokeNameServer that also says who answered.
func (c *Client) InvokeNameServerFrom(ctx context.Context, mk func() *remoting.Command) (*remoting.Command, string, error) {
	return c.invokeNameServer(ctx, mk)
}

// invokeNameServer is InvokeNameServer that also says who answered.
func (c *Client) invokeNameServer(ctx context.Context, mk func() *remoting.Command) (*remoting.Command, string, error) {
	n := len(c.namesrv)
	start := int(c.nsIdx.Load())
	var errs []error
	for i := 0; i < n; i++ {
		idx := (start + i) % n
		addr := c.namesrv[idx]
		resp, err := c.tr.InvokeTimeout(ctx, addr, mk(), c.cfg.RequestTimeout)
		if err == nil {
			if idx != start {
				c.nsIdx.Store(int32(idx))
				c.log.Info("rocketmq: switched NameServer", "namesrv", addr)
			}
			return resp, addr, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || errors.Is(err, transport.ErrClosed) {
			break
		}
		c.log.Warn("rocketmq: NameServer call failed", "namesrv", addr, "err", err)
	}
	if len(errs) == 1 {
		return nil, "", errs[0]
	}
	return nil, "", Errorf("every NameServer failed: %w", errors.Join(errs...))
}

// handleReply answers PUSH_REPLY_MESSAGE_TO_CLIENT (Java
// ClientRemotingProcessor.receiveReplyMessage).
func (c *Client) handleReply(_ context.Context, addr string, req *remoting.Command) *remoting.Command {
	var h remoting.ReplyMessageRequestHeader
	if err := h.FromExt(req.Ext); err != nil {
		return remoting.NewResponse(remoting.SystemError, err.Error())
	}
	m := &rocketmq.MessageExt{
		Message: rocketmq.Message{Topic: h.Topic, Flag: h.Flag, Body: req.Body},
	}
	m.QueueID = h.QueueID
	m.SysFlag = h.SysFlag
	m.BornTimestamp = h.BornTimestamp
	m.StoreTimestamp = h.StoreTimestamp
	m.BornHost = parseHost(h.BornHost)
	m.StoreHost = parseHost(h.StoreHost)
	if h.ReconsumeTimes != nil {
		m.ReconsumeTimes = *h.ReconsumeTimes
	}
	if h.Properties != nil {
		m.Properties = message.DecodeProperties(*h.Properties)
	}
	if m.SysFlag&message.FlagCompressed != 0 {
		body, err := message.Decompress(m.Body, m.SysFlag, 0)
		if err != nil {
			return remoting.NewResponse(remoting.SystemError, err.Error())
		}
		m.Body = body
	}
	m.MsgID = m.Property(rocketmq.PropertyUniqKey)
	c.regMu.Lock()
	fn := c.reply
	c.regMu.Unlock()
	if fn == nil {
		c.log.Warn("rocketmq: reply message without a requester", "addr", addr, "topic", h.Topic)
	} else {
		fn(m)
	}
	return remoting.NewResponse(remoting.Success, "")
}

func parseHost(s string) netip.AddrPort {
	ap, _ := netip.ParseAddrPort(strings.TrimPrefix(s, "/"))
	return ap
}
