package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// Client names accepted by -client.
const (
	clientOfficial = "official"
	clientOurs     = "ours"
	// clientFloor drains with bare pulls that only count records
	// (consume mode only): what the broker and loopback can deliver.
	clientFloor = "floor"
)

// Modes accepted by -mode.
const (
	modeSync    = "sync"
	modeAsync   = "async"
	modeOneway  = "oneway"
	modeBatch   = "batch"
	modeConsume = "consume"
	modeE2E     = "e2e"
	modeTx      = "tx"   // transactions committing at once, one per operation (tx.go)
	modePull    = "pull" // lite pull consumers draining one backlog in turn (pull.go)
)

// pullClientsDefault is -client in pull mode when not given.
const pullClientsDefault = clientOurs + "," + clientOfficial

// Where a run without -namesrv puts its NameServer and broker (-broker).
const (
	brokerChild     = "child"
	brokerInProcess = "inprocess"
)

var errHelp = errors.New("help requested")

type config struct {
	namesrv   string // "" = start an in-process cluster
	client    string
	mode      string
	callers   int
	batch     int
	size      int
	duration  time.Duration
	topic     string
	flush     bool
	window    int // async: outstanding sends per caller
	backlog   int // consume: messages produced before the consumer starts
	verbose   bool
	cpuprof   string // write a CPU profile of the measured phase here
	memprof   string // write an allocation profile at the end of the measured phase here
	broker    string // brokerChild or brokerInProcess (without namesrv)
	bprof     string // write a CPU profile of the broker process here
	rate      int    // e2e: messages offered per second
	cbatch    int    // consume and e2e: messages per handler call (0: the client's default)
	orderly   bool   // consume and e2e: the client's orderly push consumer
	queues    int    // queues of the topic (0: 4 in process, the cluster's own with -namesrv)
	pullBatch int    // pull: messages per pull, the same for every client
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("rmqbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.namesrv, "namesrv", "", "NameServer `addr`ess (host:port; several joined by ';'); empty starts an in-process NameServer and broker")
	fs.StringVar(&c.client, "client", clientOfficial, "client to measure: official|ours, or floor (consume mode: bare pulls that only count records, with -callers pulls in flight per queue); pull mode: the clients to run in turn, comma-separated (default ours,official)")
	fs.StringVar(&c.mode, "mode", modeSync, "sync|async|oneway|batch|consume|e2e|tx|pull")
	fs.IntVar(&c.callers, "callers", 1, "concurrent callers (goroutines sending); consume and e2e: consumer goroutines; pull: goroutines calling Poll")
	fs.IntVar(&c.batch, "batch", 32, "messages per batch in batch mode (and per send while preloading for consume)")
	fs.IntVar(&c.size, "size", 1024, "message body size in `bytes`")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured time for send and e2e modes; consume: the longest the drain may take")
	fs.StringVar(&c.topic, "topic", "rmqbench", "topic; consume and e2e modes without an explicit -topic use a fresh topic per run")
	fs.BoolVar(&c.flush, "flush", false, "run the in-process broker with synchronous disk flush (only without -namesrv)")
	fs.IntVar(&c.window, "window", 64, "async mode: sends each caller keeps outstanding")
	fs.IntVar(&c.backlog, "backlog", 100000, "consume and pull modes: messages produced before the consumer starts (pull mode default 1000000)")
	fs.IntVar(&c.pullBatch, "pull-batch", 32, "pull mode: messages per pull for every client")
	fs.BoolVar(&c.verbose, "v", false, "keep the official client's logging at info level")
	fs.StringVar(&c.cpuprof, "cpuprofile", "", "write a CPU profile of the measured phase (after the warm-up) to `file`")
	fs.StringVar(&c.memprof, "memprofile", "", "write an allocation profile (allocations since the start, warm-up included) at the end of the measured phase to `file`")
	fs.StringVar(&c.broker, "broker", brokerChild, "without -namesrv: run the NameServer and broker in a child process (child), so that client and broker CPU are measured apart, or in this process (inprocess)")
	fs.StringVar(&c.bprof, "broker-cpuprofile", "", "-broker child: write a CPU profile of the broker process over the measured phase to `file`")
	fs.IntVar(&c.rate, "rate", 10000, "e2e mode: messages offered per second")
	fs.IntVar(&c.cbatch, "consume-batch", 0, "consume and e2e modes: most messages per handler call (0: the client's default, 1 for both)")
	fs.BoolVar(&c.orderly, "orderly", false, "consume and e2e modes: run the client's orderly push consumer (one handler call at a time per queue, broker queue locks) instead of the concurrent one")
	fs.IntVar(&c.queues, "queues", 0, "queues of the topic, created before the run (0: 4 without -namesrv; with -namesrv the topic is left to the cluster)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.mode == modePull {
		if !set["client"] {
			c.client = pullClientsDefault
		}
		if !set["backlog"] {
			c.backlog = 1000000
		}
		if !set["duration"] {
			c.duration = 10 * time.Minute
		}
	}
	if (c.mode == modeConsume || c.mode == modeE2E || c.mode == modePull) && !set["topic"] {
		// A fresh topic per run, so the drain never meets an old backlog.
		c.topic = fmt.Sprintf("%s_%d", c.topic, time.Now().UnixNano())
	}
	return c, c.validate()
}

func (c config) validate() error {
	if c.mode == modePull {
		if _, err := pullClients(c.client); err != nil {
			return err
		}
		switch {
		case c.pullBatch < 1 || c.pullBatch > 1024:
			return fmt.Errorf("-pull-batch %d: want 1..1024", c.pullBatch)
		case c.orderly:
			return errors.New("-orderly is for consume and e2e modes, not pull")
		}
	}
	switch c.client {
	case clientOfficial, clientOurs:
	case clientFloor:
		if c.mode != modeConsume {
			return fmt.Errorf("-client floor measures consume mode only, not %q", c.mode)
		}
	default:
		if c.mode != modePull {
			return fmt.Errorf("-client %q: want official, ours or floor", c.client)
		}
	}
	switch c.mode {
	case modeSync, modeAsync, modeOneway, modeBatch, modeConsume, modeE2E, modeTx, modePull:
	default:
		return fmt.Errorf("-mode %q: want sync, async, oneway, batch, consume, e2e, tx or pull", c.mode)
	}
	switch c.broker {
	case brokerChild, brokerInProcess:
	default:
		return fmt.Errorf("-broker %q: want child or inprocess", c.broker)
	}
	switch {
	case c.callers < 1:
		return fmt.Errorf("-callers %d: want at least 1", c.callers)
	case c.batch < 1:
		return fmt.Errorf("-batch %d: want at least 1", c.batch)
	case c.size < 1:
		return fmt.Errorf("-size %d: want at least 1", c.size)
	case c.duration <= 0:
		return fmt.Errorf("-duration %v: want a positive duration", c.duration)
	case c.topic == "":
		return errors.New("-topic must not be empty")
	case c.window < 1:
		return fmt.Errorf("-window %d: want at least 1", c.window)
	case (c.mode == modeConsume || c.mode == modePull) && c.backlog < 1:
		return fmt.Errorf("-backlog %d: want at least 1", c.backlog)
	case c.cbatch < 0 || c.cbatch > 1024:
		return fmt.Errorf("-consume-batch %d: want 0..1024", c.cbatch)
	case c.orderly && c.mode != modeConsume && c.mode != modeE2E:
		return fmt.Errorf("-orderly is for consume and e2e modes, not %q", c.mode)
	case c.orderly && c.client == clientFloor:
		return errors.New("-orderly needs a push consumer: -client ours or official")
	case c.queues < 0 || c.queues > 1024:
		return fmt.Errorf("-queues %d: want 0..1024", c.queues)
	case c.mode == modeE2E && c.rate < 1:
		return fmt.Errorf("-rate %d: want at least 1", c.rate)
	case c.bprof != "" && (c.namesrv != "" || c.broker != brokerChild):
		return errors.New("-broker-cpuprofile needs the broker in a child process (no -namesrv, -broker child)")
	case c.flush && c.namesrv != "":
		return errors.New("-flush sets the in-process broker's flush mode; it cannot change a broker reached by -namesrv")
	}
	return nil
}

// newChildFlags parses the arguments of the broker process (childFlag).
func newChildFlags(o *clusterOptions, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("rmqbench "+childFlag, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.topic, "topic", "rmqbench", "topic created before the run")
	fs.BoolVar(&o.syncFlush, "flush", false, "synchronous disk flush")
	fs.IntVar(&o.queues, "queues", 4, "queues of the topic")
	return fs
}
