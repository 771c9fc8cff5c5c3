package rocketmq

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// ErrInvalidMsgID reports a message id that is not hex of a known length.
var ErrInvalidMsgID = errors.New("rocketmq: invalid message id")

const hexUpper = "0123456789ABCDEF"

// appendHex appends src as uppercase hex, as Java renders ids.
func appendHex(dst, src []byte) []byte {
	for _, c := range src {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// EncodeOffsetMsgID returns the offset message id of a record (docs/PROTOCOL.md
// §6.2): store host address, port as int32 and commit-log offset, in
// uppercase hex; 32 characters for IPv4 (IPv4-mapped IPv6 included, as
// Java collapses it), 56 for IPv6.
func EncodeOffsetMsgID(storeHost netip.AddrPort, commitLogOffset int64) string {
	var buf [56]byte
	return string(AppendOffsetMsgID(buf[:0], storeHost, commitLogOffset))
}

// AppendOffsetMsgID appends the offset message id to dst.
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, commitLogOffset int64) []byte {
	var raw [28]byte
	ip := storeHost.Addr().Unmap()
	n := 0
	if ip.Is6() {
		a := ip.As16()
		n = copy(raw[:], a[:])
	} else {
		a := ip.As4() // the zero Addr gives 0.0.0.0
		if !ip.IsValid() {
			a = [4]byte{}
		}
		n = copy(raw[:], a[:])
	}
	binary.BigEndian.PutUint32(raw[n:], uint32(storeHost.Port()))
	binary.BigEndian.PutUint64(raw[n+4:], uint64(commitLogOffset))
	return appendHex(dst, raw[:n+12])
}

// DecodeOffsetMsgID parses an offset message id (either hex case). Like
// Java, 32 characters mean IPv4; 56 mean IPv6. Other lengths, non-hex text
// and ports above 65535 are errors.
func DecodeOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var raw [28]byte
	if len(id) != 32 && len(id) != 56 {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: offset id of %d characters", ErrInvalidMsgID, len(id))
	}
	n := len(id) / 2
	if _, err := hex.Decode(raw[:n], []byte(id)); err != nil {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %w", ErrInvalidMsgID, err)
	}
	ipLen := n - 12
	var ip netip.Addr
	if ipLen == 4 {
		ip = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		ip = netip.AddrFrom16([16]byte(raw[:16]))
	}
	port := binary.BigEndian.Uint32(raw[ipLen:])
	if port > 0xFFFF {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: port %d", ErrInvalidMsgID, int32(port))
	}
	off := int64(binary.BigEndian.Uint64(raw[ipLen+4:]))
	return netip.AddrPortFrom(ip, uint16(port)), off, nil
}

// The client unique id (UNIQ_KEY, docs/PROTOCOL.md §6.1):
//
//	ip (4 or 16) | pid low 16 bits (2) | instance hash (4) | ms since month start (4) | counter (2)
//
// in uppercase hex. The decoders below accept both lengths (32 and 56
// characters) and either hex case.

// decodeUniqID returns the raw bytes of a client unique id.
func decodeUniqID(id string) ([]byte, error) {
	if len(id) != 32 && len(id) != 56 {
		return nil, fmt.Errorf("%w: unique id of %d characters", ErrInvalidMsgID, len(id))
	}
	raw := make([]byte, len(id)/2)
	if _, err := hex.Decode(raw, []byte(id)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMsgID, err)
	}
	return raw, nil
}

// IPFromUniqID returns the address in a client unique id: 4 bytes for a
// 32-character id, 16 for a 56-character id (Java getIPFromID).
func IPFromUniqID(id string) (netip.Addr, error) {
	raw, err := decodeUniqID(id)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(raw) == 28 {
		return netip.AddrFrom16([16]byte(raw[:16])), nil
	}
	return netip.AddrFrom4([4]byte(raw[:4])), nil
}

// IPStringFromUniqID renders the address of a unique id as Java's
// getIPStrFromID: dotted IPv4, or IPv6 as 8 groups of 4 zero-padded
// lowercase hex digits without "::" compression.
func IPStringFromUniqID(id string) (string, error) {
	ip, err := IPFromUniqID(id)
	if err != nil {
		return "", err
	}
	if ip.Is4() {
		return ip.String(), nil
	}
	a := ip.As16()
	b := make([]byte, 0, 39)
	for i := 0; i < 16; i++ {
		if i > 0 && i%2 == 0 {
			b = append(b, ':')
		}
		b = append(b, "0123456789abcdef"[a[i]>>4], "0123456789abcdef"[a[i]&0xF])
	}
	return string(b), nil
}

// PIDFromUniqID returns the low 16 bits of the producer's pid (Java
// getPidFromID: the 2 bytes 12 bytes before the end, unsigned).
func PIDFromUniqID(id string) (int, error) {
	raw, err := decodeUniqID(id)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(raw[len(raw)-12:])), nil
}

// TimeFromUniqID approximates when a unique id was made, as Java's
// getNearlyTimeFromID: the id's unsigned millisecond offset is added to the
// start of now's month (in now's location); if that is at or after now
// (>=, so an id decoded in the millisecond it was made counts as last
// month's), the previous month's start is used instead. Ids older than a
// month decode to the wrong month.
func TimeFromUniqID(id string, now time.Time) (time.Time, error) {
	raw, err := decodeUniqID(id)
	if err != nil {
		return time.Time{}, err
	}
	span := int64(binary.BigEndian.Uint32(raw[len(raw)-6:]))
	start := monthStart(now)
	if start.UnixMilli()+span >= now.UnixMilli() {
		start = start.AddDate(0, -1, 0)
	}
	return time.UnixMilli(start.UnixMilli() + span).In(now.Location()), nil
}

// monthStart returns midnight of the first day of t's month in t's location.
func monthStart(t time.Time) time.Time {
	y, m, _ := t.Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
}
