package rocketmq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrCorruptRecord reports a stored message record (PROTOCOL.md §5.5) whose
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

// recordLayout holds the positions of the variable parts of one record.
type recordLayout struct {
	size      int
	sysFlag   int32
	bornHost  int // position of the born host field
	bornLen   int // 4 or 16 (address bytes)
	storeHost int
	storeLen  int
	bodyOff   int
	bodyLen   int
	topicOff  int
	topicLen  int
	propsOff  int
	propsLen  int
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorruptRecord}, args...)...)
}

// scanRecord checks the structure of the record at b[0:] and returns its
// layout. It reads nothing past the record's own totalSize.
func scanRecord(b []byte) (recordLayout, error) {
	var l recordLayout
	be := binary.BigEndian
	if len(b) < 4 {
		return l, corrupt("%d bytes left, need 4 for totalSize", len(b))
	}
	total := int64(int32(be.Uint32(b)))
	if total < RecordMinSize {
		return l, corrupt("totalSize %d below minimum %d", total, RecordMinSize)
	}
	if total > int64(len(b)) {
		return l, corrupt("totalSize %d exceeds the %d bytes available", total, len(b))
	}
	l.size = int(total)
	b = b[:l.size]
	magic := int32(be.Uint32(b[RecordPosMagic:]))
	if magic != MagicV1 && magic != MagicV2 {
		return l, corrupt("magic code %#08x", uint32(magic))
	}
	l.sysFlag = int32(be.Uint32(b[RecordPosSysFlag:]))
	p := RecordPosBornHost
	l.bornHost, l.bornLen = p, 4
	if l.sysFlag&FlagBornHostV6 != 0 {
		l.bornLen = 16
	}
	p += l.bornLen + 4 + 8 // born host + port, store timestamp
	l.storeHost, l.storeLen = p, 4
	if l.sysFlag&FlagStoreHostV6 != 0 {
		l.storeLen = 16
	}
	p += l.storeLen + 4 + 4 + 8 // store host + port, reconsumeTimes, prepared offset
	// From here on every read is checked against the record size; the
	// fixed part needs 4 (bodyLen) + 1 or 2 (topicLen) + 2 (propsLen).
	if p+4 > l.size {
		return l, corrupt("totalSize %d too small for the host fields", l.size)
	}
	bodyLen := int64(int32(be.Uint32(b[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > int64(l.size-p) {
		return l, corrupt("bodyLength %d out of bounds", bodyLen)
	}
	l.bodyOff, l.bodyLen = p, int(bodyLen)
	p += l.bodyLen
	if magic == MagicV1 {
		if p+1 > l.size {
			return l, corrupt("no room for topicLength")
		}
		tl := int8(b[p])
		if tl < 0 {
			return l, corrupt("topicLength %d", tl)
		}
		l.topicLen = int(tl)
		p++
	} else {
		if p+2 > l.size {
			return l, corrupt("no room for topicLength")
		}
		tl := int16(be.Uint16(b[p:]))
		if tl < 0 {
			return l, corrupt("topicLength %d", tl)
		}
		l.topicLen = int(tl)
		p += 2
	}
	if l.topicLen > l.size-p {
		return l, corrupt("topicLength %d out of bounds", l.topicLen)
	}
	l.topicOff = p
	p += l.topicLen
	if p+2 > l.size {
		return l, corrupt("no room for propertiesLength")
	}
	pl := int16(be.Uint16(b[p:]))
	p += 2
	if pl < 0 || int(pl) > l.size-p {
		return l, corrupt("propertiesLength %d out of bounds", pl)
	}
	l.propsOff, l.propsLen = p, int(pl)
	p += l.propsLen
	if p != l.size {
		return l, corrupt("fields end at %d, totalSize is %d", p, l.size)
	}
	for _, h := range [2][2]int{{l.bornHost, l.bornLen}, {l.storeHost, l.storeLen}} {
		if port := int32(be.Uint32(b[h[0]+h[1]:])); port < 0 || port > 0xFFFF {
			return l, corrupt("port %d", port)
		}
	}
	return l, nil
}

// offsetIDLen is the length of the offset message id of a record.
func (l *recordLayout) offsetIDLen() int { return 2 * (l.storeLen + 4 + 8) }

// DecodeRecords decodes a PULL (or QUERY_MESSAGE) response body: stored
// records back to back. See DecodeOptions.DecodeRecords.
func DecodeRecords(body []byte) ([]*MessageExt, error) {
	return DecodeOptions{}.DecodeRecords(body)
}

// DecodeRecord decodes the one record at the start of b and returns it with
// the number of bytes it took. See DecodeOptions.DecodeRecords.
func DecodeRecord(b []byte) (*MessageExt, int, error) {
	return DecodeOptions{}.DecodeRecord(b)
}

// DecodeRecord decodes the one record at the start of b and returns it with
// the number of bytes it took.
func (o DecodeOptions) DecodeRecord(b []byte) (*MessageExt, int, error) {
	l, err := scanRecord(b)
	if err != nil {
		return nil, 0, err
	}
	var sb strings.Builder
	sb.Grow(l.topicLen + l.propsLen + l.offsetIDLen())
	m := new(MessageExt)
	if err := o.fill(m, b[:l.size], &l, &sb, ""); err != nil {
		return nil, 0, err
	}
	return m, l.size, nil
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
// stored, even after the body is inflated (4.9.8 behaviour, §5.3).
// Properties is nil when the record has none. BrokerName is left empty.
//
// On a bad record, DecodeRecords returns the messages before it together
// with an error wrapping ErrCorruptRecord (or a decompression error) that
// names the record's index and byte offset.
func (o DecodeOptions) DecodeRecords(body []byte) ([]*MessageExt, error) {
	// First pass: check every record and size the allocations.
	var (
		n, strLen int
		scanErr   error
		prevTopic []byte
	)
	for off := 0; off < len(body); {
		l, err := scanRecord(body[off:])
		if err != nil {
			scanErr = fmt.Errorf("rocketmq: record %d at offset %d: %w", n, off, err)
			break
		}
		topic := body[off+l.topicOff : off+l.topicOff+l.topicLen]
		if prevTopic == nil || !bytes.Equal(topic, prevTopic) {
			strLen += len(topic)
			prevTopic = topic
		}
		strLen += l.propsLen + l.offsetIDLen()
		n++
		off += l.size
	}
	if n == 0 {
		return nil, scanErr
	}
	exts := make([]MessageExt, n)
	out := make([]*MessageExt, 0, n)
	var sb strings.Builder
	sb.Grow(strLen)
	prev := ""
	for i, off := 0, 0; i < n; i++ {
		l, _ := scanRecord(body[off:])
		m := &exts[i]
		if err := o.fill(m, body[off:off+l.size], &l, &sb, prev); err != nil {
			return out, fmt.Errorf("rocketmq: record %d at offset %d: %w", i, off, err)
		}
		prev = m.Topic
		out = append(out, m)
		off += l.size
	}
	return out, scanErr
}

// fill decodes the checked record b into m. Strings are appended to sb and
// taken back as substrings of sb.String(): sb never changes bytes it has
// written, so those substrings stay valid whatever it does later. A topic
// equal to prevTopic reuses it.
func (o DecodeOptions) fill(m *MessageExt, b []byte, l *recordLayout, sb *strings.Builder, prevTopic string) error {
	be := binary.BigEndian
	m.StoreSize = int32(l.size)
	m.BodyCRC = int32(be.Uint32(b[RecordPosBodyCRC:]))
	m.QueueID = int32(be.Uint32(b[RecordPosQueueID:]))
	m.Flag = int32(be.Uint32(b[RecordPosFlag:]))
	m.QueueOffset = int64(be.Uint64(b[RecordPosQueueOffset:]))
	m.CommitLogOffset = int64(be.Uint64(b[RecordPosPhysicalOffset:]))
	m.SysFlag = l.sysFlag
	m.BornTimestamp = int64(be.Uint64(b[RecordPosBornTimestamp:]))
	m.BornHost = hostAt(b, l.bornHost, l.bornLen)
	p := l.bornHost + l.bornLen + 4
	m.StoreTimestamp = int64(be.Uint64(b[p:]))
	m.StoreHost = hostAt(b, l.storeHost, l.storeLen)
	p = l.storeHost + l.storeLen + 4
	m.ReconsumeTimes = int32(be.Uint32(b[p:]))
	m.PreparedTransactionOffset = int64(be.Uint64(b[p+4:]))

	if l.bodyLen > 0 {
		m.Body = b[l.bodyOff : l.bodyOff+l.bodyLen : l.bodyOff+l.bodyLen]
		if !o.KeepCompressed && l.sysFlag&FlagCompressed != 0 {
			body, err := Decompress(m.Body, l.sysFlag, o.MaxBodySize)
			if err != nil {
				return err
			}
			m.Body = body
		}
	}

	topic := b[l.topicOff : l.topicOff+l.topicLen]
	if prevTopic != "" && string(topic) == prevTopic {
		m.Topic = prevTopic
	} else {
		start := sb.Len()
		sb.Write(topic)
		m.Topic = sb.String()[start:]
	}

	var id [56]byte
	n := appendHex(id[:0], b[l.storeHost:l.storeHost+l.storeLen+4])
	n = appendHex(n, b[RecordPosPhysicalOffset:RecordPosPhysicalOffset+8])
	start := sb.Len()
	sb.Write(n)
	m.OffsetMsgID = sb.String()[start:]
	m.MsgID = m.OffsetMsgID

	if l.propsLen > 0 {
		start := sb.Len()
		sb.Write(b[l.propsOff : l.propsOff+l.propsLen])
		props := sb.String()[start:]
		m.Properties = make(map[string]string, countProperties(props))
		decodePropertiesInto(m.Properties, props)
		if u := m.Properties[PropertyUniqKey]; u != "" {
			m.MsgID = u
		}
	}
	return nil
}

// hostAt reads an address of n bytes (4 or 16) and the int32 port after it;
// scanRecord has checked the port range.
func hostAt(b []byte, pos, n int) netip.AddrPort {
	port := uint16(binary.BigEndian.Uint32(b[pos+n:]))
	if n == 4 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[pos:pos+4])), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[pos:pos+16])), port)
}

// RecordFields returns the fields to encode m as a stored record, with the
// properties encoded by EncodeProperties. The body is used as it is (a
// body inflated by the decoder is not recompressed, as Java's re-encoding
// for CHECK_TRANSACTION_STATE does not; set SysFlag accordingly).
func (m *MessageExt) RecordFields() RecordFields {
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

// AppendRecord appends m in the stored record layout (magic v1 for topics
// up to 127 bytes), e.g. for a CHECK_TRANSACTION_STATE body. The body CRC
// is recomputed from Body.
func (m *MessageExt) AppendRecord(dst []byte) ([]byte, error) {
	f := m.RecordFields()
	dst, _, err := f.AppendRecord(dst)
	return dst, err
}
