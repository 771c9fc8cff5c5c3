// Command rocketmq-local runs a NameServer and one or more brokers in one
// process, for local development against the SDK or any RocketMQ client.
//
//	go run ./cmd/rocketmq-local
//
// starts a NameServer on 127.0.0.1:9876 and broker-a on 127.0.0.1:10911 with
// its store under ./rocketmq-data. Stopping with Ctrl-C (SIGINT) or SIGTERM
// shuts down cleanly; starting again on the same -data directory keeps every
// topic, message and consumer offset.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		var ue *usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errorLine is err as the one line rocketmq-local prints: one prefix,
// the module's "rocketmq: " prefixes of the wrapped errors dropped.
func errorLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "rocketmq: ")
	s = strings.ReplaceAll(s, ": rocketmq: ", ": ")
	return "rocketmq-local: " + strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// usageError is a command line that cannot run (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() + " (see rocketmq-local -h)" }
func (e *usageError) Unwrap() error { return e.err }

type options struct {
	namesrv       string
	broker        string
	data          string
	brokers       int
	slaves        int
	role          string
	cluster       string
	flush         string
	verbose       bool
	longPollCheck time.Duration
	shortPolling  time.Duration
	segmentSize   int64
	delayLevels   string
	timerPrec     time.Duration
	txInterval    time.Duration
	txTimeout     time.Duration
	txCheckMax    int
	propFilter    bool
	cpuProfile    string
	aclFile       string
	metrics       string // HTTP address of /metrics; "" serves none
	console       string // web console address; "off" or "" serves none
	maxConns      int
	maxPending    int
	maxOutbound   int
	maxStall      time.Duration
	offsetFlush   time.Duration
	tlsCert       string
	tlsKey        string
	tlsMode       string
	brokerConf    string          // -c: Java broker.conf
	namesrvConf   string          // -n: Java namesrv.conf
	namesrvAddr   string          // with -c: overrides namesrvAddr
	explicit      map[string]bool // flags given on the command line
}

// parseFlags reads the command line; -h prints the usage on usage.
// Errors are *usageError.
func parseFlags(args []string, usage io.Writer) (options, error) {
	o, err := parseArgs(args, usage)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		err = &usageError{err}
	}
	return o, err
}

func parseArgs(args []string, usage io.Writer) (options, error) {
	var o options
	fs := newFlagSet(&o, io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fs.Usage()
		}
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.explicit = explicitFlags(fs)
	if o.brokers < 1 || o.brokers > 26 {
		return o, fmt.Errorf("-brokers %d out of range 1..26", o.brokers)
	}
	if o.slaves < 0 || o.slaves > 4 {
		return o, fmt.Errorf("-slaves %d out of range 0..4", o.slaves)
	}
	if o.role != "ASYNC_MASTER" && o.role != "SYNC_MASTER" {
		return o, fmt.Errorf("-role must be ASYNC_MASTER or SYNC_MASTER, not %q", o.role)
	}
	if o.flush != "async" && o.flush != "sync" {
		return o, fmt.Errorf("-flush must be async or sync, not %q", o.flush)
	}
	if o.txInterval <= 0 || o.txTimeout <= 0 || o.txCheckMax < 1 {
		return o, errors.New("-transaction-check-interval, -transaction-timeout and -transaction-check-max must be positive")
	}
	if o.maxPending < 0 || o.maxOutbound < 0 || o.maxStall < 0 {
		return o, errors.New("-max-conn-pending, -max-conn-outbound and -max-conn-stall must not be negative")
	}
	if o.offsetFlush <= 0 {
		return o, errors.New("-offset-flush-interval must be positive")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return o, errors.New("-tls-cert and -tls-key go together")
	}
	if o.tlsMode != "" && o.tlsMode != "permissive" && o.tlsMode != "enforcing" {
		return o, fmt.Errorf("-tls-mode must be permissive or enforcing, not %q", o.tlsMode)
	}
	if o.tlsMode != "" && o.tlsCert == "" {
		return o, errors.New("-tls-mode needs -tls-cert and -tls-key")
	}
	if o.timerPrec < time.Millisecond {
		return o, fmt.Errorf("-timer-precision %v is below 1ms", o.timerPrec)
	}
	if o.console != "off" && o.console != "" {
		if _, _, err := net.SplitHostPort(o.console); err != nil {
			return o, fmt.Errorf("-console %q: %v", o.console, err)
		}
	}
	if o.metrics != "" {
		host, port, err := net.SplitHostPort(o.metrics)
		if err != nil {
			return o, fmt.Errorf("-metrics %q: %v", o.metrics, err)
		}
		if host == "" { // loopback unless a host is named
			o.metrics = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return o, nil
}

// newFlagSet defines the command's flags into o; the usage goes to out.
func newFlagSet(o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rocketmq-local", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: rocketmq-local [flags]\n\n"+
			"Runs a NameServer and one or more brokers in one process, or with -c / -n\n"+
			"a broker and a NameServer from Java's broker.conf / namesrv.conf.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.namesrv, "namesrv", "127.0.0.1:9876", "NameServer listen `ADDR`")
	fs.StringVar(&o.broker, "broker", "127.0.0.1:10911", "first broker's listen `ADDR`; broker i listens on port+10*i (port 0: random ports)")
	fs.StringVar(&o.data, "data", "./rocketmq-data", "store root; broker-a stores under `DIR`/broker-a")
	fs.IntVar(&o.brokers, "brokers", 1, "number of brokers (broker-a, broker-b, ...)")
	fs.IntVar(&o.slaves, "slaves", 0, "slaves per broker (brokerId 1..N, replicating over the HA port; slave i of a broker listens on its port+2*i)")
	fs.StringVar(&o.role, "role", "ASYNC_MASTER", "role of the masters: ASYNC_MASTER or SYNC_MASTER (answers a send once a slave has it)")
	fs.StringVar(&o.cluster, "cluster", "DefaultCluster", "cluster name")
	fs.StringVar(&o.flush, "flush", "async", "flush mode: async or sync")
	fs.BoolVar(&o.verbose, "v", false, "log server events to stderr")
	fs.DurationVar(&o.longPollCheck, "long-poll-check", 5*time.Second, "how often held pulls re-check their queue")
	fs.DurationVar(&o.shortPolling, "short-polling", 0, "if set, disable long polling and answer empty pulls after this long")
	fs.Int64Var(&o.segmentSize, "segment-size", 1<<30, "CommitLog segment file size in bytes")
	fs.StringVar(&o.delayLevels, "delay-levels", broker.DefaultDelayLevelString,
		"delay level table: delays of levels 1, 2, ... with units ms, s, m, h, d")
	fs.DurationVar(&o.timerPrec, "timer-precision", time.Second, "precision of timer messages (TIMER_DELAY_*, TIMER_DELIVER_MS)")
	fs.DurationVar(&o.txInterval, "transaction-check-interval", 60*time.Second, "how often undecided transactional half messages are looked at")
	fs.DurationVar(&o.txTimeout, "transaction-timeout", 6*time.Second, "age of a half message before its producer group is asked about it")
	fs.IntVar(&o.txCheckMax, "transaction-check-max", 15, "checks of one transaction before it is discarded")
	fs.BoolVar(&o.propFilter, "enable-property-filter", true,
		"filter SQL92 subscriptions by message properties (a Java broker's enablePropertyFilter, false there by default)")
	fs.StringVar(&o.aclFile, "acl-file", "", "enable ACL with the accounts of `FILE` (Java's plain_acl.yml format, reloaded when it changes)")
	fs.IntVar(&o.maxConns, "max-conns", 0, "open connections per server (0: three quarters of the open-files limit; negative: no cap)")
	fs.IntVar(&o.maxPending, "max-conn-pending", 0, "requests of one connection handled at once before its input is paused (0: 64)")
	fs.IntVar(&o.maxOutbound, "max-conn-outbound", 0, "reply bytes queued for one connection before its input is paused (0: 16 MiB)")
	fs.DurationVar(&o.maxStall, "max-conn-stall", 0, "how long a connection may stay paused before it is closed (0: 60s)")
	fs.DurationVar(&o.offsetFlush, "offset-flush-interval", 5*time.Second, "how often consumer offsets are written to disk")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve TLS on every port with the PEM certificate (chain) in `FILE`")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of -tls-cert in `FILE`")
	fs.StringVar(&o.tlsMode, "tls-mode", "", "with -tls-cert: permissive (TLS and plain on one port, Java's default) or enforcing (TLS only)")
	addConfigFlags(fs, o)
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of the whole run to `FILE` (ends at shutdown)")
	fs.StringVar(&o.metrics, "metrics", "", "serve the brokers' metrics for Prometheus at http://`ADDR`/metrics (host:port; no host means 127.0.0.1; default off)")
	fs.StringVar(&o.console, "console", defaultConsole, "serve the web console at http://`ADDR`/ (loopback only; off: none; the default port falls back to a free one when taken)")
	return fs
}

func run(args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h: the usage is printed
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.cpuProfile != "" {
		end, perr := startCPUProfile(o.cpuProfile)
		if perr != nil {
			return perr
		}
		defer func() { err = errors.Join(err, end()) }()
	}
	if o.brokerConf != "" || o.namesrvConf != "" {
		return serveJavaConf(ctx, o, stdout, stderr)
	}
	return serve(ctx, o, stdout, stderr)
}

// startCPUProfile profiles the process into path until the returned
// function is called.
func startCPUProfile(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// serve runs the servers until ctx is done, then shuts them down. The
// cluster is built by rmqtest.NewCluster, as tests build theirs.
func serve(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	opts := []rmqtest.Option{
		rmqtest.WithNameServerAddr(o.namesrv),
		rmqtest.WithBrokerAddr(o.broker),
		rmqtest.WithBrokers(o.brokers),
		rmqtest.WithSlaves(o.slaves),
		rmqtest.WithBrokerRole(o.role),
		rmqtest.WithClusterName(o.cluster),
		rmqtest.WithStoreDir(o.data),
		rmqtest.WithCommitLogSegmentSize(o.segmentSize),
		// The store's (Java's) sizes: a data directory written with them
		// must reopen.
		rmqtest.WithConsumeQueueEntries(0),
		rmqtest.WithIndexSize(0, 0),
		rmqtest.WithLongPollCheck(o.longPollCheck),
		rmqtest.WithDelayLevels(o.delayLevels),
		rmqtest.WithTimerPrecision(o.timerPrec),
		rmqtest.WithTransactionCheck(o.txInterval, o.txTimeout),
		rmqtest.WithTransactionCheckMax(o.txCheckMax),
		rmqtest.WithPropertyFilter(o.propFilter),
		rmqtest.WithLogger(logger),
		rmqtest.WithConnLimits(o.maxConns, o.maxPending, o.maxOutbound, o.maxStall),
	}
	if o.offsetFlush > 0 {
		opts = append(opts, rmqtest.WithOffsetFlushInterval(o.offsetFlush))
	}
	if o.shortPolling > 0 {
		opts = append(opts, rmqtest.WithShortPolling(o.shortPolling))
	}
	if o.flush == "sync" {
		opts = append(opts, rmqtest.WithSyncFlush())
	}
	if o.aclFile != "" {
		opts = append(opts, rmqtest.WithACLFile(o.aclFile))
	}
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		opts = append(opts, rmqtest.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
			rmqtest.WithTLSMode(o.tlsMode))
	}
	// A start that fails (a port in use, ...) removes the data directory
	// it created.
	fresh := willCreate(o.data)
	c, err := rmqtest.NewCluster(opts...)
	if err != nil {
		return errors.Join(err, fresh.remove())
	}
	up := false // once serving, the data is kept whatever happens
	defer func() {
		if err != nil && !up {
			err = errors.Join(err, fresh.remove())
		}
	}()
	stopMetrics := func() {}
	if o.metrics != "" {
		stop, addr, err := serveMetrics(o.metrics, c)
		if err != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return errors.Join(err, c.Close(sctx))
		}
		stopMetrics = stop
		fmt.Fprintf(stdout, "metrics listening on %s (http://%s/metrics)\n", addr, addr)
	}
	stopConsole := func() {}
	if o.console != "off" && o.console != "" {
		cred, err := consoleACL(o.aclFile)
		stop, addr := func() {}, ""
		if err == nil {
			stop, addr, err = startConsole(o.console, c.NameServerAddr(), !o.explicit["console"], logger, cred)
		}
		if err != nil {
			stopMetrics()
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return errors.Join(err, c.Close(sctx))
		}
		stopConsole = stop
		fmt.Fprintf(stdout, "console listening on %s (http://%s/)\n", addr, addr)
	}
	fmt.Fprintf(stdout, "namesrv listening on %s\n", c.NameServerAddr())
	for _, name := range c.BrokerNames() {
		fmt.Fprintf(stdout, "%s listening on %s (store %s)\n", name, c.BrokerAddr(name), c.StoreDir(name))
		for id := int64(1); id <= int64(o.slaves); id++ {
			fmt.Fprintf(stdout, "%s-s%d listening on %s (slave %d of %s, store %s)\n", name, id,
				c.BrokerAddrID(name, id), id, name, c.StoreDirID(name, id))
		}
	}
	up = true
	<-ctx.Done()
	fmt.Fprintln(stdout, "shutting down")
	stopConsole()
	stopMetrics()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Close(sctx)
}
