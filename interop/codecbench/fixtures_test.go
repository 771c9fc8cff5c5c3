package codecbench

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/interop/internal/official"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// The workload: one SEND_MESSAGE_V2 request with a 1 KiB body,
// and one PULL_MESSAGE response carrying 32 messages of 1 KiB each. Field
// values are what a producer of either client puts there.
const (
	bodySize   = 1024
	pullCount  = 32
	benchTopic = "BenchTopic"
	benchGroup = "bench_producer_group"
	brokerName = "broker-a"
	bornMillis = int64(1732880000123)
)

func body(seed byte) []byte {
	b := make([]byte, bodySize)
	for i := range b {
		b[i] = 'a' + (seed+byte(i))%26
	}
	return b
}

// sendProperties is the properties string a producer sends with a tagged,
// keyed message: UNIQ_KEY, WAIT, TAGS, KEYS.
func sendProperties(i int) string {
	uniq := fmt.Sprintf("7F00000100012A9F1B2C3D4E%08X", i)
	return strings.Join([]string{
		rocketmq.PropertyKeys + "\x01order-" + fmt.Sprint(100000+i),
		rocketmq.PropertyTags + "\x01TagA",
		rocketmq.PropertyUniqKey + "\x01" + uniq,
		rocketmq.PropertyWaitStoreMsgOK + "\x01true",
	}, "\x02")
}

// sendHeaderOfficial is the header the official producer builds for a
// plain send to queue 3 (producer.buildSendRequest).
func sendHeaderOfficial() *official.SendHeaderV2 {
	return &official.SendHeaderV2{SendHeader: &official.SendHeader{
		ProducerGroup:         benchGroup,
		Topic:                 benchTopic,
		QueueId:               3,
		BornTimestamp:         bornMillis,
		Properties:            sendProperties(0),
		DefaultTopic:          "TBW102",
		DefaultTopicQueueNums: 4,
		BrokerName:            brokerName,
	}}
}

// sendHeaderOurs is sendHeaderOfficial in our type. The official client
// always writes j (reconsumeTimes) and l (maxReconsumeTimes), so they are
// set here too and both sides encode the same 14 fields.
func sendHeaderOurs() *remoting.SendMessageRequestHeaderV2 {
	h := sendHeaderOfficial()
	props, bname := h.Properties, h.BrokerName
	var zero1, zero2 int32
	return &remoting.SendMessageRequestHeaderV2{
		ProducerGroup:         h.ProducerGroup,
		Topic:                 h.Topic,
		DefaultTopic:          h.DefaultTopic,
		DefaultTopicQueueNums: int32(h.DefaultTopicQueueNums),
		QueueID:               int32(h.QueueId),
		SysFlag:               int32(h.SysFlag),
		BornTimestamp:         h.BornTimestamp,
		Flag:                  h.Flag,
		Properties:            &props,
		ReconsumeTimes:        &zero1,
		UnitMode:              h.UnitMode,
		MaxReconsumeTimes:     &zero2,
		Batch:                 h.Batch,
		BrokerName:            &bname,
	}
}

// sendExtOurs is the SEND_MESSAGE_V2 extFields of sendHeaderOurs.
func sendExtOurs() remoting.ExtFields { return sendHeaderOurs().AppendExt(nil) }

// sendFrame returns a SEND_MESSAGE_V2 request frame (length prefix
// included) as the official client writes it with the given serializer.
func sendFrame(t testing.TB, codec byte) []byte {
	t.Helper()
	prev := official.SetCodecType(codec)
	defer official.SetCodecType(prev)
	cmd := official.NewRequest(official.ReqSendMessageV2, official.EncodeSendV2(sendHeaderOfficial()), body(0))
	var buf bytes.Buffer
	if err := official.WriteTo(cmd, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pullRecords returns the body of a pull response: pullCount stored
// records (magic v1, IPv4 hosts) with 1 KiB bodies.
func pullRecords(t testing.TB) []byte {
	t.Helper()
	var out []byte
	for i := 0; i < pullCount; i++ {
		f := message.RecordFields{
			QueueID:        3,
			QueueOffset:    int64(5000 + i),
			PhysicalOffset: int64(1 << 30),
			BornTimestamp:  bornMillis + int64(i),
			BornHost:       netip.MustParseAddrPort("10.1.2.3:54321"),
			StoreTimestamp: bornMillis + int64(i) + 2,
			StoreHost:      netip.MustParseAddrPort("10.1.2.4:10911"),
			Body:           body(byte(i)),
			Topic:          benchTopic,
			Properties:     sendProperties(i),
		}
		f.PhysicalOffset += int64(len(out))
		var err error
		out, _, err = f.AppendRecord(out)
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// pullFrame returns a PULL_MESSAGE success response (FOUND) frame with the
// header fields a 4.9.8 broker sets, in the given serializer.
func pullFrame(t testing.TB, codec byte) []byte {
	t.Helper()
	prev := official.SetCodecType(codec)
	defer official.SetCodecType(prev)
	cmd := &official.Command{
		Code:     0,
		Language: 0, // JAVA: brokers answer
		Version:  409,
		Opaque:   77,
		Flag:     1,
		ExtFields: map[string]string{
			"suggestWhichBrokerId": "0",
			"nextBeginOffset":      fmt.Sprint(5000 + pullCount),
			"minOffset":            "0",
			"maxOffset":            "100000",
		},
		Body: pullRecords(t),
	}
	var buf bytes.Buffer
	if err := official.WriteTo(cmd, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var codecs = []struct {
	name  string
	codec byte
}{
	{"json", official.CodecJSON},
	{"rocketmq", official.CodecRocketMQ},
}
