package message

import (
	"bytes"
	"errors"
	"slices"
	"strings"
)

// The properties string (docs/PROTOCOL.md §5.1) is "key 0x01 value" pairs
// joined by 0x02. It is written as 4.9.8 writes it (no final 0x02), which
// every version parses, and with the keys sorted so that the bytes are
// stable: Java writes HashMap order, which carries no meaning. It is read as
// Java's MessageDecoder.string2messageProperties reads it: pairs split at
// 0x02, key and value at the first 0x01, a pair with an empty key or value
// does not exist, the last duplicate wins.

// Separators of the properties string.
const (
	NameValueSeparator = '\x01'
	PropertySeparator  = '\x02'
)

// MaxPropertiesLength is the largest properties string a record can carry
// (its length is a signed 16-bit field).
const MaxPropertiesLength = 32767

// ErrPropertiesTooLong reports a properties string over MaxPropertiesLength.
var ErrPropertiesTooLong = errors.New("rocketmq: properties longer than 32767 bytes")

// Property is one name/value pair.
type Property struct{ Key, Value string }

// NextProperty cuts the first pair off s and returns it with the rest of s.
// ok is false for a segment that is no pair (empty key or value), which the
// caller skips. Key and value are sub-slices of s: nothing is allocated.
func NextProperty[T string | []byte](s T) (key, val, rest T, ok bool) {
	seg := s
	rest = s[len(s):]
	if i := indexByte(s, PropertySeparator); i >= 0 {
		seg, rest = s[:i], s[i+1:]
	}
	kv := indexByte(seg, NameValueSeparator)
	if kv <= 0 || kv == len(seg)-1 {
		return key, val, rest, false
	}
	return seg[:kv], seg[kv+1:], rest, true
}

// indexByte is strings.IndexByte or bytes.IndexByte (assembly, several
// times faster than a loop on these strings); the conversion to any does
// not allocate.
func indexByte[T string | []byte](s T, c byte) int {
	switch v := any(s).(type) {
	case string:
		return strings.IndexByte(v, c)
	case []byte:
		return bytes.IndexByte(v, c)
	}
	return -1
}

// PropertyIter iterates over the pairs of a properties string without
// allocating (a []byte iterated over is taken to escape: loop over
// NextProperty to keep a stack buffer on the stack):
//
//	for it := message.Properties(s); it.Next(); {
//		use(it.Key(), it.Value())
//	}
type PropertyIter[T string | []byte] struct {
	rest, key, val T
}

// Properties returns an iterator over the pairs of s, in wire order.
func Properties[T string | []byte](s T) PropertyIter[T] { return PropertyIter[T]{rest: s} }

// Next advances to the next pair; false when there is none.
func (it *PropertyIter[T]) Next() (ok bool) {
	for len(it.rest) > 0 {
		if it.key, it.val, it.rest, ok = NextProperty(it.rest); ok {
			return true
		}
	}
	return false
}

// Key returns the current pair's name, a view of the iterated string.
func (it *PropertyIter[T]) Key() T { return it.key }

// Value returns the current pair's value, a view of the iterated string.
func (it *PropertyIter[T]) Value() T { return it.val }

// PropertyValue returns the value of key in s (the last one when it is
// there twice, as Java keeps it) and whether it is present.
func PropertyValue[T string | []byte](s T, key string) (val T, ok bool) {
	for len(s) > 0 {
		k, v, rest, found := NextProperty(s)
		s = rest
		if found && string(k) == key {
			val, ok = v, true
		}
	}
	return val, ok
}

// sortedPairs returns the entries of props that skip does not reject and
// the extras props lacks, in key order, with the length of their encoding.
// buf is scratch space so that small maps need no heap allocation;
// insertion sort is the fastest for the usual handful of keys.
func sortedPairs(props map[string]string, skip func(string) bool, extra []Property, buf []Property) ([]Property, int) {
	kv := buf[:0]
	n := -1 // no final separator
	for k, v := range props {
		if skip == nil || !skip(k) {
			n += len(k) + len(v) + 2
			kv = insertPair(kv, len(buf), k, v)
		}
	}
	for _, e := range extra {
		if skip == nil && len(kv) < len(buf) {
			// Sorted so far: a key props holds is next to where e goes,
			// which saves the map lookup.
			i := len(kv)
			for i > 0 && kv[i-1].Key > e.Key {
				i--
			}
			if i > 0 && kv[i-1].Key == e.Key {
				continue
			}
			n += len(e.Key) + len(e.Value) + 2
			kv = slices.Insert(kv, i, e)
			continue
		}
		if _, ok := props[e.Key]; !ok {
			n += len(e.Key) + len(e.Value) + 2
			kv = insertPair(kv, len(buf), e.Key, e.Value)
		}
	}
	if len(kv) > len(buf) {
		slices.SortFunc(kv, func(a, b Property) int { return strings.Compare(a.Key, b.Key) })
	}
	return kv, max(n, 0)
}

// insertPair appends a pair and, while kv still fits in its scratch space
// of size n, moves it to its sorted place.
func insertPair(kv []Property, n int, k, v string) []Property {
	kv = append(kv, Property{k, v})
	if len(kv) <= n {
		for i := len(kv) - 1; i > 0 && kv[i].Key < kv[i-1].Key; i-- {
			kv[i], kv[i-1] = kv[i-1], kv[i]
		}
	}
	return kv
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

// AppendProperties appends the properties string of props to dst, keys in
// sorted order. Keys and values are written as they are; they must not
// contain 0x01 or 0x02 (see rocketmq.CheckProperty). An entry with an
// empty value is written, as Java does, and dropped again by every parser.
func AppendProperties(dst []byte, props map[string]string) []byte {
	if len(props) == 0 {
		return dst
	}
	return AppendSortedProperties(dst, props, nil)
}

// AppendSortedProperties appends, in key order, the pairs of props whose
// key skip (if not nil) does not reject and the pairs of extra whose key
// props does not hold. Nothing is allocated for up to 16 pairs.
func AppendSortedProperties(dst []byte, props map[string]string, skip func(string) bool, extra ...Property) []byte {
	var buf [16]Property
	dst, _ = AppendPropertyList(dst, SortProperties(props, skip, extra, buf[:]), "")
	return dst
}

// SortProperties returns, in key order, the pairs AppendSortedProperties
// writes. buf is scratch space: the result is buf[:n] when it fits, so a
// caller's stack array saves the allocation.
func SortProperties(props map[string]string, skip func(string) bool, extra []Property, buf []Property) []Property {
	kv, _ := sortedPairs(props, skip, extra, buf)
	return kv
}

// AppendPropertyList appends the pairs of kv, in their order, as a
// properties string. It also returns the offset in dst of the value of the
// pair whose key is mark (-1 when there is none), so that a caller can
// write a value into a placeholder afterwards.
func AppendPropertyList(dst []byte, kv []Property, mark string) ([]byte, int) {
	n := -1
	for _, e := range kv {
		n += len(e.Key) + len(e.Value) + 2
	}
	dst = slices.Grow(dst, max(n, 0))
	at := -1
	for i, e := range kv {
		if i > 0 {
			dst = append(dst, PropertySeparator)
		}
		dst = append(dst, e.Key...)
		dst = append(dst, NameValueSeparator)
		if mark != "" && e.Key == mark {
			at = len(dst)
		}
		dst = append(dst, e.Value...)
	}
	return dst, at
}

// AppendProperty appends one pair to the properties string dst[start:],
// with a separator unless it is the first pair since start.
func AppendProperty(dst []byte, start int, key, val string) []byte {
	if len(dst) > start {
		dst = append(dst, PropertySeparator)
	}
	dst = append(dst, key...)
	dst = append(dst, NameValueSeparator)
	return append(dst, val...)
}

// EncodeProperties returns the properties string of props ("" for none),
// keys in sorted order.
func EncodeProperties(props map[string]string) string {
	if len(props) == 0 {
		return ""
	}
	var buf [16]Property
	kv, n := sortedPairs(props, nil, nil, buf[:])
	var b strings.Builder
	b.Grow(n)
	for i, e := range kv {
		if i > 0 {
			b.WriteByte(PropertySeparator)
		}
		b.WriteString(e.Key)
		b.WriteByte(NameValueSeparator)
		b.WriteString(e.Value)
	}
	return b.String()
}

// DecodeProperties parses a properties string into a map. A trailing 0x02
// is accepted. Keys and values are substrings of s. The result is never
// nil.
func DecodeProperties(s string) map[string]string {
	m := make(map[string]string, countProperties(s))
	DecodePropertiesInto(m, s)
	return m
}

// DecodePropertiesInto adds the pairs of s to m.
func DecodePropertiesInto(m map[string]string, s string) {
	decodePropertiesInto(m, s, "")
}

// decodePropertiesInto adds the pairs of s to m and returns the value of
// the last pair whose key is want ("" when none), which saves a map lookup
// afterwards. It is the string case of NextProperty written out: the
// generic version's type switch costs more than the scanning itself.
func decodePropertiesInto(m map[string]string, s, want string) (found string) {
	for len(s) > 0 {
		seg := s
		s = ""
		if i := strings.IndexByte(seg, PropertySeparator); i >= 0 {
			seg, s = seg[:i], seg[i+1:]
		}
		kv := strings.IndexByte(seg, NameValueSeparator)
		if kv <= 0 || kv == len(seg)-1 {
			continue
		}
		k, v := seg[:kv], seg[kv+1:]
		m[k] = v
		if want != "" && k == want {
			found = v
		}
	}
	return found
}

// countProperties is an upper bound on the pairs in s, to size maps.
func countProperties(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, string(rune(PropertySeparator))) + 1
}
