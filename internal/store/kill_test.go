package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The kill test re-runs this test binary as a child that appends and prints
// each acknowledged message, kills it with SIGKILL mid-stream, and checks
// that a reopened store has every acknowledged message.
const (
	killDirEnv  = "ROCKETMQ_STORE_KILL_DIR"
	killModeEnv = "ROCKETMQ_STORE_KILL_MODE"
)

func killConfig(dir string, mode FlushMode) Config {
	return Config{
		Dir:                        dir,
		CommitLogSegmentSize:       32 << 10,
		ConsumeQueueEntriesPerFile: 64,
		IndexSlots:                 64,
		IndexEntries:               256,
		FlushMode:                  mode,
		FlushInterval:              50 * time.Millisecond,
		CheckpointInterval:         30 * time.Millisecond,
	}
}

// TestKillChild is the child side; it does nothing in a normal run.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("child of TestProcessKill only")
	}
	mode, _ := strconv.Atoi(os.Getenv(killModeEnv))
	s, err := Open(killConfig(dir, FlushMode(mode)))
	if err != nil {
		fmt.Printf("ERR %v\n", err)
		return
	}
	deadline := time.Now().Add(30 * time.Second) // in case nobody kills us
	for i := 0; time.Now().Before(deadline); i++ {
		m := msg{topic: "Kill", queue: int32(i % 4), body: body(i, 200+i%300), uniq: fmt.Sprintf("K%d", i)}
		res, err := s.PutMessage(context.Background(), m.req())
		if err != nil || res.Status != PutOK {
			fmt.Printf("ERR %v %v\n", res.Status, err)
			return
		}
		// One write syscall per line: nothing sits in a user-space buffer.
		fmt.Printf("ACK %d %d %d\n", i, res.PhysicalOffset, res.QueueOffset)
	}
	s.Close()
}

func TestProcessKill(t *testing.T) {
	if os.Getenv(killDirEnv) != "" {
		t.Skip("already the child")
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	for _, mode := range []FlushMode{FlushSync, FlushAsync} {
		t.Run(map[FlushMode]string{FlushSync: "sync", FlushAsync: "async"}[mode], func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1", "-test.v=false")
			cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killModeEnv+"="+strconv.Itoa(int(mode)))
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			type ack struct {
				i        int
				phys, qo int64
			}
			var acks []ack
			killAt := 400
			deadline := time.Now().Add(30 * time.Second)
			sc := bufio.NewScanner(out)
			killed := false
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "ERR") {
					t.Errorf("child: %s", line)
				}
				var a ack
				if n, _ := fmt.Sscanf(line, "ACK %d %d %d", &a.i, &a.phys, &a.qo); n == 3 {
					acks = append(acks, a)
				}
				if !killed && (len(acks) >= killAt || time.Now().After(deadline)) {
					cmd.Process.Kill() // SIGKILL: no deferred code runs in the child
					killed = true
				}
			}
			cmd.Wait()
			if !killed {
				t.Fatalf("child exited on its own after %d acks", len(acks))
			}
			if len(acks) < killAt {
				t.Fatalf("only %d acks before the deadline", len(acks))
			}
			t.Logf("child acknowledged %d messages before SIGKILL", len(acks))

			s, err := Open(killConfig(dir, mode))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, a := range acks {
				q := int32(a.i % 4)
				res, err := s.GetMessages(nil, &GetRequest{Topic: "Kill", QueueID: q, Offset: a.qo, MaxMessages: 1})
				if err != nil || res.Status != GetFound {
					t.Fatalf("ack %d (queue %d offset %d): %v %v", a.i, q, a.qo, res.Status, err)
				}
				h, err := parseRecord(res.Data, true)
				if err != nil || h.PhysicalOffset != a.phys {
					t.Fatalf("ack %d: record at %d, want %d (%v)", a.i, h.PhysicalOffset, a.phys, err)
				}
				want := msg{topic: "Kill", queue: q, body: body(a.i, 200+a.i%300)}.req()
				rec, err := s.MessageAt(a.phys)
				if err != nil {
					t.Fatal(err)
				}
				if b := recordBody(rec); string(b) != string(want.Body) {
					t.Fatalf("ack %d: body %q", a.i, b)
				}
			}
			// The store keeps working after the recovery.
			if _, err := s.PutMessage(context.Background(), msg{topic: "Kill", body: "after"}.req()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// recordBody returns the body of an IPv4 record.
func recordBody(rec []byte) []byte {
	p := message.RecordPosBornHost + 8 + 8 + 8 + 4 + 8
	n := int(rec[p])<<24 | int(rec[p+1])<<16 | int(rec[p+2])<<8 | int(rec[p+3])
	return rec[p+4 : p+4+n]
}
