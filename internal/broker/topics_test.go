package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/atomicfile"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
)

func adminCreateReqRW(topic string, read, write, perm int32) *remoting.Command {
	h := remoting.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate, ReadQueueNums: read, WriteQueueNums: write,
		Perm: perm, TopicFilterType: "SINGLE_TAG", TopicSysFlag: remoting.Ptr(int32(0)),
	}
	return remoting.NewRequest(remoting.UpdateAndCreateTopic, h.AppendExt(nil), nil)
}

// Queue counts outside 1..MaxQueueNums and perms outside PermName.isValid
// are refused before anything is stored.
func TestAdminCreateTopicBounds(t *testing.T) {
	for _, limit := range []int32{0, 16} { // 0: the default, 1024
		t.Run("max"+strconv.Itoa(int(limit)), func(t *testing.T) {
			e := sendTestBroker(t, func(c *Config) { c.MaxQueueNums = limit })
			max := e.b.cfg.MaxQueueNums
			if limit == 0 && max != 1024 {
				t.Fatalf("default MaxQueueNums %d, want 1024", max)
			}
			tests := []struct {
				name        string
				read, write int32
				perm        int32
				remark      string
			}{
				{"read 0", 0, 1, 6, "The readQueueNums[0] is out of range [1, " + strconv.Itoa(int(max)) + "]."},
				{"read -1", -1, 1, 6, "The readQueueNums[-1] is out of range [1, " + strconv.Itoa(int(max)) + "]."},
				{"read max+1", max + 1, 1, 6, fmt.Sprintf("The readQueueNums[%d] is out of range [1, %d].", max+1, max)},
				{"read MaxInt32", 2147483647, 1, 6, fmt.Sprintf("The readQueueNums[2147483647] is out of range [1, %d].", max)},
				{"write 0", 1, 0, 6, fmt.Sprintf("The writeQueueNums[0] is out of range [1, %d].", max)},
				{"write -1", 1, -1, 6, fmt.Sprintf("The writeQueueNums[-1] is out of range [1, %d].", max)},
				{"write MaxInt32", 1, 2147483647, 6, fmt.Sprintf("The writeQueueNums[2147483647] is out of range [1, %d].", max)},
				{"perm -1", 1, 1, -1, "topicPermission value: -1 is invalid."},
				{"perm 8", 1, 1, 8, "topicPermission value: 8 is invalid."},
				{"perm MaxInt32", 1, 1, 2147483647, "topicPermission value: 2147483647 is invalid."},
			}
			for i, tt := range tests {
				topic := "Bounds" + strconv.Itoa(i)
				resp := e.invoke(t, adminCreateReqRW(topic, tt.read, tt.write, tt.perm))
				if resp.Code != remoting.SystemError || resp.Remark != tt.remark {
					t.Errorf("%s: code %d remark %q, want SYSTEM_ERROR %q", tt.name, resp.Code, resp.Remark, tt.remark)
				}
				if _, ok := e.b.topics.get(topic); ok {
					t.Errorf("%s: the refused topic was created", tt.name)
				}
			}
			for _, ok := range []struct{ read, write, perm int32 }{{1, 1, 0}, {max, max, 7}, {max, 1, 6}} {
				resp := e.invoke(t, adminCreateReqRW("BoundsOK", ok.read, ok.write, ok.perm))
				if resp.Code != remoting.Success {
					t.Errorf("read %d write %d perm %d: code %d %q", ok.read, ok.write, ok.perm, resp.Code, resp.Remark)
				}
			}
		})
	}
}

// writeTopicsFile writes config/topics.json under dir as an older broker
// (or a hand-edited file) could have left it.
func writeTopicsFile(t *testing.T, dir string, tcs ...remoting.TopicConfig) {
	t.Helper()
	w := remoting.TopicConfigSerializeWrapper{TopicConfigTable: map[string]remoting.TopicConfig{}}
	for _, tc := range tcs {
		w.TopicConfigTable[tc.TopicName] = tc
	}
	w.DataVersion.Counter = 1
	if err := store.WriteConfigFile(filepath.Join(dir, "config", "topics.json"), w.AppendJSON(nil, remoting.JSONStandard)); err != nil {
		t.Fatal(err)
	}
}

// A topics.json holding absurd queue counts is clamped at load, so the
// stats bodies stay proportional to MaxQueueNums; so does a topic
// auto-created from a template that claims more queues.
func TestTopicQueueNumsClampedAtLoad(t *testing.T) {
	const limit = 8
	cfg := sendTestConfig(t)
	cfg.MaxQueueNums = limit
	huge := remoting.NewTopicConfig("Huge")
	huge.ReadQueueNums, huge.WriteQueueNums, huge.Perm = 2147483647, 100000, 6
	neg := remoting.NewTopicConfig("Negative")
	neg.ReadQueueNums, neg.WriteQueueNums, neg.Perm = -5, -1, 6
	tpl := remoting.NewTopicConfig(rocketmq.TopicAutoCreate)
	tpl.ReadQueueNums, tpl.WriteQueueNums, tpl.Perm = 1<<30, 1<<30, 7
	writeTopicsFile(t, cfg.StoreDir, huge, neg, tpl)

	b := startBroker(t, cfg)
	e := &sendEnv{b: b, cli: newTestClient(t)}
	for _, want := range []struct {
		topic       string
		read, write int32
	}{{"Huge", limit, limit}, {"Negative", 0, 0}, {rocketmq.TopicAutoCreate, limit, limit}} {
		tc, _ := b.topics.get(want.topic)
		if tc.ReadQueueNums != want.read || tc.WriteQueueNums != want.write {
			t.Errorf("%s: read %d write %d, want %d %d", want.topic, tc.ReadQueueNums, tc.WriteQueueNums, want.read, want.write)
		}
	}

	h := remoting.GetTopicStatsInfoRequestHeader{Topic: "Huge"}
	resp := e.invoke(t, remoting.NewRequest(remoting.GetTopicStatsInfo, h.AppendExt(nil), nil))
	var ts remoting.TopicStatsTable
	if err := ts.DecodeJSON(resp.Body); resp.Code != remoting.Success || err != nil {
		t.Fatalf("GET_TOPIC_STATS_INFO: %d %q %v", resp.Code, resp.Remark, err)
	}
	if len(ts.OffsetTable) != limit {
		t.Errorf("topic stats list %d queues, want %d", len(ts.OffsetTable), limit)
	}

	b.offsets.commit("HugeGroup", "Huge", 0, 0)
	ch := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: "HugeGroup", Topic: remoting.Ptr("Huge")}
	resp = e.invoke(t, remoting.NewRequest(remoting.GetConsumeStats, ch.AppendExt(nil), nil))
	var cs remoting.ConsumeStats
	if err := cs.DecodeJSON(resp.Body); resp.Code != remoting.Success || err != nil {
		t.Fatalf("GET_CONSUME_STATS: %d %q %v", resp.Code, resp.Remark, err)
	}
	if len(cs.OffsetTable) != limit {
		t.Errorf("consume stats list %d queues, want %d", len(cs.OffsetTable), limit)
	}

	// Auto-creation asks for more queues than the template and the limit.
	sh := sendTestHeader("AutoMany", 0, "")
	sh.DefaultTopicQueueNums = 2147483647
	sendCheckResp(t, e.invoke(t, sendV2Req(sh, []byte("x"))), remoting.Success, "")
	if tc, _ := b.topics.get("AutoMany"); tc.WriteQueueNums != limit || tc.ReadQueueNums != limit {
		t.Errorf("auto-created topic: read %d write %d, want %d", tc.ReadQueueNums, tc.WriteQueueNums, limit)
	}
	// A retry topic takes its count from the group's retryQueueNums.
	if tc := b.topics.ensure("%RETRY%Many", 1<<30, 6); tc.WriteQueueNums != limit {
		t.Errorf("ensured topic: write %d, want %d", tc.WriteQueueNums, limit)
	}
}

// setTopicsWriteFile replaces the topic manager's file writer between
// writes.
func setTopicsWriteFile(b *Broker, f func(path string, data []byte) error) {
	b.topics.persistMu.Lock()
	b.topics.writeFile = f
	b.topics.persistMu.Unlock()
}

// loadTopicNames reads config/topics.json as a restarting broker does.
func loadTopicNames(dir string) (map[string]remoting.TopicConfig, error) {
	data, err := store.ReadConfigFile(filepath.Join(dir, "config", "topics.json"))
	if err != nil {
		return nil, err
	}
	var w remoting.TopicConfigSerializeWrapper
	if err := w.DecodeJSON(data); err != nil {
		return nil, err
	}
	return w.TopicConfigTable, nil
}

// Concurrent creates: every one answered SUCCESS is in topics.json after a
// restart, and at every point of every write (where a crash could stop
// it) the file a restart reads holds every topic acknowledged so far.
func TestTopicsConcurrentCreatesPersisted(t *testing.T) {
	// 400 at once (the writes coalesce), and 120 from 8 clients one after
	// the other (a write or more each, so many kill points).
	for _, n := range []struct{ creates, workers int }{{400, 400}, {120, 8}} {
		t.Run(strconv.Itoa(n.workers)+"clients", func(t *testing.T) { testConcurrentCreates(t, n.creates, n.workers) })
	}
}

func testConcurrentCreates(t *testing.T, creates, workers int) {
	cfg := sendTestConfig(t)
	b := startBroker(t, cfg)
	cli := newTestClient(t)

	var (
		mu     sync.Mutex
		acked  = map[string]bool{}
		checks int
		bad    []string
	)
	setTopicsWriteFile(b, func(path string, data []byte) error {
		return atomicfile.WriteHooked(path, data, 0o644, json.Valid, func(atomicfile.Step) error {
			// A crash here: what would a restart load?
			mu.Lock()
			want := make([]string, 0, len(acked))
			for k := range acked {
				want = append(want, k)
			}
			checks++
			mu.Unlock()
			got, err := loadTopicNames(cfg.StoreDir)
			if err != nil {
				mu.Lock()
				bad = append(bad, "load: "+err.Error())
				mu.Unlock()
				return nil
			}
			for _, k := range want {
				if _, ok := got[k]; !ok {
					mu.Lock()
					bad = append(bad, k)
					mu.Unlock()
					break
				}
			}
			return nil
		})
	})

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, creates)
	create := func(i int) {
		topic := "Burst" + strconv.Itoa(i)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// One connection carries all of them: the server handles
		// MaxConnPending at a time and the rest wait their turn, each
		// write slowed by the crash checks above.
		resp, err := cli.InvokeTimeout(ctx, b.Addr(), adminCreateReq(topic, 2, 6, "SINGLE_TAG"), 30*time.Second)
		if err != nil {
			errs <- err
			return
		}
		if resp.Code != remoting.Success {
			errs <- fmt.Errorf("%s: code %d %q", topic, resp.Code, resp.Remark)
			return
		}
		mu.Lock()
		acked[topic] = true
		mu.Unlock()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < creates; i += workers {
				create(i)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mu.Lock()
	if len(bad) > 0 {
		t.Errorf("a crash at %d of %d write steps would lose acknowledged topics, e.g. %v", len(bad), checks, bad[:min(len(bad), 5)])
	}
	if checks == 0 {
		t.Error("the write hook never ran")
	}
	t.Logf("%d creates answered in %v with %d kill points checked", creates, time.Since(start), checks)
	mu.Unlock()

	// A write-ahead crash cannot be simulated in-process; a clean restart
	// must load them all.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.StoreDir, "config", "topics.json"+atomicfile.TempSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left behind: %v", err)
	}
	b2 := startBroker(t, cfg)
	for topic := range acked {
		if _, ok := b2.topics.get(topic); !ok {
			t.Errorf("acknowledged topic %s lost across the restart", topic)
		}
	}
	if len(acked) != creates {
		t.Errorf("%d of %d creates acknowledged", len(acked), creates)
	}
}

// A write stopped midway (a crash, or a full disk) is not acknowledged,
// and the file a restart reads still holds every acknowledged topic.
func TestTopicsCreateNotPersistedIsRefused(t *testing.T) {
	for _, at := range []atomicfile.Step{atomicfile.StepTempWritten, atomicfile.StepBackedUp} {
		t.Run("step"+strconv.Itoa(int(at)), func(t *testing.T) {
			cfg := sendTestConfig(t)
			b := startBroker(t, cfg)
			e := &sendEnv{b: b, cli: newTestClient(t)}
			if resp := e.invoke(t, adminCreateReq("Kept", 1, 6, "SINGLE_TAG")); resp.Code != remoting.Success {
				t.Fatalf("create: %d %q", resp.Code, resp.Remark)
			}
			crash := errors.New("killed")
			setTopicsWriteFile(b, func(path string, data []byte) error {
				return atomicfile.WriteHooked(path, data, 0o644, json.Valid, func(s atomicfile.Step) error {
					if s == at {
						return crash
					}
					return nil
				})
			})
			resp := e.invoke(t, adminCreateReq("Lost", 1, 6, "SINGLE_TAG"))
			if resp.Code != remoting.SystemError {
				t.Errorf("create with a failed write: code %d %q, want SYSTEM_ERROR", resp.Code, resp.Remark)
			}
			got, err := loadTopicNames(cfg.StoreDir)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got["Kept"]; !ok {
				t.Error("the acknowledged topic is not in the file a restart reads")
			}
			// The next write carries the change that failed.
			setTopicsWriteFile(b, store.WriteConfigFile)
			if resp := e.invoke(t, adminCreateReq("Next", 1, 6, "SINGLE_TAG")); resp.Code != remoting.Success {
				t.Fatalf("create: %d %q", resp.Code, resp.Remark)
			}
			got, err = loadTopicNames(cfg.StoreDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"Kept", "Lost", "Next"} {
				if _, ok := got[k]; !ok {
					t.Errorf("%s missing after the next write", k)
				}
			}
		})
	}
}

// Every admin change of a config file is refused when the file cannot be
// written (here a directory blocks its temporary file), rather than
// answered SUCCESS for a change a restart would lose.
func TestAdminConfigChangesNotPersistedRefused(t *testing.T) {
	e := sendTestBroker(t, nil)
	configDir := filepath.Join(e.b.cfg.StoreDir, "config")
	if resp := e.invoke(t, adminCreateReq("DelMe", 1, 6, "SINGLE_TAG")); resp.Code != remoting.Success {
		t.Fatalf("create: %d %q", resp.Code, resp.Remark)
	}
	group := remoting.NewSubscriptionGroupConfig("BlockedGroup")
	groupReq := func() *remoting.Command {
		return remoting.NewRequest(remoting.UpdateAndCreateSubscriptionGroup, nil, group.AppendJSON(nil, remoting.JSONStandard))
	}
	delTopic := remoting.DeleteTopicRequestHeader{Topic: "DelMe"}
	delGroup := remoting.DeleteSubscriptionGroupRequestHeader{GroupName: "BlockedGroup"}
	tests := []struct {
		name, file string
		req        func() *remoting.Command
		name2      string // in the file after the retry, or not
		present    bool
	}{
		{"create topic", "topics.json", func() *remoting.Command { return adminCreateReq("Blocked", 1, 6, "SINGLE_TAG") }, "Blocked", true},
		{"delete topic", "topics.json", func() *remoting.Command {
			return remoting.NewRequest(remoting.DeleteTopicInBroker, delTopic.AppendExt(nil), nil)
		}, "DelMe", false},
		{"create group", "subscriptionGroup.json", groupReq, "BlockedGroup", true},
		{"delete group", "subscriptionGroup.json", func() *remoting.Command {
			return remoting.NewRequest(remoting.DeleteSubscriptionGroup, delGroup.AppendExt(nil), nil)
		}, "BlockedGroup", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			block := filepath.Join(configDir, tt.file+atomicfile.TempSuffix)
			// Not empty, so the failed write's clean-up cannot remove it.
			if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			resp := e.invoke(t, tt.req())
			if err := os.RemoveAll(block); err != nil {
				t.Fatal(err)
			}
			if resp.Code != remoting.SystemError {
				t.Errorf("code %d %q, want SYSTEM_ERROR", resp.Code, resp.Remark)
			}
			// Unblocked, the same request succeeds.
			if resp := e.invoke(t, tt.req()); resp.Code != remoting.Success {
				t.Errorf("retry: code %d %q", resp.Code, resp.Remark)
			}
			data, err := store.ReadConfigFile(filepath.Join(configDir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(data), `"`+tt.name2+`"`); got != tt.present {
				t.Errorf("after the retry %s lists %s: %v, want %v", tt.file, tt.name2, got, tt.present)
			}
		})
	}
}
