package broker

import (
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"

	"github.com/go-rocketmq/rocketmq/internal/testutil"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
)

// Requests a client wrote just before closing its connection are still
// served, as Java's processors run them: a consumer's shutdown commits its
// offsets and closes at once.
func TestRequestsBeforeCloseAreServed(t *testing.T) {
	e := pullTestBroker(t, nil)
	topic := "ClosedConnTopic"
	e.b.topics.ensure(topic, 8, 6)
	for round := 0; round < 5; round++ {
		conn := rawframe.Dial(t, e.b.Addr())
		var frames []byte
		var err error
		for q := int32(0); q < 8; q++ {
			h := remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "ClosedConnGroup", Topic: topic, QueueID: q, CommitOffset: int64(round*10) + int64(q) + 1}
			req := remoting.NewRequest(remoting.UpdateConsumerOffset, h.AppendExt(nil), nil)
			req.Opaque = q + 1
			if frames, err = req.AppendFrame(frames); err != nil {
				t.Fatal(err)
			}
		}
		conn.Write(frames)
		conn.NetConn().Close()

		for q := int32(0); q < 8; q++ {
			want := int64(round*10) + int64(q) + 1
			var got int64
			var ok bool
			if !testutil.Poll(0, func() bool { got, ok = e.b.offsets.query("ClosedConnGroup", topic, q); return ok && got == want }) {
				t.Fatalf("round %d queue %d: offset %d (found %v), want %d", round, q, got, ok, want)
			}
		}
	}
}
