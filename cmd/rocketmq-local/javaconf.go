package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/broker"
	"github.com/go-rocketmq/rocketmq/internal/javaprops"
	"github.com/go-rocketmq/rocketmq/internal/namesrv"
	"github.com/go-rocketmq/rocketmq/internal/store"
)

// addConfigFlags defines -c and -n, the Java configuration files.
func addConfigFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.brokerConf, "c", "", "run one broker configured by the Java broker.conf `FILE` "+
		"(with its namesrvAddr set: the broker alone; other flags given override the file)")
	fs.StringVar(&o.namesrvAddr, "namesrv-addr", "", "with -c: the NameServers (`ADDR`;ADDR...) the broker registers with, overriding namesrvAddr")
	fs.StringVar(&o.namesrvConf, "n", "", "run a NameServer configured by the Java namesrv.conf `FILE` (alone unless -c is given)")
}

// explicitFlags are the names of the flags given on the command line.
func explicitFlags(fs *flag.FlagSet) map[string]bool {
	m := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// readProps reads a Java properties file.
func readProps(path string) ([]javaprops.Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	es, err := javaprops.Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}

// storePathKeys are replaced as a whole by -data.
var storePathKeys = map[string]bool{
	"storePathRootDir": true, "storePathCommitLog": true, "storePathConsumeQueue": true,
	"storePathIndex": true, "storeCheckpoint": true, "abortFile": true,
}

// brokerConfigFromFile builds the broker's Config from a broker.conf, as
// Java's BrokerStartup reads it with MixAll.properties2Object, then
// applies the flags given. Unknown keys and keys without effect here are
// reported to warn; a bad value is an error naming the key.
func brokerConfigFromFile(o options, warn io.Writer) (broker.Config, error) {
	es, err := readProps(o.brokerConf)
	if err != nil {
		return broker.Config{}, err
	}
	cfg := broker.Config{ListenAddr: "127.0.0.1:10911", StoreDir: defaultJavaStoreDir(), ConfigPath: o.brokerConf}
	// The root first: the other store paths are checked against it.
	ordered := make([]javaprops.Entry, 0, len(es))
	for _, e := range es {
		if e.Key == "storePathRootDir" {
			ordered = append([]javaprops.Entry{e}, ordered...)
		} else {
			ordered = append(ordered, e)
		}
	}
	for _, e := range ordered {
		if o.explicit["data"] && storePathKeys[e.Key] {
			continue
		}
		noEffect, err := cfg.SetProperty(e.Key, e.Value)
		var pe *broker.PropertyError
		switch {
		case errors.Is(err, broker.ErrUnknownProperty):
			fmt.Fprintf(warn, "rocketmq-local: %s line %d: unknown key %s ignored\n", o.brokerConf, e.Line, e.Key)
		case errors.As(err, &pe):
			return cfg, fmt.Errorf("%s line %d: %s=%q: %v", o.brokerConf, e.Line, pe.Key, pe.Value, pe.Err)
		case err != nil:
			return cfg, err
		case noEffect:
			fmt.Fprintf(warn, "rocketmq-local: %s line %d: %s=%s has no effect in this broker\n", o.brokerConf, e.Line, e.Key, e.Value)
		}
	}
	return cfg, applyBrokerFlags(&cfg, o)
}

// defaultJavaStoreDir is Java's storePathRootDir default, ~/store.
func defaultJavaStoreDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return "store"
	}
	return filepath.Join(home, "store")
}

// applyBrokerFlags lets the flags given on the command line override the
// file.
func applyBrokerFlags(cfg *broker.Config, o options) error {
	set := o.explicit
	if set["brokers"] && o.brokers != 1 {
		return errors.New("-c runs one broker: -brokers does not apply")
	}
	if set["slaves"] && o.slaves != 0 {
		return errors.New("-c runs one broker: -slaves does not apply (run each slave's conf with -c)")
	}
	if set["broker"] {
		cfg.ListenAddr = o.broker
		if _, port, err := net.SplitHostPort(o.broker); err == nil && port == "0" {
			cfg.HAListenPort = 0   // a free HA port beside a free listen port
			cfg.FastListenPort = 0 // the VIP channel below it
		}
	}
	if set["data"] {
		cfg.StoreDir = o.data
	}
	if o.namesrvAddr != "" {
		if _, err := cfg.SetProperty("namesrvAddr", o.namesrvAddr); err != nil {
			return fmt.Errorf("-namesrv-addr: %w", err)
		}
	}
	if set["cluster"] {
		cfg.ClusterName = o.cluster
	}
	if set["flush"] {
		cfg.FlushMode = store.FlushAsync
		if o.flush == "sync" {
			cfg.FlushMode = store.FlushSync
		}
	}
	if set["segment-size"] {
		cfg.CommitLogSegmentSize = o.segmentSize
	}
	if set["delay-levels"] {
		cfg.DelayLevels = o.delayLevels
	}
	if set["timer-precision"] {
		cfg.TimerPrecision = o.timerPrec
	}
	if set["transaction-check-interval"] {
		cfg.TransactionCheckInterval = o.txInterval
	}
	if set["transaction-timeout"] {
		cfg.TransactionTimeout = o.txTimeout
	}
	if set["transaction-check-max"] {
		cfg.TransactionCheckMax = o.txCheckMax
	}
	if set["enable-property-filter"] {
		cfg.EnablePropertyFilter = o.propFilter
	}
	if set["long-poll-check"] {
		cfg.LongPollCheck = o.longPollCheck
	}
	if o.shortPolling > 0 {
		cfg.DisableLongPolling, cfg.ShortPollingTime = true, o.shortPolling
	}
	if o.aclFile != "" {
		cfg.AclEnable, cfg.AclFile = true, o.aclFile
	} else if cfg.AclEnable {
		// Java reads conf/plain_acl.yml beside broker.conf's usual place.
		cfg.AclFile = filepath.Join(filepath.Dir(o.brokerConf), "plain_acl.yml")
	}
	return nil
}

// namesrvFromFile reads a namesrv.conf: the listen address and the keys
// of Java's NamesrvConfig this NameServer has.
func namesrvFromFile(o options, warn io.Writer) (namesrv.Config, string, error) {
	var cfg namesrv.Config
	addr := "127.0.0.1:9876"
	es, err := readProps(o.namesrvConf)
	if err != nil {
		return cfg, "", err
	}
	for _, e := range es {
		v := strings.TrimSpace(e.Value)
		bad := func(why string) error {
			return fmt.Errorf("%s line %d: %s=%q: %s", o.namesrvConf, e.Line, e.Key, e.Value, why)
		}
		switch e.Key {
		case "listenPort":
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > 65535 {
				return cfg, "", bad("want a port 0..65535")
			}
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		case "kvConfigPath":
			cfg.KVConfigPath = v
		case "orderMessageEnable":
			switch strings.ToLower(v) {
			case "true":
				cfg.OrderMessageEnable = true
			case "false":
				cfg.OrderMessageEnable = false
			default:
				return cfg, "", bad("want true or false")
			}
		case "rocketmqHome", "configStorePath", "productEnvName", "clusterTest":
			fmt.Fprintf(warn, "rocketmq-local: %s line %d: %s has no effect in this NameServer\n", o.namesrvConf, e.Line, e.Key)
		default:
			fmt.Fprintf(warn, "rocketmq-local: %s line %d: unknown key %s ignored\n", o.namesrvConf, e.Line, e.Key)
		}
	}
	if o.explicit["namesrv"] {
		addr = o.namesrv
	}
	return cfg, addr, nil
}

// serveJavaConf runs what -c and -n ask for: a NameServer (-n, or -c
// without namesrvAddr) and a broker (-c) registering with namesrvAddr or
// with that NameServer.
func serveJavaConf(ctx context.Context, o options, stdout, stderr io.Writer) error {
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	var bcfg broker.Config
	if o.brokerConf != "" {
		var err error
		if bcfg, err = brokerConfigFromFile(o, stderr); err != nil {
			return err
		}
		bcfg.Logger = logger
	}
	var ns *namesrv.NameServer
	if o.namesrvConf != "" || (o.brokerConf != "" && len(bcfg.NameServers) == 0) {
		ncfg, addr := namesrv.Config{}, o.namesrv
		if o.namesrvConf != "" {
			var err error
			if ncfg, addr, err = namesrvFromFile(o, stderr); err != nil {
				return err
			}
		}
		ncfg.Logger = logger
		var err error
		if ns, err = namesrv.New(ncfg); err != nil {
			return err
		}
		if err := ns.Start(addr); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "namesrv listening on %s\n", ns.Addr())
		if len(bcfg.NameServers) == 0 {
			bcfg.NameServers = []string{ns.Addr()}
		}
	}
	var b *broker.Broker
	closeAll := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var errs []error
		if b != nil {
			errs = append(errs, b.Close(sctx))
		}
		if ns != nil {
			errs = append(errs, ns.Close(sctx))
		}
		return errors.Join(errs...)
	}
	if o.brokerConf != "" {
		// A broker that fails to start removes the store directory it
		// created.
		fresh := willCreate(bcfg.StoreDir)
		var err error
		if b, err = broker.New(bcfg); err != nil {
			return errors.Join(err, closeAll(), fresh.remove())
		}
		if err := b.Start(); err != nil {
			return errors.Join(err, closeAll(), fresh.remove())
		}
		fmt.Fprintf(stdout, "%s listening on %s (store %s)\n", b.Name(), b.Addr(), bcfg.StoreDir)
		if a := b.HAAddr(); a != "" {
			fmt.Fprintf(stdout, "%s-ha listening on %s (%s)\n", b.Name(), a, b.Role())
		}
	}
	stopConsole := func() {}
	if o.console != "off" && o.console != "" && len(bcfg.NameServers) > 0 {
		aclFile := ""
		if bcfg.AclEnable {
			aclFile = bcfg.AclFile
		}
		cred, err := consoleACL(aclFile)
		stop, addr := func() {}, ""
		if err == nil {
			stop, addr, err = startConsole(o.console, bcfg.NameServers[0], !o.explicit["console"], logger, cred)
		}
		if err != nil {
			return errors.Join(err, closeAll())
		}
		stopConsole = stop
		fmt.Fprintf(stdout, "console listening on %s (http://%s/)\n", addr, addr)
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "shutting down")
	stopConsole()
	return closeAll()
}
