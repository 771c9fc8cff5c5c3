package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unicode/utf8"

	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// blankMagic marks the unused end of a commit-log segment (PROTOCOL.md §10.1).
const (
	blankMagic    int32  = -875286124 // 0xCBD43194
	blankMagicU32 uint32 = 0xCBD43194
)

// blankMinLen is the room a record must leave at the end of a segment for the
// blank marker (totalSize + magic).
const blankMinLen = 8

// minRecordSize is the smallest structurally valid record: IPv4 hosts, empty
// body, topic and properties.
const minRecordSize = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2

// Property keys the store reads back from records during recovery and
// queries (PROTOCOL.md §5.2).
const (
	propTags    = "TAGS"
	propKeys    = "KEYS"
	propUniqKey = "UNIQ_KEY"
)

// recordHeader is what recovery, dispatch and queries need from a stored
// record. The slices alias the record bytes.
type recordHeader struct {
	size           int32
	queueID        int32
	queueOffset    int64
	physicalOffset int64
	sysFlag        int32
	storeTimestamp int64
	topic          []byte
	properties     []byte
}

func (h *recordHeader) tranType() int32 { return h.sysFlag & message.FlagTransactionMask }

// parseRecord checks and parses the record at the start of b (PROTOCOL.md
// §5.5): the size must fit b, every length field must fit the size exactly,
// the magic must be v1 or v2, and with checkCRC the body CRC must match. It
// never panics on garbage.
func parseRecord(b []byte, checkCRC bool) (recordHeader, error) {
	var h recordHeader
	be := binary.BigEndian
	if len(b) < minRecordSize {
		return h, errRecord("short buffer")
	}
	size := int32(be.Uint32(b))
	if size < minRecordSize || int(size) > len(b) {
		return h, errRecord("bad total size")
	}
	magic := int32(be.Uint32(b[4:]))
	if magic != message.MagicV1 && magic != message.MagicV2 {
		return h, errRecord("bad magic")
	}
	b = b[:size]
	h.size = size
	h.queueID = int32(be.Uint32(b[message.RecordPosQueueID:]))
	h.queueOffset = int64(be.Uint64(b[message.RecordPosQueueOffset:]))
	h.physicalOffset = int64(be.Uint64(b[message.RecordPosPhysicalOffset:]))
	h.sysFlag = int32(be.Uint32(b[message.RecordPosSysFlag:]))
	p := message.RecordPosBornHost + hostLen(h.sysFlag, message.FlagBornHostV6)
	h.storeTimestamp = int64(be.Uint64(b[p:]))
	p += 8 + hostLen(h.sysFlag, message.FlagStoreHostV6) + 4 + 8
	if p+4 > len(b) {
		return h, errRecord("truncated header")
	}
	bodyLen := int(int32(be.Uint32(b[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > len(b)-p {
		return h, errRecord("bad body length")
	}
	body := b[p : p+bodyLen]
	p += bodyLen
	var topicLen int
	if magic == message.MagicV1 {
		if p+1 > len(b) {
			return h, errRecord("truncated topic")
		}
		topicLen = int(int8(b[p]))
		p++
	} else {
		if p+2 > len(b) {
			return h, errRecord("truncated topic")
		}
		topicLen = int(int16(be.Uint16(b[p:])))
		p += 2
	}
	if topicLen <= 0 || topicLen > len(b)-p {
		return h, errRecord("bad topic length")
	}
	h.topic = b[p : p+topicLen]
	p += topicLen
	if p+2 > len(b) {
		return h, errRecord("truncated properties")
	}
	propLen := int(int16(be.Uint16(b[p:])))
	p += 2
	if propLen < 0 || propLen != len(b)-p {
		return h, errRecord("record length mismatch")
	}
	h.properties = b[p:]
	if checkCRC && int32(be.Uint32(b[message.RecordPosBodyCRC:])) != int32(crc32.ChecksumIEEE(body)&0x7FFFFFFF) {
		return h, errRecord("body CRC mismatch")
	}
	return h, nil
}

func hostLen(sysFlag, v6bit int32) int {
	if sysFlag&v6bit != 0 {
		return 20
	}
	return 8
}

func errRecord(why string) error { return fmt.Errorf("%w: %s", errBadRecord, why) }

// propValue finds key in a properties string (key 0x01 value 0x02 ...).
func propValue(props []byte, key string) ([]byte, bool) {
	for len(props) > 0 {
		kEnd := bytes.IndexByte(props, 1)
		if kEnd < 0 {
			return nil, false
		}
		k := props[:kEnd]
		rest := props[kEnd+1:]
		vEnd := bytes.IndexByte(rest, 2)
		var v []byte
		if vEnd < 0 {
			v, props = rest, nil
		} else {
			v, props = rest[:vEnd], rest[vEnd+1:]
		}
		if string(k) == key {
			return v, true
		}
	}
	return nil, false
}

// javaHash continues Java's String.hashCode over s (as UTF-16 code units),
// starting from h, so "topic#key" can be hashed without building the string.
func javaHash[T string | []byte](h int32, s T) int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
		} else {
			h = 31*h + int32(r)
		}
	}
	return h
}

// defaultTagsCode derives the tags code from a stored record's properties.
func defaultTagsCode(_ string, props []byte, _ int64) int64 {
	v, ok := propValue(props, propTags)
	if !ok || len(v) == 0 {
		return 0
	}
	return int64(javaHash(0, v))
}

// indexKeyHash is IndexFile's hash of "topic#key": |String.hashCode()|, 0 for
// Integer.MIN_VALUE.
func indexKeyHash[T string | []byte](topic string, key T) int32 {
	h := javaHash(0, topic)
	h = 31*h + '#'
	return absHash(javaHash(h, key))
}

// absHash is Math.abs, with Integer.MIN_VALUE (still negative) mapped to 0.
func absHash(h int32) int32 {
	if h < 0 {
		h = -h
	}
	return max(h, 0)
}

// forEachKey calls fn for every non-empty space-separated element of keys.
func forEachKey[T string | []byte](keys T, fn func(T)) {
	for len(keys) > 0 {
		i := 0
		for i < len(keys) && keys[i] != ' ' {
			i++
		}
		if i > 0 {
			fn(keys[:i])
		}
		if i == len(keys) {
			return
		}
		keys = keys[i+1:]
	}
}
