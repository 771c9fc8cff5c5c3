package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// officialChildFlag, as the first argument, makes the test binary an
// official orderly consumer (runOfficialOrderlyChild) instead of running
// tests. The official orderly consumer has data races of its own; in a
// process of its own, with the race detector told not to fail the process
// (GORACE exitcode=0), a -race build of these tests can still run it next
// to ours, whose races the parent's detector does catch.
const officialChildFlag = "-official-orderly-child"

// childCall is one handler call of the child, one JSON line on its stdout.
// Times are wall-clock Unix nanoseconds, comparable across the processes.
type childCall struct {
	Broker string     `json:"b"`
	Queue  int        `json:"q"`
	Start  int64      `json:"s"`
	End    int64      `json:"e"`
	Msgs   [][]string `json:"m"` // key, sequence number
}

// runOfficialOrderlyChild runs an official orderly push consumer until
// stdin says "stop" or closes, reporting each handler call on stdout;
// it says "stopped" when Shutdown has returned.
func runOfficialOrderlyChild(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(officialChildFlag, flag.ContinueOnError)
	fs.SetOutput(stderr)
	ns := fs.String("ns", "", "NameServer address")
	group := fs.String("group", "", "consumer group")
	topic := fs.String("topic", "", "topic")
	instance := fs.String("instance", "", "instance name")
	run := fs.String("run", "", "value of the run property of this test's messages")
	work := fs.Duration("work", handlerWork, "time each handler call takes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var mu sync.Mutex
	out := bufio.NewWriter(stdout)
	say := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{*ns})),
		consumer.WithGroupName(*group),
		consumer.WithInstance(*instance),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumerOrder(true),
	)
	if err != nil {
		fmt.Fprintln(stderr, "official orderly consumer:", err)
		return 1
	}
	err = pc.Subscribe(*topic, selectAll, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		c := childCall{Start: time.Now().UnixNano()}
		if len(msgs) > 0 && msgs[0].Queue != nil {
			c.Broker, c.Queue = msgs[0].Queue.BrokerName, msgs[0].Queue.QueueId
		}
		time.Sleep(*work)
		c.End = time.Now().UnixNano()
		for _, m := range msgs {
			if m.GetProperty(propRun) == *run {
				c.Msgs = append(c.Msgs, []string{m.GetProperty(propKey), m.GetProperty(propIdx)})
			}
		}
		b, _ := json.Marshal(c)
		say(b)
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		fmt.Fprintln(stderr, "official orderly consumer subscribe:", err)
		return 1
	}
	if err := pc.Start(); err != nil {
		fmt.Fprintln(stderr, "official orderly consumer start:", err)
		return 1
	}
	say([]byte("started"))
	sc := bufio.NewScanner(stdin)
	for sc.Scan() && sc.Text() != "stop" {
	}
	if err := pc.Shutdown(); err != nil {
		fmt.Fprintln(stderr, "official orderly consumer shutdown:", err)
	}
	say([]byte("stopped"))
	return 0
}

// childStopTimeout bounds the official client's Shutdown in the child.
const childStopTimeout = 30 * time.Second

// startOfficialOrderly starts an official orderly push consumer in group,
// in a child process (see officialChildFlag), recording its handler calls
// in l. Its assigned queues are not known to the test.
func (e *env) startOfficialOrderly(t *testing.T, group, topic, name string, l *callLog) *member {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, officialChildFlag, "-ns", e.ns, "-group", group, "-topic", topic, "-instance", name, "-run", e.prefix)
	// The child's own races are the official client's: logged to a file of
	// the test's, not failing the child.
	cmd.Env = append(os.Environ(), "GORACE=exitcode=0 halt_on_error=0 log_path="+t.TempDir()+"/race")
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("official orderly consumer process: %v", err)
	}
	started := make(chan struct{})
	stopped := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			switch string(line) {
			case "started":
				close(started)
				continue
			case "stopped":
				close(stopped)
				continue
			}
			var cc childCall
			if err := json.Unmarshal(line, &cc); err != nil {
				t.Errorf("official orderly consumer process said %q: %v", line, err)
				continue
			}
			c := orderlyCall{member: name, official: true, queue: queueKey{cc.Broker, cc.Queue},
				start: time.Unix(0, cc.Start), end: time.Unix(0, cc.End)}
			l.add(c, len(cc.Msgs), func(i int, prop string) string {
				switch prop {
				case propRun:
					return e.prefix
				case propKey:
					return cc.Msgs[i][0]
				case propIdx:
					return cc.Msgs[i][1]
				}
				return ""
			})
		}
	}()
	wait := func() error {
		done := make(chan error, 1)
		go func() { <-readDone; done <- cmd.Wait() }()
		timer := time.NewTimer(childStopTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			return err
		case <-timer.C:
			cmd.Process.Kill()
			<-done
			return errors.New("did not stop in time: killed")
		}
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-started:
	case <-readDone:
		wait()
		t.Fatalf("official orderly consumer process ended before it started: %s", stderr.String())
	case <-timer.C:
		in.Close()
		wait()
		t.Fatalf("official orderly consumer process did not start in time: %s", stderr.String())
	}
	m := &member{name: name, assigned: func() map[primitive.MessageQueue]int64 { return nil }}
	m.shutdown = func() error {
		io.WriteString(in, "stop\n")
		in.Close()
		if err := wait(); err != nil {
			return fmt.Errorf("official orderly consumer process: %w; stderr: %s", err, stderr.String())
		}
		select {
		case <-stopped:
			return nil
		default:
			return fmt.Errorf("official orderly consumer process exited without stopping its consumer: %s", stderr.String())
		}
	}
	t.Cleanup(func() { m.stop(t) })
	return m
}

// lockedBuffer holds what the child writes to stderr; exec copies into
// it on a goroutine of its own while the test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
