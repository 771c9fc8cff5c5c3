package remoting

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// JSON header (serializeType 0, PROTOCOL.md §1.3).
//
// The writer produces what fastjson 1.2.69 (RocketMQ 4.9.8) writes for a
// RemotingCommand: top-level keys in alphabetical order, no whitespace,
// language by name, "serializeTypeCurrentRPC":"JSON", extFields members in
// the order of the slice, and strings escaped like fastjson's default
// SerializeWriter. Differences that cannot be avoided: an empty Remark is
// left out (Java writes "remark":"" for an empty but non-null remark), and an
// unknown LanguageCode is written as its number (fastjson reads an enum
// ordinal; the known codes equal their ordinals).

var languageNames = [...]string{
	LanguageJava:   "JAVA",
	LanguageCPP:    "CPP",
	LanguageDotNet: "DOTNET",
	LanguagePython: "PYTHON",
	LanguageDelphi: "DELPHI",
	LanguageErlang: "ERLANG",
	LanguageRuby:   "RUBY",
	LanguageOther:  "OTHER",
	LanguageHTTP:   "HTTP",
	LanguageGo:     "GO",
	LanguagePHP:    "PHP",
	LanguageOMS:    "OMS",
	LanguageRust:   "RUST",
	LanguageNodeJS: "NODE_JS",
}

// String returns the Java enum name, or the number for an unknown code.
func (l LanguageCode) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return strconv.Itoa(int(l))
}

// ParseLanguage maps a Java LanguageCode name to its code.
func ParseLanguage(name string) (LanguageCode, bool) {
	for i, n := range languageNames {
		if n == name {
			return LanguageCode(i), true
		}
	}
	return 0, false
}

// String returns "JSON", "ROCKETMQ", or the number of an unknown type.
func (t SerializeType) String() string {
	switch t {
	case SerializeJSON:
		return "JSON"
	case SerializeRocketMQ:
		return "ROCKETMQ"
	}
	return strconv.Itoa(int(t))
}

func jsonHeaderEstimate(c *Command) int {
	n := 110 + len(c.Remark)
	for _, f := range c.Ext {
		n += 6 + len(f.Key) + len(f.Value)
	}
	return n + n/8
}

func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if c.Ext != nil {
		dst = append(dst, `,"extFields":{`...)
		for i, f := range c.Ext {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, f.Key)
			dst = append(dst, ':')
			dst = appendJSONString(dst, f.Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"language":`...)
	if int(c.Language) < len(languageNames) {
		dst = append(dst, '"')
		dst = append(dst, languageNames[c.Language]...)
		dst = append(dst, '"')
	} else {
		dst = strconv.AppendInt(dst, int64(c.Language), 10)
	}
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

// jsonSpecial marks bytes that may need escaping: control characters, '"',
// '\\', DEL, and the lead bytes of U+0080..U+009F (0xC2) and U+2028/2029
// (0xE2), which fastjson also writes as \uXXXX.
var jsonSpecial = [256]bool{
	0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true,
	8: true, 9: true, 10: true, 11: true, 12: true, 13: true, 14: true, 15: true,
	16: true, 17: true, 18: true, 19: true, 20: true, 21: true, 22: true, 23: true,
	24: true, 25: true, 26: true, 27: true, 28: true, 29: true, 30: true, 31: true,
	'"': true, '\\': true, 0x7f: true, 0xc2: true, 0xe2: true,
}

// appendJSONString writes s quoted, escaped as fastjson's default writer
// does. Bytes that are not valid UTF-8 are copied as they are.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if !jsonSpecial[b] {
			i++
			continue
		}
		switch {
		case b == 0xc2:
			// U+0080..U+009F are C2 80..C2 9F.
			if i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
				dst = append(dst, s[start:i]...)
				dst = fjAppendU(dst, rune(s[i+1]))
				i += 2
				start = i
				continue
			}
			i++
			continue
		case b == 0xe2:
			// U+2028 / U+2029 are E2 80 A8 / E2 80 A9.
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				dst = append(dst, s[start:i]...)
				dst = fjAppendU(dst, 0x2028+rune(s[i+2]-0xa8))
				i += 3
				start = i
				continue
			}
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch b {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default: // other controls and DEL
			dst = fjAppendU(dst, rune(b))
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// maxJSONDepth bounds nesting inside skipped unknown members.
const maxJSONDepth = 64

// jsonReader is a sticky-error scanner over one header. It scans s, which
// may be a view of b (decodeJSON); strings it returns are substrings of o,
// one copy of the header made when the first string is kept, so a header
// costs at most one allocation for its strings, and none when it has only
// numbers and names (a plain response).
type jsonReader struct {
	b   []byte // the header, read-only
	s   string // b's bytes, same offsets; only valid during the decode
	o   string // the copy kept strings point into; "" until needed
	i   int
	err error
}

// own returns s[from:to] as a string that does not alias b.
func (r *jsonReader) own(from, to int) string {
	if r.o == "" {
		r.o = string(r.b)
	}
	return r.o[from:to]
}

func (r *jsonReader) fail(msg string) {
	if r.err == nil {
		r.err = malformed("JSON header: " + msg + " at offset " + strconv.Itoa(r.i))
	}
}

func (r *jsonReader) ws() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (r *jsonReader) peek() byte {
	if r.i < len(r.s) && r.s[r.i] > ' ' { // fast path: compact JSON
		return r.s[r.i]
	}
	r.ws()
	if r.err != nil || r.i >= len(r.s) {
		return 0
	}
	return r.s[r.i]
}

func (r *jsonReader) expect(b byte) {
	if r.peek() != b {
		r.fail("expected " + strconv.QuoteRune(rune(b)))
		return
	}
	r.i++
}

// literal consumes true, false or null.
func (r *jsonReader) literal(word string) bool {
	if len(r.s)-r.i >= len(word) && r.s[r.i:r.i+len(word)] == word {
		r.i += len(word)
		return true
	}
	return false
}

// str reads a string at r.i (the opening quote), unescaping if needed.
func (r *jsonReader) str() string {
	v, from, view := r.scanStr()
	if view {
		return r.own(from, from+len(v))
	}
	return v
}

// strView is str for a string that is only looked at (a name): without
// escapes it is a view of the input, valid only during the decode.
func (r *jsonReader) strView() string {
	v, _, _ := r.scanStr()
	return v
}

// scanStr reads a string; view says v is s[from:from+len(v)].
func (r *jsonReader) scanStr() (v string, from int, view bool) {
	if r.peek() != '"' {
		r.fail("expected string")
		return "", 0, false
	}
	r.i++
	start := r.i
	i := indexQuoteOrBackslash(r.b, start)
	if i < 0 {
		r.fail("unterminated string")
		return "", 0, false
	}
	if r.b[i] == '\\' {
		r.i = i
		return r.strSlow(start), 0, false
	}
	// Raw control characters are tolerated, as fastjson does.
	r.i = i + 1
	return r.s[start:i], start, true
}

// indexQuoteOrBackslash returns the index of the first '"' or '\\' in b at
// or after from, or -1. It tests eight bytes per step (the classic
// has-zero-byte trick; the lowest flagged byte is always a true match).
func indexQuoteOrBackslash(b []byte, from int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := from
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lo * '"')
		s := x ^ (lo * '\\')
		if m := ((q-lo)&^q | (s-lo)&^s) & hi; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return -1
}

// strSlow unescapes a string whose first backslash is at r.i, building it
// in a stack buffer when it fits so that the only allocation is the final
// string of the exact length.
func (r *jsonReader) strSlow(start int) string {
	var stack [256]byte
	buf := append(stack[:0], r.s[start:r.i]...)
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch c {
		case '"':
			r.i++
			return string(buf)
		case '\\':
			if r.i+1 >= len(r.s) {
				r.fail("truncated escape")
				return ""
			}
			e := r.s[r.i+1]
			r.i += 2
			switch e {
			case '"', '\\', '/', '\'':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'x': // fastjson accepts \xHH
				v, ok := r.hex(2)
				if !ok {
					return ""
				}
				buf = utf8.AppendRune(buf, v)
			case 'u':
				v, ok := r.hex(4)
				if !ok {
					return ""
				}
				if v < 0x80 {
					buf = append(buf, byte(v))
					continue
				}
				if utf16.IsSurrogate(v) {
					// Pair it with a following \uDC00..\uDFFF if there is one.
					if v < 0xdc00 && r.i+1 < len(r.s) && r.s[r.i] == '\\' && r.s[r.i+1] == 'u' {
						save := r.i
						r.i += 2
						lo, ok := r.hex(4)
						if !ok {
							return ""
						}
						if p := utf16.DecodeRune(v, lo); p != utf8.RuneError {
							buf = utf8.AppendRune(buf, p)
							continue
						}
						r.i = save
					}
					v = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, v)
			default:
				r.fail("bad escape")
				return ""
			}
		default:
			// Copy the run up to the next quote or backslash at once.
			j := indexQuoteOrBackslash(r.b, r.i+1)
			if j < 0 {
				j = len(r.s)
			}
			buf = append(buf, r.s[r.i:j]...)
			r.i = j
		}
	}
	r.fail("unterminated string")
	return ""
}

func (r *jsonReader) hex(n int) (rune, bool) {
	if len(r.s)-r.i < n {
		r.fail("truncated escape")
		return 0, false
	}
	v, ok := hexValue(r.s[r.i : r.i+n])
	if !ok {
		r.fail("bad hex escape")
		return 0, false
	}
	r.i += n
	return rune(v), true
}

// number returns the raw text of a JSON number at r.i.
func (r *jsonReader) number() string {
	start := r.i
	if r.i < len(r.s) && r.s[r.i] == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.s) {
		c := r.s[r.i]
		if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			r.i++
			continue
		}
		break
	}
	if r.i == digits {
		r.fail("expected number")
	}
	return r.s[start:r.i]
}

// int32Value reads an int field: a number, a quoted number (fastjson
// accepts both) or null (0).
func (r *jsonReader) int32Value() int32 {
	var text string
	switch r.peek() {
	case '"':
		text = r.strView()
	case 'n':
		if r.literal("null") {
			return 0
		}
		r.fail("bad literal")
		return 0
	default:
		text = r.number()
	}
	if r.err != nil {
		return 0
	}
	v, ok := parseInt32(text)
	if !ok {
		r.fail("bad int " + strconv.Quote(text))
	}
	return v
}

// parseInt32 parses an optionally signed decimal integer in int32 range.
func parseInt32(s string) (int32, bool) {
	neg := false
	if s != "" && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	if s == "" || len(s) > 10 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// scalar reads a string, number or boolean as text; null reports ok=false.
func (r *jsonReader) scalar() (string, bool) {
	switch c := r.peek(); {
	case c == '"':
		return r.str(), true
	case c == 'n':
		if r.literal("null") {
			return "", false
		}
	case c == 't':
		if r.literal("true") {
			return "true", true
		}
	case c == 'f':
		if r.literal("false") {
			return "false", true
		}
	case c == '-' || (c >= '0' && c <= '9'):
		from := r.i
		r.number()
		return r.own(from, r.i), true
	}
	r.fail("expected string")
	return "", false
}

// skip consumes any value.
func (r *jsonReader) skip(depth int) {
	if depth > maxJSONDepth {
		r.fail("nesting too deep")
		return
	}
	switch r.peek() {
	case '{':
		r.i++
		if r.peek() == '}' {
			r.i++
			return
		}
		for r.err == nil {
			r.strView()
			r.expect(':')
			r.skip(depth + 1)
			if r.peek() == ',' {
				r.i++
				continue
			}
			r.expect('}')
			return
		}
	case '[':
		r.i++
		if r.peek() == ']' {
			r.i++
			return
		}
		for r.err == nil {
			r.skip(depth + 1)
			if r.peek() == ',' {
				r.i++
				continue
			}
			r.expect(']')
			return
		}
	case '"':
		r.strView()
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		r.number()
	default:
		r.scalar() // a literal, or an error
	}
}

// extFields reads the extFields object (or null) in member order,
// appending to fs[:0] (the caller's stack buffer while it fits); present is
// false for null. Members with a null value are dropped, like keys whose
// value is absent.
func (r *jsonReader) extFields(fs []Field) (_ []Field, present bool) {
	fs = fs[:0]
	switch r.peek() {
	case 'n':
		if !r.literal("null") {
			r.fail("bad literal")
		}
		return fs, false
	case '{':
	default:
		r.fail("extFields is not an object")
		return fs, false
	}
	r.i++
	if r.peek() == '}' {
		r.i++
		return fs, true
	}
	for r.err == nil {
		k := r.str()
		r.expect(':')
		v, ok := r.scalar()
		if ok && r.err == nil {
			fs = append(fs, Field{Key: k, Value: v})
		}
		if r.peek() == ',' {
			r.i++
			continue
		}
		r.expect('}')
		break
	}
	return fs, true
}

// decodeJSON decodes a JSON header into a new Command. Keys may come in any
// order; unknown keys are skipped; missing keys keep zero values; a
// language name Java does not know becomes LanguageOther.
func decodeJSON(h []byte) (*Command, error) {
	r := jsonReader{b: h, s: unsafe.String(unsafe.SliceData(h), len(h))}
	var c Command
	var tmp [16]Field
	fields, hasExt := tmp[:0], false
	r.expect('{')
	if r.peek() == '}' {
		r.i++
	} else {
		for r.err == nil {
			key := r.strView()
			r.expect(':')
			if r.err != nil {
				break
			}
			switch key {
			case "code":
				c.Code = r.int32Value()
			case "flag":
				c.Flag = r.int32Value()
			case "opaque":
				c.Opaque = r.int32Value()
			case "version":
				c.Version = r.int32Value()
			case "language":
				c.Language = r.language()
			case "remark":
				c.Remark, _ = r.scalar()
			case "extFields":
				fields, hasExt = r.extFields(fields)
			default:
				r.skip(0)
			}
			if r.peek() == ',' {
				r.i++
				continue
			}
			r.expect('}')
			break
		}
	}
	if r.err == nil && r.peek() != 0 {
		r.fail("trailing data")
	}
	if r.err != nil {
		return nil, r.err
	}
	out := newCommand(len(fields))
	ext := out.Ext
	*out = c
	if hasExt {
		out.Ext = append(ext, fields...)
		if out.Ext == nil {
			out.Ext = ExtFields{}
		}
	}
	return out, nil
}

// decodeJSONHeader fills c from a JSON header (see decodeJSON).
func decodeJSONHeader(h []byte, c *Command) error {
	d, err := decodeJSON(h)
	if err == nil {
		*c = *d
	}
	return err
}

func (r *jsonReader) language() LanguageCode {
	switch c := r.peek(); {
	case c == '"':
		name := r.strView()
		if l, ok := ParseLanguage(name); ok {
			return l
		}
		return LanguageOther
	case c == '-' || (c >= '0' && c <= '9'):
		v, err := strconv.ParseUint(r.number(), 10, 8)
		if err != nil {
			r.fail("bad language")
		}
		return LanguageCode(v)
	case c == 'n':
		if r.literal("null") {
			return LanguageOther
		}
	}
	r.fail("bad language")
	return 0
}
