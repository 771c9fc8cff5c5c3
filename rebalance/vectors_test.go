package rebalance

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

// allocateVectors is the "allocate" group of testdata/java-vectors.json,
// computed by the Java 4.9.8 allocators (testdata README §3).
type allocateVectors struct {
	CIDPool []string    `json:"cidPool"`
	Grid    []gridCase  `json:"grid"`
	Special []specialVC `json:"special"`
	MD5Hash struct {
		Cases []struct {
			Key  string      `json:"key"`
			Hash json.Number `json:"hash"`
		} `json:"cases"`
	} `json:"md5Hash"`
	MessageQueue struct {
		Samples []struct {
			MQ       rocketmq.MessageQueue `json:"mq"`
			ToString string                `json:"toString"`
			HashCode json.Number           `json:"hashCode"`
		} `json:"samples"`
		SortedOrder []rocketmq.MessageQueue `json:"sortedOrder"`
	} `json:"messageQueue"`
}

// results maps strategy name → current client id → allocated queues.
type results map[string]map[string][]rocketmq.MessageQueue

type gridCase struct {
	Queues    int                     `json:"queues"`
	Consumers int                     `json:"consumers"`
	MQAll     []rocketmq.MessageQueue `json:"mqAll"`
	CIDAll    []string                `json:"cidAll"`
	Result    results                 `json:"result"`
}

type specialVC struct {
	Name         string                  `json:"name"`
	MQAll        []rocketmq.MessageQueue `json:"mqAll"`
	CIDAll       []string                `json:"cidAll"`
	Configured   []rocketmq.MessageQueue `json:"configured"`
	ConsumerIDCs []string                `json:"consumeridcs"`
	Resolver     string                  `json:"resolver"`
	Result       results                 `json:"result"`
}

func loadVectors(t testing.TB) *allocateVectors {
	t.Helper()
	f, err := os.Open("../testdata/java-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.UseNumber()
	var file struct {
		Allocate *allocateVectors `json:"allocate"`
	}
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	v := file.Allocate
	if v == nil || len(v.Grid) == 0 || len(v.Special) == 0 || len(v.MD5Hash.Cases) == 0 || len(v.MessageQueue.Samples) == 0 {
		t.Fatal("java-vectors.json: allocate group missing or incomplete")
	}
	return v
}

// prefixResolver is the resolver of the Java vectors: the room is the text
// before the first '-' of the broker name or client id.
type prefixResolver struct{}

func (prefixResolver) BrokerRoom(mq rocketmq.MessageQueue) string {
	room, _, _ := strings.Cut(mq.BrokerName, "-")
	return room
}

func (prefixResolver) ConsumerRoom(cid string) string {
	room, _, _ := strings.Cut(cid, "-")
	return room
}

// strategyFor builds the Go strategy for a strategy key of the vectors and
// checks that its Name matches Java's getName.
func strategyFor(t *testing.T, key string, sc *specialVC) Strategy {
	t.Helper()
	var (
		s        Strategy
		err      error
		wantName = key
	)
	switch key {
	case "AVG":
		s = Averagely{}
	case "AVG_BY_CIRCLE":
		s = AveragelyByCircle{}
	case "CONSISTENT_HASH":
		s, err = NewConsistentHash()
	case "CONSISTENT_HASH_3":
		s, err = NewConsistentHash(WithVirtualNodes(3))
		wantName = "CONSISTENT_HASH"
	case "CONFIG":
		s = NewByConfig(sc.Configured)
	case "MACHINE_ROOM":
		s = NewByMachineRoom(sc.ConsumerIDCs...)
	case "MACHINE_ROOM_NEARBY-AVG":
		s, err = NewMachineRoomNearby(Averagely{}, prefixResolver{})
	case "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE":
		s, err = NewMachineRoomNearby(AveragelyByCircle{}, prefixResolver{})
	default:
		t.Fatalf("unknown strategy %q in vectors", key)
	}
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if s.Name() != wantName {
		t.Fatalf("Name() = %q, want %q", s.Name(), wantName)
	}
	return s
}

func fmtQueues(mqs []rocketmq.MessageQueue) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, mq := range mqs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s/%d", mq.BrokerName, mq.QueueID)
	}
	b.WriteByte(']')
	return b.String()
}

func checkAllocation(t *testing.T, s Strategy, key, cid string, mqAll []rocketmq.MessageQueue, cidAll []string, want []rocketmq.MessageQueue) []rocketmq.MessageQueue {
	t.Helper()
	mqCopy, cidCopy := slices.Clone(mqAll), slices.Clone(cidAll)
	got := s.Allocate("GroupA", cid, mqAll, cidAll)
	if !slices.Equal(got, want) {
		t.Errorf("%s cid=%s:\n got %s\nwant %s", key, cid, fmtQueues(got), fmtQueues(want))
	}
	if !slices.Equal(mqAll, mqCopy) || !slices.Equal(cidAll, cidCopy) {
		t.Errorf("%s cid=%s: Allocate modified its input", key, cid)
	}
	return got
}

func TestJavaVectorsGrid(t *testing.T) {
	v := loadVectors(t)
	if len(v.Grid) != 16*6 {
		t.Fatalf("grid has %d cases, want 96", len(v.Grid))
	}
	checks := 0
	for _, gc := range v.Grid {
		t.Run(fmt.Sprintf("queues=%d/consumers=%d", gc.Queues, gc.Consumers), func(t *testing.T) {
			// Rebuild the inputs as README §3 describes and sort them with
			// our helpers; they must come out in the order Java sorted them.
			var mqs []rocketmq.MessageQueue
			for i := range (gc.Queues + 1) / 2 {
				mqs = append(mqs, rocketmq.MessageQueue{Topic: "TopicTest", BrokerName: "broker-a", QueueID: i})
			}
			for i := range gc.Queues / 2 {
				mqs = append(mqs, rocketmq.MessageQueue{Topic: "TopicTest", BrokerName: "broker-b", QueueID: i})
			}
			slices.Reverse(mqs)
			SortQueues(mqs)
			if !slices.Equal(mqs, gc.MQAll) {
				t.Fatalf("SortQueues: got %s, want %s", fmtQueues(mqs), fmtQueues(gc.MQAll))
			}
			cids := slices.Clone(v.CIDPool[:gc.Consumers])
			SortClientIDs(cids)
			if !slices.Equal(cids, gc.CIDAll) {
				t.Fatalf("SortClientIDs: got %q, want %q", cids, gc.CIDAll)
			}

			if len(gc.Result) != 4 {
				t.Fatalf("result has %d strategies, want 4", len(gc.Result))
			}
			for key, byCID := range gc.Result {
				s := strategyFor(t, key, nil)
				if len(byCID) != len(gc.CIDAll) {
					t.Fatalf("%s: %d results for %d consumers", key, len(byCID), len(gc.CIDAll))
				}
				var union []rocketmq.MessageQueue
				for _, cid := range gc.CIDAll {
					want, ok := byCID[cid]
					if !ok {
						t.Fatalf("%s: no result for %s", key, cid)
					}
					union = append(union, checkAllocation(t, s, key, cid, gc.MQAll, gc.CIDAll, want)...)
					checks++
				}
				// Each queue goes to exactly one consumer.
				SortQueues(union)
				if !slices.Equal(union, gc.MQAll) {
					t.Errorf("%s: consumers together got %s, want each of %s once", key, fmtQueues(union), fmtQueues(gc.MQAll))
				}
			}
		})
	}
	// 4 strategies × 16 queue counts × (1+…+6) consumers.
	if want := 4 * 16 * 21; checks != want {
		t.Errorf("ran %d grid checks, want %d", checks, want)
	}
}

func TestJavaVectorsSpecial(t *testing.T) {
	v := loadVectors(t)
	checks := 0
	for i, sc := range v.Special {
		t.Run(fmt.Sprintf("%d-%s", i, sc.Name), func(t *testing.T) {
			if len(sc.Result) == 0 {
				t.Fatal("case has no results")
			}
			for key, byCID := range sc.Result {
				s := strategyFor(t, key, &sc)
				if len(byCID) == 0 {
					t.Fatalf("%s: no consumers in result", key)
				}
				for cid, want := range byCID {
					checkAllocation(t, s, key, cid, sc.MQAll, sc.CIDAll, want)
					checks++
				}
			}
		})
	}
	if checks < 40 {
		t.Errorf("ran only %d special checks", checks)
	}
}

func TestJavaVectorsMD5Hash(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.MD5Hash.Cases {
		t.Run(c.Key, func(t *testing.T) {
			want, err := c.Hash.Int64()
			if err != nil {
				t.Fatal(err)
			}
			if got := MD5Hash(c.Key); got != want {
				t.Errorf("MD5Hash(%q) = %d, want %d", c.Key, got, want)
			}
		})
	}
}

// javaHashCode is MessageQueue.hashCode (docs/PROTOCOL.md §7.1); the package does
// not need it, but the vectors pin the formula the docs state.
func javaHashCode(mq rocketmq.MessageQueue) int32 {
	str := func(s string) int32 {
		var h int32
		for _, u := range utf16Units(s) {
			h = 31*h + int32(u)
		}
		return h
	}
	h := int32(1)
	h = 31*h + str(mq.BrokerName)
	h = 31*h + int32(mq.QueueID)
	return 31*h + str(mq.Topic)
}

func TestJavaVectorsMessageQueue(t *testing.T) {
	v := loadVectors(t)
	var mqs []rocketmq.MessageQueue
	for _, c := range v.MessageQueue.Samples {
		t.Run(c.ToString, func(t *testing.T) {
			if got := QueueString(c.MQ); got != c.ToString {
				t.Errorf("QueueString = %q, want %q", got, c.ToString)
			}
			want, err := c.HashCode.Int64()
			if err != nil {
				t.Fatal(err)
			}
			if got := javaHashCode(c.MQ); int64(got) != want {
				t.Errorf("hashCode = %d, want %d", got, want)
			}
		})
		mqs = append(mqs, c.MQ)
	}
	SortQueues(mqs)
	if !slices.Equal(mqs, v.MessageQueue.SortedOrder) {
		t.Errorf("SortQueues:\n got %v\nwant %v", mqs, v.MessageQueue.SortedOrder)
	}
}
