package rocketmq

import (
	"net/netip"
	"strconv"
)

// Message is a message as a producer sends it.
//
// Properties carries both user properties and the system properties of
// docs/PROTOCOL.md §5.2 (TAGS, KEYS, DELAY, UNIQ_KEY, ...). Use the accessor
// methods for the system ones. producer.NewMessage builds and checks one.
type Message struct {
	Topic      string
	Body       []byte
	Flag       int32
	Properties map[string]string
}

// MessageExt is a message as the broker stored it and a consumer receives it.
type MessageExt struct {
	Message

	// MsgID is the client unique id (UNIQ_KEY) when present, else OffsetMsgID.
	MsgID string
	// OffsetMsgID is the broker's id: store host + commit-log offset.
	OffsetMsgID string

	BrokerName                string
	QueueID                   int32
	StoreSize                 int32
	BodyCRC                   int32
	QueueOffset               int64
	CommitLogOffset           int64
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
}

// MessageQueue identifies one queue of a topic on one broker.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int    `json:"queueId"`
}

// SendStatus is the store status a broker reported for a send.
type SendStatus int

const (
	SendOK SendStatus = iota
	SendFlushDiskTimeout
	SendFlushSlaveTimeout
	SendSlaveNotAvailable
)

// String returns Java's SendStatus name.
func (s SendStatus) String() string {
	switch s {
	case SendOK:
		return "SEND_OK"
	case SendFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case SendFlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case SendSlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	}
	return "SendStatus(" + strconv.Itoa(int(s)) + ")"
}

// SendResult is what a successful send returns.
type SendResult struct {
	Status SendStatus
	// MsgID is the client unique id (comma-joined for a batch).
	MsgID string
	// OffsetMsgID is the broker's offset id (comma-joined for a batch).
	OffsetMsgID   string
	Queue         MessageQueue
	QueueOffset   int64
	TransactionID string
	RegionID      string
	TraceOn       bool
}
