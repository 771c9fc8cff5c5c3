package namesrv

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// Log attribute keys.
const (
	logKeyBroker  = "broker"
	logKeyAddr    = "addr"
	logKeyCluster = "cluster"
	logKeyRemote  = "remote"
	logKeyCode    = "code"
)

// NameServer serves broker registration and topic routes over the remoting
// protocol. Create it with New, then Start; Close stops it.
type NameServer struct {
	cfg    Config
	log    *slog.Logger
	srv    *server.Server
	routes *routeTable
	kv     *kvConfig

	mu      sync.Mutex
	started bool
	closed  bool
	done    chan struct{} // closed by Close: stops the scanner
	wg      sync.WaitGroup

	scans atomic.Int64 // completed expiry scans, for tests
}

// New returns a NameServer that is not yet listening. It loads the KV
// config file when Config.KVConfigPath is set.
func New(cfg Config) (*NameServer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	kv, err := newKVConfig(cfg.KVConfigPath)
	if err != nil {
		return nil, err
	}
	ns := &NameServer{
		cfg:    cfg,
		log:    cfg.Logger,
		routes: newRouteTable(),
		kv:     kv,
		done:   make(chan struct{}),
	}
	ns.srv = server.New(server.Config{
		Logger:       cfg.Logger,
		MaxFrameSize: cfg.MaxFrameSize,
		MaxHandlers:  cfg.MaxHandlers,
		OnPanic:      cfg.OnPanic,

		MaxConns:        cfg.MaxConns,
		MaxConnPending:  cfg.MaxConnPending,
		MaxConnOutbound: cfg.MaxConnOutbound,
		MaxConnStall:    cfg.MaxConnStall,

		TLS:     cfg.TLS,
		TLSMode: cfg.TLSMode,
	})
	ns.register()
	ns.srv.OnConnClose(ns.onConnClose)
	return ns, nil
}

// register maps request codes to handlers. Codes not listed here get
// REQUEST_CODE_NOT_SUPPORTED from the server.
func (ns *NameServer) register() {
	h := map[int32]server.Handler{
		remoting.PutKVConfig:                   server.Decoded(ns.putKVConfig, badRequest),
		remoting.GetKVConfig:                   server.Decoded(ns.getKVConfig, badRequest),
		remoting.DeleteKVConfig:                server.Decoded(ns.deleteKVConfig, badRequest),
		remoting.RegisterBroker:                ns.registerBroker,
		remoting.UnregisterBroker:              server.Decoded(ns.unregisterBroker, badRequest),
		remoting.GetRouteInfoByTopic:           ns.getRouteInfoByTopic,
		remoting.GetBrokerClusterInfo:          ns.getBrokerClusterInfo,
		remoting.WipeWritePermOfBroker:         server.Decoded(ns.wipeWritePermOfBroker, badRequest),
		remoting.GetAllTopicListFromNameServer: ns.getAllTopicList,
		remoting.DeleteTopicInNamesrv:          server.Decoded(ns.deleteTopicInNamesrv, badRequest),
		remoting.RegisterTopicInNamesrv:        ns.registerTopicInNamesrv,
		remoting.GetKVListByNamespace:          server.Decoded(ns.getKVListByNamespace, badRequest),
		remoting.GetTopicsByCluster:            server.Decoded(ns.getTopicsByCluster, badRequest),
		remoting.GetSystemTopicListFromNS:      ns.getSystemTopicList,
		remoting.GetUnitTopicList:              ns.getUnitTopicList,
		remoting.GetHasUnitSubTopicList:        ns.getHasUnitSubTopicList,
		remoting.GetHasUnitSubUnunitTopicList:  ns.getHasUnitSubUnunitTopicList,
		remoting.QueryDataVersion:              ns.queryDataVersion,
		remoting.AddWritePermOfBroker:          server.Decoded(ns.addWritePermOfBroker, badRequest),
	}
	for code, f := range h {
		if ns.cfg.Intercept != nil {
			f = ns.cfg.Intercept(code, f)
		}
		ns.srv.Handle(code, f)
	}
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and starts the
// broker expiry scan. It returns once the socket is bound.
func (ns *NameServer) Start(addr string) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.closed {
		return server.ErrServerClosed
	}
	if ns.started {
		return server.ErrServerStarted
	}
	if err := ns.srv.Start(addr); err != nil {
		var le *server.ListenError
		if errors.As(err, &le) {
			le.Who = "NameServer"
		}
		return err
	}
	ns.started = true
	ns.wg.Add(1)
	go ns.scanLoop()
	ns.log.Info("name server started", logKeyAddr, ns.srv.Addr())
	return nil
}

// Addr is the bound listening address ("ip:port"), empty before Start.
func (ns *NameServer) Addr() string { return ns.srv.Addr() }

// Close stops the expiry scan and the server: running requests finish
// while ctx allows, then every connection is closed. It returns after every
// goroutine has ended, with an error wrapping ctx's when requests were
// still running at its end; a second call waits for the first to finish.
func (ns *NameServer) Close(ctx context.Context) error {
	ns.mu.Lock()
	if !ns.closed {
		ns.closed = true
		close(ns.done)
	}
	ns.mu.Unlock()

	ns.wg.Wait() // the scanner returns at once on done
	err := ns.srv.Close(ctx)
	if errors.Is(err, server.ErrServerClosed) {
		err = nil
	}
	return err
}

// scanLoop expires brokers every ScanInterval until Close.
func (ns *NameServer) scanLoop() {
	defer ns.wg.Done()
	t := time.NewTicker(ns.cfg.ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-ns.done:
			return
		case <-t.C:
			ns.scanExpired()
			ns.scans.Inc()
		}
	}
}

// scanExpired removes brokers that have not registered within BrokerExpiry
// and closes their connections, as Java does.
func (ns *NameServer) scanExpired() {
	gone := ns.routes.expire(ns.cfg.Now(), ns.cfg.BrokerExpiry)
	for _, e := range gone {
		ns.log.Warn("broker expired", logKeyAddr, e.Addr, "expiry", ns.cfg.BrokerExpiry)
		if e.Conn != nil {
			_ = e.Conn.Close()
		}
	}
}

// onConnClose runs on the event loop: it only takes the route lock, which
// is never held across I/O.
func (ns *NameServer) onConnClose(c *server.Conn) {
	for _, addr := range ns.routes.connClosed(c) {
		ns.log.Info("broker connection closed, unregistered", logKeyAddr, addr, logKeyRemote, c.String())
	}
}
