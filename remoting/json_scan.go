package remoting

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonScan is the package's one JSON tokenizer. The frame-header decoder
// (header_json.go) and the body reader (json_reader.go) are built on it.
//
// It reads what fastjson's lexer reads (docs/PROTOCOL.md §4.1): besides
// standard JSON, single-quoted strings, the \x escape, raw control
// characters in strings and bare (unquoted) tokens, which its users
// interpret. The error is sticky: the first failure is kept with its
// offset, every later step is a no-op, and the user turns it into its own
// error type once at the end.
//
// Nothing it returns is a copy: a string without escapes is a view of the
// input, so the caller decides what to keep and copies only that.
type jsonScan struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int  // nesting bound, so hostile input cannot exhaust the stack
	strict   bool // an unknown escape fails instead of standing for its character
	failed   bool
	msg      string // the first failure
	at       int    // its offset
}

func (s *jsonScan) fail(msg string) {
	if !s.failed {
		s.failed, s.msg, s.at = true, msg, s.pos
	}
}

// ws skips the whitespace fastjson's lexer skips.
func (s *jsonScan) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\b':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end or after a failure.
func (s *jsonScan) peek() byte {
	if s.failed {
		return 0
	}
	if s.pos < len(s.data) && s.data[s.pos] > ' ' { // compact JSON
		return s.data[s.pos]
	}
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *jsonScan) expect(c byte) bool {
	if s.peek() != c {
		if s.pos >= len(s.data) {
			s.fail("unexpected end, want " + strconv.QuoteRune(rune(c)))
		} else {
			s.fail("want " + strconv.QuoteRune(rune(c)))
		}
		return false
	}
	s.pos++
	return true
}

// null consumes a null literal if one is next.
func (s *jsonScan) null() bool {
	if s.peek() == 'n' && len(s.data)-s.pos >= 4 && string(s.data[s.pos:s.pos+4]) == "null" && s.tokenEndsAt(s.pos+4) {
		s.pos += 4
		return true
	}
	return false
}

func (s *jsonScan) tokenEndsAt(i int) bool {
	return i >= len(s.data) || jsonIsDelim(s.data[i])
}

func jsonIsDelim(c byte) bool {
	switch c {
	case ',', ':', ']', '}', '[', '{', '"', '\'', ' ', '\t', '\n', '\r', '\f', '\b':
		return true
	}
	return false
}

// bare reads an unquoted token: a number, a literal or a fastjson bare key.
func (s *jsonScan) bare() []byte {
	start := s.pos
	for s.pos < len(s.data) && !jsonIsDelim(s.data[s.pos]) {
		s.pos++
	}
	if s.pos == start {
		s.fail("unexpected character")
	}
	return s.data[start:s.pos]
}

func (s *jsonScan) enter() bool {
	s.depth++
	if s.depth > s.maxDepth {
		s.fail("nesting too deep")
		return false
	}
	return true
}

// object calls fn for every member of the next object after reading its
// key with key; fn must consume the member's value. null is an empty
// object.
func (s *jsonScan) object(key func() []byte, fn func(key []byte)) {
	s.seq('{', '}', func() {
		k := key()
		if s.expect(':') {
			fn(k)
		}
	})
}

// array calls fn once per element; fn must consume the element. null is an
// empty array.
func (s *jsonScan) array(fn func()) { s.seq('[', ']', fn) }

// seq reads open, elements separated by commas, each read by elem, and
// close; null stands for an empty sequence.
func (s *jsonScan) seq(open, close byte, elem func()) {
	if s.null() || s.failed {
		return
	}
	if !s.expect(open) || !s.enter() {
		return
	}
	first := true
	for !s.failed {
		if s.peek() == close {
			s.pos++
			break
		}
		if !first && !s.expect(',') {
			break
		}
		first = false
		elem()
	}
	s.depth--
}

// anyKey reads an object key: a string, a bare token, or a whole object or
// array literal (fastjson's Map<MessageQueue,…>), returned as its raw text.
// An escaped key is unescaped into a fresh slice.
func (s *jsonScan) anyKey() []byte {
	switch c := s.peek(); c {
	case '"', '\'':
		v, _ := s.quoted(nil)
		return v
	case '{', '[':
		start := s.pos
		s.skip()
		return s.data[start:s.pos]
	case 0:
		s.fail("unexpected end in object")
		return nil
	default:
		return s.bare()
	}
}

// skip consumes any value.
func (s *jsonScan) skip() {
	switch s.peek() {
	case 0:
		s.fail("unexpected end, want a value")
	case '{':
		s.object(s.anyKeyView, func([]byte) { s.skip() })
	case '[':
		s.array(s.skip)
	case '"', '\'':
		s.skipQuoted()
	default:
		s.bare()
	}
}

// anyKeyView is anyKey for a key that is not looked at.
func (s *jsonScan) anyKeyView() []byte {
	if c := s.peek(); c == '"' || c == '\'' {
		s.skipQuoted()
		return nil
	}
	return s.anyKey()
}

// raw returns the text of the next value, nil for null.
func (s *jsonScan) raw() []byte {
	if s.null() {
		return nil
	}
	s.ws()
	start := s.pos
	s.skip()
	if s.failed {
		return nil
	}
	return s.data[start:s.pos]
}

// skipQuoted consumes a quoted string without unescaping it.
func (s *jsonScan) skipQuoted() {
	q := s.data[s.pos]
	for i := s.pos + 1; ; {
		j := indexQuoteOrBackslash(s.data, i, q)
		if j < 0 {
			s.pos = len(s.data)
			s.fail("unterminated string")
			return
		}
		if s.data[j] == q {
			s.pos = j + 1
			return
		}
		i = j + 2 // an escape: its character cannot end the string
	}
}

// rawString reads the next value, which must be a quoted string, when it
// has no escapes and returns its offsets; ok is false, with s.pos at the
// opening quote, when it has one.
func (s *jsonScan) rawString() (from, to int, ok bool) {
	q := s.peek()
	if q != '"' && q != '\'' {
		s.fail("expected string")
		return s.pos, s.pos, true
	}
	start := s.pos + 1
	i := indexQuoteOrBackslash(s.data, start, q)
	switch {
	case i < 0:
		s.pos = len(s.data)
		s.fail("unterminated string")
		return start, start, true
	case s.data[i] == q:
		s.pos = i + 1
		return start, i, true
	}
	return 0, 0, false
}

// quoted reads the string at s.pos, in double or single quotes. Without escapes
// it returns a view of the input and its offset from; otherwise the string
// unescaped, appended to buf[:0], and from = -1. Raw control characters are
// taken as they are, as fastjson does.
func (s *jsonScan) quoted(buf []byte) (v []byte, from int) {
	q := s.data[s.pos]
	start := s.pos + 1
	i := indexQuoteOrBackslash(s.data, start, q)
	if i < 0 {
		s.pos = len(s.data)
		s.fail("unterminated string")
		return nil, -1
	}
	if s.data[i] == q {
		s.pos = i + 1
		return s.data[start:i], start
	}
	s.pos = i
	return s.unescape(append(buf[:0], s.data[start:i]...), q), -1
}

// unescape continues a string from the escape at s.pos, appending to out.
func (s *jsonScan) unescape(out []byte, q byte) []byte {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == q {
			s.pos++
			return out
		}
		if c != '\\' {
			// Copy the run up to the next quote or backslash at once.
			j := indexQuoteOrBackslash(s.data, s.pos+1, q)
			if j < 0 {
				j = len(s.data)
			}
			out = append(out, s.data[s.pos:j]...)
			s.pos = j
			continue
		}
		if s.pos+1 >= len(s.data) {
			s.fail("truncated escape")
			return out
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/', '\'':
			out = append(out, e)
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
		case 'x': // fastjson's \xHH
			v, ok := s.hex(2)
			if !ok {
				return out
			}
			out = utf8.AppendRune(out, v)
		case 'u':
			v, ok := s.hex(4)
			if !ok {
				return out
			}
			if utf16.IsSurrogate(v) {
				// Pair it with a following \uDC00..\uDFFF if there is one.
				if v < 0xdc00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					lo, ok := s.hex(4)
					if !ok {
						return out
					}
					if p := utf16.DecodeRune(v, lo); p != utf8.RuneError {
						out = utf8.AppendRune(out, p)
						continue
					}
					s.pos = save
				}
				v = utf8.RuneError
			}
			out = utf8.AppendRune(out, v)
		default:
			if s.strict {
				s.pos -= 2
				s.fail("bad escape")
				return out
			}
			// fastjson's lexer takes an unknown escape as the character.
			out = append(out, e)
		}
	}
	s.fail("unterminated string")
	return out
}

func (s *jsonScan) hex(n int) (rune, bool) {
	if len(s.data)-s.pos < n {
		s.fail("truncated escape")
		return 0, false
	}
	v, ok := hexValue(s.data[s.pos : s.pos+n])
	if !ok {
		s.fail("bad hex escape")
		return 0, false
	}
	s.pos += n
	return rune(v), true
}

// indexQuoteOrBackslash returns the index of the first q or '\\' in b at
// or after from, or -1. It tests eight bytes per step (the classic
// has-zero-byte trick; the lowest flagged byte is always a true match).
func indexQuoteOrBackslash(b []byte, from int, q byte) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	qq, bs := lo*uint64(q), uint64(lo*'\\')
	i := from
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		a := x ^ qq
		c := x ^ bs
		if m := ((a-lo)&^a | (c-lo)&^c) & hi; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == q || b[i] == '\\' {
			return i
		}
	}
	return -1
}
