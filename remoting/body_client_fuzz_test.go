package remoting

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// fuzzJSONBody decodes data into a fresh body from newBody. It must never
// panic, fail only with ErrMalformedBody, and whatever decodes must come
// back equal from its own fastjson output and reach a fixed point in the
// standard style (which replaces invalid UTF-8 with U+FFFD).
func fuzzJSONBody[B interface {
	JSONBody
	*T
}, T any](t *testing.T, data []byte) {
	b := B(new(T))
	if err := b.DecodeJSON(data); err != nil {
		if !errors.Is(err, ErrMalformedBody) {
			t.Fatalf("error does not match ErrMalformedBody: %v", err)
		}
		return
	}
	enc := b.AppendJSON(nil, JSONFastjson)
	back := B(new(T))
	if err := back.DecodeJSON(enc); err != nil {
		t.Fatalf("own fastjson output does not decode: %v\n%q", err, enc)
	}
	if !reflect.DeepEqual(back, b) {
		t.Fatalf("fastjson round trip differs\n got %+v\nwant %+v\n%q", back, b, enc)
	}
	std := b.AppendJSON(nil, JSONStandard)
	s1 := B(new(T))
	if err := s1.DecodeJSON(std); err != nil {
		t.Fatalf("own standard output does not decode: %v\n%q", err, std)
	}
	if again := s1.AppendJSON(nil, JSONStandard); !bytes.Equal(again, std) {
		t.Fatalf("standard output not stable\n%q\n%q", std, again)
	}
}

// FuzzHeartbeatBody decodes arbitrary bytes as a HEART_BEAT body, as the
// broker does for every client. Seeds: testdata/fuzz/FuzzHeartbeatBody
// (captured Java heartbeats) plus the inline ones below.
func FuzzHeartbeatBody(f *testing.F) {
	for _, s := range []string{
		`{"clientID":"127.0.0.1@1","consumerDataSet":[],"producerDataSet":[{"groupName":"pg"}]}`,
		`{"clientID":"c","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"g","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[1,"2"],"expressionType":"TAG","subString":"a||b","subVersion":1,"tagsSet":["a","b"],"topic":"T"}],"unitMode":false}],"heartbeatFingerprint":7,"withoutSub":true}`,
		`{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":[2147483648],"subVersion":1e3}]}]}`,
		`{'clientID':'\uD83C','producerDataSet':[{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzJSONBody[*HeartbeatData](t, data) })
}

// FuzzConsumerRunningInfoBody decodes arbitrary bytes as a
// GET_CONSUMER_RUNNING_INFO answer, which admin tools read from any client.
// Seeds: testdata/fuzz/FuzzConsumerRunningInfoBody (captured Java answers)
// plus the inline ones below.
func FuzzConsumerRunningInfoBody(f *testing.F) {
	for _, s := range []string{
		`{"mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"commitOffset":1,"locked":true}},"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"},"statusTable":{"T":{"consumeFailedMsgs":0,"pullRT":1.5,"pullTPS":2E2}},"subscriptionSet":[{"topic":"T"}]}`,
		`{"jstack":"x","mqPopTable":{"a":[1,{}]},"userConsumerInfo":{"k":"v"}}`,
		`{"mqTable":[[{"brokerName":"b","queueId":"1","topic":"T"},{}]],"statusTable":{"T":{"consumeRT":-0.0}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzJSONBody[*ConsumerRunningInfo](t, data) })
}
