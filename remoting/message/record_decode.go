package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// ErrCorruptRecord reports a stored message record (docs/PROTOCOL.md §5.5) whose
// bytes do not add up: a bad magic code, a length out of bounds, or fields
// that do not end exactly at totalSize.
var ErrCorruptRecord = errors.New("rocketmq: corrupt message record")

// RecordMinSize is the size of a record with IPv4 hosts, an empty body,
// a v1 empty topic and no properties.
const RecordMinSize = 91

// DecodeOptions controls record decoding. The zero value decodes the way a
// consumer wants: compressed bodies are inflated.
type DecodeOptions struct {
	// KeepCompressed leaves compressed bodies as stored (the broker's view:
	// CHECK_TRANSACTION_STATE bodies and re-put messages are not recompressed).
	KeepCompressed bool
	// MaxBodySize caps an inflated body; 0 means DefaultMaxDecompressedSize.
	MaxBodySize int
}

// RecordView is one stored record as ScanRecord found it: the fixed fields
// read out and the variable parts as sub-slices of the scanned bytes.
// Making one allocates nothing; it is valid as long as those bytes are.
type RecordView struct {
	Size           int
	Magic          int32
	SysFlag        int32
	QueueID        int32
	QueueOffset    int64
	PhysicalOffset int64
	StoreTimestamp int64
	Body           []byte // as stored (compressed when SysFlag says so)
	Topic          []byte
	Properties     []byte // the properties string

	raw       []byte // the whole record
	bornHost  int    // position of the born host field
	bornLen   int    // 4 or 16 (address bytes)
	storeHost int
	storeLen  int
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptRecord}, args...)...)
}

// ScanRecord checks the structure of the record at the start of b and
// returns its view. It reads nothing past the record's own totalSize and
// never panics on garbage; errors wrap ErrCorruptRecord. The body CRC is
// not checked (see RecordView.CheckCRC).
func ScanRecord(b []byte) (RecordView, error) {
	var l RecordView
	err := l.scan(b)
	return l, err
}

func (l *RecordView) scan(b []byte) error {
	be := binary.BigEndian
	if len(b) < 4 {
		return corrupt("%d bytes left, need 4 for totalSize", len(b))
	}
	total := int64(int32(be.Uint32(b)))
	if total < RecordMinSize {
		return corrupt("totalSize %d below minimum %d", total, RecordMinSize)
	}
	if total > int64(len(b)) {
		return corrupt("totalSize %d exceeds the %d bytes available", total, len(b))
	}
	l.Size = int(total)
	b = b[:l.Size]
	l.raw = b
	l.Magic = int32(be.Uint32(b[RecordPosMagic:]))
	if l.Magic != MagicV1 && l.Magic != MagicV2 {
		return corrupt("magic code %#08x", uint32(l.Magic))
	}
	l.QueueID = int32(be.Uint32(b[RecordPosQueueID:]))
	l.QueueOffset = int64(be.Uint64(b[RecordPosQueueOffset:]))
	l.PhysicalOffset = int64(be.Uint64(b[RecordPosPhysicalOffset:]))
	l.SysFlag = int32(be.Uint32(b[RecordPosSysFlag:]))
	p := RecordPosBornHost
	l.bornHost, l.bornLen = p, 4
	if l.SysFlag&FlagBornHostV6 != 0 {
		l.bornLen = 16
	}
	p += l.bornLen + 4 // born host + port; RecordMinSize covers the timestamp
	l.StoreTimestamp = int64(be.Uint64(b[p:]))
	p += 8
	l.storeHost, l.storeLen = p, 4
	if l.SysFlag&FlagStoreHostV6 != 0 {
		l.storeLen = 16
	}
	p += l.storeLen + 4 + 4 + 8 // store host + port, reconsumeTimes, prepared offset
	// From here on every read is checked against the record size.
	if p+4 > l.Size {
		return corrupt("totalSize %d too small for the host fields", l.Size)
	}
	bodyLen := int64(int32(be.Uint32(b[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > int64(l.Size-p) {
		return corrupt("bodyLength %d out of bounds", bodyLen)
	}
	l.Body = b[p : p+int(bodyLen) : p+int(bodyLen)]
	p += int(bodyLen)
	var topicLen int
	if l.Magic == MagicV1 {
		if p+1 > l.Size {
			return corrupt("no room for topicLength")
		}
		tl := int8(b[p])
		if tl < 0 {
			return corrupt("topicLength %d", tl)
		}
		topicLen = int(tl)
		p++
	} else {
		if p+2 > l.Size {
			return corrupt("no room for topicLength")
		}
		tl := int16(be.Uint16(b[p:]))
		if tl < 0 {
			return corrupt("topicLength %d", tl)
		}
		topicLen = int(tl)
		p += 2
	}
	if topicLen > l.Size-p {
		return corrupt("topicLength %d out of bounds", topicLen)
	}
	l.Topic = b[p : p+topicLen : p+topicLen]
	p += topicLen
	if p+2 > l.Size {
		return corrupt("no room for propertiesLength")
	}
	pl := int(int16(be.Uint16(b[p:])))
	p += 2
	if pl < 0 || pl > l.Size-p {
		return corrupt("propertiesLength %d out of bounds", pl)
	}
	l.Properties = b[p : p+pl : p+pl]
	p += pl
	if p != l.Size {
		return corrupt("fields end at %d, totalSize is %d", p, l.Size)
	}
	if port := int32(be.Uint32(b[l.bornHost+l.bornLen:])); port < 0 || port > 0xFFFF {
		return corrupt("port %d", port)
	}
	if port := int32(be.Uint32(b[l.storeHost+l.storeLen:])); port < 0 || port > 0xFFFF {
		return corrupt("port %d", port)
	}
	return nil
}

// Bytes returns the whole record.
func (l *RecordView) Bytes() []byte { return l.raw }

// BodyCRC returns the body CRC as stored.
func (l *RecordView) BodyCRC() int32 { return int32(binary.BigEndian.Uint32(l.raw[RecordPosBodyCRC:])) }

// CheckCRC reports whether the stored body CRC matches the body.
func (l *RecordView) CheckCRC() bool { return l.BodyCRC() == BodyCRC(l.Body) }

// Flag returns the message flag.
func (l *RecordView) Flag() int32 { return int32(binary.BigEndian.Uint32(l.raw[RecordPosFlag:])) }

// BornTimestamp returns the born timestamp (epoch milliseconds).
func (l *RecordView) BornTimestamp() int64 {
	return int64(binary.BigEndian.Uint64(l.raw[RecordPosBornTimestamp:]))
}

// BornHost returns the born host and port.
func (l *RecordView) BornHost() netip.AddrPort { return hostAt(l.raw, l.bornHost, l.bornLen) }

// StoreHost returns the store host and port.
func (l *RecordView) StoreHost() netip.AddrPort { return hostAt(l.raw, l.storeHost, l.storeLen) }

// ReconsumeTimes returns the reconsume count.
func (l *RecordView) ReconsumeTimes() int32 {
	return int32(binary.BigEndian.Uint32(l.raw[l.storeHost+l.storeLen+4:]))
}

// PreparedTransactionOffset returns the prepared transaction offset.
func (l *RecordView) PreparedTransactionOffset() int64 {
	return int64(binary.BigEndian.Uint64(l.raw[l.storeHost+l.storeLen+8:]))
}

// TransactionType returns the transaction bits of the sysFlag.
func (l *RecordView) TransactionType() int32 { return TransactionType(l.SysFlag) }

// TransactionType returns the transaction bits of a sysFlag
// (FlagTransactionNot, ...Prep, ...Commit or ...Roll).
func TransactionType(sysFlag int32) int32 { return sysFlag & FlagTransactionMask }

// offsetIDLen is the length of the offset message id of a record.
func (l *RecordView) offsetIDLen() int { return 2 * (l.storeLen + 4 + 8) }

// AppendOffsetMsgID appends the record's offset message id (store host
// and commit-log offset in upper-case hex).
func (l *RecordView) AppendOffsetMsgID(dst []byte) []byte {
	dst = appendHex(dst, l.raw[l.storeHost:l.storeHost+l.storeLen+4])
	return appendHex(dst, l.raw[RecordPosPhysicalOffset:RecordPosPhysicalOffset+8])
}

// DecodeRecords decodes a PULL (or QUERY_MESSAGE) response body: stored
// records back to back. See DecodeOptions.DecodeRecords.
func DecodeRecords(body []byte) ([]*rocketmq.MessageExt, error) {
	return DecodeOptions{}.DecodeRecords(body)
}

// DecodeRecord decodes the one record at the start of b and returns it with
// the number of bytes it took. See DecodeOptions.DecodeRecords.
func DecodeRecord(b []byte) (*rocketmq.MessageExt, int, error) {
	return DecodeOptions{}.DecodeRecord(b)
}

// DecodeRecord decodes the one record at the start of b and returns it with
// the number of bytes it took.
func (o DecodeOptions) DecodeRecord(b []byte) (*rocketmq.MessageExt, int, error) {
	l, err := ScanRecord(b)
	if err != nil {
		return nil, 0, err
	}
	var sb strings.Builder
	sb.Grow(len(l.Topic) + len(l.Properties) + l.offsetIDLen())
	m := new(rocketmq.MessageExt)
	if err := o.fill(m, &l, &sb, ""); err != nil {
		return nil, 0, err
	}
	return m, l.Size, nil
}

// DecodeRecords decodes records back to back, as in a PULL response body.
//
// Memory: a message's Body aliases body (unless it was inflated), so the
// caller hands body over and must not modify it afterwards. Topics,
// properties and ids do not alias body: they are substrings of one string
// allocated per call. All messages of one call share one backing array, so
// keeping any of them keeps the batch alive.
//
// Each message gets OffsetMsgID from its store host and commit-log offset,
// and MsgID = UNIQ_KEY when present, else OffsetMsgID. SysFlag stays as
// stored, even after the body is inflated (4.9.8 behaviour, docs/PROTOCOL.md
// §5.3). Properties is nil when the record has none. BrokerName is left
// empty.
//
// On a bad record, DecodeRecords returns the messages before it together
// with an error wrapping ErrCorruptRecord (or a decompression error) that
// names the record's index and byte offset.
func (o DecodeOptions) DecodeRecords(body []byte) ([]*rocketmq.MessageExt, error) {
	// First pass: check every record and size the allocations. The views
	// of the first records are kept for the second pass (a default pull
	// batch fits), the others are scanned again.
	var (
		n, strLen int
		scanErr   error
		prevTopic []byte
		l         RecordView
		kept      [keptViews]RecordView
	)
	for off := 0; off < len(body); {
		if err := l.scan(body[off:]); err != nil {
			scanErr = fmt.Errorf("rocketmq: record %d at offset %d: %w", n, off, err)
			break
		}
		if prevTopic == nil || !bytes.Equal(l.Topic, prevTopic) {
			strLen += len(l.Topic)
			prevTopic = l.Topic
		}
		strLen += len(l.Properties) + l.offsetIDLen()
		if n < keptViews {
			kept[n] = l
		}
		n++
		off += l.Size
	}
	if n == 0 {
		return nil, scanErr
	}
	exts := make([]rocketmq.MessageExt, n)
	out := make([]*rocketmq.MessageExt, 0, n)
	var sb strings.Builder
	sb.Grow(strLen)
	prev := ""
	for i, off := 0, 0; i < n; i++ {
		v := &l
		if i < keptViews {
			v = &kept[i]
		} else {
			_ = l.scan(body[off:])
		}
		m := &exts[i]
		if err := o.fill(m, v, &sb, prev); err != nil {
			return out, fmt.Errorf("rocketmq: record %d at offset %d: %w", i, off, err)
		}
		prev = m.Topic
		out = append(out, m)
		off += v.Size
	}
	return out, scanErr
}

// keptViews is how many records' views DecodeRecords keeps on its stack
// between its two passes: the default pull batch.
const keptViews = 32

// fill decodes the checked record l into m. Strings are appended to sb and
// taken back as substrings of sb.String(): sb never changes bytes it has
// written, so those substrings stay valid whatever it does later. A topic
// equal to prevTopic reuses it.
func (o DecodeOptions) fill(m *rocketmq.MessageExt, l *RecordView, sb *strings.Builder, prevTopic string) error {
	m.StoreSize = int32(l.Size)
	m.BodyCRC = l.BodyCRC()
	m.QueueID = l.QueueID
	m.Flag = l.Flag()
	m.QueueOffset = l.QueueOffset
	m.CommitLogOffset = l.PhysicalOffset
	m.SysFlag = l.SysFlag
	m.BornTimestamp = l.BornTimestamp()
	m.BornHost = l.BornHost()
	m.StoreTimestamp = l.StoreTimestamp
	m.StoreHost = l.StoreHost()
	m.ReconsumeTimes = l.ReconsumeTimes()
	m.PreparedTransactionOffset = l.PreparedTransactionOffset()

	if len(l.Body) > 0 {
		m.Body = l.Body
		if !o.KeepCompressed && l.SysFlag&FlagCompressed != 0 {
			body, err := Decompress(m.Body, l.SysFlag, o.MaxBodySize)
			if err != nil {
				return err
			}
			m.Body = body
		}
	}

	if prevTopic != "" && string(l.Topic) == prevTopic {
		m.Topic = prevTopic
	} else {
		start := sb.Len()
		sb.Write(l.Topic)
		m.Topic = sb.String()[start:]
	}

	var id [56]byte
	start := sb.Len()
	sb.Write(l.AppendOffsetMsgID(id[:0]))
	m.OffsetMsgID = sb.String()[start:]
	m.MsgID = m.OffsetMsgID

	if len(l.Properties) > 0 {
		start := sb.Len()
		sb.Write(l.Properties)
		props := sb.String()[start:]
		m.Properties = make(map[string]string, countProperties(props))
		if u := decodePropertiesInto(m.Properties, props, rocketmq.PropertyUniqKey); u != "" {
			m.MsgID = u
		}
	}
	return nil
}

// hostAt reads an address of n bytes (4 or 16) and the int32 port after it;
// ScanRecord has checked the port range.
func hostAt(b []byte, pos, n int) netip.AddrPort {
	port := uint16(binary.BigEndian.Uint32(b[pos+n:]))
	if n == 4 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[pos:pos+4])), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[pos:pos+16])), port)
}

const hexUpper = "0123456789ABCDEF"

// appendHex appends src as upper-case hex, as Java renders ids. Growing
// once and storing by index saves a capacity check per digit.
func appendHex(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(src))[:n+2*len(src)]
	out := dst[n:]
	for i, c := range src {
		out[2*i] = hexUpper[c>>4]
		out[2*i+1] = hexUpper[c&0xF]
	}
	return dst
}

// RecordFieldsOf returns the fields to encode m as a stored record, with the
// properties encoded by EncodeProperties. The body is used as it is (a
// body inflated by the decoder is not recompressed, as Java's re-encoding
// for CHECK_TRANSACTION_STATE does not; set SysFlag accordingly).
func RecordFieldsOf(m *rocketmq.MessageExt) RecordFields {
	return RecordFields{
		QueueID:                   m.QueueID,
		Flag:                      m.Flag,
		QueueOffset:               m.QueueOffset,
		PhysicalOffset:            m.CommitLogOffset,
		SysFlag:                   m.SysFlag,
		BornTimestamp:             m.BornTimestamp,
		BornHost:                  m.BornHost,
		StoreTimestamp:            m.StoreTimestamp,
		StoreHost:                 m.StoreHost,
		ReconsumeTimes:            m.ReconsumeTimes,
		PreparedTransactionOffset: m.PreparedTransactionOffset,
		Body:                      m.Body,
		Topic:                     m.Topic,
		Properties:                EncodeProperties(m.Properties),
	}
}

// AppendMessageExt appends m in the stored record layout (magic v1 for
// topics up to 127 bytes), e.g. for a CHECK_TRANSACTION_STATE body. The
// body CRC is recomputed from Body.
func AppendMessageExt(dst []byte, m *rocketmq.MessageExt) ([]byte, error) {
	f := RecordFieldsOf(m)
	dst, _, err := f.AppendRecord(dst)
	return dst, err
}
