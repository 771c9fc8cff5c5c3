// Package trace records message traces in the format of Java's client
// trace module (TraceDataEncoder, AsyncTraceDispatcher): Pub, SubBefore,
// SubAfter and EndTransaction records, sent in batches to the trace topic
// (RMQ_SYS_TRACE_TOPIC unless another is configured), as
// docs/PROTOCOL.md §8.16 describes.
package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// Separators of TraceConstants: CONTENT_SPLITOR ends each field of a
// record, FIELD_SPLITOR ends a record.
const (
	ContentSplitor = '\x01'
	FieldSplitor   = '\x02'
)

// GroupPrefix and InstanceName are TraceConstants' GROUP_NAME_PREFIX and
// TRACE_INSTANCE_NAME, the names of the producer that sends the traces.
const (
	GroupPrefix  = "_INNER_TRACE_PRODUCER"
	InstanceName = "PID_CLIENT_INNER_TRACE_PRODUCER"
)

// Type is Java's TraceType.
type Type int

const (
	Pub Type = iota
	SubBefore
	SubAfter
	EndTransaction
)

func (t Type) String() string {
	switch t {
	case Pub:
		return "Pub"
	case SubBefore:
		return "SubBefore"
	case SubAfter:
		return "SubAfter"
	case EndTransaction:
		return "EndTransaction"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// MsgType is Java's MessageType; records carry its ordinal.
type MsgType int

const (
	NormalMsg      MsgType = iota // Normal_Msg
	TransMsgHalf                  // Trans_Msg_Half
	TransMsgCommit                // Trans_msg_Commit
	DelayMsg                      // Delay_Msg
)

// ConsumeReturnType is Java's ConsumeReturnType; SubAfter carries its
// ordinal as the context code.
const (
	ReturnSuccess   = 0 // SUCCESS
	ReturnTimeout   = 1 // TIME_OUT
	ReturnException = 2 // EXCEPTION
	ReturnNull      = 3 // RETURNNULL
	ReturnFailed    = 4 // FAILED
)

// Context is Java's TraceContext: one record, or one record per bean for
// SubBefore and SubAfter.
type Context struct {
	Type        Type
	TimeStamp   int64 // unix ms; the start of the send or of the consume
	RegionID    string
	Group       string // without the namespace
	CostTime    int    // ms
	Success     bool
	RequestID   string // pairs a SubBefore with its SubAfter
	ContextCode int    // SubAfter: a ConsumeReturnType ordinal
	Beans       []Bean
}

// Bean is Java's TraceBean: one message of a record.
type Bean struct {
	Topic       string // without the namespace
	MsgID       string // the client's UNIQ_KEY id
	OffsetMsgID string
	Tags        string
	Keys        string // space-separated, as the KEYS property
	StoreHost   string
	ClientHost  string
	BodyLength  int
	RetryTimes  int
	MsgType     MsgType
	// EndTransaction only.
	TransactionID        string
	TransactionState     string // COMMIT_MESSAGE, ROLLBACK_MESSAGE or UNKNOW
	FromTransactionCheck bool
}

// orNull writes an absent string as Java's StringBuilder writes a null
// one: Java's hooks leave tags, keys and ids null when a message has none.
func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// Encode appends the records of c to dst as TraceDataEncoder's
// encoderFromContextBean does, and returns the keys Java gives the trace
// message for it: each bean's msgId and its keys.
//
// Fields, in order (each followed by CONTENT_SPLITOR; the last of a record
// by FIELD_SPLITOR instead):
//
//	Pub:            type, timeStamp, regionId, groupName, topic, msgId, tags,
//	                keys, storeHost, bodyLength, costTime, msgType ordinal,
//	                offsetMsgId, success
//	SubBefore:      type, timeStamp, regionId, groupName, requestId, msgId,
//	                retryTimes, keys
//	SubAfter:       type, requestId, msgId, costTime, success, keys,
//	                contextCode, timeStamp, groupName
//	EndTransaction: type, timeStamp, regionId, groupName, topic, msgId, tags,
//	                keys, storeHost, msgType ordinal, transactionId,
//	                transactionState, fromTransactionCheck
//
// Pub and EndTransaction encode the first bean only; SubBefore and
// SubAfter one record per bean.
func Encode(dst []byte, c *Context, keys []string) ([]byte, []string) {
	if c == nil || len(c.Beans) == 0 {
		return dst, keys
	}
	f := func(s string) { dst = append(append(dst, s...), ContentSplitor) }
	i := func(n int64) { dst = append(strconv.AppendInt(dst, n, 10), ContentSplitor) }
	b := func(v bool) { dst = append(strconv.AppendBool(dst, v), ContentSplitor) }
	end := func() { dst[len(dst)-1] = FieldSplitor }
	switch c.Type {
	case Pub:
		m := &c.Beans[0]
		f("Pub")
		i(c.TimeStamp)
		f(orNull(c.RegionID))
		f(orNull(c.Group))
		f(orNull(m.Topic))
		f(orNull(m.MsgID))
		f(orNull(m.Tags))
		f(orNull(m.Keys))
		f(orNull(m.StoreHost))
		i(int64(m.BodyLength))
		i(int64(c.CostTime))
		i(int64(m.MsgType))
		f(orNull(m.OffsetMsgID))
		b(c.Success)
		end()
	case SubBefore:
		for k := range c.Beans {
			m := &c.Beans[k]
			f("SubBefore")
			i(c.TimeStamp)
			f(orNull(c.RegionID))
			f(orNull(c.Group))
			f(orNull(c.RequestID))
			f(orNull(m.MsgID))
			i(int64(m.RetryTimes))
			f(orNull(m.Keys))
			end()
		}
	case SubAfter:
		for k := range c.Beans {
			m := &c.Beans[k]
			f("SubAfter")
			f(orNull(c.RequestID))
			f(orNull(m.MsgID))
			i(int64(c.CostTime))
			b(c.Success)
			f(orNull(m.Keys))
			i(int64(c.ContextCode))
			i(c.TimeStamp)
			f(orNull(c.Group))
			end()
		}
	case EndTransaction:
		m := &c.Beans[0]
		f("EndTransaction")
		i(c.TimeStamp)
		f(orNull(c.RegionID))
		f(orNull(c.Group))
		f(orNull(m.Topic))
		f(orNull(m.MsgID))
		f(orNull(m.Tags))
		f(orNull(m.Keys))
		f(orNull(m.StoreHost))
		i(int64(m.MsgType))
		f(orNull(m.TransactionID))
		f(orNull(m.TransactionState))
		b(m.FromTransactionCheck)
		end()
	default:
		return dst, keys
	}
	for k := range c.Beans {
		keys = append(keys, orNull(c.Beans[k].MsgID))
		if c.Beans[k].Keys != "" {
			keys = append(keys, strings.Split(c.Beans[k].Keys, rocketmq.KeySeparator)...)
		}
	}
	return dst, keys
}

// ErrBadRecord reports trace data Decode cannot read.
var ErrBadRecord = errors.New("rocketmq: bad trace record")

// Decode reads trace data as TraceDataEncoder's decoderFromTraceDataString
// does, old layouts included: a Pub record of 13 fields (no offsetMsgId) or
// 15 (a client host after success), a SubAfter record of 6 (no context
// code) or 7 (no timestamp and group). Records of an unknown type are
// skipped, as Java skips them; "null" fields are read back as empty.
func Decode(data string) ([]Context, error) {
	var out []Context
	for rec := range strings.SplitSeq(data, string(FieldSplitor)) {
		if rec == "" {
			continue
		}
		// Java's String.split drops trailing empty strings.
		line := strings.Split(rec, string(ContentSplitor))
		for len(line) > 0 && line[len(line)-1] == "" {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		c, ok, err := decodeRecord(line)
		if err != nil {
			return out, fmt.Errorf("%w: %q: %v", ErrBadRecord, rec, err)
		}
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func unNull(s string) string {
	if s == "null" {
		return ""
	}
	return s
}

type fieldReader struct {
	line []string
	err  error
}

func (r *fieldReader) str(i int) string {
	if i >= len(r.line) {
		if r.err == nil {
			r.err = fmt.Errorf("%d fields, field %d missing", len(r.line), i)
		}
		return ""
	}
	return unNull(r.line[i])
}

func (r *fieldReader) int(i int) int64 {
	s := r.str(i)
	if r.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("field %d: %v", i, err)
	}
	return n
}

func (r *fieldReader) int32(i int) int {
	n := r.int(i)
	if (n < -1<<31 || n > 1<<31-1) && r.err == nil {
		r.err = fmt.Errorf("field %d: %d out of range", i, n)
	}
	return int(n)
}

// bool is Java's Boolean.parseBoolean: "true" in any case, else false.
func (r *fieldReader) bool(i int) bool { return strings.EqualFold(r.str(i), "true") }

func (r *fieldReader) msgType(i int) MsgType {
	n := r.int32(i)
	if (n < 0 || n > int(DelayMsg)) && r.err == nil {
		r.err = fmt.Errorf("field %d: no message type %d", i, n)
	}
	return MsgType(n)
}

func decodeRecord(line []string) (Context, bool, error) {
	r := &fieldReader{line: line}
	var c Context
	var m Bean
	switch line[0] {
	case "Pub":
		c.Type = Pub
		c.TimeStamp = r.int(1)
		c.RegionID, c.Group = r.str(2), r.str(3)
		m.Topic, m.MsgID, m.Tags, m.Keys, m.StoreHost = r.str(4), r.str(5), r.str(6), r.str(7), r.str(8)
		m.BodyLength = r.int32(9)
		c.CostTime = r.int32(10)
		m.MsgType = r.msgType(11)
		switch {
		case len(line) == 13:
			c.Success = r.bool(12)
		case len(line) >= 14:
			m.OffsetMsgID = r.str(12)
			c.Success = r.bool(13)
			if len(line) >= 15 {
				m.ClientHost = r.str(14)
			}
		}
	case "SubBefore":
		c.Type = SubBefore
		c.TimeStamp = r.int(1)
		c.RegionID, c.Group, c.RequestID = r.str(2), r.str(3), r.str(4)
		m.MsgID = r.str(5)
		m.RetryTimes = r.int32(6)
		m.Keys = r.str(7)
	case "SubAfter":
		c.Type = SubAfter
		c.RequestID, m.MsgID = r.str(1), r.str(2)
		c.CostTime = r.int32(3)
		c.Success = r.bool(4)
		m.Keys = r.str(5)
		if len(line) >= 7 {
			c.ContextCode = r.int32(6)
		}
		if len(line) >= 9 {
			c.TimeStamp = r.int(7)
			c.Group = r.str(8)
		}
	case "EndTransaction":
		c.Type = EndTransaction
		c.TimeStamp = r.int(1)
		c.RegionID, c.Group = r.str(2), r.str(3)
		m.Topic, m.MsgID, m.Tags, m.Keys, m.StoreHost = r.str(4), r.str(5), r.str(6), r.str(7), r.str(8)
		m.MsgType = r.msgType(9)
		m.TransactionID, m.TransactionState = r.str(10), r.str(11)
		m.FromTransactionCheck = r.bool(12)
	default:
		return c, false, nil
	}
	if r.err != nil {
		return c, false, r.err
	}
	c.Beans = []Bean{m}
	return c, true, nil
}
