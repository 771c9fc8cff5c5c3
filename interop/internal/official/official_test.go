package official

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"testing"
)

func sample() *Command {
	return &Command{
		Code:      ReqSendMessageV2,
		Language:  9,
		Version:   317,
		Opaque:    0x01020304,
		Flag:      2,
		Remark:    "hello",
		ExtFields: map[string]string{"a": "group", "b": "topic"},
		Body:      []byte("body-bytes"),
	}
}

// TestWriteToRocketMQLayout checks the mirrored struct byte by byte: every
// field the official encoder reads must land where the wire says.
func TestWriteToRocketMQLayout(t *testing.T) {
	prev := SetCodecType(CodecRocketMQ)
	defer SetCodecType(prev)

	c := sample()
	c.ExtFields = map[string]string{"k": "v"} // one entry: map order is random
	var buf bytes.Buffer
	if err := WriteTo(c, &buf); err != nil {
		t.Fatal(err)
	}
	header := []byte{
		0x01, 0x36, // code 310
		9,          // language GO
		0x01, 0x3d, // version 317
		1, 2, 3, 4, // opaque
		0, 0, 0, 2, // flag
		0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o',
		0, 0, 0, 8, 0, 1, 'k', 0, 0, 0, 1, 'v',
	}
	var want []byte
	want = binary.BigEndian.AppendUint32(want, uint32(4+len(header)+len(c.Body)))
	want = binary.BigEndian.AppendUint32(want, uint32(len(header))|1<<24)
	want = append(want, header...)
	want = append(want, c.Body...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("frame mismatch\ngot:\n%swant:\n%s", hex.Dump(buf.Bytes()), hex.Dump(want))
	}

	enc, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, want) {
		t.Fatalf("Encode differs from WriteTo\ngot:\n%swant:\n%s", hex.Dump(enc), hex.Dump(want))
	}
}

func TestWriteToJSONHeader(t *testing.T) {
	if CodecType() != CodecJSON {
		t.Fatalf("official codec type = %d, want JSON (its default)", CodecType())
	}
	c := sample()
	var buf bytes.Buffer
	if err := WriteTo(c, &buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	total := binary.BigEndian.Uint32(b)
	hl := binary.BigEndian.Uint32(b[4:])
	if int(total) != len(b)-4 || hl>>24 != 0 {
		t.Fatalf("bad prefix total=%d len=%d hl=%#x\n%s", total, len(b), hl, hex.Dump(b))
	}
	var h struct {
		Code      int
		Language  string
		Version   int
		Opaque    int32
		Flag      int32
		Remark    string
		ExtFields map[string]string
	}
	if err := json.Unmarshal(b[8:8+hl], &h); err != nil {
		t.Fatalf("header: %v\n%s", err, hex.Dump(b))
	}
	if h.Code != 310 || h.Language != "GO" || h.Version != 317 || h.Opaque != c.Opaque ||
		h.Flag != 2 || h.Remark != "hello" || !maps.Equal(h.ExtFields, c.ExtFields) {
		t.Fatalf("header = %+v", h)
	}
	if got := b[8+hl:]; !bytes.Equal(got, c.Body) {
		t.Fatalf("body = %q", got)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec byte
	}{{"json", CodecJSON}, {"rocketmq", CodecRocketMQ}} {
		t.Run(tc.name, func(t *testing.T) {
			prev := SetCodecType(tc.codec)
			defer SetCodecType(prev)
			c := sample()
			var buf bytes.Buffer
			if err := WriteTo(c, &buf); err != nil {
				t.Fatal(err)
			}
			got, err := Decode(buf.Bytes()[4:])
			if err != nil {
				t.Fatal(err)
			}
			if got.Code != c.Code || got.Version != c.Version || got.Opaque != c.Opaque ||
				got.Flag != c.Flag || got.Remark != c.Remark || !maps.Equal(got.ExtFields, c.ExtFields) ||
				!bytes.Equal(got.Body, c.Body) || got.Language != 9 {
				t.Fatalf("decoded %+v, want %+v", got, c)
			}
		})
	}
}

func TestNewRequestAndSendV2Header(t *testing.T) {
	h := &SendHeaderV2{&SendHeader{
		ProducerGroup: "pg", Topic: "t", QueueId: 3, SysFlag: 4, BornTimestamp: 1700000000123,
		Flag: 5, Properties: "p", ReconsumeTimes: 6, UnitMode: true, MaxReconsumeTimes: 7,
		Batch: true, DefaultTopic: "TBW102", DefaultTopicQueueNums: 8, BrokerName: "b",
	}}
	want := map[string]string{
		"a": "pg", "b": "t", "c": "TBW102", "d": "8", "e": "3", "f": "4", "g": "1700000000123",
		"h": "5", "i": "p", "j": "6", "k": "true", "l": "7", "m": "true", "n": "b",
	}
	ext := EncodeSendV2(h)
	if !maps.Equal(ext, want) {
		t.Fatalf("ext = %v\nwant %v", ext, want)
	}
	body := []byte("x")
	c1 := NewRequest(ReqSendMessageV2, ext, body)
	c2 := NewRequest(ReqSendMessageV2, nil, body)
	if c1.Code != 310 || c1.Version != 317 || c1.Language != 9 || c1.Flag != 0 ||
		!maps.Equal(c1.ExtFields, want) || &c1.Body[0] != &body[0] {
		t.Fatalf("cmd = %+v", c1)
	}
	if c2.Opaque == c1.Opaque || c2.ExtFields == nil || len(c2.ExtFields) != 0 {
		t.Fatalf("second cmd = %+v (first opaque %d)", c2, c1.Opaque)
	}
}
