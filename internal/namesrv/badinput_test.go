package namesrv

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testlog"
	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// Bad input to the NameServer: requests that decode but are wrong get
// SYSTEM_ERROR with a remark that says what is wrong; frames that do not
// decode close only their own connection; a registered route survives all
// of it.

func badInputNS(t *testing.T) (*NameServer, *testlog.Buffer, *rawframe.Conn) {
	t.Helper()
	logs := &testlog.Buffer{}
	ns := startNS(t, Config{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	good := rawframe.Dial(t, ns.Addr())
	wantCode(t, good.Call(registerReq("c", "b1", "a1", 0, 1, topic("T", 4))), remoting.Success, "")
	return ns, logs, good
}

// sameRoute fails unless T still routes to b1 with 4 queues.
func sameRoute(t *testing.T, c *rawframe.Conn) {
	t.Helper()
	rd := route(t, c, "T")
	if len(rd.QueueDatas) != 1 || rd.QueueDatas[0].BrokerName != "b1" || rd.QueueDatas[0].WriteQueueNums != 4 ||
		len(rd.BrokerDatas) != 1 || rd.BrokerDatas[0].BrokerAddrs[0] != "a1" {
		t.Fatalf("route of T changed: %+v", rd)
	}
}

func TestBadInputNameServerRequests(t *testing.T) {
	ns, logs, good := badInputNS(t)
	bad := rawframe.Dial(t, ns.Addr())

	// A registration of b1 whose body is replaced, with a matching crc.
	withBody := func(body []byte, compressed bool) *remoting.Command {
		h := remoting.RegisterBrokerRequestHeader{BrokerName: "b1", BrokerAddr: "a1", ClusterName: "c",
			HAServerAddr: "a1-ha", BodyCRC32: bodyCRC(body), Compressed: compressed}
		return headerReq(remoting.RegisterBroker, &h, body)
	}
	goodBody := newRegisterBody(2, topic("T", 8), topic("U", 1)).AppendJSON(nil, remoting.JSONFastjson)
	badCRC := withBody(goodBody, false)
	badCRC.Ext.Set("bodyCrc32", strconv.Itoa(int(bodyCRC(goodBody)^1)))
	const decodeFailed = "Failed to decode RegisterBrokerBody: "

	tests := []struct {
		name   string
		req    *remoting.Command
		remark string // a trailing "*" means prefix
	}{
		{"route without topic", request(remoting.GetRouteInfoByTopic, remoting.DefaultVersion, nil, nil),
			"the custom field <topic> is null"},
		{"register without header", request(remoting.RegisterBroker, remoting.DefaultVersion, nil, goodBody),
			"the custom field <brokerName> is null"},
		{"register with a non-numeric broker id", func() *remoting.Command {
			r := withBody(goodBody, false)
			r.Ext.Set("brokerId", "master")
			return r
		}(), `the custom field <brokerId> has an invalid value: "master"`},
		{"register with a bad crc", badCRC, "crc32 not match"},
		{"register with a body that is not JSON", withBody([]byte("\x00\x01garbage"), false), decodeFailed + "*"},
		{"register with a body cut in half", withBody(goodBody[:len(goodBody)/2], false), decodeFailed + "*"},
		{"register with a string queue count", withBody(bytes.Replace(goodBody, []byte(`"readQueueNums":8`), []byte(`"readQueueNums":"x"`), 1), false),
			decodeFailed + "*"},
		{"register with a body flagged compressed that is not", withBody(goodBody, true), decodeFailed + "*"},
		{"unregister without header", request(remoting.UnregisterBroker, remoting.DefaultVersion, nil, nil),
			"the custom field <brokerName> is null"},
		{"query data version without header", request(remoting.QueryDataVersion, remoting.DefaultVersion, nil, nil),
			"the custom field <brokerName> is null"},
		{"query data version with a garbage body", func() *remoting.Command {
			h := remoting.QueryDataVersionRequestHeader{BrokerName: "b1", BrokerAddr: "a1", ClusterName: "c"}
			return headerReq(remoting.QueryDataVersion, &h, []byte(`{"counter":`))
		}(), "rocketmq: malformed body: *"},
		{"register topic without topic", request(remoting.RegisterTopicInNamesrv, remoting.DefaultVersion, nil, nil),
			"the custom field <topic> is null"},
		{"register topic with a garbage body", request(remoting.RegisterTopicInNamesrv, remoting.DefaultVersion,
			remoting.ExtFields{{Key: "topic", Value: "T"}}, []byte(`{"queueDatas":[{"brokerName":`)),
			"rocketmq: malformed body: *"},
		{"delete topic without topic", request(remoting.DeleteTopicInNamesrv, remoting.DefaultVersion, nil, nil),
			"the custom field <topic> is null"},
		{"wipe write perm without broker", request(remoting.WipeWritePermOfBroker, remoting.DefaultVersion, nil, nil),
			"the custom field <brokerName> is null"},
		{"add write perm without broker", request(remoting.AddWritePermOfBroker, remoting.DefaultVersion, nil, nil),
			"the custom field <brokerName> is null"},
		{"topics by cluster without cluster", request(remoting.GetTopicsByCluster, remoting.DefaultVersion, nil, nil),
			"the custom field <cluster> is null"},
		{"put kv without value", request(remoting.PutKVConfig, remoting.DefaultVersion,
			remoting.ExtFields{{Key: "namespace", Value: "ns"}, {Key: "key", Value: "k"}}, nil), "the custom field <value> is null"},
		{"get kv without header", request(remoting.GetKVConfig, remoting.DefaultVersion, nil, nil), "the custom field <namespace> is null"},
		{"delete kv without key", request(remoting.DeleteKVConfig, remoting.DefaultVersion,
			remoting.ExtFields{{Key: "namespace", Value: "ns"}}, nil), "the custom field <key> is null"},
		{"kv list without namespace", request(remoting.GetKVListByNamespace, remoting.DefaultVersion, nil, nil),
			"the custom field <namespace> is null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := bad.Call(tt.req)
			t.Logf("%s %q", remoting.ResponseCodeName(resp.Code), resp.Remark)
			ok := resp.Remark == tt.remark
			if p, isPrefix := strings.CutSuffix(tt.remark, "*"); isPrefix {
				ok = strings.HasPrefix(resp.Remark, p) && len(resp.Remark) > len(p)
			}
			if resp.Code != remoting.SystemError || !ok {
				t.Fatalf("%s %q, want SYSTEM_ERROR %q", remoting.ResponseCodeName(resp.Code), resp.Remark, tt.remark)
			}
			// Nothing of the rejected request was applied.
			sameRoute(t, good)
			if hasRoute(t, good, "U") {
				t.Fatal("a rejected registration added topic U")
			}
		})
	}
	// The same connection still works, and so does a fresh one.
	wantCode(t, bad.Call(routeReq("T", remoting.DefaultVersion, nil)), remoting.Success, "")
	sameRoute(t, rawframe.Dial(t, ns.Addr()))
	logs.NoPanic(t, "NameServer")
}

// TestBadInputNameServerGarbageIsolated: many clients sending garbage at
// the same time as a well-behaved one, some of them in the middle of its
// frames; only the garbage connections close.
func TestBadInputNameServerGarbageIsolated(t *testing.T) {
	ns, logs, good := badInputNS(t)
	garbage := [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		{0xFF, 0xFF, 0xFF, 0xFF},
		binary.BigEndian.AppendUint32(nil, 16<<20-3),
		{0, 0, 0, 0},
		{0, 0, 0, 8, 5, 0, 0, 0, 'x', 'x', 'x', 'x'},
		append([]byte{0, 0, 0, 12, 0, 0, 0, 8}, `{"code":`...),
		append([]byte{0, 0, 0, 8, 1, 0, 0, 4}, 0, 0, 0, 0),
	}
	frame, _ := routeReq("T", remoting.DefaultVersion, nil).AppendFrame(nil)

	// A second good client has half a frame on the wire throughout.
	partial := rawframe.Dial(t, ns.Addr())
	partial.Write(frame[:len(frame)/2])

	// Dialled here: t.Fatal must not run on the writers' goroutines.
	var clients []*rawframe.Conn
	for range 4 {
		for range garbage {
			clients = append(clients, rawframe.Dial(t, ns.Addr()))
		}
	}
	var wg sync.WaitGroup
	closed := make(chan bool, len(clients))
	for k, c := range clients {
		g := garbage[k%len(garbage)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every other round splits the garbage over two writes.
			if k/len(garbage)%2 == 1 && len(g) > 2 {
				c.NetConn().Write(g[:2])
				time.Sleep(time.Millisecond)
				c.NetConn().Write(g[2:])
			} else {
				c.NetConn().Write(g)
			}
			closed <- c.WaitClosed(5 * time.Second)
		}()
	}
	// Meanwhile the good client keeps asking.
	for range 50 {
		sameRoute(t, good)
	}
	wg.Wait()
	close(closed)
	n := 0
	for ok := range closed {
		if !ok {
			t.Error("a garbage connection stayed open")
		}
		n++
	}
	if n != len(clients) {
		t.Fatalf("%d garbage clients finished", n)
	}
	partial.Write(frame[len(frame)/2:])
	wantCode(t, partial.Read(), remoting.Success, "")
	if got := strings.Count(logs.String(), "bad frame"); got != len(clients) {
		t.Errorf("%d bad frames logged, want %d", got, len(clients))
	}
	logs.NoPanic(t, "NameServer")
}
