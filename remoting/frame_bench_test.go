package remoting

import "testing"

// benchSendV2 is a SEND_MESSAGE_V2 request as a 4.9.8 producer sends it:
// the 13 single-letter header fields and a 1 KiB body.
func benchSendV2() *Command {
	ext := make(ExtFields, 0, 13)
	ext.Add("a", "ProducerGroupA")
	ext.Add("b", "BenchmarkTopic")
	ext.Add("c", "TBW102")
	ext.Add("d", "4")
	ext.Add("e", "2")
	ext.Add("f", "0")
	ext.Add("g", "1700000000000")
	ext.Add("h", "0")
	ext.Add("i", "TAGS\x01TagA\x02KEYS\x01order-12345\x02WAIT\x01true\x02UNIQ_KEY\x01C0A8000A30391B6D358600A1B2C30001")
	ext.Add("j", "0")
	ext.Add("k", "false")
	ext.Add("m", "false")
	ext.Add("n", "broker-a")
	body := make([]byte, 1024)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	return &Command{Code: SendMessageV2, Language: LanguageGo, Version: DefaultVersion, Opaque: 12345, Ext: ext, Body: body}
}

// benchPullResponse is the header of a PULL_MESSAGE response.
func benchPullResponse() *Command {
	return &Command{Code: Success, Version: DefaultVersion, Opaque: 7, Flag: FlagResponse, Remark: "FOUND",
		Ext: ExtFields{{"suggestWhichBrokerId", "0"}, {"nextBeginOffset", "1234"}, {"maxOffset", "5678"}, {"minOffset", "0"}}}
}

func benchSerializations(b *testing.B, f func(b *testing.B, st SerializeType)) {
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		b.Run(st.String(), func(b *testing.B) { f(b, st) })
	}
}

func BenchmarkEncodeSendMessageV2(b *testing.B) {
	benchSerializations(b, func(b *testing.B, st SerializeType) {
		c := benchSendV2()
		c.Serialize = st
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			buf, err = c.AppendFrame(buf[:0])
			if err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
}

func BenchmarkDecodeSendMessageV2(b *testing.B) {
	benchSerializations(b, func(b *testing.B, st SerializeType) {
		c := benchSendV2()
		c.Serialize = st
		frame, err := c.AppendFrame(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := DecodeFrame(frame, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecodePullResponseHeader(b *testing.B) {
	benchSerializations(b, func(b *testing.B, st SerializeType) {
		c := benchPullResponse()
		c.Serialize = st
		frame, err := c.AppendFrame(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := DecodeFrame(frame, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchHeaders are the typed headers of the send and pull paths that go
// through the field-list codec.
func benchHeaders() []struct {
	name string
	h    CustomHeader
	new  func() CustomHeader
} {
	return []struct {
		name string
		h    CustomHeader
		new  func() CustomHeader
	}{
		{"SendResponse", &SendMessageResponseHeader{MsgID: "0A0000010000277100000000000004D2", QueueID: 3, QueueOffset: 1234, TransactionID: Ptr("7F0000010001")},
			func() CustomHeader { return new(SendMessageResponseHeader) }},
		{"PullResponse", &PullMessageResponseHeader{SuggestWhichBrokerID: 0, NextBeginOffset: 1234, MinOffset: 0, MaxOffset: 5678},
			func() CustomHeader { return new(PullMessageResponseHeader) }},
		{"QueryConsumerOffset", &QueryConsumerOffsetRequestHeader{ConsumerGroup: "G", Topic: "T", QueueID: 2},
			func() CustomHeader { return new(QueryConsumerOffsetRequestHeader) }},
	}
}

func BenchmarkHeaderAppendExt(b *testing.B) {
	for _, tt := range benchHeaders() {
		b.Run(tt.name, func(b *testing.B) {
			ext := make(ExtFields, 0, 16)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ext = tt.h.AppendExt(ext[:0])
			}
		})
	}
}

func BenchmarkHeaderFromExt(b *testing.B) {
	for _, tt := range benchHeaders() {
		b.Run(tt.name, func(b *testing.B) {
			ext := tt.h.AppendExt(nil)
			h := tt.new()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := h.FromExt(ext); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
