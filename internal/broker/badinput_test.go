package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The "bad input" requirement, end to end against a running
// broker: every kind of bad request or frame gets its Java answer (or its
// connection closed), and afterwards the broker still serves and the
// messages acknowledged before are byte-for-byte what they were, also
// after a restart.

func badConfig(dir string, logs *testlog.Buffer) Config {
	return Config{
		StoreDir:               dir,
		ListenAddr:             "127.0.0.1:0",
		CommitLogSegmentSize:   1 << 20,
		ConsumeQueueEntries:    64,
		IndexSlots:             256,
		IndexEntries:           1024,
		FlushInterval:          20 * time.Millisecond,
		LongPollCheck:          100 * time.Millisecond,
		OffsetFlushInterval:    time.Hour,
		DisableAutoCreateGroup: true,
		Logger:                 logs.Logger(),
	}
}

// badFrame builds a frame by hand: length prefix, header word with
// serialize type st, header and body. length < 0 means the right one.
func badFrame(length int64, st byte, hdr, body []byte) []byte {
	if length < 0 {
		length = int64(4 + len(hdr) + len(body))
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(length))
	b = binary.BigEndian.AppendUint32(b, uint32(st)<<24|uint32(len(hdr)))
	b = append(b, hdr...)
	return append(b, body...)
}

func badSendHeader(topic string, queue int32, props string) *remoting.SendMessageRequestHeader {
	h := sendTestHeader(topic, queue, props)
	h.ProducerGroup, h.BrokerName = "BadPG", nil
	return h
}

func badSend(h *remoting.SendMessageRequestHeader, body []byte) *remoting.Command {
	return remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), body)
}

func badPull(group, topic string, queue int32, offset int64) *remoting.Command {
	sub := "*"
	h := remoting.PullMessageRequestHeader{
		ConsumerGroup: group, Topic: topic, QueueID: queue, QueueOffset: offset,
		MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription, Subscription: &sub,
	}
	return remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil)
}

// badProps is a 4.9.8 properties string of the pairs.
func badProps(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return message.EncodeProperties(m)
}

const (
	badTopic  = "BadKeep"
	badGroup  = "BadGoodGroup"
	badQueues = 4
)

// badReadAll pulls every queue of badTopic from offset 0 on a new
// connection and returns the raw FOUND bodies by queue (nil for an empty
// queue).
func badReadAll(t testing.TB, addr string) [][]byte {
	t.Helper()
	c := rawframe.Dial(t, addr)
	out := make([][]byte, badQueues)
	for q := range int32(badQueues) {
		resp := c.Call(badPull(badGroup, badTopic, q, 0))
		switch resp.Code {
		case remoting.Success:
			out[q] = resp.Body
		case remoting.PullNotFound:
		default:
			t.Fatalf("pull queue %d: code %d remark %q", q, resp.Code, resp.Remark)
		}
	}
	c.NetConn().Close()
	return out
}

func badSameBodies(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	for q := range want {
		if !bytes.Equal(got[q], want[q]) {
			t.Errorf("%s: queue %d records changed\n got:\n%s\nwant:\n%s", what, q,
				hex.Dump(got[q][:min(len(got[q]), 512)]), hex.Dump(want[q][:min(len(want[q]), 512)]))
		}
	}
}

func TestBadInputBrokerKeepsServing(t *testing.T) {
	logs := &testlog.Buffer{}
	cfg := badConfig(t.TempDir(), logs)
	b := startBroker(t, cfg)
	b.topics.ensure(badTopic, badQueues, rocketmq.PermRead|rocketmq.PermWrite)
	b.groups.put(remoting.NewSubscriptionGroupConfig(badGroup))
	addr := b.Addr()

	// Acknowledged messages, through the real client transport.
	cli := newTestClient(t)
	bodies := [][]byte{[]byte("first"), bytes.Repeat([]byte{0, 1, 2, 0xFF}, 1000), {0}, []byte("ünïcödé"), bytes.Repeat([]byte("x"), 200<<10)}
	for i, body := range bodies {
		h := badSendHeader(badTopic, int32(i%badQueues), badProps("TAGS", "Tag"+strconv.Itoa(i), "KEYS", "k"+strconv.Itoa(i), "UNIQ_KEY", "U"+strconv.Itoa(i)))
		resp, err := cli.Invoke(context.Background(), addr, badSend(h, body))
		if err != nil || resp.Code != remoting.Success {
			t.Fatalf("send %d: %v %+v", i, err, resp)
		}
	}
	before := badReadAll(t, addr)
	for q, body := range before {
		msgs, err := message.DecodeRecords(body)
		if err != nil {
			t.Fatalf("queue %d: %v", q, err)
		}
		for _, m := range msgs {
			i, _ := strconv.Atoi(strings.TrimPrefix(m.Properties["KEYS"], "k"))
			if !bytes.Equal(m.Body, bodies[i]) {
				t.Fatalf("queue %d message %d has another body", q, i)
			}
		}
	}

	// Requests that decode but are wrong: Java's code and remark, the
	// connection stays usable. One connection for all of them.
	c := rawframe.Dial(t, addr)
	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	keepTC, _ := b.topics.get(badTopic)
	answered := []struct {
		name   string
		req    *remoting.Command
		raw    []byte // instead of req: a hand-made frame with opaque 7
		code   int32
		remark string // a trailing "*" means prefix
	}{
		{"topic with illegal characters", badSend(badSendHeader("bad topic!", 0, ""), []byte("x")),
			nil, remoting.SystemError, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"topic with a path separator", badSend(badSendHeader("../commitlog", 0, ""), []byte("x")),
			nil, remoting.SystemError, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"topic with non-ASCII letters", badSend(badSendHeader("tópico", 0, ""), []byte("x")),
			nil, remoting.SystemError, "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"topic too long", badSend(badSendHeader(strings.Repeat("T", 128), 0, ""), []byte("x")),
			nil, remoting.SystemError, "The specified topic is longer than topic max length."},
		{"blank topic", badSend(badSendHeader(" \t", 0, ""), []byte("x")),
			nil, remoting.SystemError, "The specified topic is blank."},
		{"body over 4 MiB", badSend(badSendHeader(badTopic, 0, ""), make([]byte, 4<<20+1)),
			nil, remoting.MessageIllegal, msgIllegalRemark(4 << 20)},
		{"properties over 32767 bytes", badSend(badSendHeader(badTopic, 0, badProps("p", strings.Repeat("v", 32767))), []byte("x")),
			nil, remoting.MessageIllegal, msgIllegalRemark(4 << 20)},
		{"send to an unknown queue id", badSend(badSendHeader(badTopic, badQueues, ""), []byte("x")),
			nil, remoting.SystemError, "request queueId[4] is illegal, " + javaTopicConfigString(&keepTC) + " Producer: " + c.LocalAddr()},
		{"pull of an unknown queue id", badPull(badGroup, badTopic, 9, 0),
			nil, remoting.SystemError, "queueId[9] is illegal, topic:[BadKeep] topicConfig.readQueueNums:[4] consumer:[/" + c.LocalAddr() + "]"},
		{"pull of a negative queue id", badPull(badGroup, badTopic, -1, 0),
			nil, remoting.SystemError, "queueId[-1] is illegal, topic:[BadKeep] topicConfig.readQueueNums:[4] consumer:[/" + c.LocalAddr() + "]"},
		{"pull of an unknown topic", badPull(badGroup, "NoSuchTopic", 0, 0),
			nil, remoting.TopicNotExist, "topic[NoSuchTopic] not exist, apply first please! " + faq},
		{"pull of a path as topic", badPull(badGroup, "../commitlog", 0, 0),
			nil, remoting.TopicNotExist, "topic[../commitlog] not exist, apply first please! " + faq},
		{"pull of an unknown group, auto-create off", badPull("NoSuchGroup", badTopic, 0, 0),
			nil, remoting.SubscriptionGroupNotExist, "subscription group [NoSuchGroup] does not exist, " + faq},
		{"pull far past the end", badPull(badGroup, badTopic, 0, 1<<40),
			nil, remoting.PullOffsetMoved, "OFFSET_OVERFLOW_BADLY"},
		{"send without a header", remoting.NewRequest(remoting.SendMessageV2, nil, []byte("x")),
			nil, remoting.SystemError, "the custom field <a> is null"},
		{"send with a non-numeric queue id", remoting.NewRequest(remoting.SendMessageV2,
			remoting.ExtFields{{Key: "a", Value: "PG"}, {Key: "b", Value: badTopic}, {Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"},
				{Key: "e", Value: "one"}, {Key: "f", Value: "0"}, {Key: "g", Value: "0"}, {Key: "h", Value: "0"}}, []byte("x")),
			nil, remoting.SystemError, `the custom field <e> has an invalid value: "one"`},
		{"pull without a header", remoting.NewRequest(remoting.PullMessage, nil, nil),
			nil, remoting.SystemError, "the custom field <consumerGroup> is null"},
		{"corrupt batch body", func() *remoting.Command {
			h := badSendHeader(badTopic, 0, "")
			h.Batch = true
			return remoting.NewRequest(remoting.SendBatchMessage, h.V2().AppendExt(nil), []byte{0, 0, 0, 200, 0xDE, 0xAD})
		}(), nil, remoting.MessageIllegal, "rocketmq: batch element 0 at offset 0: *"},
		{"unknown request code", remoting.NewRequest(9999, nil, nil),
			nil, remoting.RequestCodeNotSupported, " request type 9999 not supported"},
		{"request code 0 from an empty JSON header", nil, badFrame(-1, 0, []byte(`{"opaque":7}`), nil),
			remoting.RequestCodeNotSupported, " request type 0 not supported"},
		// fastjson reads a quoted number as a number; so does the decoder.
		{"JSON header with a quoted code", nil, badFrame(-1, 0, []byte(`{"code":"310","opaque":7}`), nil),
			remoting.SystemError, "the custom field <a> is null"},
		{"send-back without a header", remoting.NewRequest(remoting.ConsumerSendMsgBack, nil, nil),
			nil, remoting.SystemError, "the custom field <offset> is null"},
		{"send-back of a negative offset", remoting.NewRequest(remoting.ConsumerSendMsgBack,
			remoting.ExtFields{{Key: "offset", Value: "-5"}, {Key: "group", Value: badGroup}, {Key: "delayLevel", Value: "0"}}, nil),
			nil, remoting.SystemError, "look message by offset failed, -5"},
		{"send-back of an offset past the end", remoting.NewRequest(remoting.ConsumerSendMsgBack,
			remoting.ExtFields{{Key: "offset", Value: "1099511627776"}, {Key: "group", Value: badGroup}, {Key: "delayLevel", Value: "0"}}, nil),
			nil, remoting.SystemError, "look message by offset failed, 1099511627776"},
		{"query by key without a header", remoting.NewRequest(remoting.QueryMessage, nil, nil),
			nil, remoting.SystemError, "the custom field <*"},
		{"query by key with a non-numeric maxNum", remoting.NewRequest(remoting.QueryMessage,
			remoting.ExtFields{{Key: "topic", Value: badTopic}, {Key: "key", Value: "k"}, {Key: "maxNum", Value: "many"},
				{Key: "beginTimestamp", Value: "0"}, {Key: "endTimestamp", Value: "1"}}, nil),
			nil, remoting.SystemError, `the custom field <maxNum> has an invalid value: "many"`},
		{"query by key, window reversed", remoting.NewRequest(remoting.QueryMessage,
			remoting.ExtFields{{Key: "topic", Value: badTopic}, {Key: "key", Value: "k"}, {Key: "maxNum", Value: "2147483647"},
				{Key: "beginTimestamp", Value: "9223372036854775807"}, {Key: "endTimestamp", Value: "-9223372036854775808"}}, nil),
			nil, remoting.QueryNotFound, "can not find message, maybe time range not correct"},
		{"view without a header", remoting.NewRequest(remoting.ViewMessageByID, nil, nil),
			nil, remoting.SystemError, "the custom field <offset> is null"},
		{"view of an offset past the end", remoting.NewRequest(remoting.ViewMessageByID,
			remoting.ExtFields{{Key: "offset", Value: "9223372036854775807"}}, nil),
			nil, remoting.SystemError, "can not find message by the offset, 9223372036854775807"},
		{"consumers of a topic without a header", remoting.NewRequest(remoting.QueryTopicConsumeByWho, nil, nil),
			nil, remoting.SystemError, "the custom field <topic> is null"},
		{"reset offset without a header", remoting.NewRequest(remoting.InvokeBrokerToResetOffset, nil, nil),
			nil, remoting.SystemError, "the custom field <*"},
		{"running info of a client that is not there", remoting.NewRequest(remoting.GetConsumerRunningInfo,
			remoting.ExtFields{{Key: "consumerGroup", Value: badGroup}, {Key: "clientId", Value: "x"}, {Key: "jstackEnable", Value: "maybe"}}, nil),
			nil, remoting.SystemError, "The Consumer <" + badGroup + "> <x> not online"},
		{"consume directly with a garbage id", remoting.NewRequest(remoting.ConsumeMessageDirectly,
			remoting.ExtFields{{Key: "consumerGroup", Value: badGroup}, {Key: "clientId", Value: "x"}, {Key: "msgId", Value: "ZZ"}}, nil),
			nil, remoting.SystemError, "The Consumer <" + badGroup + "> <x> not online"},
		{"delete of a path as topic", remoting.NewRequest(remoting.DeleteTopicInBroker, remoting.ExtFields{{Key: "topic", Value: "../commitlog"}}, nil),
			nil, remoting.Success, ""},
		{"delete of the parent directory as topic", remoting.NewRequest(remoting.DeleteTopicInBroker, remoting.ExtFields{{Key: "topic", Value: ".."}}, nil),
			nil, remoting.Success, ""},
	}
	for _, tt := range answered {
		t.Run(tt.name, func(t *testing.T) {
			var resp *remoting.Command
			if tt.raw != nil {
				c.Write(tt.raw)
				r, err := c.ReadErr(5 * time.Second)
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if r.Opaque != 7 || !r.IsResponse() {
					t.Fatalf("got opaque %d flag %d", r.Opaque, r.Flag)
				}
				resp = r
			} else {
				resp = c.Call(tt.req)
			}
			ok := resp.Remark == tt.remark
			if p, isPrefix := strings.CutSuffix(tt.remark, "*"); isPrefix {
				ok = strings.HasPrefix(resp.Remark, p)
			}
			if resp.Code != tt.code || !ok {
				t.Fatalf("code %s remark %q, want %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark,
					remoting.ResponseCodeName(tt.code), tt.remark)
			}
			if resp.Code != remoting.Success && len(resp.Body) != 0 {
				t.Errorf("error answer with a %d-byte body", len(resp.Body))
			}
		})
	}

	t.Run("oneway bad send gets no answer", func(t *testing.T) {
		req := badSend(badSendHeader("bad topic!", 0, ""), []byte("x"))
		req.Flag |= remoting.FlagOneway
		c.Post(req)
		c.ExpectNothing(200 * time.Millisecond)
	})
	t.Run("stray response frame is ignored", func(t *testing.T) {
		resp := remoting.NewResponse(remoting.Success, "nobody asked")
		resp.Opaque = 424242
		frame, _ := resp.AppendFrame(nil)
		c.Write(frame)
		if r := c.Call(badPull(badGroup, badTopic, 0, 0)); r.Code != remoting.Success {
			t.Fatalf("pull after a stray response: code %d %q", r.Code, r.Remark)
		}
	})

	// Frames that cannot be decoded: that connection is closed with a
	// logged reason, nothing is answered.
	valid, _ := badSend(badSendHeader(badTopic, 0, ""), []byte("never stored")).AppendFrame(nil)
	badType := append([]byte(nil), valid...)
	badType[4] = 2
	closing := []struct {
		name   string
		raw    []byte
		reason string // in the log line
	}{
		{"HTTP request", []byte("GET / HTTP/1.1\r\nHost: broker\r\n\r\n"), "frame too large"},
		{"TLS client hello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03}, "frame too large"},
		{"binary junk", append(binary.BigEndian.AppendUint32(nil, 16), bytes.Repeat([]byte{0xFF}, 16)...), "malformed frame"},
		{"negative length", []byte{0x80, 0, 0, 0, 1, 2, 3, 4}, "malformed frame"},
		{"length -1", []byte{0xFF, 0xFF, 0xFF, 0xFF}, "malformed frame"},
		{"length just over 16 MiB", binary.BigEndian.AppendUint32(nil, 16<<20-3), "frame too large"},
		{"length 2 GiB", binary.BigEndian.AppendUint32(nil, 0x7FFFFFFF), "frame too large"},
		{"length 0", []byte{0, 0, 0, 0, 0, 0, 0, 0}, "malformed frame"},
		{"length too short for the header word", []byte{0, 0, 0, 2, 0, 0}, "malformed frame"},
		{"header longer than the frame", badFrame(8, 0, bytes.Repeat([]byte{'{'}, 100), nil)[:12], "malformed frame"},
		{"bad serialize type", badType, "malformed frame"},
		{"malformed JSON header", badFrame(-1, 0, []byte(`{"code":`), nil), "malformed frame"},
		{"JSON header with a non-numeric code", badFrame(-1, 0, []byte(`{"code":"x","opaque":1}`), nil), "malformed frame"},
		{"JSON header not an object", badFrame(-1, 0, []byte(`null`), nil), "malformed frame"},
		{"JSON header with trailing bytes", badFrame(-1, 0, []byte(`{"code":310} !`), nil), "malformed frame"},
		{"binary header too short", badFrame(-1, 1, []byte{0, 1, 2}, nil), "malformed frame"},
		{"binary header remark past its end", badFrame(-1, 1, append(make([]byte, 14), 0x7F, 0, 0, 0, 0, 0, 0, 0, 0), nil), "malformed frame"},
		{"binary header extFields past its end", badFrame(-1, 1, append(make([]byte, 18), 0x00, 0xFF, 0xFF, 0xFF), nil), "malformed frame"},
	}
	for _, tt := range closing {
		t.Run(tt.name, func(t *testing.T) {
			n := logs.Count("bad frame")
			bc := rawframe.Dial(t, addr)
			bc.Write(tt.raw)
			bc.ExpectClosed(5 * time.Second)
			testutil.WaitFor(t, 0, "the close logged", func() bool { return logs.Count("bad frame") != n })
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "bad frame") {
					line = l
				}
			}
			if !strings.Contains(line, tt.reason) || !strings.Contains(line, bc.LocalAddr()) {
				t.Errorf("log line %q does not name %q and the client %s", line, tt.reason, bc.LocalAddr())
			}
			// The well-behaved connection did not notice.
			if r := c.Call(badPull(badGroup, badTopic, 0, 0)); r.Code != remoting.Success {
				t.Fatalf("other connection: code %d %q", r.Code, r.Remark)
			}
		})
	}

	// Clients that go away in the middle of something.
	t.Run("half a frame, then disconnect", func(t *testing.T) {
		big, _ := badSend(badSendHeader("BadGone", 0, ""), make([]byte, 3<<20)).AppendFrame(nil)
		for _, cut := range []int{1, 3, 4, 7, 8, 20, len(valid) - 1, len(big) / 2, len(big) - 1} {
			f := valid
			if cut > len(valid) {
				f = big
			}
			bc := rawframe.Dial(t, addr)
			bc.Write(f[:cut])
			bc.NetConn().Close()
		}
	})
	t.Run("request, then disconnect before the answer", func(t *testing.T) {
		for i := range 5 {
			bc := rawframe.Dial(t, addr)
			bc.Post(badSend(badSendHeader("BadGone", 0, ""), make([]byte, 512<<10)))
			bc.Post(badPull(badGroup, badTopic, 0, 0))
			if i%2 == 0 {
				bc.NetConn().(*net.TCPConn).SetLinger(0) // reset instead of FIN
			}
			bc.NetConn().Close()
		}
	})
	t.Run("disconnect while a pull is held", func(t *testing.T) {
		var held []*rawframe.Conn
		for q := range int32(badQueues) {
			bc := rawframe.Dial(t, addr)
			h := remoting.PullMessageRequestHeader{
				ConsumerGroup: badGroup, Topic: badTopic, QueueID: q, QueueOffset: b.store.MaxOffset(badTopic, q),
				MaxMsgNums: 32, SysFlag: remoting.PullFlagSubscription | remoting.PullFlagSuspend,
				Subscription: remoting.Ptr("*"), SuspendTimeoutMillis: 20000,
			}
			bc.Post(remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil))
			held = append(held, bc)
		}
		pullWaitHeld(t, b, badQueues)
		for _, bc := range held {
			bc.NetConn().Close()
		}
		// The periodic check drops them all.
		testutil.WaitFor(t, 0, "the pulls of closed connections dropped", func() bool { return b.pulls.held.Load() == 0 })
	})

	// Nothing of the above reached badTopic, its records are unchanged,
	// the broker answers new clients, and nothing panicked.
	for q := range int32(badQueues) {
		want := int64(0)
		for i := range bodies {
			if int32(i%badQueues) == q {
				want++
			}
		}
		if got := b.store.MaxOffset(badTopic, q); got != want {
			t.Errorf("queue %d holds %d messages, want %d", q, got, want)
		}
	}
	badSameBodies(t, "after bad input", badReadAll(t, addr), before)
	resp, err := newTestClient(t).Invoke(context.Background(), addr, badSend(badSendHeader("BadAfter", 1, badProps("TAGS", "a")), []byte("after")))
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("send after bad input: %v %+v", err, resp)
	}
	if resp := c.Call(badPull(badGroup, "BadAfter", 1, 0)); resp.Code != remoting.Success {
		t.Fatalf("pull after bad input: code %d %q", resp.Code, resp.Remark)
	} else if msgs, err := message.DecodeRecords(resp.Body); err != nil || len(msgs) != 1 || string(msgs[0].Body) != "after" {
		t.Fatalf("pulled %v %v", msgs, err)
	}
	logs.NoPanic(t, "broker")

	// A restart reads back the same records.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	cfg.ListenAddr = "127.0.0.1:0"
	b2 := startBroker(t, cfg)
	badSameBodies(t, "after restart", badReadAll(t, b2.Addr()), before)
	logs.NoPanic(t, "broker")
}

// TestBadInputStoreDirUnusable: a store directory that cannot be used is a
// start-up error that names the path, never a panic or a half-started
// broker. The variants do not rely on file permissions, which root (as CI
// runs) ignores.
func TestBadInputStoreDirUnusable(t *testing.T) {
	file := func(t *testing.T, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) (storeDir, culprit string)
		want  string // in the error
	}{
		{"store dir is a regular file", func(t *testing.T, root string) (string, string) {
			p := filepath.Join(root, "store")
			file(t, p)
			return p, p
		}, "not a directory"},
		{"store dir below a regular file", func(t *testing.T, root string) (string, string) {
			p := filepath.Join(root, "file")
			file(t, p)
			return filepath.Join(p, "store"), p
		}, "not a directory"},
		{"config is a regular file", func(t *testing.T, root string) (string, string) {
			file(t, filepath.Join(root, "config"))
			return root, filepath.Join(root, "config")
		}, "not a directory"},
		{"topics.json is a directory", func(t *testing.T, root string) (string, string) {
			p := filepath.Join(root, "config", "topics.json")
			os.MkdirAll(p, 0o755)
			return root, p
		}, "is a directory"},
		{"commitlog is a regular file", func(t *testing.T, root string) (string, string) {
			file(t, filepath.Join(root, "commitlog"))
			return root, filepath.Join(root, "commitlog")
		}, "not a directory"},
		{"consumequeue is a regular file", func(t *testing.T, root string) (string, string) {
			file(t, filepath.Join(root, "consumequeue"))
			return root, filepath.Join(root, "consumequeue")
		}, "not a directory"},
		{"commit log segment is a directory", func(t *testing.T, root string) (string, string) {
			p := filepath.Join(root, "commitlog", "00000000000000000000")
			os.MkdirAll(p, 0o755)
			return root, p
		}, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir, culprit := tt.setup(t, root)
			logs := &testlog.Buffer{}
			b, err := New(badConfig(dir, logs))
			if err == nil {
				b.Close(context.Background())
				t.Fatal("New succeeded")
			}
			t.Logf("error: %v", err)
			if msg := err.Error(); !strings.HasPrefix(msg, "rocketmq: ") || !strings.Contains(msg, culprit) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not name %s (%s)", msg, culprit, tt.want)
			}
			logs.NoPanic(t, "broker")
		})
	}
	t.Run("read-only store dir", func(t *testing.T) {
		dir := testutil.ReadOnlyDir(t)
		if b, err := New(badConfig(filepath.Join(dir, "store"), &testlog.Buffer{})); err == nil {
			b.Close(context.Background())
			t.Fatal("New succeeded")
		} else if !strings.Contains(err.Error(), dir) {
			t.Errorf("error %q does not name %s", err, dir)
		}
	})
}

// badStored is a broker's store after acknowledged sends, closed or
// crashed, ready to be damaged.
type badStored struct {
	cfg    Config
	before [][]byte // raw pulled records by queue
	end    int64    // commit-log end
}

func (s *badStored) path(parts ...string) string {
	return filepath.Join(append([]string{s.cfg.StoreDir}, parts...)...)
}

// lastSegment is the commit-log file holding s.end.
func (s *badStored) lastSegment() string {
	seg := s.cfg.CommitLogSegmentSize
	return s.path("commitlog", fmt.Sprintf("%020d", s.end/seg*seg))
}

// badPrepare sends messages to badTopic through the wire, commits an
// offset, records what a pull returns and stops the broker.
func badPrepare(t *testing.T, crash bool) *badStored {
	t.Helper()
	cfg := badConfig(t.TempDir(), &testlog.Buffer{})
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	// Two topic changes, so topics.json has a .bak that knows badTopic.
	b.topics.ensure(badTopic, badQueues, rocketmq.PermRead|rocketmq.PermWrite)
	b.topics.ensure("BadOther", 1, rocketmq.PermRead|rocketmq.PermWrite)
	b.groups.put(remoting.NewSubscriptionGroupConfig(badGroup))
	b.groups.put(remoting.NewSubscriptionGroupConfig("BadOtherGroup"))
	c := rawframe.Dial(t, b.Addr())
	for i := range 24 {
		h := badSendHeader(badTopic, int32(i%badQueues), badProps("TAGS", "t", "KEYS", "k"+strconv.Itoa(i)))
		if r := c.Call(badSend(h, bytes.Repeat([]byte{byte(i)}, 100+i*37))); r.Code != remoting.Success {
			t.Fatalf("send %d: %d %q", i, r.Code, r.Remark)
		}
	}
	for _, off := range []int64{1, 2} { // two persists: consumerOffset.json gets a .bak
		up := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: badGroup, Topic: badTopic, QueueID: 0, CommitOffset: off}
		if r := c.Call(remoting.NewRequest(remoting.UpdateConsumerOffset, up.AppendExt(nil), nil)); r.Code != remoting.Success {
			t.Fatalf("commit offset: %d %q", r.Code, r.Remark)
		}
		if err := b.offsets.persist(); err != nil {
			t.Fatal(err)
		}
	}
	s := &badStored{cfg: cfg, before: badReadAll(t, b.Addr()), end: b.store.CommitLogMaxOffset()}
	c.NetConn().Close()
	if crash {
		err = b.Crash()
	} else {
		err = b.Close(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// badQueryOffset is the committed offset of badGroup on badTopic queue 0.
func badQueryOffset(t *testing.T, addr string) int64 {
	t.Helper()
	h := remoting.QueryConsumerOffsetRequestHeader{ConsumerGroup: badGroup, Topic: badTopic, QueueID: 0}
	r := rawframe.Dial(t, addr).Call(remoting.NewRequest(remoting.QueryConsumerOffset, h.AppendExt(nil), nil))
	var rh remoting.OffsetResponseHeader
	if r.Code != remoting.Success || rh.FromExt(r.Ext) != nil {
		t.Fatalf("query offset: code %d %q", r.Code, r.Remark)
	}
	return rh.Offset
}

// cutHalf truncates a file to half its size.
func cutHalf(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// TestBadInputHalfWrittenStore damages a stopped broker's files the ways a
// crash or a full disk can and restarts it: it either comes back with every
// acknowledged message (and the config it had) or refuses to start with an
// error naming the file; once the file is restored it starts with the data
// intact.
func TestBadInputHalfWrittenStore(t *testing.T) {
	recovers := []struct {
		name   string
		crash  bool
		hurt   func(t *testing.T, s *badStored)
		offset int64 // committed offset expected after the restart
	}{
		{"half a record after the last acknowledged one", true, func(t *testing.T, s *badStored) {
			rec := s.before[0][:binary.BigEndian.Uint32(s.before[0])]
			f, err := os.OpenFile(s.lastSegment(), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteAt(rec[:len(rec)/2], s.end%s.cfg.CommitLogSegmentSize)
		}, 2},
		{"garbage appended past the segment size", false, func(t *testing.T, s *badStored) {
			f, err := os.OpenFile(s.lastSegment(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Write(bytes.Repeat([]byte{0xA5}, 777))
		}, 2},
		{"segment cut right after the last record", true, func(t *testing.T, s *badStored) {
			if err := os.Truncate(s.lastSegment(), s.end%s.cfg.CommitLogSegmentSize); err != nil {
				t.Fatal(err)
			}
		}, 2},
		{"topics.json cut mid-way, .bak kept", false, func(t *testing.T, s *badStored) {
			cutHalf(t, s.path("config", "topics.json"))
		}, 2},
		{"subscriptionGroup.json cut mid-way, .bak kept", false, func(t *testing.T, s *badStored) {
			cutHalf(t, s.path("config", "subscriptionGroup.json"))
		}, 2},
		{"consumerOffset.json cut mid-way, .bak kept", false, func(t *testing.T, s *badStored) {
			cutHalf(t, s.path("config", "consumerOffset.json"))
		}, 1}, // the .bak is the version before: offset 1
		{"consumerOffset.json empty, .bak kept", false, func(t *testing.T, s *badStored) {
			os.WriteFile(s.path("config", "consumerOffset.json"), nil, 0o644)
		}, 1},
		{"consume queue file 7 bytes too long", false, func(t *testing.T, s *badStored) {
			f, err := os.OpenFile(s.path("consumequeue", badTopic, "1", fmt.Sprintf("%020d", 0)), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Write([]byte("1234567"))
		}, 2},
		{"consume queue file emptied after a crash", true, func(t *testing.T, s *badStored) {
			os.Truncate(s.path("consumequeue", badTopic, "2", fmt.Sprintf("%020d", 0)), 0)
		}, 2},
		{"garbage checkpoint after a crash", true, func(t *testing.T, s *badStored) {
			os.WriteFile(s.path("checkpoint"), []byte("garbage"), 0o644)
		}, 2},
	}
	for _, tt := range recovers {
		t.Run(tt.name, func(t *testing.T) {
			s := badPrepare(t, tt.crash)
			tt.hurt(t, s)
			logs := &testlog.Buffer{}
			cfg := s.cfg
			cfg.Logger = logs.Logger()
			b := startBroker(t, cfg)
			badSameBodies(t, "after restart", badReadAll(t, b.Addr()), s.before)
			if _, ok := b.topics.get("BadOther"); !ok && !strings.HasPrefix(tt.name, "topics.json") {
				t.Error("topic BadOther lost")
			}
			if _, ok := b.groups.get("BadOtherGroup"); !ok && !strings.HasPrefix(tt.name, "subscriptionGroup.json") {
				t.Error("group BadOtherGroup lost")
			}
			if got := badQueryOffset(t, b.Addr()); got != tt.offset {
				t.Errorf("committed offset %d, want %d", got, tt.offset)
			}
			c := rawframe.Dial(t, b.Addr())
			if r := c.Call(badSend(badSendHeader(badTopic, 1, ""), []byte("after"))); r.Code != remoting.Success {
				t.Fatalf("send after restart: %d %q", r.Code, r.Remark)
			}
			logs.NoPanic(t, "broker")
		})
	}

	refuses := []struct {
		name string
		file []string // under StoreDir
		hurt func(p string)
	}{
		{"topics.json cut mid-way, no .bak", []string{"config", "topics.json"}, nil},
		{"subscriptionGroup.json cut mid-way, no .bak", []string{"config", "subscriptionGroup.json"}, nil},
		{"consumerOffset.json cut mid-way, no .bak", []string{"config", "consumerOffset.json"}, nil},
		{"topics.json and its .bak both cut", []string{"config", "topics.json"}, func(p string) {
			os.WriteFile(p, []byte(`{"topicConfigTable":{"BadKeep":{`), 0o644)
			os.WriteFile(p+".bak", []byte(`{"topicConfigTable":{`), 0o644)
		}},
		// Well formed but not a topic table: Java would fall back to the
		// .bak here; refusing with the file's name is the safe side too.
		{"topics.json with a string where a number belongs", []string{"config", "topics.json"}, func(p string) {
			os.WriteFile(p, []byte(`{"topicConfigTable":{"BadKeep":{"topicName":"BadKeep","readQueueNums":"four"}}}`), 0o644)
		}},
	}
	for _, tt := range refuses {
		t.Run(tt.name, func(t *testing.T) {
			s := badPrepare(t, false)
			p := s.path(tt.file...)
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if tt.hurt != nil {
				tt.hurt(p)
			} else {
				os.Remove(p + ".bak")
				cutHalf(t, p)
			}
			logs := &testlog.Buffer{}
			cfg := s.cfg
			cfg.Logger = logs.Logger()
			if b, err := New(cfg); err == nil {
				b.Close(context.Background())
				t.Fatal("New succeeded")
			} else if msg := err.Error(); !strings.HasPrefix(msg, "rocketmq: ") || !strings.Contains(msg, p) {
				t.Errorf("error %q does not name %s", msg, p)
			} else {
				t.Logf("error: %v", err)
			}
			logs.NoPanic(t, "broker")
			// Restored, the broker starts with everything: the failed
			// start released the store and wrote nothing.
			if err := os.WriteFile(p, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			b := startBroker(t, cfg)
			badSameBodies(t, "after repair", badReadAll(t, b.Addr()), s.before)
			if got := badQueryOffset(t, b.Addr()); got != 2 {
				t.Errorf("committed offset %d, want 2", got)
			}
		})
	}
}
