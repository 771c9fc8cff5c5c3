package hostile_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/testutil/rawframe"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// TestBrokerReadingPipelinerGetsEveryAnswer: one connection writes 100,000
// UPDATE_CONSUMER_OFFSET requests at once (21 MB, more than a frame may
// be) and reads the replies as they come. The broker pauses its input
// while it is behind and answers every one; it does not take the client
// for one that does not read. Under the race detector, which makes this
// take 14 s, it writes 20,000 (internal/server's
// TestReadingPipelinerIsServed covers input beyond the frame bound there).
func TestBrokerReadingPipelinerGetsEveryAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a broker")
	}
	if os.Getenv("ROCKETMQ_NAMESRV") != "" {
		t.Skip("counts the in-repo broker's pauses and closes, which an external cluster does not report")
	}
	c := rmqtest.StartCluster(t)
	addr := c.BrokerAddr(c.BrokerNames()[0])
	n := 100000
	if raceBuild {
		n = 20000
	}
	var frames []byte
	for i := range n {
		h := &remoting.UpdateConsumerOffsetRequestHeader{ConsumerGroup: "pipelined-cg", Topic: "PipelinedOffsets",
			QueueID: int32(i % 8), CommitOffset: int64(i)}
		r := remoting.NewRequest(remoting.UpdateConsumerOffset, h.AppendExt(nil), nil)
		r.Opaque = int32(i + 1)
		var err error
		if frames, err = r.AppendFrame(frames); err != nil {
			t.Fatal(err)
		}
	}
	if !raceBuild && len(frames) <= remoting.DefaultMaxFrameSize {
		t.Fatalf("%d bytes of requests; the test needs more than a frame may hold", len(frames))
	}
	nc, err := net.DialTimeout("tcp", addr, rawframe.Wait)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go func() { _, _ = nc.Write(frames) }() // ends when nc closes
	start := time.Now()
	r := bufio.NewReaderSize(nc, 64<<10)
	var prefix [4]byte
	got, bad := 0, 0
	for got < n {
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err = io.ReadFull(r, prefix[:]); err != nil {
			break
		}
		frame := make([]byte, 4+binary.BigEndian.Uint32(prefix[:]))
		copy(frame, prefix[:])
		if _, err = io.ReadFull(r, frame[4:]); err != nil {
			break
		}
		resp, _, derr := remoting.DecodeFrame(frame, remoting.DefaultMaxFrameSize)
		if derr != nil {
			t.Fatalf("reply %d: %v", got, derr)
		}
		if resp.Code != remoting.Success {
			bad++
		}
		got++
	}
	t.Logf("%d of %d answered in %v (%d MB written)", got, n, time.Since(start).Round(time.Millisecond), len(frames)/1e6)
	if got != n {
		t.Fatalf("%d of %d requests answered (%v) to a client that reads its replies", got, n, err)
	}
	if bad > 0 {
		t.Errorf("%d answers were not SUCCESS", bad)
	}
}
