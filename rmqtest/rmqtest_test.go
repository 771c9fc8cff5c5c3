package rmqtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

func newClient(t *testing.T) *transport.Client {
	t.Helper()
	cli, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// routeBrokers asks the NameServer which brokers serve topic.
func routeBrokers(ctx context.Context, cli *transport.Client, ns, topic string) ([]string, error) {
	h := remoting.GetRouteInfoRequestHeader{Topic: topic}
	resp, err := cli.Invoke(ctx, ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil))
	if err != nil {
		return nil, err
	}
	if err := remoting.ResponseError(resp); err != nil {
		return nil, err
	}
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(resp.Body); err != nil {
		return nil, err
	}
	var names []string
	for _, bd := range rd.BrokerDatas {
		names = append(names, bd.BrokerName)
	}
	sort.Strings(names)
	return names, nil
}

// waitBrokers polls the route of TBW102 until it lists exactly want.
func waitBrokers(t *testing.T, cli *transport.Client, ns string, want ...string) {
	t.Helper()
	var got []string
	var err error
	if !testutil.Poll(0, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got, err = routeBrokers(ctx, cli, ns, "TBW102")
		return err == nil && slices.Equal(got, want) || len(want) == 0 && errors.Is(err, remoting.ErrTopicNotExist)
	}) {
		t.Fatalf("route of TBW102: got %v (err %v), want %v", got, err, want)
	}
}

func TestStartClusterRegistersBrokers(t *testing.T) {
	c := StartCluster(t, WithBrokers(2))
	if got := c.BrokerNames(); !slices.Equal(got, []string{"broker-a", "broker-b"}) {
		t.Fatalf("BrokerNames = %v", got)
	}
	cli := newClient(t)
	waitBrokers(t, cli, c.NameServerAddr(), "broker-a", "broker-b")
	for _, name := range c.BrokerNames() {
		if c.BrokerAddr(name) == "" || c.StoreDir(name) == "" {
			t.Fatalf("%s: empty address or store dir", name)
		}
	}
}

func TestInterceptRespondAndTimes(t *testing.T) {
	c := StartCluster(t)
	cli := newClient(t)
	addr := c.BrokerAddr("broker-a")
	ctx := context.Background()
	call := func() int32 {
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.GetAllTopicConfig, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Code
	}
	if code := call(); code != remoting.Success {
		t.Fatalf("before intercept: code %d", code)
	}
	if err := c.Intercept("broker-a", remoting.GetAllTopicConfig, Fault{Respond: true, Code: remoting.SystemBusy, Times: 2}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if code := call(); code != remoting.SystemBusy {
			t.Fatalf("intercepted call %d: code %d, want SYSTEM_BUSY", i, code)
		}
	}
	if code := call(); code != remoting.Success {
		t.Fatalf("after Times ran out: code %d", code)
	}

	// Drop: the caller times out.
	if err := c.Intercept("broker-a", remoting.GetAllTopicConfig, Fault{Drop: true}); err != nil {
		t.Fatal(err)
	}
	_, err := cli.InvokeTimeout(ctx, addr, remoting.NewRequest(remoting.GetAllTopicConfig, nil, nil), 200*time.Millisecond)
	if !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("dropped request: err %v, want timeout", err)
	}
	if err := c.ClearIntercept("broker-a", remoting.GetAllTopicConfig); err != nil {
		t.Fatal(err)
	}
	if code := call(); code != remoting.Success {
		t.Fatalf("after clear: code %d", code)
	}
	if err := c.Intercept("broker-x", 1, Fault{}); !errors.Is(err, ErrUnknownBroker) {
		t.Fatalf("unknown broker: err %v", err)
	}
}

func TestStopStartAndCrashKeepAddressAndTopics(t *testing.T) {
	c := StartCluster(t, WithSyncFlush())
	cli := newClient(t)
	ns := c.NameServerAddr()
	addr := c.BrokerAddr("broker-a")
	ctx := context.Background()

	if err := c.CreateTopic(ctx, "RestartTopic", 2); err != nil {
		t.Fatal(err)
	}

	if err := c.StopBroker(ctx, "broker-a"); err != nil {
		t.Fatal(err)
	}
	waitBrokers(t, cli, ns) // unregistered on clean stop
	if err := c.StartBroker("broker-a"); err != nil {
		t.Fatal(err)
	}
	if got := c.BrokerAddr("broker-a"); got != addr {
		t.Fatalf("restart moved the broker from %s to %s", addr, got)
	}
	waitBrokers(t, cli, ns, "broker-a")

	if err := c.CrashBroker("broker-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.StartBroker("broker-a"); err != nil {
		t.Fatal(err)
	}
	got, err := routeBrokers(ctx, cli, ns, "RestartTopic")
	if err != nil || !slices.Equal(got, []string{"broker-a"}) {
		t.Fatalf("route of RestartTopic after crash and restart: %v %v", got, err)
	}
}

func TestNewClusterRemovesItsDirectory(t *testing.T) {
	c, err := NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	dir := c.cfg.dir
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.slot("broker-a"); err != nil {
		t.Fatal(err)
	}
	if _, statErr := os.Stat(dir); statErr == nil {
		t.Fatalf("%s still exists after Close", dir)
	}
	if _, err := NewCluster(WithBrokers(0)); err == nil {
		t.Fatal("WithBrokers(0) accepted")
	}
}

// TestDelayOptions sends a delay-level and a timer message to a cluster
// with a short level table and a fine timer precision; both reach their
// queue on time.
func TestDelayOptions(t *testing.T) {
	if _, err := NewCluster(WithDelayLevels("1s 2x")); err == nil {
		t.Fatal("a bad delay level table was accepted")
	}
	c := StartCluster(t, WithDelayLevels("150ms 2s"), WithTimerPrecision(50*time.Millisecond))
	cli := newClient(t)
	addr := c.BrokerAddr("broker-a")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send := func(queue int32, props string) {
		h := remoting.SendMessageRequestHeaderV2{ProducerGroup: "PG", Topic: "DelayOpt", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: queue, Properties: &props}
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.SendMessageV2, h.AppendExt(nil), []byte("x")))
		if err != nil || resp.Code != remoting.Success {
			t.Fatalf("send %q: %v %+v", props, err, resp)
		}
	}
	maxOffset := func(queue int32) string {
		h := remoting.GetMaxOffsetRequestHeader{Topic: "DelayOpt", QueueID: queue}
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.GetMaxOffset, h.AppendExt(nil), nil))
		if err != nil || resp.Code != remoting.Success {
			t.Fatalf("GET_MAX_OFFSET: %v %+v", err, resp)
		}
		off, _ := resp.Ext.Get("offset")
		return off
	}
	start := time.Now()
	send(0, "DELAY\x011")
	send(1, "TIMER_DELAY_MS\x01300")
	for _, q := range []struct {
		queue int32
		after time.Duration
	}{{0, 150 * time.Millisecond}, {1, 300 * time.Millisecond}} {
		testutil.WaitFor(t, 0, fmt.Sprintf("a delivery to queue %d", q.queue), func() bool { return maxOffset(q.queue) == "1" })
		if d := time.Since(start); d < q.after {
			t.Errorf("queue %d: delivered after %v, want at least %v", q.queue, d, q.after)
		}
	}
}

func TestLockMaxLiveTime(t *testing.T) {
	const live = 300 * time.Millisecond
	c := StartCluster(t, WithLockMaxLiveTime(live))
	cli := newClient(t)
	mq := rocketmq.MessageQueue{Topic: "LockOpt", BrokerName: "broker-a", QueueID: 0}
	lock := func(clientID string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body := remoting.LockBatchRequestBody{ConsumerGroup: "G", ClientID: clientID, MQSet: []rocketmq.MessageQueue{mq}}
		resp, err := cli.Invoke(ctx, c.BrokerAddr("broker-a"), remoting.NewRequest(remoting.LockBatchMQ, nil, body.AppendJSON(nil, remoting.JSONFastjson)))
		if err == nil {
			err = remoting.ResponseError(resp)
		}
		if err != nil {
			t.Fatal(err)
		}
		var locked remoting.LockBatchResponseBody
		if err := locked.DecodeJSON(resp.Body); err != nil {
			t.Fatal(err)
		}
		return slices.Contains(locked.LockOKMQSet, mq)
	}
	start := time.Now() // before a's lock: its lifetime cannot begin earlier
	if !lock("a") {
		t.Fatal("a free queue was not locked")
	}
	if lock("b") && time.Since(start) < live {
		t.Fatal("a queue locked by another client was locked before the lock expired")
	}
	testutil.WaitFor(t, 0, "the lock of a to expire", func() bool { return lock("b") })
	if d := time.Since(start); d < live {
		t.Errorf("lock taken over after %v, before the %v expiry", d, live)
	}
}
