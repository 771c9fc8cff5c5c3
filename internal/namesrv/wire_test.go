package namesrv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// Replays of frames captured between a 4.9.8 NameServer, its broker, the
// Java client and the official Go client (testdata/wire/README.md).

// wireFrame is one entry of testdata/wire/index.json.
type wireFrame struct {
	N           int    `json:"n"`
	File        string `json:"file"`
	Client      string `json:"client"`
	Direction   string `json:"direction"`
	Peer        string `json:"peer"`
	Code        int32  `json:"code"`
	RequestCode int32  `json:"requestCode"`
	Pair        *int   `json:"pair"`
	Oneway      bool   `json:"oneway"`
}

func loadIndex(t *testing.T) map[int]wireFrame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(wireDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Frames []wireFrame `json:"frames"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	m := make(map[int]wireFrame, len(idx.Frames))
	for _, f := range idx.Frames {
		m[f.N] = f
	}
	return m
}

// registrations are the captured REGISTER_BROKER requests, in order:
// incremental ones after topic creation (with a response), full ones sent
// oneway after auto-creating topics, and the periodic full ones.
var registrations = []int{4, 8, 30, 49, 154, 298}

// sameResponse compares a response of ours with a captured one: code,
// remark, extFields, serialize type and body bytes.
func sameResponse(t *testing.T, got, want *remoting.Command) {
	t.Helper()
	if got.Code != want.Code || got.Remark != want.Remark || got.Serialize != want.Serialize {
		t.Errorf("response code %d remark %q serialize %d, want %d %q %d",
			got.Code, got.Remark, got.Serialize, want.Code, want.Remark, want.Serialize)
	}
	if (got.Ext == nil) != (want.Ext == nil) || !reflect.DeepEqual(got.Ext.Map(), want.Ext.Map()) {
		t.Errorf("extFields %#v, want %#v", got.Ext, want.Ext)
	}
	sameBytes(t, "body", got.Body, want.Body)
}

func replayRegistrations(t *testing.T, c *rawframe.Conn, idx map[int]wireFrame) {
	t.Helper()
	for _, n := range registrations {
		resp := c.Replay(wireFile(t, n))
		f := idx[n]
		if f.Oneway {
			if resp != nil {
				t.Fatalf("frame %d is oneway but got a response", n)
			}
			continue
		}
		sameResponse(t, resp, wireCommand(t, *f.Pair))
	}
}

func TestWireReplay(t *testing.T) {
	idx := loadIndex(t)
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	t.Run("register", func(t *testing.T) { replayRegistrations(t, c, idx) })
	// The Go run came after the last captured registration; add its
	// topics as the broker would have.
	goTopics := []remoting.TopicConfig{topic("GoldenTopicGo", 4), topic("%RETRY%GoldenPushGo", 1)}
	wantCode(t, c.Call(registerReq("DefaultCluster", "broker-a", "127.0.0.1:10911", 0, 738, goTopics...)),
		remoting.Success, "")

	// Every captured route and cluster-info request whose answer was
	// SUCCESS, Java (409, JSON and ROCKETMQ headers) and Go (317), must
	// get the same body byte for byte: one broker, so no map order can
	// differ.
	var ns2 []int
	for n, f := range idx {
		if f.Peer == "namesrv" && f.Direction == "req" && f.Pair != nil &&
			(f.Code == remoting.GetRouteInfoByTopic || f.Code == remoting.GetBrokerClusterInfo) &&
			idx[*f.Pair].Code == remoting.Success {
			ns2 = append(ns2, n)
		}
	}
	slices.Sort(ns2)
	if len(ns2) < 20 {
		t.Fatalf("only %d captured exchanges found", len(ns2))
	}
	for _, n := range ns2 {
		f := idx[n]
		t.Run(strconv.Itoa(n)+"-"+f.Client, func(t *testing.T) {
			resp := c.Replay(wireFile(t, n))
			want := wireCommand(t, *f.Pair)
			if resp.Code != want.Code || resp.Serialize != want.Serialize {
				t.Fatalf("response code %d serialize %d, want %d %d", resp.Code, resp.Serialize, want.Code, want.Serialize)
			}
			sameBytes(t, "body", resp.Body, want.Body)
		})
	}

	t.Run("topic list", func(t *testing.T) {
		want := map[string]bool{}
		for _, tc := range goTopics {
			want[tc.TopicName] = true
		}
		for _, n := range registrations {
			var rb remoting.RegisterBrokerBody
			if err := rb.DecodeJSON(wireCommand(t, n).Body); err != nil {
				t.Fatal(err)
			}
			for name := range rb.TopicConfigSerializeWrapper.TopicConfigTable {
				want[name] = true
			}
		}
		for _, n := range []int{11, 191, 327} { // Java JSON, Java ROCKETMQ, Go
			resp := c.Replay(wireFile(t, n))
			wantCode(t, resp, remoting.Success, "")
			var tl remoting.TopicList
			if err := tl.DecodeJSON(resp.Body); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, name := range tl.TopicList {
				got[name] = true
			}
			if !reflect.DeepEqual(got, want) || len(tl.TopicList) != len(want) {
				t.Errorf("frame %d: %d topics, want %d", n, len(tl.TopicList), len(want))
			}
		}
	})
}

// TestWireTopicNotExist replays route requests that the 4.9.8 NameServer
// answered TOPIC_NOT_EXIST (the retry topic did not exist yet).
func TestWireTopicNotExist(t *testing.T) {
	idx := loadIndex(t)
	ns := startNS(t, Config{})
	c := rawframe.Dial(t, ns.Addr())
	c.Replay(wireFile(t, 4))                // only GoldenTopicJava exists
	for _, n := range []int{21, 197, 329} { // Java JSON, Java ROCKETMQ, Go
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			resp := c.Replay(wireFile(t, n))
			want := wireCommand(t, *idx[n].Pair)
			if want.Code != remoting.TopicNotExist {
				t.Fatalf("captured answer is %d", want.Code)
			}
			sameResponse(t, resp, want)
		})
	}
}
