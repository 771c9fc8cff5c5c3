package remoting

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrMalformedBody is matched (errors.Is) by every body decoding error.
var ErrMalformedBody = errors.New("rocketmq: malformed body")

// fjMaxDepth bounds nesting so hostile input cannot exhaust the stack.
const fjMaxDepth = 256

// fjReader is a lenient reader for the JSON that Java's fastjson writes
// and reads (PROTOCOL.md §4.1). Besides standard JSON it accepts:
//   - object keys that are bare tokens ({0:"a"}) or object/array literals
//     ({{"brokerName":"b","queueId":0,"topic":"T"}:12}), which fastjson
//     writes for Map<Integer,…> and Map<MessageQueue,…>;
//   - single-quoted strings and the \x escape fastjson's lexer accepts;
//   - numbers written as strings and strings written as numbers, as
//     fastjson converts both ways (the Go client sends codeSet as strings);
//   - null for any scalar (zero value) or container (left empty).
//
// It is a hand-written scanner over the input bytes with a sticky error:
// the first failure stops everything and is returned once at the end.
type fjReader struct {
	data  []byte
	pos   int
	err   error
	depth int
	buf   []byte // scratch for unescaping keys
}

// fjDecodeOneField decodes an object of which only key is read, by val;
// other keys are skipped. It is the DecodeJSON of every one-field body.
func fjDecodeOneField(data []byte, key string, val func(r *fjReader)) error {
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			if string(k) == key {
				val(r)
			} else {
				r.skip()
			}
		})
	})
}

// fjDecode runs fn over data and requires that only whitespace follows.
func fjDecode(data []byte, fn func(r *fjReader)) error {
	r := fjReader{data: data}
	fn(&r)
	if r.err == nil {
		r.ws()
		if r.pos < len(r.data) {
			r.fail("trailing data")
		}
	}
	return r.err
}

func (r *fjReader) fail(msg string) {
	if r.err == nil {
		r.err = &bodyError{msg: msg, offset: r.pos}
	}
}

// bodyError is a body decoding failure at a byte offset.
type bodyError struct {
	msg    string
	offset int
}

func (e *bodyError) Error() string {
	return ErrMalformedBody.Error() + ": " + e.msg + " at offset " + strconv.Itoa(e.offset)
}

func (e *bodyError) Unwrap() error { return ErrMalformedBody }

// ws skips the whitespace fastjson's lexer skips.
func (r *fjReader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\b':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end or after an error.
func (r *fjReader) peek() byte {
	if r.err != nil {
		return 0
	}
	r.ws()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

func (r *fjReader) expect(c byte) bool {
	if r.peek() != c {
		if r.pos >= len(r.data) {
			r.fail("unexpected end, want " + strconv.QuoteRune(rune(c)))
		} else {
			r.fail("want " + strconv.QuoteRune(rune(c)))
		}
		return false
	}
	r.pos++
	return true
}

// null consumes a null literal if one is next.
func (r *fjReader) null() bool {
	if r.peek() == 'n' && len(r.data)-r.pos >= 4 && string(r.data[r.pos:r.pos+4]) == "null" && r.tokenEndsAt(r.pos+4) {
		r.pos += 4
		return true
	}
	return false
}

func (r *fjReader) tokenEndsAt(i int) bool {
	return i >= len(r.data) || fjIsDelim(r.data[i])
}

func fjIsDelim(c byte) bool {
	switch c {
	case ',', ':', ']', '}', '[', '{', '"', '\'', ' ', '\t', '\n', '\r', '\f', '\b':
		return true
	}
	return false
}

// bare reads an unquoted token (number, literal or fastjson bare key).
func (r *fjReader) bare() []byte {
	start := r.pos
	for r.pos < len(r.data) && !fjIsDelim(r.data[r.pos]) {
		r.pos++
	}
	if r.pos == start {
		r.fail("unexpected character")
	}
	return r.data[start:r.pos]
}

func (r *fjReader) enter() bool {
	r.depth++
	if r.depth > fjMaxDepth {
		r.fail("nesting too deep")
		return false
	}
	return true
}

// object calls fn for every member of the next object; fn must consume the
// member's value (or call skip). key is only valid until fn reads further:
// convert it to a string first if it is kept. null is an empty object.
func (r *fjReader) object(fn func(key []byte)) {
	if r.null() || r.err != nil {
		return
	}
	if !r.expect('{') || !r.enter() {
		return
	}
	first := true
	for r.err == nil {
		c := r.peek()
		if c == '}' {
			r.pos++
			break
		}
		if !first {
			if !r.expect(',') {
				break
			}
		}
		first = false
		key := r.key()
		if !r.expect(':') {
			break
		}
		fn(key)
	}
	r.depth--
}

// key reads an object key: a string, a bare token, or a whole object or
// array literal (returned as its raw text).
func (r *fjReader) key() []byte {
	switch c := r.peek(); c {
	case '"', '\'':
		return r.quoted(true)
	case '{', '[':
		start := r.pos
		r.skip()
		return r.data[start:r.pos]
	case 0:
		r.fail("unexpected end in object")
		return nil
	default:
		return r.bare()
	}
}

// array calls fn once per element; fn must consume the element. null is an
// empty array.
func (r *fjReader) array(fn func()) {
	if r.null() || r.err != nil {
		return
	}
	if !r.expect('[') || !r.enter() {
		return
	}
	first := true
	for r.err == nil {
		if r.peek() == ']' {
			r.pos++
			break
		}
		if !first && !r.expect(',') {
			break
		}
		first = false
		fn()
	}
	r.depth--
}

// skip consumes any value.
func (r *fjReader) skip() {
	switch r.peek() {
	case 0:
		r.fail("unexpected end, want a value")
	case '{':
		r.object(func([]byte) { r.skip() })
	case '[':
		r.array(r.skip)
	case '"', '\'':
		r.quoted(false)
	default:
		r.bare()
	}
}

// raw returns the text of the next value, nil for null.
func (r *fjReader) raw() []byte {
	if r.null() {
		return nil
	}
	r.ws()
	start := r.pos
	r.skip()
	if r.err != nil {
		return nil
	}
	return r.data[start:r.pos]
}

// quoted reads a quoted string and returns its unescaped bytes. Without
// escapes the result aliases the input; otherwise it lives in r.buf when
// scratch is true, or in a fresh slice.
func (r *fjReader) quoted(scratch bool) []byte {
	q := r.data[r.pos]
	r.pos++
	start := r.pos
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		if c == q {
			s := r.data[start:r.pos]
			r.pos++
			return s
		}
		if c == '\\' {
			var out []byte
			if scratch {
				out = r.buf[:0]
			}
			out = append(out, r.data[start:r.pos]...)
			out = r.unescape(out, q)
			if scratch {
				r.buf = out
			}
			return out
		}
		r.pos++
	}
	r.fail("unterminated string")
	return nil
}

// unescape continues a string from an escape, appending to out.
func (r *fjReader) unescape(out []byte, q byte) []byte {
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		if c == q {
			r.pos++
			return out
		}
		if c != '\\' {
			out = append(out, c)
			r.pos++
			continue
		}
		r.pos++
		if r.pos >= len(r.data) {
			break
		}
		e := r.data[r.pos]
		r.pos++
		switch e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'x':
			v, ok := r.hex(2)
			if !ok {
				return out
			}
			out = utf8.AppendRune(out, rune(v))
		case 'u':
			v, ok := r.hex(4)
			if !ok {
				return out
			}
			ru := rune(v)
			if utf16.IsSurrogate(ru) {
				ru = utf8.RuneError
				if r.pos+6 <= len(r.data) && r.data[r.pos] == '\\' && r.data[r.pos+1] == 'u' {
					save := r.pos
					r.pos += 2
					if lo, ok := r.hex(4); ok {
						if d := utf16.DecodeRune(rune(v), rune(lo)); d != utf8.RuneError {
							ru = d
						} else {
							r.pos = save
						}
					} else {
						return out
					}
				}
			}
			out = utf8.AppendRune(out, ru)
		default:
			// \" \\ \/ \' and anything else: the character itself, as
			// fastjson's lexer is lenient about unknown escapes.
			out = append(out, e)
		}
	}
	r.fail("unterminated string")
	return out
}

func (r *fjReader) hex(n int) (uint32, bool) {
	if r.pos+n > len(r.data) {
		r.fail("short escape")
		return 0, false
	}
	v, ok := hexValue(r.data[r.pos : r.pos+n])
	if !ok {
		r.fail("bad escape")
		return 0, false
	}
	r.pos += n
	return v, true
}

// scalar returns the text of a string or bare token; ok is false for null.
// Strings are unescaped into a fresh slice.
func (r *fjReader) scalar() (b []byte, quoted, ok bool) {
	switch c := r.peek(); c {
	case 0:
		r.fail("unexpected end, want a value")
		return nil, false, false
	case '{', '[':
		r.fail("want a scalar value")
		return nil, false, false
	case '"', '\'':
		return r.quoted(false), true, true
	default:
		if r.null() {
			return nil, false, false
		}
		return r.bare(), false, true
	}
}

// str reads a string; numbers and booleans give their text, null "".
func (r *fjReader) str() string {
	b, _, ok := r.scalar()
	if !ok {
		return ""
	}
	return string(b)
}

// int reads an integer within bits; quoted numbers, booleans (1/0) and
// decimals (truncated) are accepted like fastjson does. null and "" are 0.
func (r *fjReader) int(bits int) int64 {
	b, quoted, ok := r.scalar()
	if !ok || r.err != nil {
		return 0
	}
	s := string(b)
	if quoted {
		s = strings.TrimSpace(s)
		if s == "" {
			return 0
		}
	}
	switch s {
	case "true":
		return 1
	case "false":
		return 0
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err == nil {
		return n
	}
	f, ferr := strconv.ParseFloat(s, 64)
	lim := math.Ldexp(1, bits-1)
	if ferr != nil || math.IsNaN(f) || f >= lim || f < -lim {
		r.fail("bad integer " + strconv.Quote(s))
		return 0
	}
	return int64(f)
}

func (r *fjReader) i64() int64 { return r.int(64) }
func (r *fjReader) i32() int32 { return int32(r.int(32)) }

// f64 reads a number; quoted numbers are accepted, null is 0.
func (r *fjReader) f64() float64 {
	b, quoted, ok := r.scalar()
	if !ok || r.err != nil {
		return 0
	}
	s := string(b)
	if quoted {
		s = strings.TrimSpace(s)
		if s == "" {
			return 0
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.fail("bad number " + strconv.Quote(s))
	}
	return f
}

// bool reads true/false, also as strings or 1/0; null is false.
func (r *fjReader) bool() bool {
	b, _, ok := r.scalar()
	if !ok || r.err != nil {
		return false
	}
	switch s := string(b); {
	case strings.EqualFold(s, "true") || s == "1":
		return true
	case strings.EqualFold(s, "false") || s == "0" || s == "":
		return false
	default:
		r.fail("bad boolean " + strconv.Quote(s))
		return false
	}
}

// strList reads an array of strings (a Java List or Set).
func (r *fjReader) strList() []string {
	var out []string
	r.array(func() { out = append(out, r.str()) })
	return out
}

// strMap reads a string → string object; empty gives nil.
func (r *fjReader) strMap() map[string]string { return fjReadStrMap(r, r.str) }

// fjReadStrMap reads a Map<String,V>; an empty object gives nil, so that
// nil and empty maps round-trip alike.
func fjReadStrMap[V any](r *fjReader, val func() V) map[string]V {
	var m map[string]V
	r.object(func(k []byte) {
		key := string(k)
		if m == nil {
			m = map[string]V{}
		}
		m[key] = val()
	})
	return m
}
