package rmqtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Bad input against a whole cluster, through the harness a user of this
// package has: the servers keep serving, the stored messages stay what they
// were, and a damaged store either recovers or refuses to start with an
// error naming the file.

const (
	badTopic  = "BadE2E"
	badQueues = 4
)

func badStartCluster(t *testing.T) (*Cluster, *testlog.Buffer, *transport.Client) {
	t.Helper()
	logs := &testlog.Buffer{}
	c := StartCluster(t, WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithCommitLogSegmentSize(1<<20), WithConsumeQueueEntries(1000), WithIndexSize(256, 1024))
	cli, err := transport.New(transport.WithTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return c, logs, cli
}

func badSend(topic string, queue int32, body []byte, props string) *remoting.Command {
	h := remoting.SendMessageRequestHeader{
		ProducerGroup: "PG", Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate, DefaultTopicQueueNums: badQueues,
		QueueID: queue, BornTimestamp: time.Now().UnixMilli(), Properties: &props,
	}
	return remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), body)
}

func badPull(topic string, queue int32) *remoting.Command {
	sub := "*"
	h := remoting.PullMessageRequestHeader{ConsumerGroup: "BadGroup", Topic: topic, QueueID: queue, MaxMsgNums: 32,
		SysFlag: remoting.PullFlagSubscription, Subscription: &sub}
	return remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil)
}

func badInvoke(t *testing.T, cli *transport.Client, addr string, req *remoting.Command) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatalf("code %d to %s: %v", req.Code, addr, err)
	}
	return resp
}

// badFill sends messages to every queue of badTopic and returns what a pull
// of each queue answers.
func badFill(t *testing.T, cli *transport.Client, addr string) [][]byte {
	t.Helper()
	for i := range 20 {
		props := message.EncodeProperties(map[string]string{"TAGS": "t", "KEYS": "k" + strconv.Itoa(i)})
		if r := badInvoke(t, cli, addr, badSend(badTopic, int32(i%badQueues), bytes.Repeat([]byte{byte(i)}, 50+i*101), props)); r.Code != remoting.Success {
			t.Fatalf("send %d: %d %q", i, r.Code, r.Remark)
		}
	}
	return badReadAll(t, cli, addr)
}

func badReadAll(t *testing.T, cli *transport.Client, addr string) [][]byte {
	t.Helper()
	out := make([][]byte, badQueues)
	for q := range int32(badQueues) {
		r := badInvoke(t, cli, addr, badPull(badTopic, q))
		if r.Code != remoting.Success {
			t.Fatalf("pull queue %d: %d %q", q, r.Code, r.Remark)
		}
		out[q] = r.Body
	}
	return out
}

func badSame(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	for q := range want {
		if !bytes.Equal(got[q], want[q]) {
			t.Errorf("%s: queue %d records changed\n got:\n%s\nwant:\n%s", what, q,
				hex.Dump(got[q][:min(len(got[q]), 256)]), hex.Dump(want[q][:min(len(want[q]), 256)]))
		}
	}
}

// badGarbage writes raw bytes on a new connection to addr and, unless
// hangUp, fails unless the server closes it within 5 s without answering.
func badGarbage(t *testing.T, addr string, raw []byte, hangUp bool) {
	t.Helper()
	c := rawframe.Dial(t, addr)
	c.Write(raw)
	if hangUp {
		c.NetConn().Close()
		return
	}
	c.ExpectClosed(5 * time.Second)
}

func TestBadInputClusterKeepsServing(t *testing.T) {
	c, logs, cli := badStartCluster(t)
	addr, ns := c.BrokerAddr("broker-a"), c.NameServerAddr()
	before := badFill(t, cli, addr)

	faq := "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
	answered := []struct {
		name   string
		to     string
		req    *remoting.Command
		code   int32
		remark string // a trailing "*" means prefix
	}{
		{"illegal topic", addr, badSend("a/b", 0, []byte("x"), ""), remoting.SystemError,
			"The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"},
		{"topic too long", addr, badSend(strings.Repeat("t", 200), 0, []byte("x"), ""), remoting.SystemError,
			"The specified topic is longer than topic max length."},
		{"blank topic", addr, badSend("", 0, []byte("x"), ""), remoting.SystemError, "The specified topic is blank."},
		{"body over 4 MiB", addr, badSend(badTopic, 0, make([]byte, 4<<20+1), ""), remoting.MessageIllegal, "the message is illegal*"},
		{"properties over 32767 bytes", addr, badSend(badTopic, 0, []byte("x"), "p\x01"+strings.Repeat("v", 32766)),
			remoting.MessageIllegal, "the message is illegal*"},
		{"send to queue 4 of 4", addr, badSend(badTopic, badQueues, []byte("x"), ""), remoting.SystemError, "request queueId[4] is illegal, TopicConfig [topicName=BadE2E, *"},
		{"pull of queue 4 of 4", addr, badPull(badTopic, badQueues), remoting.SystemError, "queueId[4] is illegal, topic:[BadE2E] topicConfig.readQueueNums:[4] consumer:[/127.0.0.1:*"},
		{"pull of an unknown topic", addr, badPull("NoSuchTopic", 0), remoting.TopicNotExist, "topic[NoSuchTopic] not exist, apply first please! " + faq},
		{"route of an unknown topic", ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, remoting.ExtFields{{Key: "topic", Value: "NoSuchTopic"}}, nil),
			remoting.TopicNotExist, "No topic route info in name server for the topic: NoSuchTopic" + faq},
		{"route without topic", ns, remoting.NewRequest(remoting.GetRouteInfoByTopic, nil, nil), remoting.SystemError, "the custom field <topic> is null"},
		{"register with a corrupt body", ns, func() *remoting.Command {
			h := remoting.RegisterBrokerRequestHeader{BrokerName: "broker-z", BrokerAddr: "127.0.0.1:1", ClusterName: "DefaultCluster", HAServerAddr: "x"}
			return remoting.NewRequest(remoting.RegisterBroker, h.AppendExt(nil), []byte("{not json"))
		}(), remoting.SystemError, "Failed to decode RegisterBrokerBody: *"},
	}
	for _, tt := range answered {
		t.Run(tt.name, func(t *testing.T) {
			r := badInvoke(t, cli, tt.to, tt.req)
			ok := r.Remark == tt.remark
			if p, isPrefix := strings.CutSuffix(tt.remark, "*"); isPrefix {
				ok = strings.HasPrefix(r.Remark, p)
			}
			if r.Code != tt.code || !ok {
				t.Fatalf("%s %q, want %s %q", remoting.ResponseCodeName(r.Code), r.Remark, remoting.ResponseCodeName(tt.code), tt.remark)
			}
		})
	}

	frame, _ := badSend(badTopic, 0, []byte("never acknowledged"), "").AppendFrame(nil)
	garbage := []struct {
		name string
		raw  []byte
	}{
		{"HTTP request", []byte("GET / HTTP/1.1\r\n\r\n")},
		{"negative length", []byte{0x80, 0, 0, 1}},
		{"length over 16 MiB", binary.BigEndian.AppendUint32(nil, 16<<20)},
		{"header longer than the frame", []byte{0, 0, 0, 8, 0, 0, 1, 0, '{', '}', ' ', ' '}},
		{"bad serialize type", append([]byte{frame[0], frame[1], frame[2], frame[3], 9}, frame[5:]...)},
		{"broken JSON header", append([]byte{0, 0, 0, 13, 0, 0, 0, 9}, `{"code":3`...)},
	}
	for _, g := range garbage {
		t.Run(g.name, func(t *testing.T) {
			badGarbage(t, addr, g.raw, false)
			badGarbage(t, ns, g.raw, false)
		})
	}
	t.Run("hang up mid-frame", func(t *testing.T) {
		for _, cut := range []int{2, 6, len(frame) / 2, len(frame) - 1} {
			badGarbage(t, addr, frame[:cut], true)
			badGarbage(t, ns, frame[:cut], true)
		}
	})

	// Still registered, still serving, nothing changed, nothing stored.
	// badFill created the topic with a send; the broker registers it with
	// the NameServer after answering.
	var brokers []string
	var err error
	if !testutil.Poll(0, func() bool {
		brokers, err = routeBrokers(context.Background(), cli, ns, badTopic)
		return err == nil && slices.Equal(brokers, []string{"broker-a"})
	}) {
		t.Fatalf("route of %s: %v %v", badTopic, brokers, err)
	}
	badSame(t, "after bad input", badReadAll(t, cli, addr), before)
	cli2, err := transport.New()
	if err != nil {
		t.Fatal(err)
	}
	defer cli2.Close()
	if r := badInvoke(t, cli2, addr, badSend(badTopic, 0, []byte("after"), "")); r.Code != remoting.Success {
		t.Fatalf("send after bad input: %d %q", r.Code, r.Remark)
	}
	logs.NoPanic(t, "a server")
}

func TestBadInputClusterDamagedStore(t *testing.T) {
	c, logs, cli := badStartCluster(t)
	const name = "broker-a"
	addr := c.BrokerAddr(name)
	before := badFill(t, cli, addr)
	dir := c.StoreDir(name)
	topics := filepath.Join(dir, "config", "topics.json")
	lastSegment := func() string {
		ents, err := os.ReadDir(filepath.Join(dir, "commitlog"))
		if err != nil || len(ents) == 0 {
			t.Fatalf("commit log: %v", err)
		}
		return filepath.Join(dir, "commitlog", ents[len(ents)-1].Name())
	}
	restart := func(t *testing.T, what string) {
		t.Helper()
		if err := c.StartBroker(name); err != nil {
			t.Fatalf("StartBroker: %v", err)
		}
		// A fresh client: the old one may still hold the connection the
		// stop closed, and a call on it fails (retriably) before it notices.
		fresh, err := transport.New()
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		badSame(t, what, badReadAll(t, fresh, addr), before)
	}

	t.Run("crash, then half a record at the end", func(t *testing.T) {
		if err := c.CrashBroker(name); err != nil {
			t.Fatal(err)
		}
		// The commit log ends where the last pulled record of any queue
		// ends; write the first half of a copy of one there.
		var end int64
		for _, b := range before {
			for len(b) > 0 {
				size := int64(binary.BigEndian.Uint32(b))
				phys := int64(binary.BigEndian.Uint64(b[28:]))
				end = max(end, phys+size)
				b = b[size:]
			}
		}
		rec := before[0][:binary.BigEndian.Uint32(before[0])]
		f, err := os.OpenFile(lastSegment(), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt(rec[:len(rec)/2], end%(1<<20))
		f.Close()
		restart(t, "after torn tail")
	})
	t.Run("topics.json cut, .bak kept", func(t *testing.T) {
		if err := c.StopBroker(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(topics + ".bak"); err != nil {
			t.Fatalf("no .bak: %v", err)
		}
		data, _ := os.ReadFile(topics)
		os.WriteFile(topics, data[:len(data)/2], 0o644)
		restart(t, "after topics.json fell back to its .bak")
	})
	t.Run("topics.json cut, no .bak", func(t *testing.T) {
		if err := c.StopBroker(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(topics)
		os.Remove(topics + ".bak")
		os.WriteFile(topics, data[:len(data)/2], 0o644)
		err := c.StartBroker(name)
		if err == nil || !strings.Contains(err.Error(), topics) {
			t.Fatalf("StartBroker: %v, want an error naming %s", err, topics)
		}
		// The NameServer is unaffected; the broker is not registered.
		if _, err := routeBrokers(context.Background(), cli, c.NameServerAddr(), badTopic); !errors.Is(err, remoting.ErrTopicNotExist) {
			t.Fatalf("route while the broker is down: %v", err)
		}
		os.WriteFile(topics, data, 0o644)
		restart(t, "after topics.json was restored")
	})
	t.Run("commit-log segment name taken by a directory", func(t *testing.T) {
		if err := c.StopBroker(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "commitlog", fmt.Sprintf("%020d", 5<<20))
		os.Mkdir(p, 0o755)
		err := c.StartBroker(name)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("StartBroker: %v, want an error naming %s", err, p)
		}
		os.Remove(p)
		restart(t, "after the directory was removed")
	})
	logs.NoPanic(t, "a server")
}
