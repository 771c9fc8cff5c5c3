package remoting

import (
	"errors"
	"strconv"
	"strings"
)

// CustomHeader is a typed request or response header (a Java
// CommandCustomHeader). Its fields travel as extFields (PROTOCOL.md §1.6, §3).
//
// Field conventions shared by every header in this package:
//   - a field Java marks @CFNotNull, or declares as a primitive, is a plain Go
//     value and is always written;
//   - a field Java may leave null is a pointer and is written only when
//     non-nil, so a decoded header re-encodes to the same key set;
//   - BrokerName is the optional `bname` of RpcRequestHeader (4.9.5+).
//
// AppendExt(nil) returns nil when nothing is written; pass a non-nil empty
// ExtFields to get Java's "extFields":{} for a header whose fields are all
// null (PROTOCOL.md §1.3).
type CustomHeader interface {
	// AppendExt appends the header's non-nil fields to ext and returns it.
	AppendExt(ext ExtFields) ExtFields
	// FromExt fills the header from ext. Absent required fields give an
	// error matching ErrMissingHeaderField; unparsable numbers one matching
	// ErrInvalidHeaderField. Unknown keys are ignored.
	FromExt(ext ExtFields) error
}

// Header decoding errors, matchable with errors.Is on a *HeaderFieldError.
var (
	ErrMissingHeaderField = errors.New("rocketmq: missing header field")
	ErrInvalidHeaderField = errors.New("rocketmq: invalid header field")
)

// HeaderFieldError names the extField a typed header could not decode.
type HeaderFieldError struct {
	Field string
	Value string // the offending value; empty when missing
	Kind  error  // ErrMissingHeaderField or ErrInvalidHeaderField
}

func (e *HeaderFieldError) Error() string { return "rocketmq: " + e.Remark() }

// Unwrap returns the kind.
func (e *HeaderFieldError) Unwrap() error { return e.Kind }

// Remark is the text a Java broker puts in its SYSTEM_ERROR remark for the
// same failure, suitable for a Go broker's response.
func (e *HeaderFieldError) Remark() string {
	if e.Kind == ErrMissingHeaderField {
		return "the custom field <" + e.Field + "> is null"
	}
	return "the custom field <" + e.Field + "> has an invalid value: " + strconv.Quote(e.Value)
}

// Ptr returns a pointer to v, for filling optional header fields.
func Ptr[T any](v T) *T { return &v }

// Append helpers. Values are written exactly as Java's toString would.

func hdrStr(ext ExtFields, k, v string) ExtFields { return append(ext, Field{Key: k, Value: v}) }

func hdrOptStr(ext ExtFields, k string, v *string) ExtFields {
	if v == nil {
		return ext
	}
	return append(ext, Field{Key: k, Value: *v})
}

func hdrI32(ext ExtFields, k string, v int32) ExtFields {
	return append(ext, Field{Key: k, Value: strconv.FormatInt(int64(v), 10)})
}

func hdrOptI32(ext ExtFields, k string, v *int32) ExtFields {
	if v == nil {
		return ext
	}
	return hdrI32(ext, k, *v)
}

func hdrI64(ext ExtFields, k string, v int64) ExtFields {
	return append(ext, Field{Key: k, Value: strconv.FormatInt(v, 10)})
}

func hdrOptI64(ext ExtFields, k string, v *int64) ExtFields {
	if v == nil {
		return ext
	}
	return hdrI64(ext, k, *v)
}

func hdrBool(ext ExtFields, k string, v bool) ExtFields {
	return append(ext, Field{Key: k, Value: strconv.FormatBool(v)})
}

func hdrOptBool(ext ExtFields, k string, v *bool) ExtFields {
	if v == nil {
		return ext
	}
	return hdrBool(ext, k, *v)
}

// hdrReader decodes extFields with a sticky error: the first failure is
// kept, so FromExt checks once at the end. Lookups take the last entry with
// a key, as a Java HashMap does with repeated keys. The ...At variants take
// an index found by a header's own single pass (-1 = absent).
type hdrReader struct {
	ext ExtFields
	err error
}

func (r *hdrReader) index(k string) int {
	for i := len(r.ext) - 1; i >= 0; i-- {
		if r.ext[i].Key == k {
			return i
		}
	}
	return -1
}

func (r *hdrReader) missing(k string) {
	if r.err == nil {
		r.err = &HeaderFieldError{Field: k, Kind: ErrMissingHeaderField}
	}
}

func (r *hdrReader) invalid(k, v string) {
	if r.err == nil {
		r.err = &HeaderFieldError{Field: k, Value: v, Kind: ErrInvalidHeaderField}
	}
}

func (r *hdrReader) parseInt(k, v string, bits int) int64 {
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		r.invalid(k, v)
	}
	return n
}

func (r *hdrReader) strAt(k string, i int) string {
	if i < 0 {
		r.missing(k)
		return ""
	}
	return r.ext[i].Value
}

func (r *hdrReader) optStrAt(i int) *string {
	if i < 0 {
		return nil
	}
	v := r.ext[i].Value
	return &v
}

func (r *hdrReader) i32At(k string, i int) int32 {
	if i < 0 {
		r.missing(k)
		return 0
	}
	return int32(r.parseInt(k, r.ext[i].Value, 32))
}

func (r *hdrReader) optI32At(k string, i int) *int32 {
	if i < 0 {
		return nil
	}
	n := int32(r.parseInt(k, r.ext[i].Value, 32))
	return &n
}

func (r *hdrReader) i64At(k string, i int) int64 {
	if i < 0 {
		r.missing(k)
		return 0
	}
	return r.parseInt(k, r.ext[i].Value, 64)
}

func (r *hdrReader) optI64At(k string, i int) *int64 {
	if i < 0 {
		return nil
	}
	n := r.parseInt(k, r.ext[i].Value, 64)
	return &n
}

// boolOrAt reads a Java primitive boolean that keeps def when absent.
func (r *hdrReader) boolOrAt(i int, def bool) bool {
	if i < 0 {
		return def
	}
	return parseJavaBool(r.ext[i].Value)
}

func (r *hdrReader) optBoolAt(i int) *bool {
	if i < 0 {
		return nil
	}
	b := parseJavaBool(r.ext[i].Value)
	return &b
}

func (r *hdrReader) str(k string) string            { return r.strAt(k, r.index(k)) }
func (r *hdrReader) optStr(k string) *string        { return r.optStrAt(r.index(k)) }
func (r *hdrReader) i32(k string) int32             { return r.i32At(k, r.index(k)) }
func (r *hdrReader) optI32(k string) *int32         { return r.optI32At(k, r.index(k)) }
func (r *hdrReader) i64(k string) int64             { return r.i64At(k, r.index(k)) }
func (r *hdrReader) optI64(k string) *int64         { return r.optI64At(k, r.index(k)) }
func (r *hdrReader) optBool(k string) *bool         { return r.optBoolAt(r.index(k)) }
func (r *hdrReader) boolOr(k string, def bool) bool { return r.boolOrAt(r.index(k), def) }

// boolean reads a required (@CFNotNull Boolean) field.
func (r *hdrReader) boolean(k string) bool {
	i := r.index(k)
	if i < 0 {
		r.missing(k)
		return false
	}
	return parseJavaBool(r.ext[i].Value)
}

// i32Or reads a Java primitive int that keeps def when absent.
func (r *hdrReader) i32Or(k string, def int32) int32 {
	i := r.index(k)
	if i < 0 {
		return def
	}
	return int32(r.parseInt(k, r.ext[i].Value, 32))
}

// parseJavaBool is Boolean.parseBoolean: "true" in any case, else false.
func parseJavaBool(s string) bool { return len(s) == 4 && strings.EqualFold(s, "true") }

// i64Or reads a Java primitive long that keeps def when absent.
func (r *hdrReader) i64Or(k string, def int64) int64 {
	i := r.index(k)
	if i < 0 {
		return def
	}
	return r.parseInt(k, r.ext[i].Value, 64)
}
