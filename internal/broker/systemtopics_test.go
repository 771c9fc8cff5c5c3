package broker

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// count returns how many records' messages contain msg.
func (l *logRecords) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if strings.Contains(r.Message, msg) {
			n++
		}
	}
	return n
}

// Every send code refuses every topic Java's NOT_ALLOWED_SEND_TOPIC_SET
// names and every rmq_sys_ topic with NO_PERMISSION and Java's remark;
// nothing is stored or created.
func TestSendToSystemTopicRefused(t *testing.T) {
	e := delayTestBroker(t, nil)
	topics := append(rocketmq.NotAllowedSendTopics(), topicTimer, rocketmq.SystemTopicPrefix+"REVIVE_LOG_x", rocketmq.SystemTopicPrefix+"new")
	batchBody, err := message.AppendBatch(nil, []*rocketmq.Message{{Topic: "x", Body: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	props := delayProps("REAL_TOPIC", "a/b", "REAL_QID", "2147483647", "TIMER_OUT_MS", "1")
	for _, topic := range topics {
		for _, code := range []int32{remoting.SendMessage, remoting.SendMessageV2, remoting.SendBatchMessage,
			remoting.SendReplyMessage, remoting.SendReplyMessageV2} {
			h := sendTestHeader(topic, 0, props)
			body := []byte("x")
			ext := h.AppendExt(nil)
			switch code {
			case remoting.SendMessageV2, remoting.SendReplyMessageV2:
				ext = h.V2().AppendExt(nil)
			case remoting.SendBatchMessage:
				h.Batch = true
				ext, body = h.V2().AppendExt(nil), batchBody
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := e.cli.Invoke(ctx, e.b.Addr(), remoting.NewRequest(code, ext, body))
			cancel()
			if err != nil {
				t.Fatalf("%s code %d: %v", topic, code, err)
			}
			want := "Sending message to topic[" + topic + "] is forbidden."
			if resp.Code != remoting.NoPermission || resp.Remark != want {
				t.Errorf("%s code %d: %d %q, want NO_PERMISSION %q", topic, code, resp.Code, resp.Remark, want)
			}
		}
		if n := e.b.store.MaxOffset(topic, 0); topic != topicTimer && n != 0 {
			t.Errorf("%s holds %d messages", topic, n)
		}
	}
	if n := e.b.store.MaxOffset(topicTimer, 0); n != 0 {
		t.Errorf("%s holds %d messages", topicTimer, n)
	}
	if _, ok := e.b.topics.get(rocketmq.SystemTopicPrefix + "new"); ok {
		t.Error("a refused rmq_sys_ topic was auto-created")
	}
	// Java's open system topics stay open.
	for _, topic := range []string{rocketmq.TopicAutoCreate, rocketmq.TopicBenchmark, rocketmq.TopicTrace} {
		h := sendTestHeader(topic, 0, "")
		if resp := e.invoke(sendV2Req(h, []byte("x"))); resp.Code != remoting.Success {
			t.Errorf("send to %s: %d %q", topic, resp.Code, resp.Remark)
		}
	}
}

func (e *delayEnv) invoke(req *remoting.Command) *remoting.Command {
	e.t.Helper()
	return invokeBroker(e.t, e.cli, e.b, req)
}

// parkedTarget is a REAL_TOPIC/REAL_QID pair of a parked record and
// whether it may be delivered.
type parkedTarget struct {
	topic, qid string
	ok         bool
}

// The targets of the probes: a forbidden system topic, a queue far beyond
// a topic that does not exist, a name with a slash, and the rest of the
// rules, next to deliverable ones.
var parkedTargets = []parkedTarget{
	{rocketmq.TopicSchedule, "500", false},
	{"NoSuchTopic", "2147483647", false},
	{"a/b", "0", false},
	{"", "0", false},
	{"Good", "x", false},
	{"Good", "-1", false},
	{"Good", "4", false}, // Good has 4 queues
	{topicTimer, "0", false},
	{rocketmq.TopicTransHalf, "0", false},
	{strings.Repeat("L", 128), "0", false},
	{"Good", "3", true},
	{"Created", "1", true}, // auto-created from TBW102 as a send would
}

// putParked stores a record into topic/queue as a client could before
// sends to rmq_sys_ topics were refused (or an older broker did).
func putParked(t *testing.T, b *Broker, topic string, queue int32, tagsCode int64, props map[string]string) {
	t.Helper()
	put := store.PutRequest{
		RecordFields: message.RecordFields{
			QueueID: queue, BornTimestamp: time.Now().UnixMilli(), BornHost: b.storeHost, StoreHost: b.storeHost,
			Body: []byte("parked"), Topic: topic, Properties: string(message.EncodeProperties(props)),
		},
		TagsCode: tagsCode,
		UniqKey:  props[rocketmq.PropertyUniqKey],
	}
	if _, err := b.store.PutMessage(context.Background(), &put); err != nil {
		t.Fatal(err)
	}
}

// checkParkedOutcome asserts that only the deliverable targets received a
// message and that nothing was created for the others.
func checkParkedOutcome(t *testing.T, b *Broker) {
	t.Helper()
	for _, pt := range parkedTargets {
		qid, err := strconv.Atoi(pt.qid)
		if err != nil || pt.topic == "" {
			continue
		}
		n := b.store.MaxOffset(pt.topic, int32(qid))
		if pt.topic == topicTimer || pt.topic == rocketmq.TopicSchedule {
			continue // they hold the parked records themselves
		}
		if pt.ok && n != 1 {
			t.Errorf("%s/%d holds %d messages, want the delivered one", pt.topic, qid, n)
		}
		if !pt.ok && n != 0 {
			t.Errorf("%s/%d holds %d messages, want none", pt.topic, qid, n)
		}
	}
	if n := b.store.MaxOffset(rocketmq.TopicSchedule, 499); n != 0 {
		t.Errorf("SCHEDULE_TOPIC_XXXX queue 500 got %d messages", n)
	}
	if _, ok := b.topics.get("NoSuchTopic"); ok {
		t.Error("a topic was created for an undeliverable message")
	}
}

// Timer records already in the store (as sends to rmq_sys_wheel_timer left
// them) are checked at delivery: each undeliverable one is logged once and
// dropped, before and after a restart; the others are delivered.
func TestTimerUndeliverableDropped(t *testing.T) {
	logs := &logRecords{}
	e := delayTestBroker(t, func(c *Config) { c.Logger = slog.New(logs) })
	e.b.topics.ensure("Good", 4, rocketmq.PermRead|rocketmq.PermWrite)
	due := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for i, pt := range parkedTargets {
		putParked(t, e.b, topicTimer, 0, 0, map[string]string{
			rocketmq.PropertyRealTopic: pt.topic, rocketmq.PropertyRealQueueID: pt.qid,
			rocketmq.PropertyTimerOutMS: due, rocketmq.PropertyUniqKey: "TIMERPROBE" + strconv.Itoa(i),
		})
	}
	// The records are found by the restart's scan, as after an upgrade.
	e.restart(true)
	testutil.WaitFor(t, 10*time.Second, "timer records finished", func() bool {
		return timerFinishedUpTo(e.b.timers, int64(len(parkedTargets)))
	})
	checkParkedOutcome(t, e.b)
	bad := 0
	for _, pt := range parkedTargets {
		if !pt.ok {
			bad++
		}
	}
	// "" and "x"/"-1" are dropped by the older REAL_TOPIC/REAL_QID check.
	const earlier = 3
	if n := logs.count("parked message undeliverable"); n != bad-earlier {
		t.Errorf("%d undeliverable messages logged, want %d", n, bad-earlier)
	}
	e.restart(true)
	if n := e.b.timers.pendingCount(); n != 0 || !timerFinishedUpTo(e.b.timers, int64(len(parkedTargets))) {
		t.Errorf("%d timer messages pending again after a restart", n)
	}
	checkParkedOutcome(t, e.b)
}

// timerFinishedUpTo reports whether every timer queue offset below n is
// finished (delivered or dropped).
func timerFinishedUpTo(ts *timerService, n int64) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.done.nextGap(0) >= n
}

// Delayed records in SCHEDULE_TOPIC_XXXX get the same checks: the level's
// offset moves past each undeliverable one instead of retrying it.
func TestScheduleUndeliverableDropped(t *testing.T) {
	logs := &logRecords{}
	e := delayTestBroker(t, func(c *Config) { c.Logger = slog.New(logs) })
	e.b.topics.ensure("Good", 4, rocketmq.PermRead|rocketmq.PermWrite)
	now := time.Now().UnixMilli()
	for i, pt := range parkedTargets {
		putParked(t, e.b, rocketmq.TopicSchedule, int32(DelayLevelQueueID(1)), now, map[string]string{
			rocketmq.PropertyRealTopic: pt.topic, rocketmq.PropertyRealQueueID: pt.qid,
			rocketmq.PropertyDelayLevel: "1", rocketmq.PropertyUniqKey: "DELAYPROBE" + strconv.Itoa(i),
		})
	}
	testutil.WaitFor(t, 10*time.Second, "delayed records handled", func() bool {
		return e.b.schedule.offset(1) == int64(len(parkedTargets))
	})
	checkParkedOutcome(t, e.b)
	if n := logs.count("parked message undeliverable"); n != len(parkedTargets)-2-3 {
		t.Errorf("%d undeliverable messages logged, want %d", n, len(parkedTargets)-2-3)
	}
}
