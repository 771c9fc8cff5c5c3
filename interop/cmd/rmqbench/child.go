package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

// childFlag, as the first argument, makes rmqbench the broker process of
// another rmqbench (-broker child): the client's CPU time is then measured
// without the broker's, and the broker's is read separately.
const childFlag = "-broker-child"

// brokerHost is the NameServer and broker of a run without -namesrv.
type brokerHost struct {
	addr string
	// cpu returns the broker's CPU time so far; nil when the broker
	// shares the client's process.
	cpu func() (time.Duration, error)
	// profile starts a CPU profile of the broker into path; nil when the
	// broker shares the client's process (-cpuprofile covers both).
	profile func(path string) (stop func() error, err error)
	close   func() error
}

// childReadyTimeout bounds the start of the broker process.
const childReadyTimeout = 30 * time.Second

func startBroker(ctx context.Context, cfg config, log io.Writer) (*brokerHost, error) {
	o := clusterOptions{syncFlush: cfg.flush, topic: cfg.topic, queues: cfg.queues}
	if o.queues == 0 {
		o.queues = defaultQueues
	}
	if cfg.broker == brokerInProcess {
		addr, stop, err := startInProcess(ctx, o)
		if err != nil {
			return nil, err
		}
		return &brokerHost{addr: addr, close: stop}, nil
	}
	return startChild(ctx, o, log)
}

// childBroker is the parent's end of the broker process: one request line
// out, one answer line back.
type childBroker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	mu  sync.Mutex
}

func startChild(ctx context.Context, o clusterOptions, log io.Writer) (*brokerHost, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-broker child: %w", err)
	}
	args := []string{childFlag, "-topic", o.topic, "-queues", strconv.Itoa(o.queues)}
	if o.syncFlush {
		args = append(args, "-flush")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = log
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("-broker child: %w", err)
	}
	c := &childBroker{cmd: cmd, in: in, out: bufio.NewReader(out)}
	ready := make(chan error, 1)
	var addr string
	go func() {
		line, err := c.out.ReadString('\n')
		if err == nil {
			var ok bool
			addr, ok = strings.CutPrefix(strings.TrimSpace(line), "ready ")
			if !ok {
				err = fmt.Errorf("broker process said %q", line)
			}
		}
		ready <- err
	}()
	timer := time.NewTimer(childReadyTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = errors.New("broker process not ready in time")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("-broker child: %w", err)
	}
	return &brokerHost{addr: addr, cpu: c.cpu, profile: c.profile, close: c.close}, nil
}

func (c *childBroker) call(req string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, req+"\n"); err != nil {
		return "", fmt.Errorf("broker process: %w", err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("broker process: %w", err)
	}
	line = strings.TrimSpace(line)
	if msg, bad := strings.CutPrefix(line, "err "); bad {
		return "", fmt.Errorf("broker process: %s", msg)
	}
	return line, nil
}

func (c *childBroker) cpu() (time.Duration, error) {
	line, err := c.call("cpu")
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimPrefix(line, "cpu "), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("broker process cpu answer %q", line)
	}
	return time.Duration(ns), nil
}

func (c *childBroker) profile(path string) (func() error, error) {
	if strings.ContainsAny(path, "\r\n") {
		return nil, errors.New("-broker-cpuprofile: path with a line break")
	}
	if _, err := c.call("prof " + path); err != nil {
		return nil, err
	}
	return func() error { _, err := c.call("unprof"); return err }, nil
}

// close ends the broker process: closing its stdin makes it stop its
// cluster and exit.
func (c *childBroker) close() error {
	c.in.Close()
	return c.cmd.Wait()
}

// runBrokerChild is the broker process: it starts the cluster, says
// "ready <namesrv>", answers requests on stdin until stdin closes, then
// stops the cluster.
func runBrokerChild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Ctrl-C reaches the whole process group: the broker stops when the
	// parent closes its stdin, so that it removes its store first.
	signal.Ignore(os.Interrupt)
	var o clusterOptions
	fs := newChildFlags(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()
	addr, stop, err := startInProcess(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "rmqbench broker:", err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(stderr, "rmqbench broker: stopping:", err)
		}
	}()
	fmt.Fprintf(stdout, "ready %s\n", addr)
	var prof func() error
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "cpu":
			d, err := processCPU()
			if err != nil {
				fmt.Fprintf(stdout, "err %v\n", err)
				continue
			}
			fmt.Fprintf(stdout, "cpu %d\n", int64(d))
		case "prof":
			if prof != nil {
				fmt.Fprintln(stdout, "err profile already running")
				continue
			}
			stop, err := startCPUProfile(arg)
			if err != nil {
				fmt.Fprintf(stdout, "err %v\n", err)
				continue
			}
			prof = stop
			fmt.Fprintln(stdout, "ok")
		case "unprof":
			if prof == nil {
				fmt.Fprintln(stdout, "err no profile running")
				continue
			}
			err := prof()
			prof = nil
			if err != nil {
				fmt.Fprintf(stdout, "err %v\n", err)
				continue
			}
			fmt.Fprintln(stdout, "ok")
		default:
			fmt.Fprintf(stdout, "err unknown request %q\n", cmd)
		}
	}
	if prof != nil {
		prof()
	}
	return 0
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// allocProfile returns a stop that writes the allocation profile to path.
func allocProfile(path string) (stop func() error) {
	return func() error {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("allocation profile: %w", err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("allocation profile: %w", err)
		}
		return f.Close()
	}
}
