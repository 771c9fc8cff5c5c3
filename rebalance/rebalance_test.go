package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"unicode/utf16"

	"github.com/go-rocketmq/rocketmq"
)

func utf16Units(s string) []uint16 { return utf16.Encode([]rune(s)) }

func queues(broker string, n int) []rocketmq.MessageQueue {
	mqs := make([]rocketmq.MessageQueue, n)
	for i := range mqs {
		mqs[i] = rocketmq.MessageQueue{Topic: "T", BrokerName: broker, QueueID: i}
	}
	return mqs
}

func TestCompareJavaStrings(t *testing.T) {
	// The oracle compares UTF-16 code units, which is what Java does.
	oracle := func(a, b string) int { return slices.Compare(utf16Units(a), utf16Units(b)) }
	words := []string{
		"", "a", "A", "ab", "abc", "b", "Broker-c", "broker-a", "broker-a1",
		"é", "e\u0301", "中文", "中", "\uFF21", "\uFFFF", "\uE000", "\uD7FF",
		"\U0001F600", "\U0001F601", "\U0001D11E", "x\U0001F600", "x\uFF21", "x\uFF21y", "x",
		"\U00010000", "\U0010FFFF", "~", "\u007f", "\u0080",
	}
	for _, a := range words {
		for _, b := range words {
			got, want := compareJavaStrings(a, b), oracle(a, b)
			if got != want {
				t.Errorf("compareJavaStrings(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	// The case where Go's byte order and Java's order disagree.
	if compareJavaStrings("\U0001F600", "\uFF21") >= 0 {
		t.Error("a supplementary character must sort before U+FF21, as in Java")
	}
}

func TestSortClientIDs(t *testing.T) {
	cids := []string{"192.168.0.9@1", "192.168.0.10@1", "10.0.0.2@1#9", "10.0.0.10@1"}
	SortClientIDs(cids)
	want := []string{"10.0.0.10@1", "10.0.0.2@1#9", "192.168.0.10@1", "192.168.0.9@1"}
	if !slices.Equal(cids, want) {
		t.Errorf("got %q, want %q", cids, want)
	}
}

func TestCompareQueues(t *testing.T) {
	tests := []struct {
		name string
		a, b rocketmq.MessageQueue
		want int
	}{
		{"equal", rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}, rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 1}, 0},
		{"topic first", rocketmq.MessageQueue{Topic: "A", BrokerName: "z", QueueID: 9}, rocketmq.MessageQueue{Topic: "B", BrokerName: "a", QueueID: 0}, -1},
		{"broker second", rocketmq.MessageQueue{Topic: "T", BrokerName: "b", QueueID: 0}, rocketmq.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 9}, 1},
		{"queue id numeric", rocketmq.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 2}, rocketmq.MessageQueue{Topic: "T", BrokerName: "a", QueueID: 10}, -1},
		{"case sensitive", rocketmq.MessageQueue{Topic: "T", BrokerName: "Broker", QueueID: 5}, rocketmq.MessageQueue{Topic: "T", BrokerName: "broker", QueueID: 0}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompareQueues(tt.a, tt.b); got != tt.want {
				t.Errorf("CompareQueues = %d, want %d", got, tt.want)
			}
			if got := CompareQueues(tt.b, tt.a); got != -tt.want {
				t.Errorf("reversed CompareQueues = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestBrokerIDC(t *testing.T) {
	// Expected values follow Java's "name".split("@"): two parts after
	// dropping trailing empty ones.
	tests := []struct {
		in     string
		idc    string
		wantOK bool
	}{
		{"hz@broker-a", "hz", true},
		{"broker-d", "", false},
		{"hz@", "", false},
		{"@broker", "", true},
		{"hz@broker@", "hz", true},
		{"hz@broker@@", "hz", true},
		{"hz@@broker", "", false},
		{"hz@a@b", "", false},
		{"@", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			idc, ok := brokerIDC(tt.in)
			if ok != tt.wantOK || idc != tt.idc {
				t.Errorf("brokerIDC(%q) = %q, %v; want %q, %v", tt.in, idc, ok, tt.idc, tt.wantOK)
			}
		})
	}
}

func allStrategies(t *testing.T) []Strategy {
	t.Helper()
	ch, err := NewConsistentHash()
	if err != nil {
		t.Fatal(err)
	}
	nearby, err := NewMachineRoomNearby(Averagely{}, prefixResolver{})
	if err != nil {
		t.Fatal(err)
	}
	return []Strategy{Averagely{}, AveragelyByCircle{}, ch, NewByMachineRoom("T"), nearby}
}

func TestValidate(t *testing.T) {
	mqs := queues("a", 2)
	tests := []struct {
		name string
		cid  string
		mqs  []rocketmq.MessageQueue
		cids []string
		want error
	}{
		{"ok", "c1", mqs, []string{"c1"}, nil},
		{"unknown consumer is not an error", "c9", mqs, []string{"c1"}, nil},
		{"empty cid", "", mqs, []string{"c1"}, ErrEmptyClientID},
		{"no queues", "c1", nil, []string{"c1"}, ErrNoQueues},
		{"no consumers", "c1", mqs, nil, ErrNoConsumers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Validate(tt.cid, tt.mqs, tt.cids); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
			if tt.want == nil {
				return
			}
			// Where Java throws, every checking strategy returns nothing.
			for _, s := range allStrategies(t) {
				if got := s.Allocate("G", tt.cid, tt.mqs, tt.cids); len(got) != 0 {
					t.Errorf("%s: got %v, want nothing", s.Name(), got)
				}
			}
		})
	}
}

func TestResultDoesNotAliasInput(t *testing.T) {
	mqs := queues("T@a", 6)
	orig := slices.Clone(mqs)
	cfg := NewByConfig(mqs[:2])
	for _, s := range append(allStrategies(t), cfg) {
		t.Run(s.Name(), func(t *testing.T) {
			got := s.Allocate("G", "c1", mqs, []string{"c1"})
			if len(got) == 0 {
				t.Fatal("single consumer got nothing")
			}
			for i := range got {
				got[i].QueueID = -1
			}
			if !slices.Equal(mqs, orig) {
				t.Fatal("changing the result changed mqAll")
			}
		})
	}
	if got := cfg.Allocate("G", "c1", nil, nil); !slices.Equal(got, orig[:2]) {
		t.Errorf("ByConfig result changed after a caller modified it: %v", got)
	}
}

func TestByConfigCopiesInput(t *testing.T) {
	in := queues("a", 2)
	s := NewByConfig(in)
	in[0].QueueID = 99
	if got := s.Allocate("", "", nil, nil); got[0].QueueID != 0 {
		t.Errorf("ByConfig kept a reference to its input: %v", got)
	}
	if got := NewByConfig(nil).Allocate("G", "c1", in, []string{"c1"}); got != nil {
		t.Errorf("empty ByConfig returned %v", got)
	}
}

func TestAveragelyMoreConsumersThanQueues(t *testing.T) {
	mqs := queues("a", 2)
	cids := []string{"c0", "c1", "c2", "c3"}
	want := [][]rocketmq.MessageQueue{mqs[:1], mqs[1:2], nil, nil}
	for i, cid := range cids {
		for _, s := range []Strategy{Averagely{}, AveragelyByCircle{}} {
			if got := s.Allocate("G", cid, mqs, cids); !slices.Equal(got, want[i]) {
				t.Errorf("%s %s: got %v, want %v", s.Name(), cid, got, want[i])
			}
		}
	}
}

// refConsistentHash follows Java's ConsistentHashRouter literally: a map
// ring filled point by point, a repeated consumer numbering its new points
// after those it still owns, then a scan for the first point ≥ the hash.
func refConsistentHash(vnodes int, hash HashFunc, cur string, mqAll []rocketmq.MessageQueue, cidAll []string) []rocketmq.MessageQueue {
	ring := map[int64]string{}
	for _, cid := range cidAll {
		existing := 0
		for _, owner := range ring {
			if owner == cid {
				existing++
			}
		}
		for i := range vnodes {
			ring[hash(cid+"-"+strconv.Itoa(i+existing))] = cid
		}
	}
	keys := make([]int64, 0, len(ring))
	for k := range ring {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []rocketmq.MessageQueue
	for _, mq := range mqAll {
		if len(keys) == 0 {
			break
		}
		h := hash(QueueString(mq))
		k := keys[0]
		for _, kk := range keys {
			if kk >= h {
				k = kk
				break
			}
		}
		if ring[k] == cur {
			out = append(out, mq)
		}
	}
	return out
}

func TestConsistentHashAgainstReference(t *testing.T) {
	mqs := append(queues("broker-a", 7), queues("broker-b", 5)...)
	// A hash with few values forces collisions between consumers.
	coarse := func(key string) int64 { return MD5Hash(key) % 5 }
	tests := []struct {
		name   string
		vnodes int
		hash   HashFunc
		cids   []string
	}{
		{"distinct", 10, nil, []string{"c1", "c2", "c3"}},
		{"duplicates", 4, nil, []string{"c1", "c2", "c1", "c3", "c1"}},
		{"collisions", 3, coarse, []string{"c1", "c2", "c3", "c4"}},
		{"collisions and duplicates", 3, coarse, []string{"c2", "c1", "c2", "c3", "c2"}},
		{"signed custom hash", 5, func(k string) int64 { return MD5Hash(k) - 1<<31 }, []string{"c1", "c2"}},
		{"zero virtual nodes", 0, nil, []string{"c1", "c2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []ConsistentHashOption{WithVirtualNodes(tt.vnodes)}
			ref := tt.hash
			if tt.hash != nil {
				opts = append(opts, WithHashFunc(tt.hash))
			} else {
				ref = MD5Hash
			}
			s, err := NewConsistentHash(opts...)
			if err != nil {
				t.Fatal(err)
			}
			if s.VirtualNodes() != tt.vnodes {
				t.Fatalf("VirtualNodes() = %d", s.VirtualNodes())
			}
			total := 0
			for _, cid := range tt.cids {
				got := s.Allocate("G", cid, mqs, tt.cids)
				want := refConsistentHash(tt.vnodes, ref, cid, mqs, tt.cids)
				if !slices.Equal(got, want) {
					t.Errorf("%s: got %s, want %s", cid, fmtQueues(got), fmtQueues(want))
				}
				total += len(want)
			}
			if tt.vnodes > 0 && total < len(mqs) {
				t.Errorf("reference assigned only %d of %d queues", total, len(mqs))
			}
		})
	}
}

func TestConsistentHashCollisionLastWins(t *testing.T) {
	s, err := NewConsistentHash(WithHashFunc(func(string) int64 { return 7 }))
	if err != nil {
		t.Fatal(err)
	}
	mqs := queues("a", 3)
	cids := []string{"c1", "c2", "c3"}
	if got := s.Allocate("G", "c3", mqs, cids); !slices.Equal(got, mqs) {
		t.Errorf("last consumer got %v, want every queue", got)
	}
	if got := s.Allocate("G", "c1", mqs, cids); got != nil {
		t.Errorf("first consumer got %v, want nothing", got)
	}
}

func TestNewConsistentHashNegative(t *testing.T) {
	if _, err := NewConsistentHash(WithVirtualNodes(-1)); !errors.Is(err, ErrVirtualNodes) {
		t.Fatalf("err = %v, want ErrVirtualNodes", err)
	}
}

type fixedResolver struct{ broker, consumer string }

func (r fixedResolver) BrokerRoom(rocketmq.MessageQueue) string { return r.broker }
func (r fixedResolver) ConsumerRoom(string) string              { return r.consumer }

func TestMachineRoomNearbyErrors(t *testing.T) {
	if _, err := NewMachineRoomNearby(nil, prefixResolver{}); !errors.Is(err, ErrNilStrategy) {
		t.Errorf("nil strategy: err = %v", err)
	}
	if _, err := NewMachineRoomNearby(Averagely{}, nil); !errors.Is(err, ErrNilResolver) {
		t.Errorf("nil resolver: err = %v", err)
	}
	mqs := queues("a", 4)
	cids := []string{"c1"}
	tests := []struct {
		name string
		r    fixedResolver
		want []rocketmq.MessageQueue
	}{
		{"same room", fixedResolver{"hz", "hz"}, mqs},
		{"room without consumers is shared", fixedResolver{"hz", "sh"}, mqs},
		{"empty broker room", fixedResolver{"", "hz"}, nil},
		{"empty consumer room", fixedResolver{"hz", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewMachineRoomNearby(AveragelyByCircle{}, tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Allocate("G", "c1", mqs, cids); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMachineRoomNearbyRoomOrder(t *testing.T) {
	// Rooms without consumers are visited in Java String order, so the
	// supplementary-character room comes before the U+FF21 one.
	var mqs []rocketmq.MessageQueue
	mqs = append(mqs, queues("\uFF21-b", 1)...)
	mqs = append(mqs, queues("\U0001F600-b", 1)...)
	s, err := NewMachineRoomNearby(Averagely{}, prefixResolver{})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Allocate("G", "hz-c1", mqs, []string{"hz-c1"})
	want := []rocketmq.MessageQueue{mqs[1], mqs[0]}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestByMachineRoomNoIDCs(t *testing.T) {
	mqs := queues("hz@a", 3)
	if got := NewByMachineRoom().Allocate("G", "c1", mqs, []string{"c1"}); got != nil {
		t.Errorf("got %v, want nothing", got)
	}
}

func ExampleAveragely() {
	mqAll := []rocketmq.MessageQueue{
		{Topic: "TopicTest", BrokerName: "broker-b", QueueID: 1},
		{Topic: "TopicTest", BrokerName: "broker-a", QueueID: 0},
		{Topic: "TopicTest", BrokerName: "broker-b", QueueID: 0},
		{Topic: "TopicTest", BrokerName: "broker-a", QueueID: 2},
		{Topic: "TopicTest", BrokerName: "broker-a", QueueID: 1},
	}
	cidAll := []string{"10.0.0.2@200", "10.0.0.1@100"}
	// Every consumer must see the same order.
	SortQueues(mqAll)
	SortClientIDs(cidAll)
	for _, cid := range cidAll {
		fmt.Println(cid, fmtQueues(Averagely{}.Allocate("GroupA", cid, mqAll, cidAll)))
	}
	// Output:
	// 10.0.0.1@100 [broker-a/0 broker-a/1 broker-a/2]
	// 10.0.0.2@200 [broker-b/0 broker-b/1]
}

func ExampleAveragelyByCircle() {
	mqAll := append(queues("broker-a", 4), queues("broker-b", 4)...)
	cidAll := []string{"c0", "c1", "c2"}
	for _, cid := range cidAll {
		got := AveragelyByCircle{}.Allocate("GroupA", cid, mqAll, cidAll)
		fmt.Println(cid, fmtQueues(got))
	}
	// Output:
	// c0 [broker-a/0 broker-a/3 broker-b/2]
	// c1 [broker-a/1 broker-b/0 broker-b/3]
	// c2 [broker-a/2 broker-b/1]
}

func BenchmarkConsistentHash(b *testing.B) {
	s, err := NewConsistentHash()
	if err != nil {
		b.Fatal(err)
	}
	mqs := append(queues("broker-a", 16), queues("broker-b", 16)...)
	cids := []string{"10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3", "10.0.0.4@4", "10.0.0.5@5"}
	b.ReportAllocs()
	for range b.N {
		s.Allocate("G", cids[2], mqs, cids)
	}
}

func BenchmarkAveragely(b *testing.B) {
	mqs := append(queues("broker-a", 16), queues("broker-b", 16)...)
	cids := []string{"10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3", "10.0.0.4@4", "10.0.0.5@5"}
	b.ReportAllocs()
	for range b.N {
		Averagely{}.Allocate("G", cids[2], mqs, cids)
	}
}
