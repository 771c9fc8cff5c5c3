package codecbench

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/interop/internal/official"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// Sinks keep the compiler from dropping results.
var (
	sinkInt  int
	sinkAny  any
	sinkMsgs []*primitive.MessageExt
	sinkOurs []*rocketmq.MessageExt
)

// BenchmarkEncodeSendV2 measures what each client does per send: turn the
// typed SEND_MESSAGE_V2 header into extFields, make the command and write
// the whole frame (1 KiB body) into a reused buffer. The official client
// writes the frame straight to its net.Conn; a bytes.Buffer stands in.
func BenchmarkEncodeSendV2(b *testing.B) {
	for _, c := range codecs {
		b.Run(c.name+"/ours", func(b *testing.B) {
			h := sendHeaderOurs()
			body := body(0)
			var out []byte
			b.SetBytes(int64(len(sendFrame(b, c.codec))))
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				// A fresh extFields per send, sized for the 14 fields: no
				// pooling is assumed on our side either.
				cmd := remoting.NewRequest(remoting.SendMessageV2, h.AppendExt(make(remoting.ExtFields, 0, 14)), body)
				cmd.Serialize = remoting.SerializeType(c.codec)
				cmd.Opaque = int32(i)
				var err error
				if out, err = cmd.AppendFrame(out[:0]); err != nil {
					b.Fatal(err)
				}
			}
			sinkInt = len(out)
		})
		b.Run(c.name+"/official", func(b *testing.B) {
			prev := official.SetCodecType(c.codec)
			defer official.SetCodecType(prev)
			h := sendHeaderOfficial()
			body := body(0)
			var buf bytes.Buffer
			b.SetBytes(int64(len(sendFrame(b, c.codec))))
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd := official.NewRequest(official.ReqSendMessageV2, official.EncodeSendV2(h), body)
				buf.Reset()
				if err := official.WriteTo(cmd, &buf); err != nil {
					b.Fatal(err)
				}
			}
			sinkInt = buf.Len()
		})
	}
}

// BenchmarkEncodeSendV2Frame isolates the frame encoder: the command,
// extFields included, is built once and only written per iteration.
func BenchmarkEncodeSendV2Frame(b *testing.B) {
	for _, c := range codecs {
		b.Run(c.name+"/ours", func(b *testing.B) {
			cmd := remoting.NewRequest(remoting.SendMessageV2, sendExtOurs(), body(0))
			cmd.Serialize = remoting.SerializeType(c.codec)
			out, err := cmd.AppendFrame(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd.Opaque = int32(i)
				if out, err = cmd.AppendFrame(out[:0]); err != nil {
					b.Fatal(err)
				}
			}
			sinkInt = len(out)
		})
		b.Run(c.name+"/official", func(b *testing.B) {
			prev := official.SetCodecType(c.codec)
			defer official.SetCodecType(prev)
			cmd := official.NewRequest(official.ReqSendMessageV2, official.EncodeSendV2(sendHeaderOfficial()), body(0))
			var buf bytes.Buffer
			b.SetBytes(int64(len(sendFrame(b, c.codec))))
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd.Opaque = int32(i)
				buf.Reset()
				if err := official.WriteTo(cmd, &buf); err != nil {
					b.Fatal(err)
				}
			}
			sinkInt = buf.Len()
		})
	}
}

// BenchmarkDecodeSendV2 decodes one SEND_MESSAGE_V2 request frame into a
// command (header, extFields, owned body), as a broker does on receipt.
func BenchmarkDecodeSendV2(b *testing.B) {
	for _, c := range codecs {
		frame := sendFrame(b, c.codec)
		b.Run(c.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd, n, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
				if err != nil || n != len(frame) {
					b.Fatal(n, err)
				}
				sinkAny = cmd
			}
		})
		b.Run(c.name+"/official", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd, err := official.Decode(frame[4:])
				if err != nil {
					b.Fatal(err)
				}
				sinkAny = cmd
			}
		})
	}
}

// BenchmarkDecodePull32x1KiB decodes a PULL_MESSAGE response frame and the
// 32 stored messages in its body, as a consumer does per pull. Both sides
// leave message bodies aliasing the frame buffer and compute MsgID and
// OffsetMsgID; the official client's later per-message work in its pull
// loop (tag filtering, MIN/MAX_OFFSET properties) is not counted.
func BenchmarkDecodePull32x1KiB(b *testing.B) {
	for _, c := range codecs {
		frame := pullFrame(b, c.codec)
		b.Run(c.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd, _, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
				if err != nil {
					b.Fatal(err)
				}
				msgs, err := message.DecodeRecords(cmd.Body)
				if err != nil || len(msgs) != pullCount {
					b.Fatalf("decoded %d messages: %v", len(msgs), err)
				}
				sinkOurs = msgs
			}
		})
		b.Run(c.name+"/official", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				cmd, err := official.Decode(frame[4:])
				if err != nil {
					b.Fatal(err)
				}
				msgs := primitive.DecodeMessage(cmd.Body)
				if len(msgs) != pullCount {
					b.Fatalf("decoded %d messages", len(msgs))
				}
				sinkMsgs = msgs
			}
		})
	}
}

// BenchmarkReadPull32x1KiB is BenchmarkDecodePull32x1KiB plus what each
// client's read loop does with the frame before decoding it, minus the
// syscall: the official client reads every frame into a fresh buffer of
// its length (remote_client.go receiveResponse), ours into the
// connection's reused 64 KiB buffer (internal/transport). The copy stands
// for the read on both sides.
func BenchmarkReadPull32x1KiB(b *testing.B) {
	for _, c := range codecs {
		frame := pullFrame(b, c.codec)
		b.Run(c.name+"/ours", func(b *testing.B) {
			readBuf := make([]byte, 64<<10)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				n := copy(readBuf, frame)
				cmd, _, err := remoting.DecodeFrame(readBuf[:n], remoting.DefaultMaxFrameSize)
				if err != nil {
					b.Fatal(err)
				}
				msgs, err := message.DecodeRecords(cmd.Body)
				if err != nil || len(msgs) != pullCount {
					b.Fatalf("decoded %d messages: %v", len(msgs), err)
				}
				sinkOurs = msgs
			}
		})
		b.Run(c.name+"/official", func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				buf := make([]byte, len(frame)-4)
				copy(buf, frame[4:])
				cmd, err := official.Decode(buf)
				if err != nil {
					b.Fatal(err)
				}
				msgs := primitive.DecodeMessage(cmd.Body)
				if len(msgs) != pullCount {
					b.Fatalf("decoded %d messages", len(msgs))
				}
				sinkMsgs = msgs
			}
		})
	}
}

// cpuPerOp reports the process's user+system CPU time per operation as
// "cpu-ns/op", GC workers included. On a shared machine it moves much less
// than ns/op, which also counts time spent waiting for a core. Call it
// right before the loop: defer cpuPerOp(b)().
func cpuPerOp(b *testing.B) func() {
	c0 := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
