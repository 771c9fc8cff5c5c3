package rocketmq

import (
	"slices"
	"strings"
)

// The properties string (PROTOCOL.md §5.1) is "key 0x01 value" pairs joined
// by 0x02. It is written as 4.9.8 writes it (no final 0x02), which every
// version parses, and with the keys sorted so that the bytes are stable: Java
// writes HashMap order, which carries no meaning.

// sortedPairs returns the entries of props in key order and the length of
// their encoding. buf is scratch space so that small maps need no heap
// allocation; insertion sort is the fastest for the usual handful of keys.
func sortedPairs(props map[string]string, buf [][2]string) ([][2]string, int) {
	kv := buf[:0]
	n := -1 // no final separator
	for k, v := range props {
		n += len(k) + len(v) + 2
		kv = append(kv, [2]string{k, v})
		if len(kv) <= len(buf) {
			for i := len(kv) - 1; i > 0 && kv[i][0] < kv[i-1][0]; i-- {
				kv[i], kv[i-1] = kv[i-1], kv[i]
			}
		}
	}
	if len(kv) > len(buf) {
		slices.SortFunc(kv, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	}
	return kv, n
}

// PropertiesSize returns the length of the encoded form of props.
func PropertiesSize(props map[string]string) int {
	if len(props) == 0 {
		return 0
	}
	n := -1 // no final separator
	for k, v := range props {
		n += len(k) + len(v) + 2
	}
	return n
}

// AppendProperties appends the properties string of props to dst. Keys and
// values are written as they are; they must not contain 0x01 or 0x02 (see
// CheckProperty). An entry with an empty value is written, as Java does, and
// dropped again by every parser.
func AppendProperties(dst []byte, props map[string]string) []byte {
	if len(props) == 0 {
		return dst
	}
	var buf [16][2]string
	kv, n := sortedPairs(props, buf[:])
	dst = slices.Grow(dst, n)
	for i, e := range kv {
		if i > 0 {
			dst = append(dst, PropertySeparator)
		}
		dst = append(dst, e[0]...)
		dst = append(dst, NameValueSeparator)
		dst = append(dst, e[1]...)
	}
	return dst
}

// EncodeProperties returns the properties string of props ("" for none).
func EncodeProperties(props map[string]string) string {
	if len(props) == 0 {
		return ""
	}
	var buf [16][2]string
	kv, n := sortedPairs(props, buf[:])
	var b strings.Builder
	b.Grow(n)
	for i, e := range kv {
		if i > 0 {
			b.WriteByte(PropertySeparator)
		}
		b.WriteString(e[0])
		b.WriteByte(NameValueSeparator)
		b.WriteString(e[1])
	}
	return b.String()
}

// DecodeProperties parses a properties string the way Java's
// string2messageProperties does: split at 0x02, split each part at its
// first 0x01, keep pairs whose key and value are both non-empty, later
// duplicates win. A trailing 0x02 is accepted. Keys and values are
// substrings of s. The result is never nil.
func DecodeProperties(s string) map[string]string {
	m := make(map[string]string, countProperties(s))
	decodePropertiesInto(m, s)
	return m
}

// countProperties is an upper bound on the pairs in s, to size maps.
func countProperties(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, string(rune(PropertySeparator))) + 1
}

func decodePropertiesInto(m map[string]string, s string) {
	for len(s) > 0 {
		seg := s
		if i := strings.IndexByte(s, PropertySeparator); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if kv := strings.IndexByte(seg, NameValueSeparator); kv > 0 && kv < len(seg)-1 {
			m[seg[:kv]] = seg[kv+1:]
		}
	}
}

// CheckProperty reports whether name and value can be carried in a
// properties string: both non-empty and free of 0x01 and 0x02.
func CheckProperty(name, value string) error {
	if name == "" || value == "" {
		return ErrEmptyProperty
	}
	if hasSeparator(name) || hasSeparator(value) {
		return ErrPropertySeparator
	}
	return nil
}

// hasSeparator reports whether s holds 0x01 or 0x02 (a plain loop: much
// cheaper than strings.ContainsAny on every property of every message).
func hasSeparator(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= PropertySeparator && s[i] >= NameValueSeparator {
			return true
		}
	}
	return false
}
