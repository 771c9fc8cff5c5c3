package rmqtest

import (
	"context"
	"fmt"
	"strconv"
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

// A full disk over the wire: sends are refused with Java's
// SERVICE_NOT_AVAILABLE answer while pulls and admin calls keep working,
// and accepted again when space returns; a failed write is answered with
// an error, never acknowledged, and refuses later sends until a retried
// write succeeds. Crashes in the middle of either keep exactly what was
// acknowledged.
func TestFullDiskOverTheWire(t *testing.T) {
	var percent atomic.Uint64
	percent.Store(40)
	var (
		mu      sync.Mutex
		failing bool
	)
	usage := func(string) (uint64, uint64, error) { return percent.Load(), 100, nil }
	fault := func(path string, off int64, n int) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return n / 2, syscall.ENOSPC
		}
		return 0, nil
	}
	setFailing := func(v bool) { mu.Lock(); failing = v; mu.Unlock() }
	c := StartCluster(t, WithDiskUsage(usage, 5*time.Millisecond), WithStoreWriteFault(fault, 5*time.Millisecond))
	const topic, name = "FullDisk", "broker-a"
	ctx := context.Background()
	if err := c.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	addr := c.BrokerAddr(name)
	cli := newClient(t)

	var acked []string
	n := 0
	send := func(cli *transport.Client) *remoting.Command {
		n++
		body := fmt.Sprintf("message-%d", n)
		h := remoting.SendMessageRequestHeader{ProducerGroup: "PG", Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate,
			DefaultTopicQueueNums: 1, BornTimestamp: time.Now().UnixMilli(), Properties: new(string)}
		r := badInvoke(t, cli, addr, remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), []byte(body)))
		if r.Code == remoting.Success {
			acked = append(acked, body)
		}
		return r
	}
	checkPulled := func(cli *transport.Client, what string) {
		t.Helper()
		var got []string
		for off := int64(0); ; {
			sub := "*"
			h := remoting.PullMessageRequestHeader{ConsumerGroup: "G", Topic: topic, QueueID: 0, QueueOffset: off,
				MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription, Subscription: &sub}
			r := badInvoke(t, cli, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil))
			if r.Code != remoting.Success {
				break
			}
			msgs, err := message.DecodeRecords(r.Body)
			if err != nil || len(msgs) == 0 {
				t.Fatalf("%s: pull body: %v", what, err)
			}
			for _, m := range msgs {
				got = append(got, string(m.Body))
			}
			off += int64(len(msgs))
		}
		if strings.Join(got, ",") != strings.Join(acked, ",") {
			t.Fatalf("%s: pulled %v, acknowledged %v", what, got, acked)
		}
	}
	runtimeInfo := func(cli *transport.Client) map[string]string {
		t.Helper()
		r := badInvoke(t, cli, addr, remoting.NewRequest(remoting.GetBrokerRuntimeInfo, nil, nil))
		var kv remoting.KVTable
		if r.Code != remoting.Success || kv.DecodeJSON(r.Body) != nil {
			t.Fatalf("runtime info: %d %q", r.Code, r.Remark)
		}
		return kv.Table
	}
	const fullRemark = "service not available now. It may be caused by one of the following reasons: " +
		"the broker's disk is full [CL: 95.00 CQ: 95.00 INDEX: 95.00], messages are put to the slave, message store has been shut down, etc."
	refused := func(r *remoting.Command) bool {
		return r.Code == remoting.ServiceNotAvailable
	}

	for range 3 {
		if r := send(cli); r.Code != remoting.Success {
			t.Fatalf("send: %d %q", r.Code, r.Remark)
		}
	}

	// Disk above 90%: refused, with Java's remark; pulls and admin go on.
	percent.Store(95)
	var last *remoting.Command
	testutil.WaitFor(t, 5*time.Second, "a refused send", func() bool { last = send(cli); return refused(last) })
	if last.Remark != fullRemark {
		t.Fatalf("remark %q, want %q", last.Remark, fullRemark)
	}
	checkPulled(cli, "disk full")
	info := runtimeInfo(cli)
	if info["storeWritable"] != "false" || info["commitLogDiskRatio"] != "0.95" || !strings.HasPrefix(info["storeNotWritableReason"], "disk full") {
		t.Errorf("runtime info on a full disk: storeWritable %q commitLogDiskRatio %q reason %q",
			info["storeWritable"], info["commitLogDiskRatio"], info["storeNotWritableReason"])
	}

	// A crash on a full disk; the restarted broker refuses from the start.
	if err := c.CrashBroker(name); err != nil {
		t.Fatal(err)
	}
	if err := c.StartBroker(name); err != nil {
		t.Fatal(err)
	}
	cli = newClient(t)
	if r := send(cli); !refused(r) {
		t.Fatalf("send after a restart on a full disk: %d %q", r.Code, r.Remark)
	}
	checkPulled(cli, "restart on a full disk")

	// Space returns: sends are accepted again by themselves.
	percent.Store(60)
	testutil.WaitFor(t, 5*time.Second, "an accepted send", func() bool { return send(cli).Code == remoting.Success })
	if v := runtimeInfo(cli)["storeWritable"]; v != "true" {
		t.Errorf("storeWritable %q after space returned", v)
	}

	// A write that fails halfway: an error, then refusals, never an ack.
	setFailing(true)
	if r := send(cli); r.Code != remoting.SystemError {
		t.Fatalf("send on a failing disk: %d %q", r.Code, r.Remark)
	}
	if r := send(cli); !refused(r) {
		t.Fatalf("send after a failed write: %d %q", r.Code, r.Remark)
	}
	if v := runtimeInfo(cli)["storeNotWritableReason"]; !strings.HasPrefix(v, "write failed") {
		t.Errorf("storeNotWritableReason %q after a failed write", v)
	}
	checkPulled(cli, "failed write")
	if err := c.CrashBroker(name); err != nil {
		t.Fatal(err)
	}
	setFailing(false)
	if err := c.StartBroker(name); err != nil {
		t.Fatal(err)
	}
	cli = newClient(t)
	checkPulled(cli, "restart after a failed write")
	for range 3 {
		if r := send(cli); r.Code != remoting.Success {
			t.Fatalf("send after the restart: %d %q", r.Code, r.Remark)
		}
	}

	// And without a restart: the retried write lets sends through again.
	setFailing(true)
	if r := send(cli); r.Code != remoting.SystemError {
		t.Fatalf("send on a failing disk: %d %q", r.Code, r.Remark)
	}
	setFailing(false)
	testutil.WaitFor(t, 5*time.Second, "an accepted send after the retry", func() bool { return send(cli).Code == remoting.Success })
	checkPulled(cli, "after the retry")
	if v, err := strconv.ParseFloat(runtimeInfo(cli)["commitLogDiskRatio"], 64); err != nil || v != 0.6 {
		t.Errorf("commitLogDiskRatio %v (%v)", v, err)
	}
}
