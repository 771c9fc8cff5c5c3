package remoting

import (
	"math"
	"strconv"
	"unsafe"
)

// JSON header (serializeType 0, docs/PROTOCOL.md §1.3).
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

// appendJSONString writes s quoted, escaped as fastjson's default
// SerializeWriter does for a header. Bytes that are not valid UTF-8 are
// copied as they are.
func appendJSONString(dst []byte, s string) []byte { return fjAppendString(dst, s, jsonHeaderStyle) }

// maxJSONDepth bounds nesting inside skipped unknown members.
const maxJSONDepth = 64

// jsonReader decodes one header on the package's JSON scanner. Strings it
// keeps are substrings of o, one copy of the header made when the first
// string is kept, so a header costs at most one allocation for its
// strings, and none when it has only numbers and names (a plain response).
type jsonReader struct {
	jsonScan
	s string // data's bytes, same offsets; only valid during the decode
	o string // the copy kept strings point into; "" until needed
}

// own returns data[from:to] as a string that does not alias data.
func (r *jsonReader) own(from, to int) string {
	if r.o == "" {
		r.o = string(r.data)
	}
	return r.o[from:to]
}

// str reads a string, unescaping if needed, as a string of its own.
func (r *jsonReader) str() string {
	if from, to, ok := r.rawString(); ok {
		return r.own(from, to)
	}
	return r.unescaped()
}

// strView is str for a string that is only looked at (a name): without
// escapes it is a view of the input, valid only during the decode.
func (r *jsonReader) strView() string {
	if from, to, ok := r.rawString(); ok {
		return r.s[from:to]
	}
	return r.unescaped()
}

// unescaped reads a string with escapes, built in a stack buffer when it
// fits so that the only allocation is the final string.
func (r *jsonReader) unescaped() string {
	var stack [256]byte
	v, _ := r.quoted(stack[:0])
	return string(v)
}

// number returns the raw text of a JSON number at r.pos.
func (r *jsonReader) number() string {
	start := r.pos
	for r.pos < len(r.data) {
		if c := r.data[r.pos]; (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			r.pos++
			continue
		}
		break
	}
	if r.pos == start {
		r.fail("expected number")
	}
	return r.s[start:r.pos]
}

// int32Value reads an int field: a number, a quoted number (fastjson
// accepts both) or null (0).
func (r *jsonReader) int32Value() int32 {
	var text string
	switch r.peek() {
	case '"', '\'':
		text = r.strView()
	case 'n':
		if r.null() {
			return 0
		}
		r.fail("bad literal")
		return 0
	default:
		text = r.number()
	}
	if r.failed {
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
	case c == '"' || c == '\'':
		return r.str(), true
	case c == 'n':
		if r.null() {
			return "", false
		}
	case c == 't' || c == 'f':
		switch string(r.bare()) {
		case "true":
			return "true", true
		case "false":
			return "false", true
		}
	case c == '-' || (c >= '0' && c <= '9'):
		from := r.pos
		r.number()
		return r.own(from, r.pos), true
	}
	r.fail("expected string")
	return "", false
}

// extFields reads the extFields object (or null) in member order,
// appending to fs[:0] (the caller's stack buffer while it fits); present is
// false for null. Members with a null value are dropped, like keys whose
// value is absent.
func (r *jsonReader) extFields(fs []Field) (_ []Field, present bool) {
	fs = fs[:0]
	switch r.peek() {
	case 'n':
		if !r.null() {
			r.fail("bad literal")
		}
		return fs, false
	case '{':
	default:
		r.fail("extFields is not an object")
		return fs, false
	}
	r.pos++
	if r.peek() == '}' {
		r.pos++
		return fs, true
	}
	for !r.failed {
		k := r.str()
		r.expect(':')
		v, ok := r.scalar()
		if ok && !r.failed {
			fs = append(fs, Field{Key: k, Value: v})
		}
		if r.peek() == ',' {
			r.pos++
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
	r := jsonReader{
		jsonScan: jsonScan{data: h, maxDepth: maxJSONDepth, strict: true},
		s:        unsafe.String(unsafe.SliceData(h), len(h)),
	}
	var c Command
	var tmp [16]Field
	fields, hasExt := tmp[:0], false
	r.expect('{')
	if r.peek() == '}' {
		r.pos++
	} else {
		for !r.failed {
			key := r.strView()
			r.expect(':')
			if r.failed {
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
				r.skip()
			}
			if r.peek() == ',' {
				r.pos++
				continue
			}
			r.expect('}')
			break
		}
	}
	if !r.failed && r.peek() != 0 {
		r.fail("trailing data")
	}
	if r.failed {
		return nil, malformed("JSON header: " + r.msg + " at offset " + strconv.Itoa(r.at))
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
	case c == '"' || c == '\'':
		if l, ok := ParseLanguage(r.strView()); ok {
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
		if r.null() {
			return LanguageOther
		}
	}
	r.fail("bad language")
	return 0
}
