package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// envExternal points the tests at an external cluster instead of rmqtest.
const envExternal = "ROCKETMQ_NAMESRV"

// envLogLevel is the official client's own log level variable; when it is
// set the tests leave the client's logging as the user asked.
const envLogLevel = "ROCKETMQ_GO_LOG_LEVEL"

func TestMain(m *testing.M) {
	// The official client logs through a package-level logrus logger at
	// info level, several lines per rebalance and pull; only its errors
	// are worth seeing. Set before any client exists.
	if os.Getenv(envLogLevel) == "" {
		rlog.SetLogLevel("error")
	}
	if len(os.Args) > 1 && os.Args[1] == officialChildFlag {
		os.Exit(runOfficialOrderlyChild(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// env is one test's cluster plus an admin client of ours for the things
// the official client has no public API for (cluster info, topic
// creation with a chosen queue count, committed offsets).
type env struct {
	ns      string
	cluster *rmqtest.Cluster // nil for an external cluster (no test needs fault controls yet)
	admin   *mqclient.Client
	prefix  string       // unique per test and run: names of topics, groups, instances
	seq     atomic.Int64 // suffix of names made from prefix
}

func newEnv(t *testing.T, brokers int, opts ...rmqtest.Option) *env {
	t.Helper()
	e := &env{ns: os.Getenv(envExternal)}
	if e.ns == "" {
		// Held pulls are re-checked every second instead of 5 s: a pull
		// parked on a queue whose new messages do not match the consumer's
		// tags (TagC) is only answered by that check, as in Java.
		opts = append([]rmqtest.Option{rmqtest.WithBrokers(brokers), rmqtest.WithLongPollCheck(time.Second)}, opts...)
		e.cluster = rmqtest.StartCluster(t, opts...)
		e.ns = e.cluster.NameServerAddr()
	}
	// Names must stay unique across runs against an external cluster.
	short := strings.TrimPrefix(t.Name(), "Test")
	short = strings.NewReplacer("/", "_", " ", "_").Replace(short)
	if len(short) > 40 {
		short = short[:40]
	}
	e.prefix = fmt.Sprintf("E2E_%s_%s", short, strconv.FormatInt(time.Now().UnixNano(), 36))
	cfg := mqclient.DefaultConfig()
	cfg.NameServers = []string{e.ns}
	cfg.InstanceName = e.name("admin")
	a, err := mqclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	e.admin = a
	return e
}

// name returns a fresh name for a topic, group or client instance.
func (e *env) name(kind string) string {
	return fmt.Sprintf("%s_%s%d", e.prefix, kind, e.seq.Add(1))
}

// masters returns broker name → master address from the NameServer.
func (e *env) masters(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.admin.InvokeNameServer(ctx, func() *remoting.Command {
		return remoting.NewRequest(remoting.GetBrokerClusterInfo, nil, nil)
	})
	if err != nil {
		t.Fatalf("GET_BROKER_CLUSTER_INFO: %v", err)
	}
	if resp.Code != remoting.Success {
		t.Fatalf("GET_BROKER_CLUSTER_INFO: code %d %q", resp.Code, resp.Remark)
	}
	var ci remoting.ClusterInfo
	if err := ci.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("cluster info %q: %v", resp.Body, err)
	}
	out := make(map[string]string)
	for name, bd := range ci.BrokerAddrTable {
		if addr, ok := bd.BrokerAddrs[0]; ok {
			out[name] = addr
		}
	}
	if len(out) == 0 {
		t.Fatalf("no master broker in %q", resp.Body)
	}
	return out
}

// createTopic creates topic with queues read and write queues on every
// master and waits until the NameServer routes all of them: clients
// started before it does would fail ("route info not found").
func (e *env) createTopic(t *testing.T, topic string, queues int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, e.ns, topic, queues); err != nil {
		t.Fatal(err)
	}
}

// newTopic creates a topic of queues queues on every master and returns
// it with the masters (broker name to address).
func (e *env) newTopic(t *testing.T, queues int) (string, map[string]string) {
	t.Helper()
	topic := e.name("T")
	e.createTopic(t, topic, queues)
	return topic, e.masters(t)
}

// quietGroup turns off NOTIFY_CONSUMER_IDS_CHANGED for group on every
// master (the group's notifyConsumerIdsChangedEnable), as an operator can.
func (e *env) quietGroup(t *testing.T, group string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gc := remoting.NewSubscriptionGroupConfig(group)
	gc.NotifyConsumerIdsChangedEnable = false
	for name, addr := range e.masters(t) {
		req := remoting.NewRequest(remoting.UpdateAndCreateSubscriptionGroup, nil, gc.AppendJSON(nil, remoting.JSONFastjson))
		resp, err := e.admin.Invoke(ctx, addr, req, 5*time.Second)
		if err != nil {
			t.Fatalf("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on %s: %v", name, err)
		}
		if resp.Code != remoting.Success {
			t.Fatalf("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on %s: code %d %q", name, resp.Code, resp.Remark)
		}
	}
}

// committedOffset asks the broker for group's committed offset of a queue;
// ok is false when none is committed.
func (e *env) committedOffset(t *testing.T, brokerAddr, group, topic string, queueID int) (int64, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	no := false
	h := remoting.QueryConsumerOffsetRequestHeader{ConsumerGroup: group, Topic: topic, QueueID: int32(queueID), SetZeroIfNotFound: &no}
	resp, err := e.admin.Invoke(ctx, brokerAddr, remoting.NewRequest(remoting.QueryConsumerOffset, h.AppendExt(nil), nil), 5*time.Second)
	if err != nil {
		t.Fatalf("QUERY_CONSUMER_OFFSET: %v", err)
	}
	switch resp.Code {
	case remoting.Success:
		var rh remoting.OffsetResponseHeader
		if err := rh.FromExt(resp.Ext); err != nil {
			t.Fatalf("QUERY_CONSUMER_OFFSET response: %v", err)
		}
		return rh.Offset, true
	case remoting.QueryNotFound:
		return 0, false
	}
	t.Fatalf("QUERY_CONSUMER_OFFSET: code %d %q", resp.Code, resp.Remark)
	return 0, false
}

// maxOffset asks the broker for the max offset of a queue.
func (e *env) maxOffset(t *testing.T, brokerAddr, topic string, queueID int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := remoting.GetMaxOffsetRequestHeader{Topic: topic, QueueID: int32(queueID)}
	resp, err := e.admin.Invoke(ctx, brokerAddr, remoting.NewRequest(remoting.GetMaxOffset, h.AppendExt(nil), nil), 5*time.Second)
	if err != nil {
		t.Fatalf("GET_MAX_OFFSET: %v", err)
	}
	var rh remoting.OffsetResponseHeader
	if resp.Code != remoting.Success || rh.FromExt(resp.Ext) != nil {
		t.Fatalf("GET_MAX_OFFSET %s/%d: code %d %q", topic, queueID, resp.Code, resp.Remark)
	}
	return rh.Offset
}

// removeLocalOffsets deletes what broadcasting consumers of the official
// client left in its local offset store: <dir>/<group>/<client id>/offset.json
// (the client passes group and client id to NewLocalFileOffsetStore in
// the opposite order of its parameters), where dir is
// $rocketmq.client.localOffsetStoreDir or $HOME/.rocketmq_client_go. The
// path is read once at package init, so tests cannot point it elsewhere;
// group names are unique, so the group's directory is the test's alone.
func removeLocalOffsets(t *testing.T, group string) {
	dir := os.Getenv("rocketmq.client.localOffsetStoreDir")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), ".rocketmq_client_go")
	}
	if err := os.RemoveAll(filepath.Join(dir, group)); err != nil {
		t.Logf("remove local offsets: %v", err)
	}
	// Leave no empty store directory behind either.
	_ = os.Remove(dir)
}
