package producer

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"go.uber.org/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestHashSelectorJavaVectors checks every selectByHash case of
// java-vectors.json: the same key picks the same queue as Java's
// SelectMessageQueueByHash for String, Long and Integer arguments.
func TestHashSelectorJavaVectors(t *testing.T) {
	raw, err := os.ReadFile("../testdata/java-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		SelectByHash struct {
			Cases []struct {
				ArgType  string          `json:"argType"`
				Arg      json.RawMessage `json:"arg"`
				HashCode int32           `json:"hashCode"`
				Index    map[string]int  `json:"index"`
			} `json:"cases"`
		} `json:"selectByHash"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	cases := all.SelectByHash.Cases
	if len(cases) < 80 {
		t.Fatalf("only %d cases", len(cases))
	}
	for i, c := range cases {
		t.Run(c.ArgType+"/"+strconv.Itoa(i), func(t *testing.T) {
			var key ShardingKey
			switch c.ArgType {
			case "String":
				var s string
				if err := json.Unmarshal(c.Arg, &s); err != nil {
					t.Fatal(err)
				}
				key = StringKey(s)
			case "Long":
				v, err := strconv.ParseInt(string(c.Arg), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				key = LongKey(v)
			case "Integer":
				v, err := strconv.ParseInt(string(c.Arg), 10, 32)
				if err != nil {
					t.Fatal(err)
				}
				key = IntKey(int32(v))
			default:
				t.Fatalf("unknown arg type %s", c.ArgType)
			}
			if key.HashCode() != c.HashCode {
				t.Fatalf("hash of %s = %d, want %d", c.Arg, key.HashCode(), c.HashCode)
			}
			for ns, want := range c.Index {
				n, _ := strconv.Atoi(ns)
				queues := make([]rocketmq.MessageQueue, n)
				for q := range queues {
					queues[q] = rocketmq.MessageQueue{Topic: "TopicTest", BrokerName: "broker-a", QueueID: q}
				}
				got := Hash(key).Select(nil, queues, "")
				if got.QueueID != want {
					t.Fatalf("%s over %d queues: queue %d, want %d", c.Arg, n, got.QueueID, want)
				}
			}
		})
	}
}

func TestPerCallSelectors(t *testing.T) {
	env := newMockProducer(t, nil, WithLatencyFaultTolerance(false))
	var got []rocketmq.MessageQueue
	env.api.EXPECT().invoke(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, addr string, req *remoting.Command, _ time.Duration) (*remoting.Command, error) {
			h := reqHeader(t, req)
			got = append(got, rocketmq.MessageQueue{Topic: h.Topic, BrokerName: *h.BrokerName, QueueID: int(h.QueueID)})
			return okResp(remoting.Success, h.QueueID, 0), nil
		}).AnyTimes()
	ctx := context.Background()
	m := &rocketmq.Message{Topic: "T", Body: []byte("x")}
	// Queues are broker-a 0..3, broker-b 0..3 (8 in Java order).
	for i := 0; i < 3; i++ {
		if _, err := env.p.With(ShardBy(StringKey("key"))).Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	want := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-b", QueueID: 3} // 106079 % 8 = 7
	for _, q := range got {
		if q != want {
			t.Fatalf("hash picked %v, want %v", q, want)
		}
	}
	got = nil
	manual := rocketmq.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 2}
	if _, err := env.p.With(ToQueue(manual)).Send(ctx, m); err != nil || got[0] != manual {
		t.Fatalf("manual picked %v (%v)", got, err)
	}
	if _, err := env.p.With(ToQueue(rocketmq.MessageQueue{Topic: "U", BrokerName: "broker-a"})).Send(ctx, m); !errors.Is(err, ErrWrongQueue) {
		t.Fatalf("wrong topic: %v", err)
	}
	got = nil
	for i := 0; i < 16; i++ {
		if _, err := env.p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// Round robin visits every queue twice.
	counts := map[rocketmq.MessageQueue]int{}
	for _, q := range got {
		counts[q]++
	}
	if len(counts) != 8 {
		t.Fatalf("round robin used %d queues: %v", len(counts), counts)
	}
	for q, n := range counts {
		if n != 2 {
			t.Fatalf("queue %v used %d times", q, n)
		}
	}
	got = nil
	for i := 0; i < 50; i++ {
		if _, err := env.p.With(Select(Random())).Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 50 {
		t.Fatal("random sends missing")
	}
}

func TestSelectorsSkipLastBroker(t *testing.T) {
	queues := fakeRoute("T", 2, "broker-a", "broker-b").Queues
	f := newFaultStrategy(false, nil, nil, nil)
	idx := atomic.NewUint32(0)
	for i := 0; i < 20; i++ {
		if q := f.selectQueue(queues, idx, "broker-a"); q.BrokerName == "broker-a" {
			t.Fatalf("round robin picked the last broker: %v", q)
		}
		if q := Random().Select(nil, queues, "broker-b"); q.BrokerName == "broker-b" {
			t.Fatalf("random picked the last broker: %v", q)
		}
	}
	// With a single broker the last one is all there is.
	one := fakeRoute("T", 2, "broker-a").Queues
	if q := f.selectQueue(one, idx, "broker-a"); q.BrokerName != "broker-a" {
		t.Fatal(q)
	}
}
