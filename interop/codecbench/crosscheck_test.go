package codecbench

import (
	"bytes"
	"encoding/hex"
	"maps"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/go-rocketmq/rocketmq/interop/internal/official"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The benchmarks are only worth reading if both sides decode the same
// bytes to the same values; these tests pin that.

func TestSendFixturesAgree(t *testing.T) {
	if want, got := official.EncodeSendV2(sendHeaderOfficial()), sendExtOurs().Map(); !maps.Equal(got, want) {
		t.Fatalf("ours ext %v\nofficial ext %v", got, want)
	}
}

func TestSendFrameCrossDecode(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name+"/official-to-ours", func(t *testing.T) {
			frame := sendFrame(t, c.codec)
			cmd, n, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
			if err != nil || n != len(frame) {
				t.Fatalf("DecodeFrame: n=%d err=%v\n%s", n, err, hex.Dump(frame))
			}
			if cmd.Code != remoting.SendMessageV2 || cmd.Language != remoting.LanguageGo ||
				cmd.Serialize != remoting.SerializeType(c.codec) || !bytes.Equal(cmd.Body, body(0)) ||
				!maps.Equal(cmd.Ext.Map(), sendExtOurs().Map()) {
				t.Fatalf("decoded %+v", cmd)
			}
		})
		t.Run(c.name+"/ours-to-official", func(t *testing.T) {
			cmd := remoting.NewRequest(remoting.SendMessageV2, sendExtOurs(), body(0))
			cmd.Serialize = remoting.SerializeType(c.codec)
			cmd.Opaque = 42
			frame, err := cmd.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := official.Decode(frame[4:])
			if err != nil {
				t.Fatalf("official decode: %v\n%s", err, hex.Dump(frame))
			}
			if got.Code != official.ReqSendMessageV2 || got.Opaque != 42 || got.Language != 9 ||
				!bytes.Equal(got.Body, body(0)) || !maps.Equal(got.ExtFields, sendExtOurs().Map()) {
				t.Fatalf("official decoded %+v", got)
			}
		})
	}
}

func TestPullFrameBothDecoders(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			frame := pullFrame(t, c.codec)
			cmd, _, err := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := cmd.Ext.Get("nextBeginOffset"); cmd.Code != remoting.Success || !cmd.IsResponse() || v != "5032" {
				t.Fatalf("ours: response %+v", cmd)
			}
			ours, err := message.DecodeRecords(cmd.Body)
			if err != nil {
				t.Fatal(err)
			}
			ocmd, err := official.Decode(frame[4:])
			if err != nil {
				t.Fatal(err)
			}
			theirs := primitive.DecodeMessage(ocmd.Body)
			if len(ours) != pullCount || len(theirs) != pullCount {
				t.Fatalf("ours %d messages, official %d, want %d", len(ours), len(theirs), pullCount)
			}
			for i := range ours {
				o, x := ours[i], theirs[i]
				if o.Topic != x.Topic || !bytes.Equal(o.Body, x.Body) || !bytes.Equal(o.Body, body(byte(i))) ||
					o.QueueOffset != x.QueueOffset || o.CommitLogOffset != x.CommitLogOffset ||
					int(o.QueueID) != x.Queue.QueueId || o.BornTimestamp != x.BornTimestamp ||
					o.StoreTimestamp != x.StoreTimestamp || o.BodyCRC != x.BodyCRC ||
					o.MsgID != x.MsgId || o.OffsetMsgID != x.OffsetMsgId ||
					!maps.Equal(o.Properties, x.GetProperties()) {
					t.Fatalf("message %d differs\nours     %+v\nofficial %+v", i, o, x)
				}
			}
		})
	}
}
