package broker

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// pullEnv is a started broker and a client talking to it.
type pullEnv struct {
	b   *Broker
	cli *transport.Client
	cfg Config
}

// pullTestConfig is a small broker in dir. The periodic long-poll check and
// the offset flush are far off so tests see only the paths they exercise.
func pullTestConfig(dir string) Config {
	return Config{
		StoreDir:             dir,
		ListenAddr:           "127.0.0.1:0",
		CommitLogSegmentSize: 4 << 20,
		ConsumeQueueEntries:  1024,
		IndexSlots:           1024,
		IndexEntries:         4096,
		FlushInterval:        50 * time.Millisecond,
		LongPollCheck:        time.Minute,
		OffsetFlushInterval:  time.Hour,
	}
}

func pullTestBroker(t testing.TB, mod func(*Config)) *pullEnv {
	t.Helper()
	cfg := pullTestConfig(t.TempDir())
	if mod != nil {
		mod(&cfg)
	}
	b := startBroker(t, cfg)
	cli := newTestClient(t)
	return &pullEnv{b: b, cli: cli, cfg: cfg}
}

func (e *pullEnv) invoke(t testing.TB, req *remoting.Command) *remoting.Command {
	t.Helper()
	return invokeBroker(t, e.cli, e.b, req)
}

// pullAsync is the outcome of a pull sent with invokeAsync.
type pullAsync struct {
	resp *remoting.Command
	err  error
	at   time.Time
}

// invokeAsync sends req and delivers its outcome on the returned channel.
func (e *pullEnv) invokeAsync(t testing.TB, req *remoting.Command) <-chan pullAsync {
	t.Helper()
	ch := make(chan pullAsync, 1)
	err := e.cli.InvokeAsyncTimeout(context.Background(), e.b.Addr(), req, 30*time.Second, func(resp *remoting.Command, err error) {
		ch <- pullAsync{resp, err, time.Now()}
	})
	if err != nil {
		t.Fatalf("InvokeAsync: %v", err)
	}
	return ch
}

// wait returns the outcome or fails after d.
func pullWait(t testing.TB, ch <-chan pullAsync, d time.Duration) pullAsync {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("pull: %v", r.err)
		}
		return r
	case <-time.After(d):
		t.Fatalf("no response within %v", d)
	}
	return pullAsync{}
}

// pullNotYet fails if ch delivers within d.
func pullNotYet(t testing.TB, ch <-chan pullAsync, d time.Duration, what string) {
	t.Helper()
	select {
	case r := <-ch:
		code := int32(-1)
		if r.resp != nil {
			code = r.resp.Code
		}
		t.Fatalf("%s: answered early: code %d err %v", what, code, r.err)
	case <-time.After(d):
	}
}

var pullBornHost = netip.MustParseAddrPort("10.1.2.3:4567")

// put stores one message straight into the store (the send path is tested
// elsewhere); the dispatch wakes held pulls as a send would.
func (e *pullEnv) put(t testing.TB, topic string, queue int32, tag string, body []byte) store.PutResult {
	t.Helper()
	key := "k-big"
	if len(body) < 64 {
		key = "k-" + string(body)
	}
	props := map[string]string{rocketmq.PropertyKeys: key}
	if tag != "" {
		props[rocketmq.PropertyTags] = tag
	}
	res, err := e.b.store.PutMessage(context.Background(), &store.PutRequest{
		RecordFields: message.RecordFields{
			Topic:         topic,
			QueueID:       queue,
			Body:          body,
			Properties:    message.EncodeProperties(props),
			BornTimestamp: time.Now().UnixMilli(),
			BornHost:      pullBornHost,
			StoreHost:     e.b.storeHost,
		},
		TagsCode: message.TagHash(tag),
	})
	if err != nil {
		t.Fatalf("PutMessage: %v", err)
	}
	return res
}

// pullArgs builds a pull request; sub != nil sets the subscription flag.
type pullArgs struct {
	code      int32
	group     string
	topic     string
	queue     int32
	offset    int64
	max       int32
	flags     int32
	sub       *string
	exprType  *string
	commit    int64
	suspendMs int64
	subVer    int64
}

func (a pullArgs) req() *remoting.Command {
	h := remoting.PullMessageRequestHeader{
		ConsumerGroup:        a.group,
		Topic:                a.topic,
		QueueID:              a.queue,
		QueueOffset:          a.offset,
		MaxMsgNums:           a.max,
		SysFlag:              a.flags,
		CommitOffset:         a.commit,
		SuspendTimeoutMillis: a.suspendMs,
		Subscription:         a.sub,
		SubVersion:           a.subVer,
		ExpressionType:       a.exprType,
	}
	if a.sub != nil {
		h.SysFlag |= remoting.PullFlagSubscription
	}
	if h.MaxMsgNums == 0 {
		h.MaxMsgNums = 32
	}
	code := a.code
	if code == 0 {
		code = remoting.PullMessage
	}
	return remoting.NewRequest(code, h.AppendExt(nil), nil)
}

func pstr(s string) *string { return &s }

// pullExpect checks code, remark and the offsets of a pull response.
func pullExpect(t testing.TB, resp *remoting.Command, code int32, remark string, next, min, max int64) {
	t.Helper()
	if resp.Code != code || resp.Remark != remark {
		t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, code, remark)
	}
	h := pullHeader(t, resp)
	if h.NextBeginOffset != next || h.MinOffset != min || h.MaxOffset != max || h.SuggestWhichBrokerID != 0 {
		t.Fatalf("header %+v, want next %d min %d max %d broker 0", h, next, min, max)
	}
	if code != remoting.Success && len(resp.Body) != 0 {
		t.Fatalf("code %d with a %d-byte body", code, len(resp.Body))
	}
}

func pullDecode(t testing.TB, body []byte) []*rocketmq.MessageExt {
	t.Helper()
	msgs, err := message.DecodeRecords(body)
	if err != nil {
		t.Fatalf("DecodeRecords: %v\n%s", err, hex.Dump(body[:min(len(body), 512)]))
	}
	return msgs
}

func pullOffsets(msgs []*rocketmq.MessageExt) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.QueueOffset
	}
	return out
}

func TestPullFoundRecords(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullT", 2, rocketmq.PermRead|rocketmq.PermWrite)
	var puts []store.PutResult
	for i, tag := range []string{"TagA", "TagB", "TagA"} {
		puts = append(puts, e.put(t, "PullT", 1, tag, []byte("body-"+strconv.Itoa(i))))
	}
	for _, code := range []int32{remoting.PullMessage, remoting.LitePullMessage} {
		t.Run(remoting.RequestCodeName(code), func(t *testing.T) {
			resp := e.invoke(t, pullArgs{code: code, group: "g", topic: "PullT", queue: 1, sub: pstr("*")}.req())
			pullExpect(t, resp, remoting.Success, "FOUND", 3, 0, 3)
			msgs := pullDecode(t, resp.Body)
			if len(msgs) != 3 {
				t.Fatalf("%d messages, want 3", len(msgs))
			}
			for i, m := range msgs {
				p := puts[i]
				if m.Topic != "PullT" || m.QueueID != 1 || m.QueueOffset != int64(i) || string(m.Body) != "body-"+strconv.Itoa(i) ||
					m.CommitLogOffset != p.PhysicalOffset || m.StoreTimestamp != p.StoreTimestamp ||
					m.BornHost != pullBornHost || m.StoreHost != e.b.storeHost ||
					m.Properties[rocketmq.PropertyKeys] != "k-body-"+strconv.Itoa(i) {
					t.Errorf("message %d: %+v (put %+v)", i, m, p)
				}
			}
			if msgs[1].Properties[rocketmq.PropertyTags] != "TagB" {
				t.Errorf("tags of message 1: %q", msgs[1].Properties[rocketmq.PropertyTags])
			}
		})
	}
	t.Run("maxMsgNums", func(t *testing.T) {
		resp := e.invoke(t, pullArgs{group: "g", topic: "PullT", queue: 1, max: 2, sub: pstr("")}.req())
		pullExpect(t, resp, remoting.Success, "FOUND", 2, 0, 3)
		if got := pullOffsets(pullDecode(t, resp.Body)); fmt.Sprint(got) != "[0 1]" {
			t.Fatalf("offsets %v", got)
		}
		// Java returns one message when maxMsgNums is 0 or less.
		resp = e.invoke(t, pullArgs{group: "g", topic: "PullT", queue: 1, offset: 1, max: -1, sub: pstr("*")}.req())
		pullExpect(t, resp, remoting.Success, "FOUND", 2, 0, 3)
	})
	if got := e.b.stats.get.Load(); got != 3+3+2+1 {
		t.Errorf("broker get count %d, want 9", got)
	}
}

func TestPullTagFilter(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullTags", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for i, tag := range []string{"TagA", "TagB", "TagC", "", "TagA"} {
		e.put(t, "PullTags", 0, tag, []byte{byte('0' + i)})
	}
	for _, tc := range []struct {
		sub     string
		offset  int64
		code    int32
		remark  string
		next    int64
		offsets string
	}{
		{"TagA||TagB", 0, remoting.Success, "FOUND", 5, "[0 1 4]"},
		{" TagA || TagB ", 1, remoting.Success, "FOUND", 5, "[1 4]"},
		{"TagC", 0, remoting.Success, "FOUND", 5, "[2]"},
		{"*", 3, remoting.Success, "FOUND", 5, "[3 4]"},
		{"TagZ", 0, remoting.PullRetryImmediately, "NO_MATCHED_MESSAGE", 5, "[]"},
		{"TagB", 2, remoting.PullRetryImmediately, "NO_MATCHED_MESSAGE", 5, "[]"},
	} {
		t.Run(tc.sub+"@"+strconv.FormatInt(tc.offset, 10), func(t *testing.T) {
			resp := e.invoke(t, pullArgs{group: "g", topic: "PullTags", offset: tc.offset, sub: pstr(tc.sub), exprType: pstr("TAG")}.req())
			pullExpect(t, resp, tc.code, tc.remark, tc.next, 0, 5)
			got := "[]"
			if len(resp.Body) > 0 {
				got = fmt.Sprint(pullOffsets(pullDecode(t, resp.Body)))
			}
			if got != tc.offsets {
				t.Fatalf("offsets %s, want %s", got, tc.offsets)
			}
		})
	}
}

func TestPullStatuses(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullS", 2, rocketmq.PermRead|rocketmq.PermWrite)
	e.b.topics.ensure("PullWO", 1, rocketmq.PermWrite)
	for i := range 3 {
		e.put(t, "PullS", 0, "TagA", []byte{byte(i)})
	}
	type want struct {
		code   int32
		remark string
		next   int64
		min    int64
		max    int64
	}
	for _, tc := range []struct {
		name string
		args pullArgs
		want want
	}{
		{"overflow one", pullArgs{topic: "PullS", offset: 3}, want{remoting.PullNotFound, "OFFSET_OVERFLOW_ONE", 3, 0, 3}},
		{"overflow badly", pullArgs{topic: "PullS", offset: 7}, want{remoting.PullOffsetMoved, "OFFSET_OVERFLOW_BADLY", 3, 0, 3}},
		{"empty queue at 0", pullArgs{topic: "PullS", queue: 1}, want{remoting.PullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0}},
		{"empty queue at 5", pullArgs{topic: "PullS", queue: 1, offset: 5}, want{remoting.PullOffsetMoved, "NO_MESSAGE_IN_QUEUE", 0, 0, 0}},
		// The suspend flag without long polling's chance (offset moved) is answered at once.
		{"moved with suspend", pullArgs{topic: "PullS", offset: 9, flags: remoting.PullFlagSuspend, suspendMs: 20000}, want{remoting.PullOffsetMoved, "OFFSET_OVERFLOW_BADLY", 3, 0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args.group = "g"
			tc.args.sub = pstr("*")
			resp := e.invoke(t, tc.args.req())
			pullExpect(t, resp, tc.want.code, tc.want.remark, tc.want.next, tc.want.min, tc.want.max)
		})
	}

	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	for _, tc := range []struct {
		name   string
		req    *remoting.Command
		code   int32
		remark string // a trailing "*" means prefix
	}{
		{"unknown topic", pullArgs{group: "g", topic: "NoSuchTopic", sub: pstr("*")}.req(),
			remoting.TopicNotExist, "topic[NoSuchTopic] not exist, apply first please! " + faq},
		{"queue id too big", pullArgs{group: "g", topic: "PullS", queue: 2, sub: pstr("*")}.req(),
			remoting.SystemError, "queueId[2] is illegal, topic:[PullS] topicConfig.readQueueNums:[2] consumer:[/127.0.0.1:*"},
		{"negative queue id", pullArgs{group: "g", topic: "PullS", queue: -1, sub: pstr("*")}.req(),
			remoting.SystemError, "queueId[-1] is illegal, topic:[PullS] topicConfig.readQueueNums:[2] consumer:[/127.0.0.1:*"},
		{"topic not readable", pullArgs{group: "g", topic: "PullWO", sub: pstr("*")}.req(),
			remoting.NoPermission, "the topic[PullWO] pulling message is forbidden"},
		{"sql92", pullArgs{group: "g", topic: "PullS", sub: pstr("a > 1"), exprType: pstr("SQL92")}.req(),
			remoting.SystemError, "The broker does not support consumer to filter message by SQL92"},
		{"sql92 empty", pullArgs{group: "g", topic: "PullS", sub: pstr(""), exprType: pstr("SQL92")}.req(),
			remoting.SubscriptionParseFailed, "parse the consumer's subscription failed"},
		{"no heartbeat", pullArgs{group: "gNoClients", topic: "PullS"}.req(),
			remoting.SubscriptionNotExist, "the consumer's group info not exist" + faq},
		{"missing header field", remoting.NewRequest(remoting.PullMessage, remoting.ExtFields{{Key: "topic", Value: "PullS"}}, nil),
			remoting.SystemError, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.invoke(t, tc.req)
			ok := resp.Remark == tc.remark
			if p, isPrefix := strings.CutSuffix(tc.remark, "*"); isPrefix {
				ok = strings.HasPrefix(resp.Remark, p)
			}
			if resp.Code != tc.code || !ok {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
			if len(resp.Body) != 0 {
				t.Fatalf("body of %d bytes", len(resp.Body))
			}
		})
	}
}

func TestPullBrokerAndGroupChecks(t *testing.T) {
	t.Run("broker not readable", func(t *testing.T) {
		e := pullTestBroker(t, func(c *Config) { c.BrokerPermission = rocketmq.PermWrite })
		e.b.topics.ensure("PullP", 1, rocketmq.PermRead|rocketmq.PermWrite)
		resp := e.invoke(t, pullArgs{group: "g", topic: "PullP", sub: pstr("*")}.req())
		if want := "the broker[127.0.0.1] pulling message is forbidden"; resp.Code != remoting.NoPermission || resp.Remark != want {
			t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
		}
	})
	t.Run("unknown group, auto-create off", func(t *testing.T) {
		e := pullTestBroker(t, func(c *Config) { c.DisableAutoCreateGroup = true })
		e.b.topics.ensure("PullP", 1, rocketmq.PermRead|rocketmq.PermWrite)
		resp := e.invoke(t, pullArgs{group: "gNew", topic: "PullP", sub: pstr("*")}.req())
		want := "subscription group [gNew] does not exist, \nSee http://rocketmq.apache.org/docs/faq/ for further details."
		if resp.Code != remoting.SubscriptionGroupNotExist || resp.Remark != want {
			t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
		}
	})
}

// pullHeartbeat registers a consumer of group with one subscription through
// HEART_BEAT on the env's client connection.
func (e *pullEnv) heartbeat(t testing.TB, group, model string, subs ...remoting.SubscriptionData) {
	t.Helper()
	hb := remoting.HeartbeatData{
		ClientID: "127.0.0.1@pulltest",
		ConsumerDataSet: []remoting.ConsumerData{{
			GroupName:           group,
			ConsumeType:         remoting.ConsumeTypePassively,
			MessageModel:        model,
			ConsumeFromWhere:    "CONSUME_FROM_LAST_OFFSET",
			SubscriptionDataSet: subs,
		}},
	}
	resp := e.invoke(t, remoting.NewRequest(remoting.HeartBeat, nil, hb.AppendJSON(nil, remoting.JSONStandard)))
	if resp.Code != remoting.Success {
		t.Fatalf("heartbeat: code %d %q", resp.Code, resp.Remark)
	}
}

func TestPullHeartbeatSubscription(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullH", 1, rocketmq.PermRead|rocketmq.PermWrite)
	e.b.topics.ensure("PullOther", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for _, tag := range []string{"TagA", "TagB", "TagA"} {
		e.put(t, "PullH", 0, tag, []byte(tag))
	}
	sub := message.BuildSubscription("TagB")
	e.heartbeat(t, "gH", "CLUSTERING", remoting.SubscriptionData{
		Topic: "PullH", SubString: sub.Expression, TagsSet: sub.Tags, CodeSet: sub.Codes,
		SubVersion: 1000, ExpressionType: remoting.ExpressionTypeTag,
	})
	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	for _, tc := range []struct {
		name   string
		args   pullArgs
		code   int32
		remark string
	}{
		{"filters by the heartbeat's tags", pullArgs{group: "gH", topic: "PullH", subVer: 1000}, remoting.Success, "FOUND"},
		{"go client sends subVersion 0", pullArgs{group: "gH", topic: "PullH"}, remoting.Success, "FOUND"},
		{"newer subscription than the heartbeat", pullArgs{group: "gH", topic: "PullH", subVer: 1001},
			remoting.SubscriptionNotLatest, "the consumer's subscription not latest"},
		{"topic not subscribed", pullArgs{group: "gH", topic: "PullOther"},
			remoting.SubscriptionNotExist, "the consumer's subscription not exist" + faq},
		{"request subscription wins", pullArgs{group: "gH", topic: "PullH", sub: pstr("TagA")}, remoting.Success, "FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.invoke(t, tc.args.req())
			if resp.Code != tc.code || resp.Remark != tc.remark {
				t.Fatalf("code %d remark %q, want %d %q", resp.Code, resp.Remark, tc.code, tc.remark)
			}
			if resp.Code != remoting.Success {
				return
			}
			want := "[1]"
			if tc.args.sub != nil {
				want = "[0 2]"
			}
			if got := fmt.Sprint(pullOffsets(pullDecode(t, resp.Body))); got != want {
				t.Fatalf("offsets %s, want %s", got, want)
			}
		})
	}
}

func TestPullBroadcastForbidden(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullB", 1, rocketmq.PermRead|rocketmq.PermWrite)
	g := remoting.NewSubscriptionGroupConfig("gB")
	g.ConsumeBroadcastEnable = false
	e.b.groups.put(g)
	e.heartbeat(t, "gB", "BROADCASTING", remoting.SubscriptionData{Topic: "PullB", SubString: "*", ExpressionType: "TAG"})
	resp := e.invoke(t, pullArgs{group: "gB", topic: "PullB"}.req())
	if want := "the consumer group[gB] can not consume by broadcast way"; resp.Code != remoting.NoPermission || resp.Remark != want {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
	g.ConsumeEnable = false
	e.b.groups.put(g)
	resp = e.invoke(t, pullArgs{group: "gB", topic: "PullB", sub: pstr("*")}.req())
	if want := "subscription group no permission, gB"; resp.Code != remoting.NoPermission || resp.Remark != want {
		t.Fatalf("code %d remark %q", resp.Code, resp.Remark)
	}
}

func TestPullCommitOffsetPiggyBack(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullC", 1, rocketmq.PermRead|rocketmq.PermWrite)
	for i := range 4 {
		e.put(t, "PullC", 0, "", []byte{byte(i)})
	}
	// Without the commit flag nothing is stored.
	e.invoke(t, pullArgs{group: "gC", topic: "PullC", sub: pstr("*"), commit: 9}.req())
	if off, ok := e.b.offsets.query("gC", "PullC", 0); ok {
		t.Fatalf("offset %d stored without the commit flag", off)
	}
	resp := e.invoke(t, pullArgs{group: "gC", topic: "PullC", offset: 2, sub: pstr("*"), flags: remoting.PullFlagCommitOffset, commit: 2}.req())
	pullExpect(t, resp, remoting.Success, "FOUND", 4, 0, 4)
	if off, ok := e.b.offsets.query("gC", "PullC", 0); !ok || off != 2 {
		t.Fatalf("committed %d %v, want 2", off, ok)
	}
	// An error answer commits nothing (Java returns before the commit).
	e.invoke(t, pullArgs{group: "gC", topic: "PullC", queue: 5, sub: pstr("*"), flags: remoting.PullFlagCommitOffset, commit: 3}.req())
	if off, _ := e.b.offsets.query("gC", "PullC", 0); off != 2 {
		t.Fatalf("committed %d after an illegal queue id", off)
	}

	// A held pull commits on arrival; its re-execution after the wake
	// commits nothing, so a later UPDATE_CONSUMER_OFFSET stands.
	ch := e.invokeAsync(t, pullArgs{group: "gC", topic: "PullC", offset: 4, sub: pstr("*"),
		flags: remoting.PullFlagCommitOffset | remoting.PullFlagSuspend, commit: 4, suspendMs: 20000}.req())
	pullWaitHeld(t, e.b, 1)
	// The handler commits right after parking the pull.
	testutil.WaitFor(t, 0, "the held pull's commit of 4", func() bool { off, _ := e.b.offsets.query("gC", "PullC", 0); return off == 4 })
	up := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "gC", Topic: "PullC", QueueID: 0, CommitOffset: 1}
	if r := e.invoke(t, remoting.NewRequest(remoting.UpdateConsumerOffset, up.AppendExt(nil), nil)); r.Code != remoting.Success {
		t.Fatalf("update: %d", r.Code)
	}
	e.put(t, "PullC", 0, "", []byte("x"))
	r := pullWait(t, ch, 5*time.Second)
	pullExpect(t, r.resp, remoting.Success, "FOUND", 5, 0, 5)
	if off, _ := e.b.offsets.query("gC", "PullC", 0); off != 1 {
		t.Fatalf("offset %d after the woken pull, want 1 (no commit on re-execution)", off)
	}
}

// pullWaitHeld waits until n pulls are parked.
func pullWaitHeld(t testing.TB, b *Broker, n int64) {
	t.Helper()
	if !testutil.Poll(0, func() bool { return b.pulls.held.Load() == n }) {
		t.Fatalf("%d pulls held, want %d", b.pulls.held.Load(), n)
	}
}

func TestPullLongPolling(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullL", 2, rocketmq.PermRead|rocketmq.PermWrite)
	held := func(q int32, off int64, sub string, suspendMs int64) <-chan pullAsync {
		return e.invokeAsync(t, pullArgs{group: "gL", topic: "PullL", queue: q, offset: off, sub: pstr(sub),
			flags: remoting.PullFlagSuspend, suspendMs: suspendMs}.req())
	}

	t.Run("woken by a message", func(t *testing.T) {
		ch := held(0, 0, "*", 20000)
		pullWaitHeld(t, e.b, 1)
		pullNotYet(t, ch, 150*time.Millisecond, "held pull on an empty queue")
		at := time.Now()
		e.put(t, "PullL", 0, "TagA", []byte("wake"))
		r := pullWait(t, ch, 5*time.Second)
		// Woken by the store, not at the end of its 20 s hold or by the
		// re-check every minute; 5 s leaves room for a loaded machine.
		if d := r.at.Sub(at); d > 5*time.Second {
			t.Errorf("answered %v after the store", d)
		} else {
			t.Logf("answered %v after the store", d)
		}
		pullExpect(t, r.resp, remoting.Success, "FOUND", 1, 0, 1)
		if msgs := pullDecode(t, r.resp.Body); len(msgs) != 1 || string(msgs[0].Body) != "wake" {
			t.Fatalf("messages %v", msgs)
		}
	})

	t.Run("other tags do not wake", func(t *testing.T) {
		ch := held(0, 1, "TagA", 20000)
		pullWaitHeld(t, e.b, 1)
		e.put(t, "PullL", 0, "TagB", []byte("no"))
		pullNotYet(t, ch, 200*time.Millisecond, "pull held for TagA after a TagB message")
		e.put(t, "PullL", 0, "TagA", []byte("yes"))
		r := pullWait(t, ch, 5*time.Second)
		pullExpect(t, r.resp, remoting.Success, "FOUND", 3, 0, 3)
		if got := fmt.Sprint(pullOffsets(pullDecode(t, r.resp.Body))); got != "[2]" {
			t.Fatalf("offsets %s", got)
		}
	})

	t.Run("other queues do not wake", func(t *testing.T) {
		ch := held(1, 0, "*", 20000)
		pullWaitHeld(t, e.b, 1)
		e.put(t, "PullL", 0, "TagA", []byte("q0"))
		pullNotYet(t, ch, 200*time.Millisecond, "pull on queue 1 after a message to queue 0")
		e.put(t, "PullL", 1, "TagA", []byte("q1"))
		pullExpect(t, pullWait(t, ch, 5*time.Second).resp, remoting.Success, "FOUND", 1, 0, 1)
	})

	t.Run("times out", func(t *testing.T) {
		for _, tc := range []struct {
			queue  int32
			offset int64
			remark string
		}{{0, 4, "OFFSET_OVERFLOW_ONE"}, {1, 1, "OFFSET_OVERFLOW_ONE"}} {
			start := time.Now()
			ch := held(tc.queue, tc.offset, "*", 300)
			r := pullWait(t, ch, 5*time.Second)
			d := r.at.Sub(start)
			if d < 300*time.Millisecond || d > 2*time.Second {
				t.Errorf("answered after %v, want about 300ms", d)
			}
			pullExpect(t, r.resp, remoting.PullNotFound, tc.remark, tc.offset, 0, tc.offset)
		}
		pullWaitHeld(t, e.b, 0)
	})

	t.Run("empty queue times out", func(t *testing.T) {
		e.b.topics.ensure("PullEmpty", 1, rocketmq.PermRead|rocketmq.PermWrite)
		start := time.Now()
		ch := e.invokeAsync(t, pullArgs{group: "gL", topic: "PullEmpty", sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 300}.req())
		r := pullWait(t, ch, 5*time.Second)
		if d := r.at.Sub(start); d < 300*time.Millisecond {
			t.Errorf("answered after %v", d)
		}
		pullExpect(t, r.resp, remoting.PullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0)
	})

	t.Run("many held pulls", func(t *testing.T) {
		var chans []<-chan pullAsync
		for range 50 {
			chans = append(chans, held(1, 1, "*", 20000))
		}
		pullWaitHeld(t, e.b, 50)
		e.put(t, "PullL", 1, "TagZ", []byte("all"))
		for _, ch := range chans {
			pullExpect(t, pullWait(t, ch, 5*time.Second).resp, remoting.Success, "FOUND", 2, 0, 2)
		}
		pullWaitHeld(t, e.b, 0)
	})

	t.Run("connection closed while held", func(t *testing.T) {
		cli, err := transport.New()
		if err != nil {
			t.Fatal(err)
		}
		req := pullArgs{group: "gL", topic: "PullL", queue: 1, offset: 2, sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req()
		if err := cli.InvokeAsyncTimeout(context.Background(), e.b.Addr(), req, 30*time.Second, func(*remoting.Command, error) {}); err != nil {
			t.Fatal(err)
		}
		pullWaitHeld(t, e.b, 1)
		cli.Close()
		e.put(t, "PullL", 1, "TagA", []byte("gone"))
		pullWaitHeld(t, e.b, 0)
		// The periodic check drops a held pull whose connection closed.
		cli2, _ := transport.New()
		req = pullArgs{group: "gL", topic: "PullL", queue: 1, offset: 3, sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req()
		if err := cli2.InvokeAsyncTimeout(context.Background(), e.b.Addr(), req, 30*time.Second, func(*remoting.Command, error) {}); err != nil {
			t.Fatal(err)
		}
		pullWaitHeld(t, e.b, 1)
		cli2.Close()
		testutil.WaitFor(t, 0, "the closed connection's pull dropped", func() bool { e.b.pulls.check(); return e.b.pulls.held.Load() == 0 })
	})
}

func TestPullLongPollingPeriodicCheck(t *testing.T) {
	e := pullTestBroker(t, func(c *Config) { c.LongPollCheck = 100 * time.Millisecond })
	e.b.topics.ensure("PullPC", 1, rocketmq.PermRead|rocketmq.PermWrite)
	ch := e.invokeAsync(t, pullArgs{group: "g", topic: "PullPC", sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req())
	pullWaitHeld(t, e.b, 1)
	// Store without the dispatch hook firing for the pull: the hold only
	// learns of the message through its periodic check.
	e.b.pulls.mu.Lock()
	held := e.b.pulls.byQueue[holdKey{"PullPC", 0}]
	if len(held) == 1 {
		held[0].filter = tagFilter{codes: []int32{1}} // the arrival does not match
	}
	e.b.pulls.mu.Unlock()
	if len(held) != 1 {
		t.Fatalf("held on PullPC@0: %d", len(held))
	}
	e.put(t, "PullPC", 0, "TagA", []byte("late"))
	r := pullWait(t, ch, 5*time.Second)
	// Re-executed with the request's own subscription ("*").
	pullExpect(t, r.resp, remoting.Success, "FOUND", 1, 0, 1)
}

func TestPullShortPolling(t *testing.T) {
	e := pullTestBroker(t, func(c *Config) {
		c.DisableLongPolling = true
		c.ShortPollingTime = 300 * time.Millisecond
	})
	e.b.topics.ensure("PullSP", 1, rocketmq.PermRead|rocketmq.PermWrite)
	start := time.Now()
	ch := e.invokeAsync(t, pullArgs{group: "g", topic: "PullSP", sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req())
	r := pullWait(t, ch, 5*time.Second)
	if d := r.at.Sub(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("short poll answered after %v, want about 300ms", d)
	}
	pullExpect(t, r.resp, remoting.PullNotFound, "NO_MESSAGE_IN_QUEUE", 0, 0, 0)

	// A message stored meanwhile is found at the latest by the end of the
	// short hold.
	ch = e.invokeAsync(t, pullArgs{group: "g", topic: "PullSP", sub: pstr("*"), flags: remoting.PullFlagSuspend, suspendMs: 20000}.req())
	pullWaitHeld(t, e.b, 1)
	e.put(t, "PullSP", 0, "", []byte("sp"))
	r = pullWait(t, ch, 3*time.Second)
	pullExpect(t, r.resp, remoting.Success, "FOUND", 1, 0, 1)
}

func TestPullCloseWithHeldPulls(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullX", 4, rocketmq.PermRead|rocketmq.PermWrite)
	var chans []<-chan pullAsync
	for q := range int32(4) {
		chans = append(chans, e.invokeAsync(t, pullArgs{group: "g", topic: "PullX", queue: q, sub: pstr("*"),
			flags: remoting.PullFlagSuspend, suspendMs: 60000}.req()))
	}
	pullWaitHeld(t, e.b, 4)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v with held pulls", d)
	}
	// Each held pull is answered (PULL_NOT_FOUND) or, if the connection went
	// first, failed; none is left hanging.
	for i, ch := range chans {
		select {
		case r := <-ch:
			if r.err == nil && r.resp.Code != remoting.PullNotFound {
				t.Errorf("pull %d: code %d", i, r.resp.Code)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("pull %d never completed", i)
		}
	}
}

// TestPullRespectsTransferCaps checks the store's caps (32 messages,
// 256 KiB) apply whatever maxMsgNums asks.
func TestPullRespectsTransferCaps(t *testing.T) {
	e := pullTestBroker(t, nil)
	e.b.topics.ensure("PullCap", 1, rocketmq.PermRead|rocketmq.PermWrite)
	body := bytes.Repeat([]byte("x"), 100)
	for range 40 {
		e.put(t, "PullCap", 0, "", body)
	}
	resp := e.invoke(t, pullArgs{group: "g", topic: "PullCap", max: 1000, sub: pstr("*")}.req())
	pullExpect(t, resp, remoting.Success, "FOUND", 32, 0, 40)
	big := bytes.Repeat([]byte("y"), 100<<10)
	for range 4 {
		e.put(t, "PullCap", 0, "", big)
	}
	resp = e.invoke(t, pullArgs{group: "g", topic: "PullCap", offset: 40, sub: pstr("*")}.req())
	if n := len(pullDecode(t, resp.Body)); n != 2 {
		t.Fatalf("%d messages of 100 KiB in one pull, want 2 (256 KiB cap)", n)
	}
}

func BenchmarkPull32x1KiB(b *testing.B) {
	e := pullTestBroker(b, nil)
	e.b.topics.ensure("PullBench", 1, rocketmq.PermRead|rocketmq.PermWrite)
	body := bytes.Repeat([]byte("b"), 1024)
	for range 1024 {
		e.put(b, "PullBench", 0, "TagA", body)
	}
	b.Run("handler", func(b *testing.B) {
		reqs := make([]*remoting.Command, 32)
		for i := range reqs {
			reqs[i] = pullArgs{group: "g", topic: "PullBench", offset: int64(i * 32), sub: pstr("TagA")}.req()
		}
		b.ReportAllocs()
		b.SetBytes(32 * 1024)
		b.ResetTimer()
		for i := range b.N {
			resp, buf := e.b.pull(nil, reqs[i%len(reqs)], true)
			if resp.Code != remoting.Success || buf == nil {
				b.Fatalf("code %d", resp.Code)
			}
			e.b.pulls.putBuf(buf, resp.Body)
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(32 * 1024)
		ctx := context.Background()
		b.ResetTimer()
		for i := range b.N {
			resp, err := e.cli.Invoke(ctx, e.b.Addr(), pullArgs{group: "g", topic: "PullBench", offset: int64(i%32) * 32, sub: pstr("TagA")}.req())
			if err != nil || resp.Code != remoting.Success {
				b.Fatalf("pull: %v %v", err, resp)
			}
		}
	})
	// Many pulls in flight on one connection, as a consumer of many queues
	// has: their responses queue up behind each other on the way out.
	b.Run("wire-16-inflight", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(32 * 1024)
		b.SetParallelism(8)
		ctx := context.Background()
		var seq atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				off := seq.Add(1) % 32 * 32
				resp, err := e.cli.Invoke(ctx, e.b.Addr(), pullArgs{group: "g", topic: "PullBench", offset: off, sub: pstr("TagA")}.req())
				if err != nil || resp.Code != remoting.Success {
					b.Errorf("pull: %v %v", err, resp)
					return
				}
			}
		})
	})
}
