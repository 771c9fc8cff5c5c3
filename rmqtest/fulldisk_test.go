package rmqtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

const remarkServiceNotAvailable = "service not available now. It may be caused by one of the following reasons: the broker's disk is full"

// wireSend sends body to queue q of topic and returns the answer.
func wireSend(ctx context.Context, cli *transport.Client, addr, topic string, q int32, body []byte) (*remoting.Command, error) {
	h := remoting.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4, QueueID: q, BornTimestamp: time.Now().UnixMilli(), Properties: new(string)}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return cli.Invoke(ctx, addr, remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), body))
}

// wirePullAll pulls queue q of topic from offset 0 and returns the bodies.
func wirePullAll(t *testing.T, cli *transport.Client, addr, topic string, q int32) []string {
	t.Helper()
	var got []string
	for off := int64(0); ; {
		sub := "*"
		h := remoting.PullMessageRequestHeader{ConsumerGroup: "G", Topic: topic, QueueID: q, QueueOffset: off,
			MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription, Subscription: &sub}
		r := badInvoke(t, cli, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil))
		if r.Code != remoting.Success {
			return got
		}
		msgs, err := message.DecodeRecords(r.Body)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("pull %s/%d@%d: %v", topic, q, off, err)
		}
		for _, m := range msgs {
			got = append(got, string(m.Body))
		}
		off += int64(len(msgs))
	}
}

func wireRuntimeInfo(t *testing.T, cli *transport.Client, addr string) map[string]string {
	t.Helper()
	r := badInvoke(t, cli, addr, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
	var kv remoting.KVTable
	if r.Code != remoting.Success || kv.DecodeJSON(r.Body) != nil {
		t.Fatalf("runtime info: %d %q", r.Code, r.Remark)
	}
	return kv.Table
}

// A broker on a real, small file system filled by concurrent senders, in
// both flush modes: it never dies, refuses with Java's disk-full answer
// (SERVICE_NOT_AVAILABLE), keeps every acknowledged message, restarts on
// the still-full file system serving pulls and admin calls while refusing
// sends, and accepts sends again once there is room. The disk reading
// claims room throughout, as between two of Java's 10 s checks: only the
// file system refuses.
func TestFullFileSystemOverTheWire(t *testing.T) {
	for _, syncFlush := range []bool{false, true} {
		name := map[bool]string{false: "async", true: "sync"}[syncFlush]
		t.Run(name, func(t *testing.T) {
			fs := testutil.SmallFS(t, 12<<20)
			ballast := filepath.Join(fs, "ballast")
			if err := os.WriteFile(ballast, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := []Option{WithStoreDir(filepath.Join(fs, "data")), WithCommitLogSegmentSize(1 << 20),
				WithDiskUsage(func(string) (uint64, uint64, error) { return 0, 100, nil }, time.Hour)}
			if syncFlush {
				opts = append(opts, WithSyncFlush())
			}
			c := StartCluster(t, opts...)
			const topic, bname, senders = "FullFS", "broker-a", 4
			ctx := context.Background()
			if err := c.CreateTopic(ctx, topic, senders); err != nil {
				t.Fatal(err)
			}
			addr := c.BrokerAddr(bname)
			cli := newClient(t)

			acked := make([][]string, senders)
			var wg sync.WaitGroup
			errs := make(chan error, senders)
			started := time.Now()
			for q := range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						body := fmt.Sprintf("q%d-%06d-%s", q, i, strings.Repeat("x", 3900))
						r, err := wireSend(ctx, cli, addr, topic, int32(q), []byte(body))
						switch {
						case err != nil:
							errs <- fmt.Errorf("queue %d send %d: %v", q, i, err)
							return
						case r.Code == remoting.Success:
							acked[q] = append(acked[q], body)
						case r.Code == remoting.ServiceNotAvailable && strings.HasPrefix(r.Remark, remarkServiceNotAvailable):
							return
						default:
							errs <- fmt.Errorf("queue %d send %d: %d %q, want SERVICE_NOT_AVAILABLE", q, i, r.Code, r.Remark)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			total := 0
			for q := range senders {
				total += len(acked[q])
			}
			t.Logf("%s: %d sends of 3.9 KB acknowledged before the file system was full, in %v", name, total, time.Since(started).Round(time.Millisecond))
			if total < 500 {
				t.Fatalf("only %d sends fit", total)
			}
			check := func(what string) {
				t.Helper()
				for q := range senders {
					got := wirePullAll(t, cli, addr, topic, int32(q))
					if strings.Join(got, ",") != strings.Join(acked[q], ",") {
						t.Fatalf("%s: queue %d: pulled %d messages, acknowledged %d", what, q, len(got), len(acked[q]))
					}
				}
			}
			check("full")
			info := wireRuntimeInfo(t, cli, addr)
			if info["storeWritable"] != "false" || !strings.HasPrefix(info["storeNotWritableReason"], "disk full: no space left") {
				t.Errorf("runtime info when full: storeWritable %q reason %q", info["storeWritable"], info["storeNotWritableReason"])
			}

			// Killed on the full file system; the restart serves pulls and
			// admin calls and refuses sends (after filling what the crash
			// left reserved).
			if err := c.CrashBroker(bname); err != nil {
				t.Fatal(err)
			}
			if err := c.StartBroker(bname); err != nil {
				t.Fatalf("restart on a full file system: %v", err)
			}
			cli = newClient(t)
			check("restart on a full file system")
			refused := false
			for i := 0; i < 1000 && !refused; i++ {
				body := fmt.Sprintf("q0-after-%06d-%s", i, strings.Repeat("x", 3900))
				r, err := wireSend(ctx, cli, addr, topic, 0, []byte(body))
				switch {
				case err != nil:
					t.Fatal(err)
				case r.Code == remoting.Success:
					acked[0] = append(acked[0], body)
				case r.Code == remoting.ServiceNotAvailable:
					refused = true
				default:
					t.Fatalf("send after the restart: %d %q", r.Code, r.Remark)
				}
			}
			if !refused {
				t.Fatal("sends after a restart on a full file system are not refused")
			}
			if v := wireRuntimeInfo(t, cli, addr)["storeWritable"]; v != "false" {
				t.Errorf("storeWritable %q after the restart on a full file system", v)
			}

			// Room again: accepted by themselves.
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, "an accepted send", func() bool {
				body := "room again"
				r, err := wireSend(ctx, cli, addr, topic, 1, []byte(body))
				if err == nil && r.Code == remoting.Success {
					acked[1] = append(acked[1], body)
					return true
				}
				return false
			})
			check("room again")
		})
	}
}

// After a failed commit-log sync (EIO) the broker acknowledges nothing:
// a sync-flush send waiting on it is answered FLUSH_DISK_TIMEOUT at once,
// later sends SERVICE_NOT_AVAILABLE, the runtime info says why; once a
// retried sync succeeds sends are accepted again, and every message stays
// readable. In async mode the background sync fails and sends are refused
// the same way.
func TestSyncFailureOverTheWire(t *testing.T) {
	for _, syncFlush := range []bool{false, true} {
		name := map[bool]string{false: "async", true: "sync"}[syncFlush]
		t.Run(name, func(t *testing.T) {
			var failing atomic.Bool
			fault := func(string) error {
				if failing.Load() {
					return syscall.EIO
				}
				return nil
			}
			opts := []Option{WithStoreSyncFault(fault, 10*time.Millisecond)}
			if syncFlush {
				opts = append(opts, WithSyncFlush())
			}
			c := StartCluster(t, opts...)
			const topic, bname = "SyncFail", "broker-a"
			ctx := context.Background()
			if err := c.CreateTopic(ctx, topic, 1); err != nil {
				t.Fatal(err)
			}
			addr := c.BrokerAddr(bname)
			cli := newClient(t)
			var stored []string
			send := func(body string) *remoting.Command {
				t.Helper()
				r, err := wireSend(ctx, cli, addr, topic, 0, []byte(body))
				if err != nil {
					t.Fatal(err)
				}
				if r.Code == remoting.Success || r.Code == remoting.FlushDiskTimeout {
					stored = append(stored, body)
				}
				return r
			}
			for i := range 3 {
				if r := send(fmt.Sprint("before-", i)); r.Code != remoting.Success {
					t.Fatalf("send: %d %q", r.Code, r.Remark)
				}
			}
			failing.Store(true)
			if syncFlush {
				started := time.Now()
				if r := send("over the failed sync"); r.Code != remoting.FlushDiskTimeout {
					t.Fatalf("sync-flush send over a failed sync: %d %q, want FLUSH_DISK_TIMEOUT", r.Code, r.Remark)
				}
				// Java's syncFlushTimeout is 5 s; the answer must not wait for it.
				if waited := time.Since(started); waited >= 5*time.Second {
					t.Errorf("FLUSH_DISK_TIMEOUT came after %v", waited)
				}
			}
			var last *remoting.Command
			testutil.WaitFor(t, 10*time.Second, "a refused send", func() bool {
				last = send("refused?")
				return last.Code == remoting.ServiceNotAvailable
			})
			if !strings.HasPrefix(last.Remark, remarkServiceNotAvailable) {
				t.Errorf("remark %q", last.Remark)
			}
			info := wireRuntimeInfo(t, cli, addr)
			if info["storeWritable"] != "false" || !strings.HasPrefix(info["storeNotWritableReason"], "commit-log sync failed, retrying: ") {
				t.Errorf("runtime info after a failed sync: storeWritable %q reason %q", info["storeWritable"], info["storeNotWritableReason"])
			}
			failing.Store(false)
			testutil.WaitFor(t, 10*time.Second, "an accepted send", func() bool { return send("accepted again").Code == remoting.Success })
			if got := wirePullAll(t, cli, addr, topic, 0); strings.Join(got, ",") != strings.Join(stored, ",") {
				t.Fatalf("pulled %v, stored %v", got, stored)
			}
		})
	}
}
