package official

import (
	"io"
	_ "unsafe" // for go:linkname

	// Links the official client, and with it internal/remote and internal,
	// into the binary; the linknamed symbols below live there.
	_ "github.com/apache/rocketmq-client-go/v2/producer"
)

// Command mirrors remote.RemotingCommand field for field (same types,
// same order), so a *Command is a valid *remote.RemotingCommand.
type Command struct {
	Code      int16
	Language  byte // remote.LanguageCode
	Version   int16
	Opaque    int32
	Flag      int32
	Remark    string
	ExtFields map[string]string
	Body      []byte
}

// SendHeader mirrors internal.SendMessageRequestHeader.
type SendHeader struct {
	ProducerGroup         string
	Topic                 string
	QueueId               int
	SysFlag               int
	BornTimestamp         int64
	Flag                  int32
	Properties            string
	ReconsumeTimes        int
	UnitMode              bool
	MaxReconsumeTimes     int
	Batch                 bool
	DefaultTopic          string
	DefaultTopicQueueNums int
	BrokerName            string
}

// SendHeaderV2 mirrors internal.SendMessageRequestV2Header.
type SendHeaderV2 struct {
	*SendHeader
}

// Header serializers of the official codec (remote.JsonCodecs and
// remote.RocketMQCodecs).
const (
	CodecJSON     byte = 0
	CodecRocketMQ byte = 1
)

// Request codes used by the benchmarks (internal.ReqSendMessageV2, ...).
const (
	ReqSendMessageV2 int16 = 310
	ReqPullMessage   int16 = 11
)

// customHeader mirrors remote.CustomHeader (same method set, so the same
// interface layout); only nil is ever passed.
type customHeader interface{ Encode() map[string]string }

// newRemotingCommand is remote.NewRemotingCommand with a nil header: it
// stamps version, language and the next opaque from the package counter.
// Production calls it with a header, which it encodes with header.Encode()
// after the same make(map); callers here do that step with EncodeSendV2.
//
//go:linkname newRemotingCommand github.com/apache/rocketmq-client-go/v2/internal/remote.NewRemotingCommand
func newRemotingCommand(code int16, header customHeader, body []byte) *Command

// NewRequest builds a request the way remote.NewRemotingCommand does,
// with ext as the result of the header's Encode.
func NewRequest(code int16, ext map[string]string, body []byte) *Command {
	c := newRemotingCommand(code, nil, body)
	if ext != nil {
		c.ExtFields = ext
	}
	return c
}

// EncodeSendV2 is (*internal.SendMessageRequestV2Header).Encode: the map
// of one-letter keys the producer sends with SEND_MESSAGE_V2.
//
//go:linkname EncodeSendV2 github.com/apache/rocketmq-client-go/v2/internal.(*SendMessageRequestV2Header).Encode
func EncodeSendV2(h *SendHeaderV2) map[string]string

// WriteTo is (*remote.RemotingCommand).WriteTo, the encoder the client
// uses on every request: it writes the frame to w (the net.Conn in
// production) in four writes.
//
//go:linkname WriteTo github.com/apache/rocketmq-client-go/v2/internal/remote.(*RemotingCommand).WriteTo
func WriteTo(c *Command, w io.Writer) error

// Encode is remote.encode: the same frame returned as one slice. The client
// itself only uses it in tests; WriteTo is the production path.
//
//go:linkname Encode github.com/apache/rocketmq-client-go/v2/internal/remote.encode
func Encode(c *Command) ([]byte, error)

// Decode is remote.decode. Its input is a frame without the 4-byte length
// prefix, which the client's read loop strips off before calling it.
//
//go:linkname Decode github.com/apache/rocketmq-client-go/v2/internal/remote.decode
func Decode(frame []byte) (*Command, error)

//go:linkname codecType github.com/apache/rocketmq-client-go/v2/internal/remote.codecType
var codecType byte

// CodecType returns the header serializer the official encoder uses. It is
// a package variable of the official client and is CodecJSON unless
// changed; the client has no public way to change it.
func CodecType() byte { return codecType }

// SetCodecType switches the official encoder's header serializer and
// returns the previous one. It changes process-wide state of the official
// client: call it only while no official client runs, and restore it.
func SetCodecType(t byte) (prev byte) {
	prev = codecType
	codecType = t
	return prev
}
