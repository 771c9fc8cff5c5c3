package remoting

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

// bodyRouteVector is one case of java-vectors.json group routeJson.
type bodyRouteVector struct {
	Name         string `json:"name"`
	ToJSON       string `json:"toJson"`
	ToJSONPretty string `json:"toJsonPretty"`
	StandardJSON string `json:"standardJson"`
	Encode       struct {
		File string `json:"file"`
	} `json:"encode"`
	StandardEncode struct {
		File string `json:"file"`
	} `json:"standardEncode"`
}

func bodyRouteVectors(t *testing.T) []bodyRouteVector {
	t.Helper()
	raw, err := os.ReadFile("../testdata/java-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		RouteJSON struct {
			Cases []bodyRouteVector `json:"cases"`
		} `json:"routeJson"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.RouteJSON.Cases) != 3 {
		t.Fatalf("routeJson has %d cases", len(v.RouteJSON.Cases))
	}
	return v.RouteJSON.Cases
}

func bodyReadVector(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRouteJSONJavaVectors(t *testing.T) {
	for _, vc := range bodyRouteVectors(t) {
		t.Run(vc.Name, func(t *testing.T) {
			def := bodyReadVector(t, vc.Encode.File)
			std := bodyReadVector(t, vc.StandardEncode.File)
			if string(def) != vc.ToJSON || string(std) != vc.StandardJSON {
				t.Fatal("vector files disagree with the inline JSON")
			}
			if !bytes.Contains(def, []byte("{0:\"")) {
				t.Fatalf("default vector lacks bare integer keys: %s", def)
			}
			var fromDef, fromStd, fromPretty TopicRouteData
			for _, in := range []struct {
				name string
				data []byte
				into *TopicRouteData
			}{{"default", def, &fromDef}, {"standard", std, &fromStd}, {"pretty", []byte(vc.ToJSONPretty), &fromPretty}} {
				if err := in.into.DecodeJSON(in.data); err != nil {
					t.Fatalf("decode %s: %v", in.name, err)
				}
			}
			if !reflect.DeepEqual(fromDef, fromStd) || !reflect.DeepEqual(fromDef, fromPretty) {
				t.Fatalf("forms decode differently:\n%+v\n%+v\n%+v", fromDef, fromStd, fromPretty)
			}
			// Key values.
			if len(fromDef.BrokerDatas) != 2 || len(fromDef.QueueDatas) != 2 {
				t.Fatalf("%+v", fromDef)
			}
			a := fromDef.BrokerDatas[0]
			if a.BrokerName != "broker-a" || a.MasterAddr() != "192.168.0.2:10911" || a.BrokerAddrs[1] != "192.168.0.3:10911" {
				t.Fatalf("%+v", a)
			}
			if q := fromDef.QueueDatas[1]; q != (QueueData{BrokerName: "broker-b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}) {
				t.Fatalf("%+v", q)
			}
			switch vc.Name {
			case "two-brokers-non-ascii-cluster":
				if a.Cluster != "集群-A" {
					t.Fatalf("cluster %q", a.Cluster)
				}
			case "two-brokers-order-conf-filter-server":
				if fromDef.OrderTopicConf != "broker-a:4;broker-b:4" ||
					!reflect.DeepEqual(fromDef.FilterServerTable, map[string][]string{"192.168.0.2:10911": {"192.168.0.9:10921"}}) {
					t.Fatalf("%+v", fromDef)
				}
			default:
				if a.Cluster != "DefaultCluster" || fromDef.OrderTopicConf != "" || fromDef.FilterServerTable != nil {
					t.Fatalf("%+v", fromDef)
				}
			}
			// Encoding reproduces Java's bytes in both styles.
			if got := fromDef.AppendJSON(nil, JSONFastjson); !bytes.Equal(got, def) {
				t.Fatalf("fastjson style:\n got %s\nwant %s%s%s", got, def, hxDump(got), hxDump(def))
			}
			if got := EncodeJSON(&fromDef, JSONStandard); !bytes.Equal(got, std) {
				t.Fatalf("standard style:\n got %s\nwant %s%s%s", got, std, hxDump(got), hxDump(std))
			}
			// The standard form is strict JSON.
			if !json.Valid(std) || json.Valid(def) {
				t.Fatal("expected standard valid and default invalid for encoding/json")
			}
		})
	}
}

// bodyFor maps a captured frame with a JSON body to its body type.
func bodyFor(f *hxFrame) JSONBody {
	rc := f.reqCode()
	if f.Direction == "req" {
		switch rc {
		case 34:
			return new(HeartbeatData)
		case 41, 42:
			return new(LockBatchRequestBody)
		case 103:
			return new(RegisterBrokerBody)
		}
		return nil
	}
	if f.Code != 0 {
		return nil
	}
	switch rc {
	case 105:
		return new(TopicRouteData)
	case 106:
		return new(ClusterInfo)
	case 206, 224:
		return new(TopicList)
	case 38:
		return new(ConsumerListByGroupBody)
	case 41:
		return new(LockBatchResponseBody)
	case 203:
		return new(ConsumerConnection)
	case 208:
		return new(ConsumeStats)
	case 307:
		return new(ConsumerRunningInfo)
	}
	return nil
}

type bodyNum string

// bodyTree decodes any fastjson text into a comparable tree: objects as
// maps keyed by key text (bare and quoted keys alike, object keys by their
// literal), integers as their text, decimals as float64.
func bodyTree(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	var walk func(r *fjReader) any
	walk = func(r *fjReader) any {
		switch r.peek() {
		case '{':
			m := map[string]any{}
			r.object(func(k []byte) {
				key := string(k)
				m[key] = walk(r)
			})
			return m
		case '[':
			a := []any{}
			r.array(func() { a = append(a, walk(r)) })
			return a
		case '"', '\'':
			return r.str()
		}
		if r.null() {
			return nil
		}
		tok := string(r.bare())
		switch tok {
		case "true":
			return true
		case "false":
			return false
		}
		if strings.ContainsAny(tok, ".eE") {
			f, err := strconv.ParseFloat(tok, 64)
			if err != nil {
				r.fail("bad number")
			}
			return f
		}
		return bodyNum(tok)
	}
	if err := fjDecode(data, func(r *fjReader) { v = walk(r) }); err != nil {
		t.Fatalf("generic decode: %v", err)
	}
	return v
}

func TestBodiesFromCapturedFrames(t *testing.T) {
	covered := map[string]int{}
	frames := hxFrames(t)
	for i := range frames {
		f := &frames[i]
		if f.BodyKind != "json" && f.BodyKind != "json-fastjson-nonstandard" {
			continue
		}
		b := bodyFor(f)
		if b == nil {
			t.Errorf("frame %d (%s): JSON body but no body type mapped", f.N, f.File)
			continue
		}
		name := reflect.TypeOf(b).Elem().Name()
		t.Run(strconv.Itoa(f.N)+"-"+name, func(t *testing.T) {
			data := f.body(t)
			if err := b.DecodeJSON(data); err != nil {
				t.Fatalf("%s: %v", f.Description, err)
			}
			covered[name]++
			for _, style := range []JSONStyle{JSONFastjson, JSONStandard} {
				enc := b.AppendJSON(nil, style)
				again := reflect.New(reflect.TypeOf(b).Elem()).Interface().(JSONBody)
				if err := again.DecodeJSON(enc); err != nil {
					t.Fatalf("style %d: decode own output: %v\n%s", style, err, enc)
				}
				if !reflect.DeepEqual(again, b) {
					t.Fatalf("style %d: round trip differs\n got %+v\nwant %+v", style, again, b)
				}
				if style == JSONStandard && !bodyHasMQKeys[name] && !json.Valid(enc) {
					t.Fatalf("standard output is not valid JSON: %s", enc)
				}
				// The Go client writes codeSet as strings; everything else must
				// re-encode to the same JSON tree as the captured body.
				if f.Sender != "go-client" && !reflect.DeepEqual(bodyTree(t, enc), bodyTree(t, data)) {
					t.Fatalf("style %d: JSON tree differs\n got %s\nwant %s", style, enc, data)
				}
			}
			// Java's output without multi-entry HashMaps is deterministic: we
			// reproduce it byte for byte. The NameServer answered the Java
			// client (version 409) in the standard style, everything else
			// is fastjson's default.
			style := JSONFastjson
			if f.reqCode() == 105 && f.BodyKind == "json" {
				style = JSONStandard
			}
			if f.Sender != "go-client" && f.BodyLength < 1000 && name != "ConsumerConnection" && name != "ConsumeStats" {
				if enc := b.AppendJSON(nil, style); !bytes.Equal(enc, data) {
					t.Fatalf("bytes differ\n got %s\nwant %s", enc, data)
				}
			}
		})
	}
	for _, want := range []string{"TopicRouteData", "ClusterInfo", "TopicList", "HeartbeatData", "LockBatchRequestBody",
		"LockBatchResponseBody", "RegisterBrokerBody", "ConsumerListByGroupBody", "ConsumerConnection", "ConsumeStats", "ConsumerRunningInfo"} {
		if covered[want] == 0 {
			t.Errorf("no captured body decoded into %s", want)
		}
	}
}

func bodyDecodeFrame(t *testing.T, n int, into JSONBody) *hxFrame {
	t.Helper()
	f := hxFrameByN(t, n)
	if err := into.DecodeJSON(f.body(t)); err != nil {
		t.Fatalf("frame %d: %v", n, err)
	}
	return f
}

func TestCapturedBodyValues(t *testing.T) {
	t.Run("0003 route standard to Java", func(t *testing.T) {
		var r TopicRouteData
		bodyDecodeFrame(t, 3, &r)
		if len(r.BrokerDatas) != 1 || r.BrokerDatas[0].MasterAddr() != "127.0.0.1:10911" || r.QueueDatas[0].Perm != 7 ||
			r.QueueDatas[0].WriteQueueNums != 8 || r.BrokerDatas[0].Cluster != "DefaultCluster" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("0332 route fastjson to Go", func(t *testing.T) {
		var r TopicRouteData
		f := bodyDecodeFrame(t, 332, &r)
		if f.BodyKind != "json-fastjson-nonstandard" || r.BrokerDatas[0].BrokerAddrs[0] != "127.0.0.1:10911" || r.QueueDatas[0].ReadQueueNums != 4 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("0014 cluster info", func(t *testing.T) {
		var c ClusterInfo
		bodyDecodeFrame(t, 14, &c)
		if c.BrokerAddrTable["broker-a"].MasterAddr() != "127.0.0.1:10911" ||
			!reflect.DeepEqual(c.ClusterAddrTable, map[string][]string{"DefaultCluster": {"broker-a"}}) {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("0012 topic list", func(t *testing.T) {
		var l TopicList
		bodyDecodeFrame(t, 12, &l)
		if len(l.TopicList) < 50 || !slicesContains(l.TopicList, "GoldenTopicJavaOrderly") || l.BrokerAddr != "" {
			t.Fatalf("%d topics", len(l.TopicList))
		}
	})
	t.Run("0333 Go heartbeat codeSet strings", func(t *testing.T) {
		var h HeartbeatData
		bodyDecodeFrame(t, 333, &h)
		c := h.ConsumerDataSet[0]
		s := c.SubscriptionDataSet[1]
		if h.ClientID != "192.0.2.2@GoldenGo" || c.GroupName != "GoldenPushGo" || c.ConsumeType != ConsumeTypePassively ||
			c.ConsumeFromWhere != ConsumeFromFirstOffset || s.Topic != "GoldenTopicGo" ||
			!reflect.DeepEqual(s.CodeSet, []int32{-1797401818, -711620786, -726516768, -726898910, 2598919}) ||
			s.SubVersion != 1795957097794097245 || len(h.ProducerDataSet) != 0 {
			t.Fatalf("%+v", h)
		}
	})
	t.Run("0017 Java admin heartbeat", func(t *testing.T) {
		var h HeartbeatData
		bodyDecodeFrame(t, 17, &h)
		if h.ClientID != "192.0.2.2@GoldenJavaAdmin" || len(h.ConsumerDataSet) != 0 ||
			!reflect.DeepEqual(h.ProducerDataSet, []ProducerData{{GroupName: "CLIENT_INNER_PRODUCER"}}) {
			t.Fatalf("%+v", h)
		}
	})
	t.Run("0183 unlock", func(t *testing.T) {
		var l UnlockBatchRequestBody
		bodyDecodeFrame(t, 183, &l)
		if l.ConsumerGroup != "GoldenOrderlyJava" || len(l.MQSet) != 5 ||
			l.MQSet[4] != (rocketmq.MessageQueue{Topic: "%RETRY%GoldenOrderlyJava", BrokerName: "broker-a", QueueID: 0}) {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("0058 lock response", func(t *testing.T) {
		var l LockBatchResponseBody
		bodyDecodeFrame(t, 58, &l)
		if !reflect.DeepEqual(l.LockOKMQSet, []rocketmq.MessageQueue{{Topic: "GoldenTopicJavaOrderly", BrokerName: "broker-a", QueueID: 1}}) {
			t.Fatalf("%+v", l)
		}
	})
	t.Run("0145 consume stats object keys", func(t *testing.T) {
		var c ConsumeStats
		bodyDecodeFrame(t, 145, &c)
		mq := rocketmq.MessageQueue{Topic: "GoldenTopicJava", BrokerName: "broker-a", QueueID: 3}
		if c.ConsumeTps != 0.8 || len(c.OffsetTable) != 5 ||
			c.OffsetTable[mq] != (OffsetWrapper{BrokerOffset: 2, ConsumerOffset: 2, LastTimestamp: 1795957048734}) {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("0147 consumer connection", func(t *testing.T) {
		var c ConsumerConnection
		bodyDecodeFrame(t, 147, &c)
		sub := c.SubscriptionTable["GoldenTopicJava"]
		if len(c.ConnectionSet) != 1 || c.ConnectionSet[0] != (Connection{ClientID: "192.0.2.2@GoldenJava", ClientAddr: "127.0.0.1:42998", Language: "JAVA", Version: 409}) ||
			c.MessageModel != MessageModelClustering || len(sub.CodeSet) != 7 || sub.CodeSet[0] != 2598919 || len(sub.TagsSet) != 7 {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("0150 running info with braces in strings", func(t *testing.T) {
		var c ConsumerRunningInfo
		bodyDecodeFrame(t, 150, &c)
		mq := rocketmq.MessageQueue{Topic: "GoldenTopicJava", BrokerName: "broker-a", QueueID: 2}
		if c.Properties["subscription"] != "{}" || c.Properties[PropConsumeType] != ConsumeTypePassively ||
			!strings.Contains(c.Properties["log"], "$InnerLogger@") || c.MQTable[mq].CommitOffset != 3 || !c.MQTable[mq].Locked ||
			c.StatusTable["GoldenTopicJava"].PullRT != 2224.8571428571427 || len(c.SubscriptionSet) != 2 || c.Jstack != "" {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("0004 register broker body and crc", func(t *testing.T) {
		var b RegisterBrokerBody
		f := bodyDecodeFrame(t, 4, &b)
		w := b.TopicConfigSerializeWrapper
		if w.DataVersion != (DataVersion{Counter: 613, Timestamp: 1795957044082}) || len(w.TopicConfigTable) != 1 ||
			!reflect.DeepEqual(w.TopicConfigTable["GoldenTopicJava"], TopicConfig{TopicName: "GoldenTopicJava", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"}) {
			t.Fatalf("%+v", b)
		}
		crc := int64(crc32.ChecksumIEEE(f.body(t)) & 0x7FFFFFFF)
		if strconv.FormatInt(crc, 10) != f.ExtFields["bodyCrc32"] {
			t.Fatalf("bodyCrc32 %s, computed %d", f.ExtFields["bodyCrc32"], crc)
		}
	})
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestRegisterBrokerBodyCompressed(t *testing.T) {
	var full RegisterBrokerBody
	bodyDecodeFrame(t, 154, &full) // a periodic full registration, hundreds of topics
	if n := len(full.TopicConfigSerializeWrapper.TopicConfigTable); n < 100 {
		t.Fatalf("only %d topics", n)
	}
	for _, ver := range []int32{409, 413} {
		t.Run("version"+strconv.Itoa(int(ver)), func(t *testing.T) {
			b := full
			if ver >= 413 {
				b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap = []byte(`{"T1":{"bname":"broker-a","epoch":1,"topic":"T1","totalQueues":4}}`)
			}
			prefix := []byte("xx")
			out, err := b.AppendCompressed(prefix, ver)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out[:2], prefix) || out[2] != 0x78 || out[3] != 0xDA {
				t.Fatalf("want prefix kept and a zlib level-9 header, got % x", out[:4])
			}
			var got RegisterBrokerBody
			if err := got.DecodeCompressed(out[2:], ver, 0); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, b) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", got.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap, b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap)
			}
			// A smaller inflate limit is enforced.
			if err := got.DecodeCompressed(out[2:], ver, 1000); !errors.Is(err, ErrMalformedBody) {
				t.Fatalf("limit: %v", err)
			}
			// Every truncation fails cleanly.
			for i := 0; i < len(out)-2; i += 97 {
				if err := got.DecodeCompressed(out[2:2+i], ver, 0); err == nil {
					t.Fatalf("truncated at %d decoded", i)
				}
			}
		})
	}
}

// bodyJavaCompressed builds the inflated layout by hand, the way Java's
// RegisterBrokerBody.encode(true) lays it out, to check decoding against
// the specification rather than against our own encoder.
func bodyJavaCompressed(t *testing.T, withMapping bool) []byte {
	t.Helper()
	var raw []byte
	block := func(s string) {
		raw = append(raw, byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s)))
		raw = append(raw, s...)
	}
	count := func(n int) { raw = append(raw, 0, 0, byte(n>>8), byte(n)) }
	block(`{"counter":7,"timestamp":1700000000000}`)
	count(2)
	block("TopicA 8 8 6 SINGLE_TAG")
	block(`TopicB 4 2 7 MULTI_TAG {"message.type":"FIFO","k":"a b"}`)
	block(`["10.0.0.9:1"]`)
	if withMapping {
		count(1)
		block(`{"bname":"broker-a","epoch":3,"topic":"TopicA","totalQueues":8}`)
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRegisterBrokerBodyCompressedJavaLayout(t *testing.T) {
	for _, tc := range []struct {
		ver     int32
		mapping bool
	}{{409, false}, {413, true}, {479, true}} {
		t.Run(strconv.Itoa(int(tc.ver)), func(t *testing.T) {
			var b RegisterBrokerBody
			if err := b.DecodeCompressed(bodyJavaCompressed(t, tc.mapping), tc.ver, 0); err != nil {
				t.Fatal(err)
			}
			w := b.TopicConfigSerializeWrapper
			want := map[string]TopicConfig{
				"TopicA": {TopicName: "TopicA", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG"},
				"TopicB": {TopicName: "TopicB", ReadQueueNums: 4, WriteQueueNums: 2, Perm: 7, TopicFilterType: "MULTI_TAG",
					Attributes: map[string]string{"message.type": "FIFO", "k": "a b"}},
			}
			if w.DataVersion != (DataVersion{Counter: 7, Timestamp: 1700000000000}) || !reflect.DeepEqual(w.TopicConfigTable, want) ||
				!reflect.DeepEqual(b.FilterServerList, []string{"10.0.0.9:1"}) {
				t.Fatalf("%+v", b)
			}
			if tc.mapping {
				if string(w.TopicQueueMappingInfoMap) != `{"TopicA":{"bname":"broker-a","epoch":3,"topic":"TopicA","totalQueues":8}}` {
					t.Fatalf("mapping %s", w.TopicQueueMappingInfoMap)
				}
			} else if w.TopicQueueMappingInfoMap != nil {
				t.Fatal("mapping section read for a 4.x broker")
			}
		})
	}
	// A 5.x body read as 4.x leaves the mapping section unread, like Java.
	var b RegisterBrokerBody
	if err := b.DecodeCompressed(bodyJavaCompressed(t, true), 409, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.DecodeCompressed([]byte("not zlib"), 409, 0); !errors.Is(err, ErrMalformedBody) {
		t.Fatalf("garbage: %v", err)
	}
}

func TestTopicConfigText(t *testing.T) {
	tc := TopicConfig{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG", TopicSysFlag: 1, Order: true}
	if got := string(tc.AppendText(nil)); got != "T 4 8 6 SINGLE_TAG" {
		t.Fatalf("%q", got)
	}
	var back TopicConfig
	if err := back.ParseText("T 4 8 6 SINGLE_TAG "); err != nil || back.TopicName != "T" || back.WriteQueueNums != 8 || back.Order {
		t.Fatalf("%+v %v", back, err)
	}
	tc.Attributes = map[string]string{"+a": "b"}
	if got := string(tc.AppendText(nil)); got != `T 4 8 6 SINGLE_TAG {"+a":"b"}` {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{"", "T 4 8 6", "T x 8 6 SINGLE_TAG", "T 4 8 99999999999 SINGLE_TAG"} {
		if err := back.ParseText(bad); !errors.Is(err, ErrMalformedBody) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	d := NewTopicConfig("X")
	if d.ReadQueueNums != 16 || d.Perm != 6 || d.TopicFilterType != TopicFilterSingleTag {
		t.Fatalf("%+v", d)
	}
}

func TestBodyRoundTrips(t *testing.T) {
	mq := func(topic string, q int) rocketmq.MessageQueue {
		return rocketmq.MessageQueue{Topic: topic, BrokerName: "broker-{a}:1", QueueID: q}
	}
	dv := DataVersion{Counter: 3, Timestamp: 1700000000000, StateVersion: 2}
	cases := []JSONBody{
		&TopicRouteData{OrderTopicConf: "b:1", QueueDatas: []QueueData{{BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 6, TopicSysFlag: 1}},
			BrokerDatas:               []BrokerData{{Cluster: "c", BrokerName: "b", BrokerAddrs: map[int64]string{0: "a:1", 2: "a:2", -1: "x"}, EnableActingMaster: true, ZoneName: "z"}},
			FilterServerTable:         map[string][]string{"a:1": {"f:1", "f:2"}},
			TopicQueueMappingByBroker: []byte(`{"b":{"bname":"b","epoch":0}}`)},
		&HeartbeatData{ClientID: "ip@1", ProducerDataSet: []ProducerData{{"CLIENT_INNER_PRODUCER"}, {"pg"}}, HeartbeatFingerprint: 7, WithoutSub: true,
			ConsumerDataSet: []ConsumerData{{GroupName: "g", ConsumeType: ConsumeTypeActively, MessageModel: MessageModelBroadcasting,
				ConsumeFromWhere: ConsumeFromTimestamp, UnitMode: true, SubscriptionDataSet: []SubscriptionData{{Topic: "T", SubString: "A || B",
					TagsSet: []string{"A", "B"}, CodeSet: []int32{65, 66}, SubVersion: 1 << 60, ExpressionType: ExpressionTypeTag, ClassFilterMode: true}}}}},
		&ConsumerListByGroupBody{ConsumerIDList: []string{"a@1", "b@2"}},
		&LockBatchRequestBody{ConsumerGroup: "g", ClientID: "c", OnlyThisBroker: true, MQSet: []rocketmq.MessageQueue{mq("T", 0), mq("T", 1)}},
		&LockBatchResponseBody{LockOKMQSet: []rocketmq.MessageQueue{mq("T", 3)}},
		&TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 7, TopicFilterType: TopicFilterMultiTag, TopicSysFlag: 3, Order: true,
			Attributes: map[string]string{"message.type": "FIFO"}},
		&dv,
		&TopicConfigSerializeWrapper{DataVersion: dv, TopicConfigTable: map[string]TopicConfig{"T": NewTopicConfig("T"), "U": NewTopicConfig("U")},
			MappingDataVersion: []byte(`{"counter":1,"timestamp":2}`), TopicQueueMappingInfoMap: []byte(`{}`), TopicQueueMappingDetailMap: []byte(`{}`)},
		&RegisterBrokerBody{FilterServerList: []string{"f:1"}, TopicConfigSerializeWrapper: TopicConfigSerializeWrapper{DataVersion: dv,
			TopicConfigTable: map[string]TopicConfig{"T": NewTopicConfig("T")}}},
		&ClusterInfo{BrokerAddrTable: map[string]BrokerData{"b": {Cluster: "c", BrokerName: "b", BrokerAddrs: map[int64]string{0: "a:1"}}},
			ClusterAddrTable: map[string][]string{"c": {"b"}, "d": nil}},
		&TopicList{TopicList: []string{"A", "B"}, BrokerAddr: "a:1"},
		&KVTable{Table: map[string]string{"k": "v", "T": "b:4;c:4", "ü": "\x01\"\\/"}},
		&GroupList{GroupList: []string{"g1", "g2"}},
		&TopicStatsTable{OffsetTable: map[rocketmq.MessageQueue]TopicOffset{mq("T", 0): {MinOffset: 1, MaxOffset: 9, LastUpdateTimestamp: 3}}, TopicPutTps: 1.5},
		&ConsumeStats{ConsumeTps: 0.25, OffsetTable: map[rocketmq.MessageQueue]OffsetWrapper{mq("T", 0): {1, 2, 3, 4}, mq("U", 1): {5, 6, 0, 8}}},
		&ConsumerConnection{ConnectionSet: []Connection{{ClientID: "c", ClientAddr: "a:1", Language: "GO", Version: 317}},
			SubscriptionTable: map[string]SubscriptionData{"T": {Topic: "T", SubString: "*", SubVersion: 5, ExpressionType: "TAG"}},
			ConsumeType:       ConsumeTypePassively, MessageModel: MessageModelClustering, ConsumeFromWhere: ConsumeFromLastOffset},
		&ProducerConnection{ConnectionSet: []Connection{{ClientID: "c", ClientAddr: "a:1", Language: "JAVA", Version: 409}}},
		&ResetOffsetBody{OffsetTable: map[rocketmq.MessageQueue]int64{mq("T", 0): 12, mq("T", 1): -1}},
		&ResetOffsetBodyForC{OffsetTable: []MessageQueueForC{{Topic: "T", BrokerName: "b", QueueID: 1, Offset: 12}, {Topic: "T", BrokerName: "b", Offset: -1}}},
		&GetConsumerStatusBody{MessageQueueTable: map[rocketmq.MessageQueue]int64{mq("T", 0): 1},
			ConsumerTable: map[string]map[rocketmq.MessageQueue]int64{"c1": {mq("T", 1): 2}}},
		&ConsumerRunningInfo{Properties: map[string]string{PropConsumeType: ConsumeTypePassively, "subscription": "{}"},
			SubscriptionSet: []SubscriptionData{{Topic: "T", SubString: "*"}},
			MQTable:         map[rocketmq.MessageQueue]ProcessQueueInfo{mq("T", 0): {CommitOffset: 1, CachedMsgCount: 2, Locked: true, Droped: true, TryUnlockTimes: 3}},
			StatusTable:     map[string]ConsumeStatus{"T": {PullRT: 1.25, PullTPS: 2, ConsumeRT: 3, ConsumeOKTPS: 4, ConsumeFailedTPS: 5, ConsumeFailedMsgs: 6}},
			Jstack:          "thread \"main\"\n\tat x", MQPopTable: []byte(`{}`), UserConsumerInfo: map[string]string{"a": "b"}},
		&ConsumeMessageDirectlyResult{Order: true, AutoCommit: false, ConsumeResult: ConsumeResultLater, Remark: "r", SpentTimeMills: 12},
		&ConsumeMessageDirectlyResult{AutoCommit: true},
		&QueryCorrectionOffsetBody{CorrectionOffsets: map[int32]int64{0: 5, 3: 7}},
		&SubscriptionGroupConfig{GroupName: "g", RetryMaxTimes: 3, ConsumeMessageOrderly: true, GroupSysFlag: 1, ConsumeTimeoutMinute: 15,
			Attributes: map[string]string{"a": "b"}, GroupRetryPolicy: []byte(`{"type":"CUSTOMIZED"}`)},
		&SubscriptionGroupWrapper{DataVersion: dv, SubscriptionGroupTable: map[string]SubscriptionGroupConfig{"g": NewSubscriptionGroupConfig("g")},
			ForbiddenTable: []byte(`{}`)},
		&ConsumerOffsetSerializeWrapper{OffsetTable: map[string]map[int32]int64{"T@g": {0: 12, 1: 7}, "%RETRY%g@g": {0: 0}}},
		&ConsumerOffsetSerializeWrapper{OffsetTable: map[string]map[int32]int64{"T@g": {3: 1}}, DataVersion: &dv},
		&DelayOffsetSerializeWrapper{OffsetTable: map[int32]int64{1: 0, 2: 5, 18: 3}, DataVersion: &dv},
	}
	for _, b := range cases {
		name := reflect.TypeOf(b).Elem().Name()
		t.Run(name, func(t *testing.T) {
			for _, style := range []JSONStyle{JSONFastjson, JSONStandard} {
				enc := b.AppendJSON([]byte("prefix"), style)
				if !bytes.HasPrefix(enc, []byte("prefix")) {
					t.Fatal("AppendJSON dropped dst")
				}
				enc = enc[len("prefix"):]
				got := reflect.New(reflect.TypeOf(b).Elem()).Interface().(JSONBody)
				if err := got.DecodeJSON(enc); err != nil {
					t.Fatalf("style %d: %v\n%s", style, err, enc)
				}
				if !reflect.DeepEqual(got, b) {
					t.Fatalf("style %d: round trip\n got %+v\nwant %+v\n%s", style, got, b, enc)
				}
				// Maps keyed by MessageQueue have no standard JSON form Java reads.
				if style == JSONStandard && !bodyHasMQKeys[name] && !json.Valid(enc) {
					t.Fatalf("standard output invalid: %s", enc)
				}
				if !bytes.Equal(b.AppendJSON(nil, style), enc) {
					t.Fatal("encoding is not deterministic")
				}
			}
		})
	}
}

var bodyHasMQKeys = map[string]bool{"TopicStatsTable": true, "ConsumeStats": true, "ResetOffsetBody": true,
	"GetConsumerStatusBody": true, "ConsumerRunningInfo": true}

func TestBodyFastjsonIntegerKeys(t *testing.T) {
	c := ConsumerOffsetSerializeWrapper{OffsetTable: map[string]map[int32]int64{"TopicTest@g1": {0: 12, 1: 7, 10: 9, 2: 10}}}
	if got := string(c.AppendJSON(nil, JSONFastjson)); got != `{"offsetTable":{"TopicTest@g1":{0:12,1:7,2:10,10:9}}}` {
		t.Fatalf("%s", got)
	}
	if got := string(c.AppendJSON(nil, JSONStandard)); got != `{"offsetTable":{"TopicTest@g1":{"0":12,"1":7,"2":10,"10":9}}}` {
		t.Fatalf("%s", got)
	}
	// The pretty, tab-indented form of docs/PROTOCOL.md §10.6.
	pretty := "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@g1\":{0:12,1:7,2:9,3:10\n\t\t},\n\t\t\"%RETRY%g1@g1\":{0:0\n\t\t}\n\t}\n}"
	if err := c.DecodeJSON([]byte(pretty)); err != nil {
		t.Fatal(err)
	}
	if c.OffsetTable["TopicTest@g1"][3] != 10 || c.OffsetTable["%RETRY%g1@g1"][0] != 0 || len(c.OffsetTable) != 2 {
		t.Fatalf("%+v", c)
	}
	var d DelayOffsetSerializeWrapper
	if err := d.DecodeJSON([]byte("{\n\t\"offsetTable\":{1:0,2:5,3:18\n\t}\n}")); err != nil || d.OffsetTable[3] != 18 {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestBodyMessageQueueKeys(t *testing.T) {
	// The exact form the official Go client's string parser expects
	// (internal/model.go parseFastJsonFormat): compact, fields alphabetical.
	b := ResetOffsetBody{OffsetTable: map[rocketmq.MessageQueue]int64{
		{Topic: "T", BrokerName: "b", QueueID: 1}: 7,
		{Topic: "T", BrokerName: "b", QueueID: 0}: 12,
	}}
	want := `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:12,{"brokerName":"b","queueId":1,"topic":"T"}:7}}`
	for _, style := range []JSONStyle{JSONFastjson, JSONStandard} {
		if got := string(b.AppendJSON(nil, style)); got != want {
			t.Fatalf("style %d: %s", style, got)
		}
	}
	for _, in := range []string{
		want,
		// Keys written as strings holding the literal.
		`{"offsetTable":{"{\"brokerName\":\"b\",\"queueId\":0,\"topic\":\"T\"}":12,"{\"topic\":\"T\",\"queueId\":\"1\",\"brokerName\":\"b\"}":7}}`,
		// Gson's array-of-pairs form and extra whitespace.
		`{ "offsetTable" : [ [ {"brokerName":"b","queueId":0,"topic":"T"} , 12 ], [{"queueId":1,"topic":"T","brokerName":"b"},"7"] ] }`,
	} {
		var got ResetOffsetBody
		if err := got.DecodeJSON([]byte(in)); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !reflect.DeepEqual(got, b) {
			t.Fatalf("%s: %+v", in, got)
		}
	}
	for _, bad := range []string{
		`{"offsetTable":{"T":12}}`,
		`{"offsetTable":{7:12}}`,
		`{"offsetTable":[[{"topic":"T"},1,2]]}`,
		`{"offsetTable":[[{"topic":"T"}]]}`,
		`{"offsetTable":{{"topic":"T"}12}}`,
	} {
		var got ResetOffsetBody
		if err := got.DecodeJSON([]byte(bad)); !errors.Is(err, ErrMalformedBody) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

func TestJSONStringsWithStructureCharacters(t *testing.T) {
	// Keys and values that contain braces, colons, commas and quotes must
	// not confuse the handling of bare and object keys.
	kv := KVTable{Table: map[string]string{
		`{0:"x"}`:          `}:{,"`,
		`a:b,c`:            `{"brokerName":"b"}:1`,
		"tab\tnl\nquote\"": "\\u0041 is not an escape here",
		"1":                "numeric-looking key",
		"emoji 🎉 /":        "集群",
	}}
	for _, style := range []JSONStyle{JSONFastjson, JSONStandard} {
		enc := kv.AppendJSON(nil, style)
		var got KVTable
		if err := got.DecodeJSON(enc); err != nil {
			t.Fatalf("%v: %s", err, enc)
		}
		if !reflect.DeepEqual(got, kv) {
			t.Fatalf("style %d: %+v\n%s", style, got, enc)
		}
		if style == JSONStandard {
			var std map[string]map[string]string
			if err := json.Unmarshal(enc, &std); err != nil || !reflect.DeepEqual(std["table"], kv.Table) {
				t.Fatalf("encoding/json reads %v, %v", std, err)
			}
			if bytes.ContainsFunc(enc, func(r rune) bool { return r >= 0x7F }) || !bytes.Contains(enc, []byte(`\uD83C\uDF89 \/`)) {
				t.Fatalf("standard style must escape non-ASCII and '/': %s", enc)
			}
		} else if !bytes.Contains(enc, []byte("集群")) || !bytes.Contains(enc, []byte("🎉 /")) {
			t.Fatalf("fastjson style writes non-ASCII and '/' raw: %s", enc)
		}
	}
}

func TestJSONReaderLeniency(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     TopicRouteData
	}{
		{"single quotes and escapes", `{'orderTopicConf':'a\x41\u00e9\/\'','queueDatas':[]}`, TopicRouteData{OrderTopicConf: "aAé/'"}},
		{"numbers as strings", `{"queueDatas":[{"brokerName":1,"perm":"6","readQueueNums":" 4 ","writeQueueNums":4.0,"topicSysFlag":true}]}`,
			TopicRouteData{QueueDatas: []QueueData{{BrokerName: "1", Perm: 6, ReadQueueNums: 4, WriteQueueNums: 4, TopicSysFlag: 1}}}},
		{"nulls", `{"orderTopicConf":null,"queueDatas":null,"brokerDatas":[{"brokerAddrs":null,"cluster":null}],"filterServerTable":null}`,
			TopicRouteData{BrokerDatas: []BrokerData{{}}}},
		{"unknown keys of every kind", `{"x":{"y":[1,{"z":null}]},"w":[{}],"v":-1.5e3,"u":"s","queueDatas":[]}`, TopicRouteData{}},
		{"surrogate pair and lone surrogate", `{"orderTopicConf":"\uD83C\uDF89\uD800x"}`, TopicRouteData{OrderTopicConf: "🎉\uFFFDx"}},
		{"pretty with form feeds", "{\r\n\f\"queueDatas\" :\t[ ] }\n", TopicRouteData{}},
		{"quoted and signed integer keys", `{"brokerDatas":[{"brokerAddrs":{"0":"a",+1:"b",-2:"c"}}]}`,
			TopicRouteData{BrokerDatas: []BrokerData{{BrokerAddrs: map[int64]string{0: "a", 1: "b", -2: "c"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got TopicRouteData
			if err := got.DecodeJSON([]byte(tc.in)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestJSONReaderErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, fjMaxDepth+1) + "1" + strings.Repeat("}", fjMaxDepth+1)
	for _, in := range []string{
		"", " ", "[]", `"x"`, "null x", `{"queueDatas":[}`, `{"queueDatas":[{"perm":"x"}]}`, `{"queueDatas":[{"perm":2147483648}]}`,
		`{"orderTopicConf":"abc`, `{"orderTopicConf":"\u12"}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"brokerDatas":[{"brokerAddrs":{x:"a"}}]}`,
		`{"brokerDatas":[{"brokerAddrs":{99999999999999999999:"a"}}]}`, `{"orderTopicConf":{}}`, `{"queueDatas":[{"perm":tru}]}`,
		`{"brokerDatas":[{"enableActingMaster":"maybe"}]}`, deep, `{"a":[1,2,]}`, `{,}`,
	} {
		var got TopicRouteData
		err := got.DecodeJSON([]byte(in))
		var be *bodyError
		if !errors.Is(err, ErrMalformedBody) || !errors.As(err, &be) || !strings.HasPrefix(err.Error(), "rocketmq: ") {
			t.Errorf("%.60q: err = %v", in, err)
		}
	}
	// null is an empty body, as Java's fastjson returns null for it.
	var r TopicRouteData
	if err := r.DecodeJSON([]byte("null")); err != nil {
		t.Fatal(err)
	}
}

func TestJSONDoubleFormat(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {0.8, "0.8"}, {1, "1.0"}, {-2.5, "-2.5"}, {2224.8571428571427, "2224.8571428571427"},
		{0.001, "0.001"}, {0.0001, "1.0E-4"}, {1e7, "1.0E7"}, {1.2345e10, "1.2345E10"}, {9999999, "9999999.0"},
		{-3e-5, "-3.0E-5"}, {1e100, "1.0E100"},
	} {
		if got := string(fjAppendDouble(nil, tc.in)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.in, got, tc.want)
		}
	}
	var s TopicStatsTable
	if err := s.DecodeJSON([]byte(`{"topicPutTps":1.0E-4}`)); err != nil || s.TopicPutTps != 1e-4 {
		t.Fatalf("%v %v", s, err)
	}
}

func TestJSONStandardLargeLongs(t *testing.T) {
	h := HeartbeatData{ConsumerDataSet: []ConsumerData{{GroupName: "g", SubscriptionDataSet: []SubscriptionData{{Topic: "T", SubVersion: 1795957097794155962}}}}}
	std := h.AppendJSON(nil, JSONStandard)
	if !bytes.Contains(std, []byte(`"subVersion":"1795957097794155962"`)) {
		t.Fatalf("%s", std)
	}
	if !bytes.Contains(h.AppendJSON(nil, JSONFastjson), []byte(`"subVersion":1795957097794155962`)) {
		t.Fatal("fastjson style quotes a long")
	}
	var back HeartbeatData
	if err := back.DecodeJSON(std); err != nil || !reflect.DeepEqual(back, h) {
		t.Fatalf("%+v %v", back, err)
	}
}

func TestBodyDecodeDoesNotAlias(t *testing.T) {
	f := hxFrameByN(t, 150)
	data := bytes.Clone(f.body(t))
	var c ConsumerRunningInfo
	if err := c.DecodeJSON(data); err != nil {
		t.Fatal(err)
	}
	want := c.AppendJSON(nil, JSONFastjson)
	for i := range data {
		data[i] = 'X'
	}
	if got := c.AppendJSON(nil, JSONFastjson); !bytes.Equal(got, want) {
		t.Fatal("decoded body aliases its input")
	}
	var r TopicRouteData
	in := []byte(`{"topicQueueMappingByBroker":{"b":1}}`)
	if err := r.DecodeJSON(in); err != nil {
		t.Fatal(err)
	}
	in[len(in)-3] = '9'
	if string(r.TopicQueueMappingByBroker) != `{"b":1}` {
		t.Fatal("raw field aliases its input")
	}
}

func TestBodyTruncations(t *testing.T) {
	// Every prefix of one captured body per type either decodes or fails
	// with ErrMalformedBody; none panics.
	seen := map[string]bool{}
	frames := hxFrames(t)
	for i := range frames {
		f := &frames[i]
		if f.BodyKind != "json" && f.BodyKind != "json-fastjson-nonstandard" {
			continue
		}
		name := reflect.TypeOf(bodyFor(f)).Elem().Name()
		if seen[name] {
			continue
		}
		seen[name] = true
		data := f.body(t)
		step := 1 + len(data)/400
		for n := 0; n < len(data); n += step {
			if err := bodyFor(f).DecodeJSON(data[:n]); !errors.Is(err, ErrMalformedBody) {
				t.Fatalf("frame %d prefix %d: err = %v", f.N, n, err)
			}
		}
	}
}

func TestRouteStyle(t *testing.T) {
	for _, tc := range []struct {
		version int32
		h       *GetRouteInfoRequestHeader
		want    JSONStyle
	}{
		{317, nil, JSONFastjson},
		{317, &GetRouteInfoRequestHeader{Topic: "T"}, JSONFastjson},
		{317, &GetRouteInfoRequestHeader{Topic: "T", AcceptStandardJSONOnly: Ptr(false)}, JSONFastjson},
		{317, &GetRouteInfoRequestHeader{Topic: "T", AcceptStandardJSONOnly: Ptr(true)}, JSONStandard},
		{400, nil, JSONFastjson},
		{401, nil, JSONStandard},
		{409, &GetRouteInfoRequestHeader{Topic: "T"}, JSONStandard},
	} {
		if got := RouteStyle(tc.version, tc.h); got != tc.want {
			t.Errorf("RouteStyle(%d, %+v) = %d", tc.version, tc.h, got)
		}
	}
	// The captures agree: every route body's style follows from the
	// request that asked for it (Java 409 got standard JSON, Go 317 not).
	checked := 0
	for i := range hxFrames(t) {
		f := &hxFrames(t)[i]
		if f.Direction != "resp" || f.reqCode() != 105 || f.Code != 0 || f.Pair == nil {
			continue
		}
		req := hxFrameByN(t, *f.Pair)
		var h GetRouteInfoRequestHeader
		if err := h.FromExt(req.ext()); err != nil {
			t.Fatal(err)
		}
		want := map[JSONStyle]string{JSONStandard: "json", JSONFastjson: "json-fastjson-nonstandard"}[RouteStyle(req.Version, &h)]
		if f.BodyKind != want {
			t.Errorf("frame %d: request version %d, body %s, want %s", f.N, req.Version, f.BodyKind, want)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d route responses checked", checked)
	}
}
