package acl

import (
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// BenchmarkCheckSend is the broker's cost of one signed SEND_MESSAGE_V2
// with a 1 KiB body: resources, signature, permissions.
func BenchmarkCheckSend(b *testing.B) {
	c, err := Parse([]byte(sample))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	hdr := ext("a", "PG", "b", "topicB", "c", "TBW102", "d", "4", "e", "0", "f", "0", "g", "1700000000000", "h", "0", "i", "UNIQ_KEY\x01C0A8000A30391B6D358600A1B2C30001", "j", "0", "k", "false", "m", "false", "n", "broker-a")
	r := signed(remoting.SendMessageV2, hdr, body, "RocketMQ", "12345678")
	b.ReportAllocs()
	for b.Loop() {
		res, err := Resources(r.Code, r.Ext, r.Body)
		if err != nil {
			b.Fatal(err)
		}
		req := Request{Code: r.Code, RemoteAddr: loopback, Ext: r.Ext, Body: r.Body, Resources: res}
		if err := c.Check(&req); err != nil {
			b.Fatal(err)
		}
	}
}
