package message

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net/netip"
)

// Magic codes of the stored record layout (docs/PROTOCOL.md §5.5) and of
// the blank marker that fills the unused end of a commit-log segment
// (docs/PROTOCOL.md §10.1).
const (
	MagicV1    int32 = -626843481 // 0xDAA320A7: 1-byte topic length
	MagicV2    int32 = -626843477 // 0xDAA320AB: 2-byte topic length (5.1+)
	MagicBlank int32 = -875286124 // 0xCBD43194
)

// BlankMinSize is the room a record must leave at the end of a segment for
// the blank marker (totalSize + magic).
const BlankMinSize = 8

// Message sysFlag bits (docs/PROTOCOL.md §5.3).
const (
	FlagCompressed        int32 = 0x1
	FlagMultiTags         int32 = 0x2
	FlagTransactionMask   int32 = 0xC
	FlagTransactionNot    int32 = 0x0
	FlagTransactionPrep   int32 = 0x4
	FlagTransactionCommit int32 = 0x8
	FlagTransactionRoll   int32 = 0xC
	FlagBornHostV6        int32 = 0x10
	FlagStoreHostV6       int32 = 0x20
	FlagNeedUnwrap        int32 = 0x40
	FlagInnerBatch        int32 = 0x80
	FlagCompressionMask   int32 = 0x700
	FlagCompressionLZ4    int32 = 0x100
	FlagCompressionZSTD   int32 = 0x200
	FlagCompressionZLIB   int32 = 0x300
)

// Fixed byte positions inside a stored record (IPv4 or IPv6 hosts alike).
const (
	RecordPosTotalSize      = 0
	RecordPosMagic          = 4
	RecordPosBodyCRC        = 8
	RecordPosQueueID        = 12
	RecordPosFlag           = 16
	RecordPosQueueOffset    = 20
	RecordPosPhysicalOffset = 28
	RecordPosSysFlag        = 36
	RecordPosBornTimestamp  = 40
	RecordPosBornHost       = 48
)

// ErrTopicTooLong reports a topic whose length does not fit a record.
var ErrTopicTooLong = errors.New("rocketmq: topic longer than 32767 bytes")

// RecordFields are the fields of one stored record with the properties
// already encoded (docs/PROTOCOL.md §5.1). The broker builds records from these
// without going through a properties map.
type RecordFields struct {
	QueueID                   int32
	Flag                      int32
	QueueOffset               int64
	PhysicalOffset            int64
	SysFlag                   int32 // host v6 bits are set from the addresses
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	Topic                     string
	Properties                string
}

func hostLen(a netip.AddrPort) int {
	if a.Addr().Is4() || a.Addr().Is4In6() || !a.IsValid() {
		return 8
	}
	return 20
}

// StoreTimestampPos returns the position of storeTimestamp in a record with
// the given sysFlag.
func StoreTimestampPos(sysFlag int32) int {
	if sysFlag&FlagBornHostV6 != 0 {
		return RecordPosBornHost + 20
	}
	return RecordPosBornHost + 8
}

// RecordSize returns the encoded size of f.
func (f *RecordFields) RecordSize() int {
	topicLen := 1
	if len(f.Topic) > 127 {
		topicLen = 2
	}
	return 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + hostLen(f.BornHost) + 8 + hostLen(f.StoreHost) + 4 + 8 +
		4 + len(f.Body) + topicLen + len(f.Topic) + 2 + len(f.Properties)
}

// AppendRecord appends f in the stored record layout of docs/PROTOCOL.md §5.5.
// Topics up to 127 bytes get magic v1, longer ones v2. The body CRC is
// computed here. The returned sysFlag has the host v6 bits set as written.
func (f *RecordFields) AppendRecord(dst []byte) ([]byte, int32, error) {
	if len(f.Topic) > 32767 {
		return dst, 0, ErrTopicTooLong
	}
	if len(f.Properties) > MaxPropertiesLength {
		return dst, 0, ErrPropertiesTooLong
	}
	sys := f.SysFlag &^ (FlagBornHostV6 | FlagStoreHostV6)
	if hostLen(f.BornHost) == 20 {
		sys |= FlagBornHostV6
	}
	if hostLen(f.StoreHost) == 20 {
		sys |= FlagStoreHostV6
	}
	magic := MagicV1
	if len(f.Topic) > 127 {
		magic = MagicV2
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(f.RecordSize()))
	dst = be.AppendUint32(dst, uint32(magic))
	dst = be.AppendUint32(dst, uint32(BodyCRC(f.Body)))
	dst = be.AppendUint32(dst, uint32(f.QueueID))
	dst = be.AppendUint32(dst, uint32(f.Flag))
	dst = be.AppendUint64(dst, uint64(f.QueueOffset))
	dst = be.AppendUint64(dst, uint64(f.PhysicalOffset))
	dst = be.AppendUint32(dst, uint32(sys))
	dst = be.AppendUint64(dst, uint64(f.BornTimestamp))
	dst = appendHost(dst, f.BornHost)
	dst = be.AppendUint64(dst, uint64(f.StoreTimestamp))
	dst = appendHost(dst, f.StoreHost)
	dst = be.AppendUint32(dst, uint32(f.ReconsumeTimes))
	dst = be.AppendUint64(dst, uint64(f.PreparedTransactionOffset))
	dst = be.AppendUint32(dst, uint32(len(f.Body)))
	dst = append(dst, f.Body...)
	if magic == MagicV1 {
		dst = append(dst, byte(len(f.Topic)))
	} else {
		dst = be.AppendUint16(dst, uint16(len(f.Topic)))
	}
	dst = append(dst, f.Topic...)
	dst = be.AppendUint16(dst, uint16(len(f.Properties)))
	dst = append(dst, f.Properties...)
	return dst, sys, nil
}

func appendHost(dst []byte, a netip.AddrPort) []byte {
	ip := a.Addr().Unmap()
	switch {
	case !ip.IsValid():
		// No address known (e.g. a record built without a peer): 0.0.0.0.
		dst = append(dst, 0, 0, 0, 0)
	case ip.Is4():
		b := ip.As4()
		dst = append(dst, b[:]...)
	default:
		b := ip.As16()
		dst = append(dst, b[:]...)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(a.Port()))
}

// BodyCRC is UtilAll.crc32: CRC-32/IEEE with the sign bit cleared.
func BodyCRC(b []byte) int32 {
	return int32(crc32.ChecksumIEEE(b) & 0x7FFFFFFF)
}
