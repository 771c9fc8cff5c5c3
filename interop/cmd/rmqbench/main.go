// Command rmqbench measures one client (the official Go client or ours)
// against a NameServer + broker and prints ONE JSON line with the result:
//
//	{"client":"official","mode":"sync","callers":8,"msgs":120345,"seconds":10.0,
//	 "msgs_per_s":12034.5,"p50_us":512,"p99_us":2400,"client_cpu_us_per_msg":31.2,
//	 "broker_cpu_us_per_msg":4.1,"errors":0}
//
// Modes: sync, async and oneway send one message per operation; batch
// sends -batch messages per SendSync; consume preloads -backlog messages
// and measures a push consumer draining them; e2e runs a push consumer
// while -rate messages per second are sent asynchronously and measures
// each message's time from send to handler; tx runs one transaction per
// operation with the client's transactional producer, whose local
// transaction commits at once (see tx.go). -orderly runs the client's
// orderly push consumer in consume and e2e modes, and -queues sets the
// topic's queue count. Latencies are per operation
// (a whole batch counts once) in the send modes, per message in e2e mode,
// and not measured in consume mode.
//
// client_cpu_us_per_msg is the user+system CPU of this process (getrusage
// RUSAGE_SELF) over the measured phase divided by msgs; in e2e mode it
// includes the producer's. Without -namesrv the NameServer and broker run
// in a child process (this binary re-executed with a hidden first
// argument), whose CPU over the same phase is broker_cpu_us_per_msg; with
// -broker inprocess they share this process, and its CPU figure includes
// theirs.
//
// client_allocs_per_msg and client_alloc_bytes_per_msg are the heap
// allocations of this process over the measured phase divided by msgs.
//
// Pull mode (see pull.go) preloads -backlog messages (1,000,000 by
// default) with our producer, then drains them with each client of
// -client in turn (ours,official by default), each client's lite pull
// consumer in a new group from offset 0 with the same -pull-batch, and
// prints one JSON line per client.
//
// Flags are described by rmqbench -h. Progress and errors go to stderr;
// stdout carries only the JSON lines.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(runBrokerChild(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintln(stderr, "rmqbench:", err)
		return 2
	}
	res, err := bench(ctx, cfg, stderr)
	for _, r := range res {
		if werr := writeResult(stdout, r); werr != nil {
			fmt.Fprintln(stderr, "rmqbench:", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "rmqbench:", err)
		return 1
	}
	return 0
}
