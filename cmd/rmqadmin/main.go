// Command rmqadmin looks inside and manages a RocketMQ cluster from the
// command line, with the subcommands and main flags of Java's mqadmin
// (clusterList, topicList, updateTopic, consumerProgress, queryMsgByKey,
// ...), plus send and consume for quick manual tests.
//
//	rmqadmin -n 127.0.0.1:9876 topicStatus -t Orders
//	rmqadmin consumerProgress -n 127.0.0.1:9876 -g OrderGroup --output json
//
// Tables are printed by default, one JSON document with --output json
// (anywhere on the line) or -o json (before the command only: after it,
// -o is updateTopic's order flag as in mqadmin). The exit status is 0 on
// success, 1 when the command fails and 2 on a usage error.
// See docs/rmqadmin.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	// orderFlag: -o is the command's own (updateTopic's order).
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
	// The output format is known before parsing, so that even a command
	// line that does not parse fails in JSON when JSON was asked for.
	jsonOut := wantsJSON(args)
	fail := func(stderr io.Writer, err error) int { return failWith(stderr, err, jsonOut || g.output == "json") }
	root := flag.NewFlagSet("rmqadmin", flag.ContinueOnError)
	root.SetOutput(io.Discard)
	g.register(root, true)
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
		printCommandUsage(stdout, c)
		return exitOK
	}
	c := lookup(name)
	if c == nil {
		return fail(stderr, usagef("unknown command %q (see rmqadmin help)", name))
	}
	fs, act, misplaced := c.flagSet(g)
	if err := fs.Parse(rest); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			printCommandUsage(stdout, c)
			return exitOK
		case misplaced.set && c.orderFlag:
			jsonOut = jsonOut || misplaced.v == "json"
			return fail(stderr, usagef("%s: -o %s: -o is the order flag here (true or false, as in mqadmin); the output format is --output %s", name, misplaced.v, misplaced.v))
		case misplaced.set:
			jsonOut = jsonOut || misplaced.v == "json"
			return fail(stderr, usagef("%s: -o %s after the command: the output format is --output %s there (-o only before the command)", name, misplaced.v, misplaced.v))
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
// that they may follow the command name as in mqadmin. A command without
// a -o of its own refuses -o after its name, and one with -o refuses an
// output format as its value; misplaced records either.
func (c *command) flagSet(g *globals) (*flag.FlagSet, action, *misplacedOutput) {
	fs := flag.NewFlagSet("rmqadmin "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	act := c.setup(fs)
	g.register(fs, false)
	m := new(misplacedOutput)
	if f := fs.Lookup("o"); f != nil {
		f.Value = &orderValue{f.Value, m}
	} else {
		fs.Var(m, "o", "")
	}
	return fs, act, m
}

// misplacedOutput is -o after the name of a command that has no -o.
type misplacedOutput struct {
	v   string
	set bool
}

func (m *misplacedOutput) String() string { return "" }

func (m *misplacedOutput) Set(v string) error {
	m.v, m.set = v, true
	return errors.New("misplaced -o")
}

// orderValue is a command's own -o that refuses an output format.
type orderValue struct {
	flag.Value
	m *misplacedOutput
}

func (o *orderValue) Set(v string) error {
	if v == "json" || v == "table" {
		return o.m.Set(v)
	}
	return o.Value.Set(v)
}

// wantsJSON reports whether args ask for JSON output with --output (or
// -output) anywhere, or with -o before the command name.
func wantsJSON(args []string) bool {
	beforeCommand := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			beforeCommand = false
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasVal && i+1 < len(args) && (name == "output" || beforeCommand && !rootBoolFlag(name)) {
			i++
			val = args[i]
		}
		if val == "json" && (name == "output" || name == "o" && beforeCommand) {
			return true
		}
	}
	return false
}

// rootBoolFlag reports whether name is a global flag that takes no value.
func rootBoolFlag(name string) bool {
	switch name {
	case "tls", "tls-insecure", "h", "help":
		return true
	}
	return false
}

// failWith writes err as one line on stderr, a JSON object when asJSON,
// and returns its exit status.
func failWith(stderr io.Writer, err error, asJSON bool) int {
	msg := strings.TrimPrefix(err.Error(), "rocketmq: ")
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	msg = strings.ReplaceAll(msg, "rocketmq: ", "")
	code := exitError
	var ue *usageError
	if errors.As(err, &ue) {
		code = exitUsage
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Error      string `json:"error"`
			ExitStatus int    `json:"exitStatus"`
		}{"rmqadmin: " + msg, code})
		fmt.Fprintf(stderr, "%s\n", b)
	} else {
		fmt.Fprintf(stderr, "rmqadmin: %s\n", msg)
	}
	return code
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
Global flags (before or after the command; -o before it only):
`)
	fs := flag.NewFlagSet("rmqadmin", flag.ContinueOnError)
	fs.SetOutput(w)
	newGlobals().register(fs, true)
	fs.PrintDefaults()
	fmt.Fprint(w, `
JSON output: --output json before or after the command; -o json only before
it (after the command, -o is updateTopic's order flag, as in mqadmin).
With JSON output a failure is one JSON object on stderr:
{"error":"rmqadmin: ...","exitStatus":1}.
`)
}

func printCommandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "rmqadmin %s: %s\n\nUsage:\n\trmqadmin %s [flags]\n\nFlags:\n", c.name, c.synopsis, c.name)
	// The command's own flags, as its setup defines them.
	show := flag.NewFlagSet("", flag.ContinueOnError)
	show.SetOutput(w)
	c.setup(show)
	show.PrintDefaults()
	if c.orderFlag {
		fmt.Fprint(w, "\nThe output format is --output json here: -o is the order flag.\n")
	}
	fmt.Fprint(w, "\nGlobal flags: see rmqadmin help; after the command, the output format is --output.\n")
}
