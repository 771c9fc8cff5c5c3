package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/acl"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Broker is one in-repo broker: a store, a remoting server and the state
// managers. Create it with New, then Start; Close shuts it down cleanly and
// Crash stops it the way a killed process would (tests only).
type Broker struct {
	cfg Config
	log *slog.Logger

	store  *store.Store
	srv    *server.Server
	nsCli  *transport.Client // REGISTER_BROKER / UNREGISTER_BROKER
	reg    registrar         // coalesces REGISTER_BROKER (nameservers.go)
	faults faultTable

	topics  *topicManager
	groups  *groupManager
	offsets *offsetManager
	clients *clientManager
	locks   *lockTable
	pulls   *pullHold

	syncs    *syncReplies     // sends waiting for a sync flush (FlushSync only)
	schedule *scheduleService // SCHEDULE_TOPIC_XXXX deliveries
	timers   *timerService    // rmq_sys_wheel_timer deliveries
	tx       *txService       // half messages and their checks
	acl      *acl.Watcher     // accounts when AclEnable; nil otherwise
	conf     *brokerConf      // GET/UPDATE_BROKER_CONFIG and the values they change live
	ha       haState          // replication (ha.go)

	addr      string         // published ip:port
	storeHost netip.AddrPort // written into every record

	ids         *rocketmq.UniqIDGenerator // UNIQ_KEY for sends without one
	delayLevels []time.Duration           // messageDelayLevel
	stats       *brokerStats
	metrics     *brokerMetrics
	traceOn     string // TRACE_ON in send responses

	ctx    context.Context // cancelled by Close/Crash
	cancel context.CancelFunc
	// ready is closed once Start has set addr and storeHost; handlers wait
	// for it, so they never see those fields half-written.
	ready chan struct{}

	// mu serialises Start and shutdown.
	mu       sync.Mutex
	started  bool
	closed   bool
	shutDown chan struct{} // closed once shutdown has finished

	// wgMu guards running and every wg.Add, so no goroutine is added once
	// shutdown has begun waiting. It is taken alone, never under mu's
	// callers' other locks, so any code path may start a goroutine.
	wgMu    sync.Mutex
	running bool
	wg      sync.WaitGroup // periodic loops and background registrations
}

// New opens the store and prepares the managers. Nothing listens until Start.
func New(cfg Config) (*Broker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// An unusable store directory fails here under its own name rather than
	// through the first config file read below it.
	if err := os.MkdirAll(cfg.StoreDir, 0o755); err != nil {
		return nil, fmt.Errorf("rocketmq: broker: StoreDir: %w", err)
	}
	b := &Broker{cfg: cfg, log: cfg.Logger.With("broker", cfg.BrokerName), ready: make(chan struct{}), shutDown: make(chan struct{})}
	b.ids = rocketmq.NewUniqIDGenerator()
	b.conf = newBrokerConf(cfg)
	if b.delayLevels, err = parseDelayLevels(cfg.DelayLevels); err != nil {
		return nil, fmt.Errorf("rocketmq: broker: DelayLevels: %w", err)
	}
	b.stats = newBrokerStats(time.Now())
	b.metrics = newBrokerMetrics()
	b.traceOn = "true"
	if cfg.TraceOff {
		b.traceOn = "false"
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.topics = newTopicManager(b)
	b.groups = newGroupManager(b)
	b.offsets = newOffsetManager(b)
	b.clients = newClientManager(b)
	b.locks = newLockTable(cfg.LockMaxLiveTime, cfg.LockTableMax)
	b.pulls = newPullHold(b)
	for _, load := range []func() error{b.topics.load, b.groups.load, b.offsets.load} {
		if err := load(); err != nil {
			return nil, err
		}
	}
	scfg := store.Config{
		Dir:                        cfg.StoreDir,
		CommitLogSegmentSize:       cfg.CommitLogSegmentSize,
		ConsumeQueueEntriesPerFile: cfg.ConsumeQueueEntries,
		MaxOpenQueueFiles:          cfg.MaxOpenQueueFiles,
		IndexSlots:                 cfg.IndexSlots,
		IndexEntries:               cfg.IndexEntries,
		FlushMode:                  cfg.FlushMode,
		FlushInterval:              cfg.FlushInterval,
		MaxMessageSize:             cfg.MaxMessageSize,
		Logger:                     b.log,
		OnDispatch:                 b.onDispatch,
		Replica:                    cfg.Role == RoleSlave,
		TagsCode:                   b.recoveredTagsCode,
		DiskSpaceWarningLevelRatio: cfg.DiskSpaceWarningLevelRatio,
		DiskCheckInterval:          cfg.DiskCheckInterval,
		WriteRetryInterval:         cfg.StoreWriteRetryInterval,
		DiskUsage:                  cfg.DiskUsage,
		WriteFault:                 cfg.StoreWriteFault,
		ReserveFault:               cfg.StoreReserveFault,
		SyncFault:                  cfg.StoreSyncFault,
	}
	cfg.applyRetention(&scfg)
	st, err := store.Open(scfg)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: broker %s: open store: %w", cfg.BrokerName, err)
	}
	b.store = st
	if cfg.FlushMode == store.FlushSync {
		b.syncs = newSyncReplies(st.FlushProgress, st.SyncFlushTimeout())
		b.syncs.failed = st.SyncFailed
	}
	b.haInit()
	b.schedule = newScheduleService(b)
	b.timers = newTimerService(b)
	if err := b.loadDelayed(); err != nil {
		st.Close()
		return nil, err
	}
	b.tx = newTxService(b)
	b.tx.load()
	b.srv = server.New(server.Config{Logger: b.log, MaxHandlers: cfg.MaxHandlers, OnPanic: cfg.OnPanic,
		MaxConns: cfg.MaxConns, MaxConnPending: cfg.MaxConnPending,
		MaxConnOutbound: cfg.MaxConnOutbound, MaxConnStall: cfg.MaxConnStall, MaxConnInbound: cfg.MaxConnInbound,
		TLS: cfg.TLS, TLSMode: cfg.TLSMode})
	b.nsCli, err = transport.New(transport.WithLogger(b.log), transport.WithLanguage(remoting.LanguageJava),
		transport.WithTLS(cfg.NameServerTLS))
	if err != nil {
		st.Close()
		return nil, err
	}
	if b.acl, err = newACL(cfg, b); err != nil {
		st.Close()
		return nil, fmt.Errorf("rocketmq: broker %s: %w", cfg.BrokerName, err)
	}
	b.srv.OnConnClose(b.clients.onConnClose)
	b.srv.OnConnOpen(func(*server.Conn) { b.metrics.connsOpened.Inc() })
	b.srv.OnConnClose(func(*server.Conn) { b.metrics.connsClosed.Inc() })
	b.serveRoutes()
	return b, nil
}

// Start listens, registers with the NameServers and starts the periodic
// tasks. It returns once the listener accepts connections.
func (b *Broker) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("rocketmq: broker is closed")
	}
	if b.started {
		return errors.New("rocketmq: broker already started")
	}
	if err := b.srv.Start(b.cfg.ListenAddr); err != nil {
		var le *server.ListenError
		if errors.As(err, &le) {
			le.Who = "broker " + b.cfg.BrokerName
			return le
		}
		return fmt.Errorf("rocketmq: broker %s: listen %s: %w", b.cfg.BrokerName, b.cfg.ListenAddr, err)
	}
	b.addr = b.cfg.AdvertiseAddr
	if b.addr == "" {
		b.addr = b.srv.Addr()
	}
	ap, err := netip.ParseAddrPort(b.addr)
	if err != nil {
		if tcp, rerr := net.ResolveTCPAddr("tcp", b.addr); rerr == nil {
			ap = tcp.AddrPort()
		}
	}
	b.storeHost = ap
	if err := b.startHA(); err != nil {
		b.srv.Close(context.Background())
		return err
	}
	b.startVIP()
	b.started = true
	close(b.ready)
	b.wgMu.Lock()
	b.running = true
	b.wgMu.Unlock()
	b.topics.ensureSystemTopics()
	b.startHALoops()
	b.every(b.cfg.RegisterInterval, func(ctx context.Context) { b.registerAll(ctx) })
	b.every(b.cfg.OffsetFlushInterval, func(context.Context) { b.offsets.persistLogged() })
	b.every(b.cfg.ClientScanInterval, func(context.Context) { b.clients.scanExpired() })
	b.loop(b.clients.runNotifier)
	b.every(time.Second, func(context.Context) { b.stats.sample(time.Now()) })
	b.loop(b.pulls.run)
	if b.syncs != nil {
		b.loop(b.syncs.run)
	}
	if !b.isSlave() { // delays, timers and check-backs run on masters only
		b.startDelayed()
		b.every(b.cfg.TransactionCheckInterval, b.tx.round)
	}
	if b.acl != nil {
		b.loop(b.acl.Run)
	}
	b.registerAll(b.ctx)
	return nil
}

// Addr is the published address (ip:port) once started.
func (b *Broker) Addr() string { return b.addr }

// Name is the broker name.
func (b *Broker) Name() string { return b.cfg.BrokerName }

// ClusterName is the cluster the broker registers under.
func (b *Broker) ClusterName() string { return b.cfg.ClusterName }

// Close unregisters from the NameServers, answers held pulls, persists
// offsets and config, stops every goroutine and closes the store cleanly.
// ctx bounds the unregistration and the wait for running requests; then
// the server forces the rest (internal/server Close). Close returns after
// every goroutine of the broker has ended; a later call waits for the
// first.
func (b *Broker) Close(ctx context.Context) error {
	return b.shutdown(ctx, true)
}

// Crash stops the broker like a killed process: no unregistration, no
// offset or checkpoint persistence, no clean store shutdown. Tests reopen
// the same StoreDir with New to exercise recovery.
func (b *Broker) Crash() error {
	return b.shutdown(context.Background(), false)
}

func (b *Broker) shutdown(ctx context.Context, clean bool) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		<-b.shutDown
		return nil
	}
	b.closed = true
	started := b.started
	b.mu.Unlock()
	defer close(b.shutDown)
	b.wgMu.Lock()
	b.running = false
	b.wgMu.Unlock()

	var errs []error
	if started && clean {
		b.unregisterAll(ctx)
	}
	b.cancel()
	b.wg.Wait()
	if started {
		b.pulls.close()
		if err := b.srv.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.closeHA(ctx); err != nil {
		errs = append(errs, err)
	}
	b.nsCli.Close()
	if clean {
		for _, persist := range []func() error{b.offsets.persist, b.groups.persist, b.topics.persist, b.schedule.persist, b.timers.persist} {
			if err := persist(); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, b.store.Close())
	} else {
		errs = append(errs, b.store.Crash())
	}
	return errors.Join(errs...)
}

// every runs fn every d until the broker stops.
func (b *Broker) every(d time.Duration, fn func(ctx context.Context)) {
	b.loop(func(ctx context.Context) {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	})
}

// loop runs fn on a broker-owned goroutine; fn must return once ctx is
// done. It does nothing once shutdown has begun.
func (b *Broker) loop(fn func(ctx context.Context)) {
	b.wgMu.Lock()
	defer b.wgMu.Unlock()
	if !b.running {
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn(b.ctx)
	}()
}

// brokerVersion is the version our responses carry: V5_0_0. The broker
// speaks 4.9.8's protocol but also implements 5.x timer messages, and
// clients decide from a broker's version whether it has them.
const brokerVersion = 413

// handle registers h for code behind the fault controls. Responses say
// JAVA, as every 4.9.8 broker response does (wire README fact 6).
func (b *Broker) handle(code int32, h server.Handler) {
	b.srv.Handle(code, func(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
		if resp := b.aclRefusal(c, req); resp != nil {
			return resp
		}
		resp := b.serveWithFaults(ctx, c, req, code, h)
		if !relaysClientAnswer(code) {
			stampResponse(resp)
		}
		return resp
	})
}

// handleInline registers f as code's fast path on the event loop (see
// server.HandleInline). It declines while Start has not finished or any
// fault is set, so the fault controls and the start gate stay on the
// worker path.
func (b *Broker) handleInline(code int32, f server.InlineHandler) {
	b.srv.HandleInline(code, func(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
		select {
		case <-b.ready:
		default:
			return nil, false
		}
		if !b.faults.empty() {
			return nil, false
		}
		if resp := b.aclRefusal(c, req); resp != nil {
			return resp, true
		}
		resp, ok := f(ctx, c, req)
		if ok {
			stampResponse(resp)
		}
		return resp, ok
	})
}

// stampResponse marks resp as coming from a JAVA broker of brokerVersion,
// as every response of ours does.
func stampResponse(resp *remoting.Command) {
	if resp != nil {
		resp.Language = remoting.LanguageJava
		resp.Version = brokerVersion
	}
}

func (b *Broker) serveWithFaults(ctx context.Context, c *server.Conn, req *remoting.Command, code int32, h server.Handler) *remoting.Command {
	// Requests already read are served even if their connection has closed
	// since (Java's processors run regardless; only the reply is lost), so
	// ctx matters only while Start has not finished.
	select {
	case <-b.ready:
	default:
		select {
		case <-b.ready:
		case <-ctx.Done():
			return nil
		}
	}
	if b.faults.empty() {
		return h(ctx, c, req)
	}
	var served *remoting.Command
	resp := b.faults.Serve(ctx, code, req, func() *remoting.Command {
		served = h(ctx, c, req)
		return served
	})
	if resp != served {
		stampResponse(resp) // the fault's own answer
	}
	return resp
}
