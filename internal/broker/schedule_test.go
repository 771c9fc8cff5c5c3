package broker

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// delayEnv is a broker that tests can stop (cleanly or by crashing) and
// reopen on the same store, and a client.
type delayEnv struct {
	t   testing.TB
	cfg Config
	b   *Broker
	cli *transport.Client
}

// delayTestConfig is a small broker with short delay levels and a fast
// delay check; flushes of offsets and timer progress only at shutdown
// unless a test changes OffsetFlushInterval.
func delayTestConfig(t testing.TB) Config {
	return Config{
		StoreDir:             t.TempDir(),
		ListenAddr:           "127.0.0.1:0",
		CommitLogSegmentSize: 16 << 20,
		ConsumeQueueEntries:  8192,
		IndexSlots:           4096,
		IndexEntries:         16384,
		FlushInterval:        50 * time.Millisecond,
		DelayLevels:          "100ms 300ms 500ms",
		DelayCheckInterval:   10 * time.Millisecond,
		TimerPrecision:       100 * time.Millisecond,
		OffsetFlushInterval:  time.Hour,
	}
}

func delayTestBroker(t testing.TB, mod func(*Config)) *delayEnv {
	t.Helper()
	cfg := delayTestConfig(t)
	if mod != nil {
		mod(&cfg)
	}
	cli, err := transport.New(transport.WithTimeout(5 * time.Second))
	if err != nil {
		t.Fatalf("transport.New: %v", err)
	}
	e := &delayEnv{t: t, cfg: cfg, cli: cli}
	e.start()
	t.Cleanup(func() {
		cli.Close()
		e.stop(true)
	})
	return e
}

func (e *delayEnv) start() {
	e.t.Helper()
	e.startWith(nil)
}

// startWith opens the broker, lets check look at it before it starts, and
// starts it.
func (e *delayEnv) startWith(check func(*Broker)) {
	e.t.Helper()
	b, err := New(e.cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	if check != nil {
		check(b)
	}
	if err := b.Start(); err != nil {
		b.Close(context.Background())
		e.t.Fatalf("Start: %v", err)
	}
	e.b = b
}

// stop closes the broker cleanly or crashes it.
func (e *delayEnv) stop(clean bool) {
	e.t.Helper()
	if e.b == nil {
		return
	}
	var err error
	if clean {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = e.b.Close(ctx)
		cancel()
	} else {
		err = e.b.Crash()
	}
	if err != nil && !errors.Is(err, store.ErrClosed) {
		e.t.Errorf("stop broker (clean=%v): %v", clean, err)
	}
	// Forget the connection the stop closed, so the next call dials the
	// restarted broker instead of failing on the old socket.
	e.cli.CloseConn(e.b.Addr())
	e.b = nil
}

func (e *delayEnv) restart(clean bool) {
	e.t.Helper()
	e.stop(clean)
	e.start()
}

// delayProps joins key/value pairs into a properties string.
func delayProps(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(message.PropertySeparator)
		}
		b.WriteString(kv[i] + string(rune(message.NameValueSeparator)) + kv[i+1])
	}
	return b.String()
}

// send sends one message with SEND_MESSAGE_V2 and returns the response.
func (e *delayEnv) send(topic string, queue int32, props string, body []byte) *remoting.Command {
	e.t.Helper()
	h := remoting.SendMessageRequestHeader{
		ProducerGroup:         "PG",
		Topic:                 topic,
		DefaultTopic:          rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4,
		QueueID:               queue,
		Flag:                  7,
		BornTimestamp:         time.Now().UnixMilli(),
		Properties:            &props,
		ReconsumeTimes:        remoting.Ptr(int32(2)),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), body))
	if err != nil {
		e.t.Fatalf("send: %v", err)
	}
	return resp
}

// sendOK sends and fails the test unless the broker answered SUCCESS.
func (e *delayEnv) sendOK(topic string, queue int32, props string, body []byte) *remoting.Command {
	e.t.Helper()
	resp := e.send(topic, queue, props, body)
	if resp.Code != remoting.Success {
		e.t.Fatalf("send to %s: code %d remark %q", topic, resp.Code, resp.Remark)
	}
	return resp
}

// read returns every message of a queue.
func (e *delayEnv) read(topic string, queue int32) []*rocketmq.MessageExt {
	e.t.Helper()
	var out []*rocketmq.MessageExt
	for off := int64(0); ; {
		res, err := e.b.store.GetMessages(nil, &store.GetRequest{Topic: topic, QueueID: queue, Offset: off, MaxMessages: 32})
		if err != nil {
			e.t.Fatalf("GetMessages %s/%d: %v", topic, queue, err)
		}
		if res.Messages == 0 {
			return out
		}
		msgs, err := message.DecodeRecords(res.Data)
		if err != nil {
			e.t.Fatalf("DecodeRecords: %v\n%s", err, hex.Dump(res.Data))
		}
		out = append(out, msgs...)
		off = res.NextBeginOffset
	}
}

// waitFor polls a queue until it holds n messages (or the deadline) and
// returns them with the time the n-th was first seen.
func (e *delayEnv) waitFor(topic string, queue int32, n int, deadline time.Duration) ([]*rocketmq.MessageExt, time.Time) {
	e.t.Helper()
	var seen time.Time
	if !testutil.Poll(deadline, func() bool { seen = time.Now(); return e.b.store.MaxOffset(topic, queue) >= int64(n) }) {
		e.t.Fatalf("%s/%d holds %d messages after %v, want %d", topic, queue, e.b.store.MaxOffset(topic, queue), deadline, n)
	}
	return e.read(topic, queue), seen
}

// settle waits d and checks the queue still holds exactly n. The wait is
// the assertion: nothing more is delivered during d.
func (e *delayEnv) settle(topic string, queue int32, n int, d time.Duration) []*rocketmq.MessageExt {
	e.t.Helper()
	time.Sleep(d)
	msgs := e.read(topic, queue)
	if len(msgs) != n {
		e.t.Fatalf("%s/%d holds %d messages, want exactly %d", topic, queue, len(msgs), n)
	}
	return msgs
}

// delayOffsets reads config/delayOffset.json.
func (e *delayEnv) delayOffsets() map[int32]int64 {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.cfg.StoreDir, "config", "delayOffset.json"))
	if err != nil {
		e.t.Fatalf("read delayOffset.json: %v", err)
	}
	if !json.Valid(data) {
		e.t.Fatalf("delayOffset.json is not strict JSON: %s", data)
	}
	var w remoting.DelayOffsetSerializeWrapper
	if err := w.DecodeJSON(data); err != nil {
		e.t.Fatalf("decode delayOffset.json: %v\n%s", err, data)
	}
	return w.OffsetTable
}

func TestParseDelayLevels(t *testing.T) {
	tests := []struct {
		in   string
		want []time.Duration
		err  bool
	}{
		{in: DefaultDelayLevelString, want: DefaultDelayLevels()},
		{in: "100ms 300ms  2s 1m 1h 1d", want: []time.Duration{100 * time.Millisecond, 300 * time.Millisecond,
			2 * time.Second, time.Minute, time.Hour, 24 * time.Hour}},
		{in: "", err: true},
		{in: "1s 2x", err: true},
		{in: "-5ms", err: true},
		{in: "ms", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseDelayLevels(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if tt.err {
				if !errors.Is(err, ErrInvalidDelayLevels) {
					t.Errorf("error %v does not match ErrInvalidDelayLevels", err)
				}
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("level %d = %v, want %v", i+1, got[i], tt.want[i])
				}
			}
		})
	}
	if _, err := New(Config{StoreDir: t.TempDir(), DelayLevels: "1s 5q"}); err == nil {
		t.Error("New accepted a bad delay level table")
	}
}

func TestScheduleDelivery(t *testing.T) {
	e := delayTestBroker(t, nil)
	props := delayProps("DELAY", "2", "TAGS", "TagD", "KEYS", "k1 k2", "WAIT", "true", "color", "blue",
		"TIMER_DELAY_SEC", "99")
	body := []byte("delayed body")
	before := time.Now().UnixMilli()
	e.sendOK("DelayT", 1, props, body)
	parked := e.read(rocketmq.TopicSchedule, 1)
	if len(parked) != 1 {
		t.Fatalf("schedule queue 1 holds %d", len(parked))
	}
	p := parked[0]

	msgs, seen := e.waitFor("DelayT", 1, 1, 5*time.Second)
	m := msgs[0]
	// Due 300 ms after the send (the broker takes its clock just before
	// storing), with slack for the check interval and a loaded machine.
	if delay := m.StoreTimestamp - before; delay < 300 || delay > 300+2000 {
		t.Errorf("delivered %d ms after the send, want 300 ms (+2 s slack)", delay)
	}
	if lat := seen.UnixMilli() - before; lat < 300 {
		t.Errorf("seen %d ms after the send, before the level's 300 ms", lat)
	}
	want := map[string]string{
		"TAGS": "TagD", "KEYS": "k1 k2", "WAIT": "false", "color": "blue", "REAL_TOPIC": "DelayT", "REAL_QID": "1",
		"UNIQ_KEY": p.Properties["UNIQ_KEY"], "CLUSTER": "DefaultCluster",
	}
	for k, v := range want {
		if m.Properties[k] != v {
			t.Errorf("property %s = %q, want %q (all %v)", k, m.Properties[k], v, m.Properties)
		}
	}
	for _, k := range []string{"DELAY", "TIMER_DELAY_SEC"} {
		if _, ok := m.Properties[k]; ok {
			t.Errorf("delivered message still has %s: %v", k, m.Properties)
		}
	}
	if len(m.Properties) != len(want) {
		t.Errorf("properties %v, want %v", m.Properties, want)
	}
	if string(m.Body) != string(body) || m.Flag != 7 || m.ReconsumeTimes != 2 || m.BornTimestamp != p.BornTimestamp ||
		m.BornHost != p.BornHost || m.SysFlag != p.SysFlag || m.Topic != "DelayT" || m.QueueID != 1 {
		t.Errorf("delivered %+v, parked %+v", m, p)
	}
	if m.MsgID != p.MsgID || m.CommitLogOffset == p.CommitLogOffset {
		t.Errorf("ids: delivered %s@%d, parked %s@%d", m.MsgID, m.CommitLogOffset, p.MsgID, p.CommitLogOffset)
	}
	ent, err := e.b.store.ConsumeQueueEntry("DelayT", 1, 0)
	if err != nil || ent.TagsCode != message.TagHash("TagD") {
		t.Errorf("tags code %d (%v), want the hash of TagD", ent.TagsCode, err)
	}
	// Indexed under its keys in the real topic.
	if res, err := e.b.store.QueryByKey("DelayT", "k2", 0, 0, time.Now().UnixMilli()+1000); err != nil || res.Messages != 1 {
		t.Errorf("QueryByKey k2: %d messages, %v", res.Messages, err)
	}

	// GET_ALL_DELAY_OFFSET answers with the table in fastjson form.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(remoting.GetAllDelayOffset, nil, nil))
	if err != nil || resp.Code != remoting.Success || string(resp.Body) != `{"offsetTable":{1:0,2:1,3:0}}` {
		t.Errorf("GET_ALL_DELAY_OFFSET: %v %+v %s", err, resp, resp.Body)
	}

	e.stop(true)
	got := e.delayOffsets()
	if len(got) != 3 || got[1] != 0 || got[2] != 1 || got[3] != 0 {
		t.Errorf("delayOffset.json table %v, want {1:0, 2:1, 3:0}", got)
	}
}

// TestScheduleLevelsInOrder sends several messages per level and checks
// each arrives after its level's delay and in order.
func TestScheduleLevelsInOrder(t *testing.T) {
	e := delayTestBroker(t, nil)
	levels := []int{3, 1, 2, 1, 3, 2}
	for i, l := range levels {
		e.sendOK("Order", 0, delayProps("DELAY", strconv.Itoa(l), "i", strconv.Itoa(i)), []byte{byte(i)})
	}
	msgs, _ := e.waitFor("Order", 0, len(levels), 5*time.Second)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Properties["i"])
	}
	// Level 1 (100 ms) first, then level 2, then level 3.
	if want := []string{"1", "3", "2", "5", "0", "4"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("delivery order %v, want %v", got, want)
	}
	e.settle("Order", 0, len(levels), 50*time.Millisecond)
}

// TestScheduleRestart stops the broker while messages wait: a clean stop
// or a crash, either before any offset was persisted. Every message is
// delivered exactly once.
func TestScheduleRestart(t *testing.T) {
	eachStop(t, func(t *testing.T, clean bool) {
		e := delayTestBroker(t, nil)
		// A goes out before the stop, B (500 ms) after the restart.
		e.sendOK("Restart", 0, delayProps("DELAY", "1", "id", "A"), []byte("A"))
		e.waitFor("Restart", 0, 1, 5*time.Second)
		e.sendOK("Restart", 0, delayProps("DELAY", "3", "id", "B"), []byte("B"))
		e.sendOK("Restart", 0, delayProps("DELAY", "1", "id", "C"), []byte("C"))
		e.waitFor("Restart", 0, 2, 5*time.Second)
		e.restart(clean)
		msgs, _ := e.waitFor("Restart", 0, 3, 5*time.Second)
		msgs = e.settle("Restart", 0, 3, 200*time.Millisecond)
		var ids []string
		for _, m := range msgs {
			ids = append(ids, m.Properties["id"])
		}
		if strings.Join(ids, "") != "ACB" {
			t.Errorf("delivered %v, want A C B once each", ids)
		}
		// A clean stop persisted the offsets; after a crash the service
		// verified level 1 against the index and moved past A and C.
		e.stop(true)
		if got := e.delayOffsets(); got[1] != 2 || got[3] != 1 {
			t.Errorf("delayOffset.json %v, want level 1 at 2 and level 3 at 1", got)
		}
	})
}

// TestScheduleCrashMidLevel crashes while a level is half delivered: the
// delivered prefix is recognised, the rest goes out once.
func TestScheduleCrashMidLevel(t *testing.T) {
	e := delayTestBroker(t, func(c *Config) { c.DelayLevels = "100ms 600ms" })
	for i := range 3 {
		e.sendOK("Mid", 0, delayProps("DELAY", "1", "id", strconv.Itoa(i)), []byte{byte(i)})
	}
	e.waitFor("Mid", 0, 3, 5*time.Second)
	for i := 3; i < 5; i++ {
		e.sendOK("Mid", 0, delayProps("DELAY", "2", "id", strconv.Itoa(i)), []byte{byte(i)})
	}
	e.restart(false)
	e.waitFor("Mid", 0, 5, 5*time.Second)
	msgs := e.settle("Mid", 0, 5, 200*time.Millisecond)
	for i, m := range msgs {
		if m.Properties["id"] != strconv.Itoa(i) {
			t.Errorf("message %d has id %s", i, m.Properties["id"])
		}
	}
}

// TestScheduleOffsetFile checks the periodic persistence and that Java's
// form of the file (bare integer keys) is read.
func TestScheduleOffsetFile(t *testing.T) {
	e := delayTestBroker(t, func(c *Config) { c.OffsetFlushInterval = 20 * time.Millisecond })
	e.sendOK("File", 0, delayProps("DELAY", "1"), []byte("x"))
	e.waitFor("File", 0, 1, 5*time.Second)
	var data []byte
	waitLevel1Done := func() {
		t.Helper()
		if !testutil.Poll(0, func() bool {
			data, _ = os.ReadFile(filepath.Join(e.cfg.StoreDir, "config", "delayOffset.json"))
			var w remoting.DelayOffsetSerializeWrapper
			return w.DecodeJSON(data) == nil && w.OffsetTable[1] == 1
		}) {
			t.Fatalf("delayOffset.json never recorded the delivery: %s", data)
		}
	}
	waitLevel1Done()
	if !strings.Contains(string(data), `"1":1`) {
		t.Errorf("delayOffset.json does not quote its keys: %s", data)
	}

	// A Java-written file with a stale offset beyond the queue is clamped.
	e.stop(true)
	java := "{\n\t\"offsetTable\":{1:0,2:7,3:0,18:4}\n}"
	if err := os.WriteFile(filepath.Join(e.cfg.StoreDir, "config", "delayOffset.json"), []byte(java), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start()
	// Level 1 restarts at 0: its only message is recognised as delivered
	// (the level moves past it) and not delivered again.
	waitLevel1Done()
	e.settle("File", 0, 1, 100*time.Millisecond)
	e.stop(true)
	if got := e.delayOffsets(); len(got) != 3 || got[1] != 1 || got[2] != 0 || got[3] != 0 {
		t.Errorf("delayOffset.json %v, want {1:1, 2:0, 3:0}", got)
	}
}
