package producer

import (
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TestReadSendResponse: the one-pass reader of send responses agrees with
// SendMessageResponseHeader.FromExt on every field, and fails exactly
// when FromExt does.
func TestReadSendResponse(t *testing.T) {
	f := func(kv ...string) remoting.ExtFields {
		var ext remoting.ExtFields
		for i := 0; i < len(kv); i += 2 {
			ext = append(ext, remoting.Field{Key: kv[i], Value: kv[i+1]})
		}
		return ext
	}
	tests := []struct {
		name string
		ext  remoting.ExtFields
	}{
		{"broker-4.9.8", f("msgId", "7F00000100002A9F0000000000000001", "queueId", "3", "queueOffset", "42", "MSG_REGION", "DefaultRegion", "TRACE_ON", "true")},
		{"minimal", f("msgId", "A", "queueId", "0", "queueOffset", "0")},
		{"trace-off-region-tx", f("msgId", "A", "queueId", "1", "queueOffset", "9", "MSG_REGION", "eu", "TRACE_ON", "FALSE", "transactionId", "tx1")},
		{"trace-true-any-case", f("msgId", "A", "queueId", "1", "queueOffset", "9", "TRACE_ON", "TrUe")},
		{"empty-region", f("msgId", "A", "queueId", "1", "queueOffset", "9", "MSG_REGION", "")},
		{"last-wins", f("msgId", "A", "queueId", "x", "queueOffset", "9", "msgId", "B", "queueId", "2", "MSG_REGION", "a", "MSG_REGION", "")},
		{"missing-offset", f("msgId", "A", "queueId", "1")},
		{"missing-id", f("queueId", "1", "queueOffset", "9")},
		{"bad-queue", f("msgId", "A", "queueId", "1x", "queueOffset", "9")},
		{"queue-overflow", f("msgId", "A", "queueId", "2147483648", "queueOffset", "9")},
		{"bad-offset", f("msgId", "A", "queueId", "1", "queueOffset", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h remoting.SendMessageResponseHeader
			herr := h.FromExt(tt.ext)
			r := rocketmq.SendResult{RegionID: rocketmq.DefaultTraceRegionID, TraceOn: true} // as result starts it
			ok := readSendResponse(tt.ext, &r)
			if ok != (herr == nil) {
				t.Fatalf("readSendResponse ok=%v, FromExt err=%v", ok, herr)
			}
			if !ok {
				return
			}
			want := rocketmq.SendResult{OffsetMsgID: h.MsgID, QueueOffset: h.QueueOffset, RegionID: rocketmq.DefaultTraceRegionID, TraceOn: true}
			want.Queue.QueueID = int(h.QueueID)
			if h.TransactionID != nil {
				want.TransactionID = *h.TransactionID
			}
			if h.MsgRegion != nil && *h.MsgRegion != "" {
				want.RegionID = *h.MsgRegion
			}
			if h.TraceOn != nil {
				want.TraceOn = *h.TraceOn
			}
			if r != want {
				t.Fatalf("got %+v\nwant %+v", r, want)
			}
		})
	}
}
