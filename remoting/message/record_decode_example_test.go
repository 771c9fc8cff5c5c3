package message_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func ExampleDecodeRecords() {
	var pullBody []byte // the body of a PULL_MESSAGE response, handed over
	msgs, err := message.DecodeRecords(pullBody)
	if err != nil {
		// msgs holds the records before the bad one.
		fmt.Println("corrupt pull body:", err)
	}
	for _, m := range msgs {
		fmt.Println(m.MsgID, m.Topic, m.Tag(), len(m.Body))
	}
}

func ExampleDecodeOptions_DecodeRecords() {
	// A broker re-encoding stored records keeps bodies compressed.
	var stored []byte
	msgs, _ := message.DecodeOptions{KeepCompressed: true}.DecodeRecords(stored)
	var out []byte
	for _, m := range msgs {
		out, _ = message.AppendMessageExt(out, m)
	}
	_ = out
}

func ExampleEncodeProperties() {
	m, _ := producer.NewMessage("TopicTest", []byte("hello"), producer.Tag("TagA"), producer.Keys("order-1", "order-2"))
	fmt.Printf("%q\n", message.EncodeProperties(m.Properties))
	// Output: "KEYS\x01order-1 order-2\x02TAGS\x01TagA\x02WAIT\x01true"
}

func ExampleUniqIDGenerator() {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(0x00A1B2C3 * time.Millisecond)
	g := rocketmq.NewUniqIDGenerator(
		rocketmq.WithIDAddr(netip.MustParseAddr("192.168.0.10")),
		rocketmq.WithIDPID(12345),
		rocketmq.WithIDHash(0x1B6D3586),
		rocketmq.WithIDClock(func() time.Time { return clock }),
	)
	fmt.Println(g.NewID())
	fmt.Println(g.NewID())
	// Output:
	// C0A8000A30391B6D358600A1B2C30000
	// C0A8000A30391B6D358600A1B2C30001
}

func ExampleEncodeOffsetMsgID() {
	id := rocketmq.EncodeOffsetMsgID(netip.MustParseAddrPort("192.168.0.2:10911"), 0x12345)
	host, offset, _ := rocketmq.DecodeOffsetMsgID(id)
	fmt.Println(id, host, offset)
	// Output: C0A8000200002A9F0000000000012345 192.168.0.2:10911 74565
}

func ExampleBuildSubscription() {
	s := message.BuildSubscription("TagA || TagB")
	fmt.Println(s.Tags, s.Codes, s.Matches("TagB"), s.Matches(""))
	// Output: [TagA TagB] [2598919 2598920] true false
}
