package broker

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// nsTopics lists the topics the NameServer at ns routes.
func nsTopics(t *testing.T, ns string) map[string]bool {
	t.Helper()
	cli := newTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, ns, remoting.NewRequest(remoting.GetAllTopicListFromNameServer, nil, nil))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("topic list: %v %v", err, resp)
	}
	var tl remoting.TopicList
	if err := tl.DecodeJSON(resp.Body); err != nil {
		t.Fatalf("topic list: %v", err)
	}
	out := make(map[string]bool, len(tl.TopicList))
	for _, name := range tl.TopicList {
		out[name] = true
	}
	return out
}

// Thousands of concurrent topic creates share registrations: never more
// than one REGISTER_BROKER round in flight, and the last round carries
// every topic.
func TestRegistrationStormCoalesced(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		t.Run(fmt.Sprintf("compressed=%v", compressed), func(t *testing.T) {
			ns := startNameServer(t)
			b := startBroker(t, Config{
				StoreDir:           t.TempDir(),
				ListenAddr:         "127.0.0.1:0",
				NameServers:        []string{ns},
				RegisterInterval:   time.Hour,
				CompressedRegister: compressed,
			})
			startRounds := b.reg.rounds.Load()
			const topics, workers = 2000, 50
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < topics; i += workers {
						// What topicManager.changed does after each
						// create, without the topics.json rewrite this
						// test does not measure.
						tc := remoting.NewTopicConfig(fmt.Sprintf("Storm%04d", i))
						tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm = 4, 4, rocketmq.PermRead|rocketmq.PermWrite
						b.topics.set(tc.TopicName, tc)
						b.registerAsync()
					}
				}()
			}
			wg.Wait()
			var missing []string
			if !testutil.Poll(30*time.Second, func() bool {
				have := nsTopics(t, ns)
				missing = missing[:0]
				for i := range topics {
					if name := fmt.Sprintf("Storm%04d", i); !have[name] {
						missing = append(missing, name)
					}
				}
				return len(missing) == 0
			}) {
				t.Fatalf("%d topics not routable, e.g. %v", len(missing), missing[:min(5, len(missing))])
			}
			if m := b.reg.maxInFlight.Load(); m != 1 {
				t.Errorf("%d registration rounds in flight at once, want 1", m)
			}
			rounds := b.reg.rounds.Load() - startRounds
			if rounds > topics/4 {
				t.Errorf("%d registration rounds for %d topic creates: changes were not coalesced", rounds, topics)
			}
			t.Logf("%d topic creates, %d registration rounds", topics, rounds)
		})
	}
}

// manyGroupsHeartbeat is a heartbeat of one client naming n consumer groups.
func manyGroupsHeartbeat(prefix string, n int) *remoting.Command {
	hb := remoting.HeartbeatData{ClientID: "127.0.0.1@loadtest"}
	for i := range n {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, remoting.ConsumerData{
			GroupName:        fmt.Sprintf("%s%05d", prefix, i),
			ConsumeType:      remoting.ConsumeTypePassively,
			MessageModel:     remoting.MessageModelClustering,
			ConsumeFromWhere: "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: []remoting.SubscriptionData{{
				Topic: "LoadTopic", SubString: "*", SubVersion: 1,
			}},
		})
	}
	return remoting.NewRequest(remoting.HeartBeat, nil, hb.AppendJSON(nil, remoting.JSONStandard))
}

// invokeSlow is e.invoke with a minute to answer: a heartbeat of
// thousands of groups takes seconds under -race on a loaded machine.
func invokeSlow(t testing.TB, e *pullEnv, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := e.cli.InvokeTimeout(ctx, e.b.Addr(), req, time.Minute)
	if err != nil {
		t.Fatalf("Invoke code %d: %v", req.Code, err)
	}
	return resp
}

// A heartbeat registering thousands of new groups writes the group table
// once and creates all retry topics with one change of the topic table.
func TestHeartbeatManyGroupsPersistsOnce(t *testing.T) {
	e := pullTestBroker(t, nil)
	persists := e.b.groups.persists.Load()
	_, topicsVersion := e.b.topics.snapshot()
	const n = 5000
	resp := invokeSlow(t, e, manyGroupsHeartbeat("LoadGroup", n))
	if resp.Code != remoting.Success {
		t.Fatalf("heartbeat: code %d %q", resp.Code, resp.Remark)
	}
	if got := e.b.groups.persists.Load() - persists; got != 1 {
		t.Errorf("group table written %d times for one heartbeat, want 1", got)
	}
	_, v := e.b.topics.snapshot()
	if got := v.Counter - topicsVersion.Counter; got != 1 {
		t.Errorf("topic table changed %d times for one heartbeat, want 1", got)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		g := fmt.Sprintf("LoadGroup%05d", i)
		if _, ok := e.b.groups.get(g); !ok {
			t.Errorf("group %s not created", g)
		}
		if _, ok := e.b.topics.get(rocketmq.RetryTopic(g)); !ok {
			t.Errorf("retry topic of %s not created", g)
		}
		if ids := e.b.clients.consumerIDs(g); len(ids) != 1 {
			t.Errorf("consumers of %s: %v", g, ids)
		}
	}
	// The file holds every group.
	var w remoting.SubscriptionGroupWrapper
	if found, err := readConfig(e.b.groups.path(), w.DecodeJSON); !found || err != nil {
		t.Fatalf("read groups file: %v %v", found, err)
	}
	if _, ok := w.SubscriptionGroupTable[fmt.Sprintf("LoadGroup%05d", n-1)]; !ok || len(w.SubscriptionGroupTable) < n {
		t.Errorf("groups file holds %d groups, want at least %d", len(w.SubscriptionGroupTable), n)
	}

	// The same heartbeat again changes nothing and writes nothing.
	persists = e.b.groups.persists.Load()
	_, topicsVersion = e.b.topics.snapshot()
	if resp := invokeSlow(t, e, manyGroupsHeartbeat("LoadGroup", n)); resp.Code != remoting.Success {
		t.Fatalf("second heartbeat: code %d %q", resp.Code, resp.Remark)
	}
	_, v = e.b.topics.snapshot()
	if got := e.b.groups.persists.Load() - persists; got != 0 || v.Counter != topicsVersion.Counter {
		t.Errorf("repeated heartbeat wrote the group table %d times and changed the topic table %d times",
			got, v.Counter-topicsVersion.Counter)
	}
}

func TestHeartbeatGroupLimit(t *testing.T) {
	e := pullTestBroker(t, func(c *Config) { c.MaxHeartbeatGroups = 100 })
	resp := e.invoke(t, manyGroupsHeartbeat("LimitGroup", 101))
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "101 consumer groups") {
		t.Fatalf("heartbeat over the limit: code %d %q, want SYSTEM_ERROR naming the count", resp.Code, resp.Remark)
	}
	if _, ok := e.b.groups.get("LimitGroup00000"); ok {
		t.Error("a refused heartbeat created a group")
	}
	if resp := e.invoke(t, manyGroupsHeartbeat("LimitGroup", 100)); resp.Code != remoting.Success {
		t.Fatalf("heartbeat at the limit: code %d %q", resp.Code, resp.Remark)
	}
}

// A pull on an empty queue with a suspend timeout of MaxInt64 or -1 is held
// for a bounded time, then answered PULL_NOT_FOUND.
func TestPullSuspendTimeoutBounded(t *testing.T) {
	const maxHold, check = 600 * time.Millisecond, 300 * time.Millisecond
	e := pullTestBroker(t, func(c *Config) {
		c.MaxPullSuspend = maxHold
		c.LongPollCheck = check
	})
	e.b.topics.ensure("PullBound", 1, rocketmq.PermRead|rocketmq.PermWrite)
	tests := []struct {
		name      string
		suspendMs int64
		want      time.Duration // held at least about this long
	}{
		{"MaxInt64", math.MaxInt64, check}, // Java's deadline overflows: answered at the next check
		{"huge", int64(time.Hour / time.Millisecond), maxHold},
		{"minus one", -1, check},
		{"zero", 0, check},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			ch := e.invokeAsync(t, pullArgs{group: "g", topic: "PullBound", sub: pstr("*"),
				flags: remoting.PullFlagSuspend, suspendMs: tt.suspendMs}.req())
			r := pullWait(t, ch, 10*time.Second)
			if d := r.at.Sub(start); d < tt.want-50*time.Millisecond {
				t.Errorf("answered after %v, want it held about %v", d, tt.want)
			} else {
				t.Logf("held %v", d)
			}
			pullExpect(t, r.resp, remoting.PullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0)
		})
	}
}
