package remoting

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzRouteBody decodes arbitrary bytes as a TopicRouteData. It must never
// panic; whatever decodes must survive a round trip through both styles.
// Seeds: testdata/fuzz/FuzzRouteBody (captured routes, the Java vectors in
// default, standard and pretty form) plus the inline ones below.
func FuzzRouteBody(f *testing.F) {
	for _, s := range []string{
		`{0:"a"}`,
		`{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911",1:"x"},"brokerName":"b","cluster":"c"}],"queueDatas":[]}`,
		`{"brokerDatas":[{"brokerAddrs":{"0":"a"}}],"filterServerTable":{"a":["b"]},"orderTopicConf":"b:4","topicQueueMappingByBroker":{"b":{}}}`,
		`{'orderTopicConf':'\x41\uD83C\uDF89','queueDatas':[{"perm":"6","readQueueNums":4.0}]}`,
		`[[{"brokerName":"b","queueId":0,"topic":"T"},1]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r TopicRouteData
		if err := r.DecodeJSON(data); err != nil {
			if !errors.Is(err, ErrMalformedBody) {
				t.Fatalf("error does not match ErrMalformedBody: %v", err)
			}
			return
		}
		// fastjson style writes strings byte for byte: exact round trip.
		enc := r.AppendJSON(nil, JSONFastjson)
		var back TopicRouteData
		if err := back.DecodeJSON(enc); err != nil {
			t.Fatalf("own fastjson output does not decode: %v\n%q", err, enc)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("fastjson round trip differs\n got %+v\nwant %+v\n%q", back, r, enc)
		}
		// The standard style replaces invalid UTF-8 with U+FFFD, so check
		// that it decodes and is stable from then on.
		std := r.AppendJSON(nil, JSONStandard)
		var s1 TopicRouteData
		if err := s1.DecodeJSON(std); err != nil {
			t.Fatalf("own standard output does not decode: %v\n%q", err, std)
		}
		if again := s1.AppendJSON(nil, JSONStandard); !bytes.Equal(again, std) {
			t.Fatalf("standard output not stable\n%q\n%q", std, again)
		}
	})
}
