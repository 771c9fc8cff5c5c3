// Command rmqadmin looks inside and manages a RocketMQ cluster from the
// command line, with the subcommands and main flags of Java's mqadmin
// (clusterList, topicList, updateTopic, consumerProgress, queryMsgByKey,
// ...), plus send and consume for quick manual tests.
//
//	rmqadmin -n 127.0.0.1:9876 topicStatus -t Orders
//	rmqadmin consumerProgress -n 127.0.0.1:9876 -g OrderGroup -o json
//
// Tables are printed by default, one JSON document with -o json. The exit
// status is 0 on success, 1 when the command fails and 2 on a usage error.
// See docs/rmqadmin.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usageError is a command line that cannot run: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// command is one subcommand. setup registers its own flags on fs and
// returns what runs it once the flags are parsed.
type command struct {
	name     string
	synopsis string
	setup    func(fs *flag.FlagSet) action
	// orderFlag: -o is the command's own (updateTopic's order), so the
	// output format is only -output there.
	orderFlag bool
	// untimed: the command serves until interrupted; -timeout bounds
	// each call it makes, not the command.
	untimed bool
}

type action func(ctx context.Context, a *app) error

func commands() []*command {
	return []*command{
		clusterListCmd, brokerStatusCmd, getBrokerConfigCmd, updateBrokerConfigCmd,
		topicListCmd, topicRouteCmd, topicStatusCmd, updateTopicCmd, deleteTopicCmd,
		updateSubGroupCmd, deleteSubGroupCmd, consumerProgressCmd, consumerConnectionCmd,
		producerConnectionCmd, resetOffsetByTimeCmd,
		queryMsgByKeyCmd, queryMsgByIdCmd, sendCmd, consumeCmd, consoleCmd,
	}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs the command line args (without the program name) and returns
// the exit status. env reads the environment (os.Getenv).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) string) int {
	g := newGlobals()
	root := flag.NewFlagSet("rmqadmin", flag.ContinueOnError)
	root.SetOutput(io.Discard)
	g.register(root, false)
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return exitOK
		}
		return fail(stderr, usagef("%v (see rmqadmin help)", err))
	}
	rest := root.Args()
	if len(rest) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		if len(rest) == 0 {
			printUsage(stdout)
			return exitOK
		}
		c := lookup(rest[0])
		if c == nil {
			return fail(stderr, usagef("unknown command %q (see rmqadmin help)", rest[0]))
		}
		fs, _ := c.flagSet(g)
		printCommandUsage(stdout, c, fs)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		return fail(stderr, usagef("unknown command %q (see rmqadmin help)", name))
	}
	fs, act := c.flagSet(g)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandUsage(stdout, c, fs)
			return exitOK
		}
		return fail(stderr, usagef("%s: %v (see rmqadmin %s -h)", name, err, name))
	}
	if fs.NArg() > 0 {
		return fail(stderr, usagef("%s: unexpected argument %q (see rmqadmin %s -h)", name, fs.Arg(0), name))
	}
	a, err := newApp(g, stdout, env)
	if err != nil {
		return fail(stderr, err)
	}
	var cancel context.CancelFunc
	if c.untimed {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
	}
	defer cancel()
	err = act(ctx, a)
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			ue.msg = name + ": " + ue.msg + " (see rmqadmin " + name + " -h)"
		}
		return fail(stderr, err)
	}
	return exitOK
}

// flagSet returns the command's flag set, with the global flags too so
// that they may follow the command name as in mqadmin.
func (c *command) flagSet(g *globals) (*flag.FlagSet, action) {
	fs := flag.NewFlagSet("rmqadmin "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	act := c.setup(fs)
	g.register(fs, c.orderFlag)
	return fs, act
}

// fail writes err as one line on stderr and returns its exit status.
func fail(stderr io.Writer, err error) int {
	msg := strings.TrimPrefix(err.Error(), "rocketmq: ")
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	msg = strings.ReplaceAll(msg, "rocketmq: ", "")
	fmt.Fprintf(stderr, "rmqadmin: %s\n", msg)
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `rmqadmin manages a RocketMQ cluster (the commands of Java's mqadmin).

Usage:
	rmqadmin [global flags] <command> [flags]
	rmqadmin help <command>

Commands:
`)
	tw := newTable(w)
	for _, c := range commands() {
		tw.row("  "+c.name, c.synopsis)
	}
	_ = tw.flush()
	fmt.Fprint(w, `
Global flags (before or after the command):
`)
	fs := flag.NewFlagSet("rmqadmin", flag.ContinueOnError)
	fs.SetOutput(w)
	newGlobals().register(fs, false)
	fs.PrintDefaults()
}

func printCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "rmqadmin %s: %s\n\nUsage:\n\trmqadmin %s [flags]\n\nFlags:\n", c.name, c.synopsis, c.name)
	global := make(map[string]bool)
	gfs := flag.NewFlagSet("", flag.ContinueOnError)
	newGlobals().register(gfs, c.orderFlag)
	gfs.VisitAll(func(f *flag.Flag) { global[f.Name] = true })
	var own []string
	fs.VisitAll(func(f *flag.Flag) {
		if !global[f.Name] {
			own = append(own, f.Name)
		}
	})
	sort.Strings(own)
	show := flag.NewFlagSet("", flag.ContinueOnError)
	show.SetOutput(w)
	for _, n := range own {
		f := fs.Lookup(n)
		show.Var(f.Value, f.Name, f.Usage)
	}
	show.PrintDefaults()
	fmt.Fprint(w, "\nGlobal flags: see rmqadmin help.\n")
}
