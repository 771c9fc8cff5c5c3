package remoting

import (
	"encoding/binary"
	"math"
	"strconv"
)

// ROCKETMQ binary header (serializeType 1, docs/PROTOCOL.md §1.4):
//
//	code int16 | language int8 | version int16 | opaque int32 | flag int32 |
//	remarkLen int32 | remark | extLen int32 | { keyLen int16 | key | valLen int32 | val }*
//
// Code and Version are written as (short) like Java does, so a code above
// 32767 (the 5.x POP codes) is truncated; such commands must use JSON.

const binaryFixedSize = 21

// binaryHeaderSize is the exact encoded size (lengths not validated).
func binaryHeaderSize(c *Command) int {
	n := binaryFixedSize + len(c.Remark)
	for _, f := range c.Ext {
		n += 6 + len(f.Key) + len(f.Value)
	}
	return n
}

func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	if len(c.Remark) > math.MaxInt32 {
		return dst, encodeErr("remark too long")
	}
	extLen := 0
	for _, f := range c.Ext {
		if len(f.Key) > math.MaxInt16 {
			return dst, encodeErr("extFields key of " + strconv.Itoa(len(f.Key)) + " bytes exceeds 32767")
		}
		extLen += 6 + len(f.Key) + len(f.Value)
		if extLen > math.MaxInt32 {
			return dst, encodeErr("extFields too long")
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(extLen))
	for _, f := range c.Ext {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(f.Key)))
		dst = append(dst, f.Key...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f.Value)))
		dst = append(dst, f.Value...)
	}
	return dst, nil
}

// decodeBinaryHeader fills c from a binary header. Every length is checked
// against what is left before use. Like Java, a zero-length remark, key or
// value is "null": the remark stays empty and such map entries are dropped.
// Repeated keys are kept in wire order (ExtFields.Get returns the last one,
// as Java's HashMap does). Bytes after the map are ignored, as in Java.
func decodeBinaryHeader(h []byte, c *Command) error {
	d, err := decodeBinary(h)
	if err == nil {
		*c = *d
	}
	return err
}

func decodeBinary(h []byte) (*Command, error) {
	if len(h) < binaryFixedSize {
		return nil, malformed("binary header shorter than 21 bytes")
	}
	var c Command
	c.Code = int32(int16(binary.BigEndian.Uint16(h)))
	c.Language = LanguageCode(h[2])
	c.Version = int32(int16(binary.BigEndian.Uint16(h[3:])))
	c.Opaque = int32(binary.BigEndian.Uint32(h[5:]))
	c.Flag = int32(binary.BigEndian.Uint32(h[9:]))
	rl := int64(int32(binary.BigEndian.Uint32(h[13:])))
	rest := h[17:]
	if rl < 0 || rl > int64(len(rest)) {
		return nil, malformed("remark length " + strconv.FormatInt(rl, 10) + " out of bounds")
	}
	remark := rest[:rl]
	rest = rest[rl:]
	if len(rest) < 4 {
		return nil, malformed("binary header truncated before extFields length")
	}
	el := int64(int32(binary.BigEndian.Uint32(rest)))
	rest = rest[4:]
	if el < 0 || el > int64(len(rest)) {
		return nil, malformed("extFields length " + strconv.FormatInt(el, 10) + " out of bounds")
	}
	m := rest[:el]

	// Count and validate the entries first so the slice is allocated once
	// and the strings can all be cut from one copy of the header.
	n := 0
	for p := m; len(p) > 0; {
		if len(p) < 2 {
			return nil, malformed("extFields entry truncated")
		}
		kl := int(int16(binary.BigEndian.Uint16(p)))
		if kl < 0 || kl+6 > len(p) {
			return nil, malformed("extFields key length " + strconv.Itoa(kl) + " out of bounds")
		}
		vl := int64(int32(binary.BigEndian.Uint32(p[2+kl:])))
		if vl < 0 || vl > int64(len(p)-6-kl) {
			return nil, malformed("extFields value length " + strconv.FormatInt(vl, 10) + " out of bounds")
		}
		if kl > 0 && vl > 0 {
			n++
		}
		p = p[6+kl+int(vl):]
	}

	// One allocation for the command and its fields, one string for the
	// remark and the map; the field strings are substrings of it.
	out := newCommand(n)
	c.Ext = out.Ext
	var s string
	if len(remark) > 0 || n > 0 {
		s = string(h[17 : 21+rl+el])
	}
	if rl > 0 {
		c.Remark = s[:rl]
	}
	// A map whose entries were all dropped decodes as no map, which is
	// also what encoding it again would give.
	if n > 0 {
		// Offsets into s are offsets into m shifted by base.
		base := int(rl) + 4
		for p := 0; p < len(m); {
			kl := int(binary.BigEndian.Uint16(m[p:]))
			ks := base + p + 2
			vl := int(binary.BigEndian.Uint32(m[p+2+kl:]))
			vs := ks + kl + 4
			if kl > 0 && vl > 0 {
				c.Ext = append(c.Ext, Field{Key: s[ks : ks+kl], Value: s[vs : vs+vl]})
			}
			p += 6 + kl + vl
		}
	}
	*out = c
	return out, nil
}
