package remoting

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-rocketmq/rocketmq"
)

// JSONStyle selects how a body is written. Both styles write object fields
// in alphabetical order (fastjson sorts bean properties), omit null
// fields, sort map entries (string keys bytewise, integer keys
// numerically) and write MessageQueue map keys as object literals, the only
// form Java reads for Map<MessageQueue,…> (docs/PROTOCOL.md §4.1).
type JSONStyle uint8

const (
	// JSONFastjson is what Java writes by default and what every Java and Go
	// client reads: integer map keys are bare ({0:"10.0.0.1:10911"}),
	// non-ASCII text is raw UTF-8. A broker imitating Java uses it for every
	// body except the route it serves to new clients.
	JSONFastjson JSONStyle = iota
	// JSONStandard is strict JSON in the form of fastjson's BrowserCompatible
	// feature set, which a 4.9.4+ NameServer uses for routes requested with
	// version >= 401 or acceptStandardJsonOnly: integer map keys quoted,
	// '/' and every character >= 0x7F escaped (\uXXXX, upper-case hex),
	// longs beyond ±(2^53-1) written as strings. Use it for config files.
	JSONStandard
)

// JSONBody is implemented by every JSON body type of this package.
type JSONBody interface {
	// AppendJSON appends the body in the given style.
	AppendJSON(dst []byte, style JSONStyle) []byte
	// DecodeJSON replaces the receiver's contents with data, which may be
	// fastjson's non-standard form or standard JSON.
	DecodeJSON(data []byte) error
}

// EncodeJSON returns b encoded in style.
func EncodeJSON(b JSONBody, style JSONStyle) []byte { return b.AppendJSON(nil, style) }

// fjWriter appends JSON. comma records whether the next key or element
// needs a separator; every value sets it, every open clears it.
type fjWriter struct {
	b     []byte
	style JSONStyle
	comma bool
}

// fjAppendOneField appends the object {key: value}, the value written by
// val. It is the AppendJSON of every one-field body.
func fjAppendOneField(dst []byte, style JSONStyle, key string, val func(w *fjWriter)) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key(key)
	val(&w)
	w.close()
	return w.b
}

func (w *fjWriter) open()     { w.b = append(w.b, '{'); w.comma = false }
func (w *fjWriter) close()    { w.b = append(w.b, '}'); w.comma = true }
func (w *fjWriter) openArr()  { w.b = append(w.b, '['); w.comma = false }
func (w *fjWriter) closeArr() { w.b = append(w.b, ']'); w.comma = true }

func (w *fjWriter) sep() {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = false
}

// key writes a field name, which must be plain ASCII.
func (w *fjWriter) key(k string) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// elem starts an array element.
func (w *fjWriter) elem() { w.sep() }

func (w *fjWriter) mapKeyStr(k string) {
	w.sep()
	w.b = fjAppendString(w.b, k, w.style)
	w.b = append(w.b, ':')
}

func (w *fjWriter) mapKeyInt(k int64) {
	w.sep()
	if w.style == JSONStandard {
		w.b = append(w.b, '"')
		w.b = strconv.AppendInt(w.b, k, 10)
		w.b = append(w.b, '"')
	} else {
		w.b = strconv.AppendInt(w.b, k, 10)
	}
	w.b = append(w.b, ':')
}

func (w *fjWriter) mapKeyMQ(mq rocketmq.MessageQueue) {
	w.sep()
	w.mq(mq)
	w.b = append(w.b, ':')
	w.comma = false
}

func (w *fjWriter) str(s string) { w.b = fjAppendString(w.b, s, w.style); w.comma = true }

func (w *fjWriter) i64(v int64) {
	if w.style == JSONStandard && (v > 1<<53-1 || v < -(1<<53-1)) {
		w.b = append(w.b, '"')
		w.b = strconv.AppendInt(w.b, v, 10)
		w.b = append(w.b, '"')
	} else {
		w.b = strconv.AppendInt(w.b, v, 10)
	}
	w.comma = true
}

func (w *fjWriter) i32(v int32) { w.b = strconv.AppendInt(w.b, int64(v), 10); w.comma = true }

func (w *fjWriter) boolean(v bool) { w.b = strconv.AppendBool(w.b, v); w.comma = true }

func (w *fjWriter) f64(v float64) { w.b = fjAppendDouble(w.b, v); w.comma = true }

// raw writes pre-encoded JSON as is.
func (w *fjWriter) raw(v []byte) { w.b = append(w.b, v...); w.comma = true }

// Field helpers: key plus value.
func (w *fjWriter) fStr(k, v string)         { w.key(k); w.str(v) }
func (w *fjWriter) fI64(k string, v int64)   { w.key(k); w.i64(v) }
func (w *fjWriter) fI32(k string, v int32)   { w.key(k); w.i32(v) }
func (w *fjWriter) fBool(k string, v bool)   { w.key(k); w.boolean(v) }
func (w *fjWriter) fF64(k string, v float64) { w.key(k); w.f64(v) }

// fOptStr writes a field only when v is not empty (a Java null).
func (w *fjWriter) fOptStr(k, v string) {
	if v != "" {
		w.fStr(k, v)
	}
}

// fRaw writes a pre-encoded field only when v is present.
func (w *fjWriter) fRaw(k string, v []byte) {
	if len(v) != 0 {
		w.key(k)
		w.raw(v)
	}
}

func (w *fjWriter) strList(v []string) {
	w.openArr()
	for _, s := range v {
		w.elem()
		w.str(s)
	}
	w.closeArr()
}

func (w *fjWriter) strMap(m map[string]string) {
	w.open()
	for _, k := range fjSortedKeys(m) {
		w.mapKeyStr(k)
		w.str(m[k])
	}
	w.close()
}

// mq writes a MessageQueue the way fastjson does: fields alphabetical.
func (w *fjWriter) mq(mq rocketmq.MessageQueue) {
	w.open()
	w.fStr("brokerName", mq.BrokerName)
	w.fI64("queueId", int64(mq.QueueID))
	w.fStr("topic", mq.Topic)
	w.close()
}

func (w *fjWriter) mqList(v []rocketmq.MessageQueue) {
	w.openArr()
	for _, q := range v {
		w.elem()
		w.mq(q)
	}
	w.closeArr()
}

func fjSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func fjSortedIntKeys[K int32 | int64, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fjSortedMQs orders queues like Java's MessageQueue.compareTo.
func fjSortedMQs[V any](m map[rocketmq.MessageQueue]V) []rocketmq.MessageQueue {
	keys := make([]rocketmq.MessageQueue, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, fjCompareMQ)
	return keys
}

func fjCompareMQ(a, b rocketmq.MessageQueue) int {
	switch {
	case a.Topic != b.Topic:
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	case a.BrokerName != b.BrokerName:
		if a.BrokerName < b.BrokerName {
			return -1
		}
		return 1
	}
	return a.QueueID - b.QueueID
}

const fjHex = "0123456789ABCDEF"

// hexDigit maps a hex digit to its value and anything else to 0xff.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range 16 {
		t[fjHex[i]] = byte(i)
		t[strings.ToLower(fjHex)[i]] = byte(i)
	}
	return t
}()

// hexValue parses the hex digits of a \x or \u escape, for both JSON
// readers.
func hexValue[T string | []byte](s T) (uint32, bool) {
	var v uint32
	for i := 0; i < len(s); i++ {
		d := hexDigit[s[i]]
		if d > 15 {
			return 0, false
		}
		v = v<<4 | uint32(d)
	}
	return v, true
}

// jsonHeaderStyle is the string escaping of a frame header: fastjson's
// SerializeWriter, which also writes DEL, U+0080..U+009F and U+2028/2029 as
// \uXXXX.
const jsonHeaderStyle JSONStyle = JSONStandard + 1

// jsonEscapes marks, per style, the bytes that may need escaping: control
// characters, '"' and '\\' in every style; JSONStandard adds '/' and every
// byte from 0x7F; the header style adds DEL and the lead bytes of
// U+0080..U+009F (0xC2) and U+2028/2029 (0xE2).
var jsonEscapes = func() (t [3][256]bool) {
	for st := range t {
		for c := range 0x20 {
			t[st][c] = true
		}
		t[st]['"'], t[st]['\\'] = true, true
	}
	t[JSONStandard]['/'] = true
	for c := 0x7f; c < 256; c++ {
		t[JSONStandard][c] = true
	}
	t[jsonHeaderStyle][0x7f], t[jsonHeaderStyle][0xc2], t[jsonHeaderStyle][0xe2] = true, true, true
	return t
}()

// fjAppendString writes s as a JSON string escaped for style: quote,
// backslash and control characters always (\b \f \n \r \t by letter,
// others as \u00XX); JSONStandard also escapes '/' and everything from
// 0x7F as UTF-16 \uXXXX units, like fastjson's BrowserCompatible.
func fjAppendString(dst []byte, s string, style JSONStyle) []byte {
	esc := &jsonEscapes[style]
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if !esc[c] {
			i++
			continue
		}
		if c >= 0x7f {
			n, r := 1, rune(c)
			switch {
			case style == JSONStandard:
				r, n = utf8.DecodeRuneInString(s[i:])
			case c == 0xc2: // U+0080..U+009F are C2 80..C2 9F
				if i+1 >= len(s) || s[i+1] < 0x80 || s[i+1] > 0x9f {
					i++
					continue
				}
				n, r = 2, rune(s[i+1])
			case c == 0xe2: // U+2028 / U+2029 are E2 80 A8 / E2 80 A9
				if i+2 >= len(s) || s[i+1] != 0x80 || (s[i+2] != 0xa8 && s[i+2] != 0xa9) {
					i++
					continue
				}
				n, r = 3, 0x2028+rune(s[i+2]-0xa8)
			}
			dst = append(dst, s[start:i]...)
			if r >= 0x10000 {
				r1, r2 := fjSurrogates(r)
				dst = fjAppendU(dst, r1)
				dst = fjAppendU(dst, r2)
			} else {
				dst = fjAppendU(dst, r)
			}
			i += n
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\', '/':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = fjAppendU(dst, rune(c))
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func fjSurrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// fjAppendU writes r as a \uXXXX escape (upper-case hex, as fastjson).
func fjAppendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', fjHex[r>>12&15], fjHex[r>>8&15], fjHex[r>>4&15], fjHex[r&15])
}

// fjAppendDouble writes v as Java's Double.toString does (0.0, 0.8,
// 1.0E10), which is how fastjson writes doubles. NaN and infinities have no
// JSON form; fastjson writes null for them.
func fjAppendDouble(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(v)
	if abs == 0 || (abs >= 1e-3 && abs < 1e7) {
		start := len(dst)
		dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
		if !slices.Contains(dst[start:], '.') {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], v, 'e', -1, 64) // d[.ddd]e±XX
	i := slices.Index(e, 'e')
	dst = append(dst, e[:i]...)
	if !slices.Contains(e[:i], '.') {
		dst = append(dst, '.', '0')
	}
	dst = append(dst, 'E')
	exp := e[i+1:]
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// fjWriteArr writes an array of n elements, element i by elem.
func fjWriteArr(w *fjWriter, n int, elem func(i int)) {
	w.openArr()
	for i := range n {
		w.elem()
		elem(i)
	}
	w.closeArr()
}
