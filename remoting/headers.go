package remoting

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// CustomHeader is a typed request or response header (a Java
// CommandCustomHeader). Its fields travel as extFields (docs/PROTOCOL.md §1.6, §3).
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
// null (docs/PROTOCOL.md §1.3).
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

// A header's field list is its fields method, which names every field
// once, in the order its keys go out, with its Java kind. hdrTableOf runs
// it once per type into a table of keys, kinds and offsets; hdrAppend and
// hdrRead walk that table, so one list drives both directions and the two
// cannot disagree, at the speed of a plain loop.

type hdrKind uint8

const (
	hdrKStr      hdrKind = iota // required String
	hdrKOptStr                  // String Java may leave null
	hdrKI32                     // required Integer
	hdrKI32Prim                 // primitive int: always written, 0 when absent
	hdrKOptI32                  // Integer Java may leave null
	hdrKI64                     // required Long
	hdrKI64Prim                 // primitive long: always written, 0 when absent
	hdrKOptI64                  // Long Java may leave null
	hdrKBoolReq                 // required (@CFNotNull) Boolean
	hdrKBoolPrim                // primitive boolean: always written, false when absent
	hdrKOptBool                 // Boolean Java may leave null
)

type hdrField struct {
	key  string
	kind hdrKind
	off  uintptr // of the Go field in the header struct
}

// hdrList records a fields method into a table.
type hdrList struct {
	base   unsafe.Pointer // a pointer, so that it moves with the value
	size   uintptr
	fields []hdrField
}

func (l *hdrList) add(k string, kind hdrKind, p unsafe.Pointer) {
	off := uintptr(p) - uintptr(l.base)
	if uintptr(p) < uintptr(l.base) || off >= l.size {
		panic("remoting: header field " + k + " is not a field of the header")
	}
	l.fields = append(l.fields, hdrField{key: k, kind: kind, off: off})
}

func (l *hdrList) str(k string, p *string)     { l.add(k, hdrKStr, unsafe.Pointer(p)) }
func (l *hdrList) optStr(k string, p **string) { l.add(k, hdrKOptStr, unsafe.Pointer(p)) }
func (l *hdrList) i32(k string, p *int32)      { l.add(k, hdrKI32, unsafe.Pointer(p)) }
func (l *hdrList) i32Prim(k string, p *int32)  { l.add(k, hdrKI32Prim, unsafe.Pointer(p)) }
func (l *hdrList) optI32(k string, p **int32)  { l.add(k, hdrKOptI32, unsafe.Pointer(p)) }
func (l *hdrList) i64(k string, p *int64)      { l.add(k, hdrKI64, unsafe.Pointer(p)) }
func (l *hdrList) i64Prim(k string, p *int64)  { l.add(k, hdrKI64Prim, unsafe.Pointer(p)) }
func (l *hdrList) optI64(k string, p **int64)  { l.add(k, hdrKOptI64, unsafe.Pointer(p)) }
func (l *hdrList) boolReq(k string, p *bool)   { l.add(k, hdrKBoolReq, unsafe.Pointer(p)) }
func (l *hdrList) boolPrim(k string, p *bool)  { l.add(k, hdrKBoolPrim, unsafe.Pointer(p)) }
func (l *hdrList) optBool(k string, p **bool)  { l.add(k, hdrKOptBool, unsafe.Pointer(p)) }

// hdrTableOf runs a header's fields method on a fresh value and returns
// its table. The typed methods of hdrList guarantee that each kind sits at
// an offset holding its Go type.
func hdrTableOf[H any](fields func(*H, *hdrList)) []hdrField {
	h := new(H)
	l := hdrList{base: unsafe.Pointer(h), size: unsafe.Sizeof(*h)}
	fields(h, &l)
	return l.fields
}

// hdrAppend appends the fields of *h that are set, in table order.
func hdrAppend[H any](ext ExtFields, h *H, t []hdrField) ExtFields {
	return hdrAppendAt(ext, unsafe.Pointer(h), t)
}

func hdrAppendAt(ext ExtFields, base unsafe.Pointer, t []hdrField) ExtFields {
	if cap(ext)-len(ext) < len(t) {
		ext = slices.Grow(ext, len(t))
	}
	for i := range t {
		f := &t[i]
		p := unsafe.Add(base, f.off)
		switch f.kind {
		case hdrKStr:
			ext = append(ext, Field{Key: f.key, Value: *(*string)(p)})
		case hdrKOptStr:
			ext = hdrOptStr(ext, f.key, *(**string)(p))
		case hdrKI32, hdrKI32Prim:
			ext = hdrI32(ext, f.key, *(*int32)(p))
		case hdrKOptI32:
			ext = hdrOptI32(ext, f.key, *(**int32)(p))
		case hdrKI64, hdrKI64Prim:
			ext = hdrI64(ext, f.key, *(*int64)(p))
		case hdrKOptI64:
			ext = hdrOptI64(ext, f.key, *(**int64)(p))
		case hdrKBoolReq, hdrKBoolPrim:
			ext = hdrBool(ext, f.key, *(*bool)(p))
		case hdrKOptBool:
			ext = hdrOptBool(ext, f.key, *(**bool)(p))
		}
	}
	return ext
}

// hdrRead resets *h and fills it from ext. Of several bad fields it
// reports the one declared first, as Java's checkFields does.
func hdrRead[H any](ext ExtFields, h *H, t []hdrField) error {
	var zero H
	*h = zero
	r := hdrReader{ext: ext}
	var err error
	errOff := ^uintptr(0)
	base := unsafe.Pointer(h)
	for i := range t {
		f := &t[i]
		p := unsafe.Add(base, f.off)
		j := r.index(f.key)
		switch f.kind {
		case hdrKStr:
			*(*string)(p) = r.strAt(f.key, j)
		case hdrKOptStr:
			*(**string)(p) = r.optStrAt(j)
		case hdrKI32:
			*(*int32)(p) = r.i32At(f.key, j)
		case hdrKI32Prim:
			if j >= 0 {
				*(*int32)(p) = r.i32At(f.key, j)
			}
		case hdrKOptI32:
			*(**int32)(p) = r.optI32At(f.key, j)
		case hdrKI64:
			*(*int64)(p) = r.i64At(f.key, j)
		case hdrKI64Prim:
			if j >= 0 {
				*(*int64)(p) = r.i64At(f.key, j)
			}
		case hdrKOptI64:
			*(**int64)(p) = r.optI64At(f.key, j)
		case hdrKBoolReq:
			if j < 0 {
				r.missing(f.key)
			}
			*(*bool)(p) = r.boolOrAt(j, false)
		case hdrKBoolPrim:
			// OR, so that a field listed under two keys is true if
			// either is (DeleteSubscriptionGroupRequestHeader).
			*(*bool)(p) = *(*bool)(p) || r.boolOrAt(j, false)
		case hdrKOptBool:
			*(**bool)(p) = r.optBoolAt(j)
		}
		if r.err != nil {
			if f.off < errOff {
				err, errOff = r.err, f.off
			}
			r.err = nil
		}
	}
	return err
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

func (r *hdrReader) str(k string) string     { return r.strAt(k, r.index(k)) }
func (r *hdrReader) optStr(k string) *string { return r.optStrAt(r.index(k)) }
func (r *hdrReader) i32(k string) int32      { return r.i32At(k, r.index(k)) }
func (r *hdrReader) optI32(k string) *int32  { return r.optI32At(k, r.index(k)) }
func (r *hdrReader) i64(k string) int64      { return r.i64At(k, r.index(k)) }
func (r *hdrReader) optI64(k string) *int64  { return r.optI64At(k, r.index(k)) }
func (r *hdrReader) optBool(k string) *bool  { return r.optBoolAt(r.index(k)) }

// parseJavaBool is Boolean.parseBoolean: "true" in any case, else false.
func parseJavaBool(s string) bool { return len(s) == 4 && strings.EqualFold(s, "true") }
