package hostile_test

import (
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func sendReq(topic string, body []byte, opaque int32) *remoting.Command {
	h := &remoting.SendMessageRequestHeader{ProducerGroup: "hostile-pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 0, BornTimestamp: time.Now().UnixMilli()}
	r := remoting.NewRequest(remoting.SendMessage, h.AppendExt(nil), body)
	r.Opaque = opaque
	return r
}

// TestBrokerPipelinedPullsWithoutReads: one connection writes 5,000
// PULL_MESSAGE requests of 32 messages of 1 KiB each and never reads the
// replies. The broker's heap stays bounded while another client keeps
// sending, as it did before.
func TestBrokerPipelinedPullsWithoutReads(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a broker")
	}
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("measures the in-repo broker's heap, which an external cluster does not share")
	}
	c := rmqtest.StartCluster(t)
	addr := c.BrokerAddr(c.BrokerNames()[0])
	const topic = "HostilePull"
	good := rawframe.Dial(t, addr)
	body := make([]byte, 1<<10)
	for i := range 32 {
		if resp := good.Call(sendReq(topic, body, int32(i+1))); resp.Code != remoting.Success {
			t.Fatalf("send %d: code %d %s", i, resp.Code, resp.Remark)
		}
	}
	sub := "*"
	var frames []byte
	const pulls = 5000 // unbounded, their replies would hold 5,000 × 33 KiB = 161 MiB
	for i := range pulls {
		h := &remoting.PullMessageRequestHeader{ConsumerGroup: "hostile-cg", Topic: topic, QueueID: 0,
			MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription, Subscription: &sub}
		r := remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil)
		r.Opaque = int32(i + 1)
		var err error
		if frames, err = r.AppendFrame(frames); err != nil {
			t.Fatal(err)
		}
	}
	before := heapInUse()
	nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	go func() { _, _ = nc.Write(frames) }()

	// Another client keeps being served, and the heap stays bounded over
	// a few seconds of the attacker not reading.
	const bound = 48 << 20
	var worst int64
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if resp := good.Call(sendReq(topic, body, int32(1000+i))); resp.Code != remoting.Success {
			t.Fatalf("send during the attack: code %d %s", resp.Code, resp.Remark)
		}
		if i%50 == 0 {
			worst = max(worst, int64(heapInUse())-int64(before))
		}
	}
	worst = max(worst, int64(heapInUse())-int64(before))
	t.Logf("heap grew by at most %d KiB", worst>>10)
	if worst > bound {
		t.Errorf("heap grew by %d MiB with a connection not reading its pulls, want under %d MiB", worst>>20, bound>>20)
	}
}
