package remoting

import (
	"bytes"
	"testing"

	jsoniter "github.com/json-iterator/go"
)

// These benchmarks compare the hand-written body codec with json-iterator
// on mirror types whose tags give fastjson's key order, to show where the
// hand-written code is kept for speed as well as for fastjson's syntax.

var jsoniterBody = jsoniter.Config{EscapeHTML: false, SortMapKeys: true}.Froze()

type jiSub struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	CodeSet         []int32  `json:"codeSet"`
	ExpressionType  string   `json:"expressionType"`
	SubString       string   `json:"subString"`
	SubVersion      int64    `json:"subVersion"`
	TagsSet         []string `json:"tagsSet"`
	Topic           string   `json:"topic"`
}

type jiConsumer struct {
	ConsumeFromWhere    string  `json:"consumeFromWhere"`
	ConsumeType         string  `json:"consumeType"`
	GroupName           string  `json:"groupName"`
	MessageModel        string  `json:"messageModel"`
	SubscriptionDataSet []jiSub `json:"subscriptionDataSet"`
	UnitMode            bool    `json:"unitMode"`
}

type jiHeartbeat struct {
	ClientID        string       `json:"clientID"`
	ConsumerDataSet []jiConsumer `json:"consumerDataSet"`
	ProducerDataSet []struct {
		GroupName string `json:"groupName"`
	} `json:"producerDataSet"`
}

type jiConn struct {
	ClientAddr string `json:"clientAddr"`
	ClientID   string `json:"clientId"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

type jiConsumerConnection struct {
	ConnectionSet     []jiConn         `json:"connectionSet"`
	ConsumeFromWhere  string           `json:"consumeFromWhere"`
	ConsumeType       string           `json:"consumeType"`
	MessageModel      string           `json:"messageModel"`
	SubscriptionTable map[string]jiSub `json:"subscriptionTable"`
}

func benchHeartbeat() *HeartbeatData {
	sub := SubscriptionData{Topic: "TopicTest", SubString: "TagA || TagB", TagsSet: []string{"TagA", "TagB"},
		CodeSet: []int32{2598919, 2598920}, SubVersion: 1700000000000, ExpressionType: ExpressionTypeTag}
	return &HeartbeatData{
		ClientID:        "10.0.0.1@12345#1700000000000",
		ProducerDataSet: []ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}, {GroupName: "ProducerGroupA"}},
		ConsumerDataSet: []ConsumerData{{GroupName: "ConsumerGroupA", ConsumeType: ConsumeTypePassively,
			MessageModel: MessageModelClustering, ConsumeFromWhere: ConsumeFromLastOffset,
			SubscriptionDataSet: []SubscriptionData{sub, {Topic: "%RETRY%ConsumerGroupA", SubString: SubAll, SubVersion: 1700000000001, ExpressionType: ExpressionTypeTag}}}},
	}
}

func benchConsumerConnection() *ConsumerConnection {
	c := &ConsumerConnection{ConsumeType: ConsumeTypePassively, MessageModel: MessageModelClustering,
		ConsumeFromWhere: ConsumeFromLastOffset, SubscriptionTable: map[string]SubscriptionData{}}
	for i, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		c.ConnectionSet = append(c.ConnectionSet, Connection{ClientID: ip + "@1234#17", ClientAddr: ip + ":5500" + string(rune('0'+i)), Language: "JAVA", Version: 399})
	}
	c.SubscriptionTable["TopicTest"] = benchHeartbeat().ConsumerDataSet[0].SubscriptionDataSet[0]
	c.SubscriptionTable["%RETRY%G"] = benchHeartbeat().ConsumerDataSet[0].SubscriptionDataSet[1]
	return c
}

func benchBodies() []struct {
	name   string
	body   JSONBody
	newOne func() JSONBody
	mirror func() any
} {
	return []struct {
		name   string
		body   JSONBody
		newOne func() JSONBody
		mirror func() any
	}{
		{"Heartbeat", benchHeartbeat(), func() JSONBody { return new(HeartbeatData) }, func() any { return new(jiHeartbeat) }},
		{"ConsumerConnection", benchConsumerConnection(), func() JSONBody { return new(ConsumerConnection) }, func() any { return new(jiConsumerConnection) }},
	}
}

func BenchmarkBodyEncode(b *testing.B) {
	for _, tt := range benchBodies() {
		data := tt.body.AppendJSON(nil, JSONFastjson)
		m := tt.mirror()
		if err := jsoniterBody.Unmarshal(data, m); err != nil {
			b.Fatal(err)
		}
		b.Run(tt.name+"/hand", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 2048)
			for i := 0; i < b.N; i++ {
				buf = tt.body.AppendJSON(buf[:0], JSONFastjson)
			}
		})
		b.Run(tt.name+"/jsoniter", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := jsoniterBody.Marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBodyDecode(b *testing.B) {
	for _, tt := range benchBodies() {
		data := tt.body.AppendJSON(nil, JSONFastjson)
		b.Run(tt.name+"/hand", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := tt.newOne().DecodeJSON(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tt.name+"/jsoniter", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := jsoniterBody.Unmarshal(data, tt.mirror()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The mirror types are faithful: json-iterator writes the same bytes as
// the hand-written encoder for the benchmark bodies, so the comparison is
// of equal work.
func TestBodyJsoniterMirrorsWriteTheSameBytes(t *testing.T) {
	for _, tt := range benchBodies() {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.body.AppendJSON(nil, JSONFastjson)
			m := tt.mirror()
			if err := jsoniterBody.Unmarshal(want, m); err != nil {
				t.Fatal(err)
			}
			got, err := jsoniterBody.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("json-iterator wrote\n%s\nhand-written\n%s", got, want)
			}
		})
	}
}
