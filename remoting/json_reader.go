package remoting

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
)

// ErrMalformedBody is matched (errors.Is) by every body decoding error.
var ErrMalformedBody = errors.New("rocketmq: malformed body")

// fjMaxDepth bounds nesting so hostile input cannot exhaust the stack.
const fjMaxDepth = 256

// fjReader reads the JSON that Java's fastjson writes and reads
// (docs/PROTOCOL.md §4.1) on the package's JSON scanner. Besides standard
// JSON it accepts:
//   - object keys that are bare tokens ({0:"a"}) or object/array literals
//     ({{"brokerName":"b","queueId":0,"topic":"T"}:12}), which fastjson
//     writes for Map<Integer,…> and Map<MessageQueue,…>;
//   - single-quoted strings and the \x escape fastjson's lexer accepts;
//   - numbers written as strings and strings written as numbers, as
//     fastjson converts both ways (the Go client sends codeSet as strings);
//   - null for any scalar (zero value) or container (left empty).
type fjReader struct {
	jsonScan
	buf []byte // scratch for unescaping keys
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
	r := fjReader{jsonScan: jsonScan{data: data, maxDepth: fjMaxDepth}}
	fn(&r)
	if !r.failed {
		r.ws()
		if r.pos < len(r.data) {
			r.fail("trailing data")
		}
	}
	if r.failed {
		return &bodyError{msg: r.msg, offset: r.at}
	}
	return nil
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

// object calls fn for every member of the next object; fn must consume the
// member's value (or call skip). key is only valid until fn reads further:
// convert it to a string first if it is kept. null is an empty object.
func (r *fjReader) object(fn func(key []byte)) { r.jsonScan.object(r.key, fn) }

// key reads an object key (see jsonScan.anyKey); an escaped string key is
// unescaped into r.buf.
func (r *fjReader) key() []byte {
	if c := r.peek(); c == '"' || c == '\'' {
		v, from := r.quoted(r.buf)
		if from < 0 {
			r.buf = v
		}
		return v
	}
	return r.anyKey()
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
		v, _ := r.quoted(nil)
		return v, true, true
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

// numText reads the text of a number, bare or quoted (trimmed); ok is
// false for null, "" and after a failure, which all read as 0.
func (r *fjReader) numText() ([]byte, bool) {
	b, quoted, ok := r.scalar()
	if !ok || r.failed {
		return nil, false
	}
	if quoted {
		b = bytes.TrimSpace(b)
	}
	return b, len(b) != 0
}

// int reads an integer within bits; quoted numbers, booleans (1/0) and
// decimals (truncated) are accepted like fastjson does. null and "" are 0.
func (r *fjReader) int(bits int) int64 {
	b, ok := r.numText()
	if !ok {
		return 0
	}
	s := string(b)
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
	b, ok := r.numText()
	if !ok {
		return 0
	}
	s := string(b)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.fail("bad number " + strconv.Quote(s))
	}
	return f
}

// bool reads true/false, also as strings or 1/0; null is false.
func (r *fjReader) bool() bool {
	b, _, ok := r.scalar()
	if !ok || r.failed {
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

// fjReadArr reads an array into *dst, each element by decode (a decode
// method); an empty array gives nil.
func fjReadArr[T any](r *fjReader, dst *[]T, decode func(*T, *fjReader)) {
	*dst = nil
	r.array(func() {
		*dst = append(*dst, *new(T))
		decode(&(*dst)[len(*dst)-1], r)
	})
}
