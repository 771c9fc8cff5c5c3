package sql92

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Properties looks a message property up by name.
type Properties func(name string) (string, bool)

// Match reports whether the expression is TRUE for props. NULL (unknown)
// and a failed evaluation are no match, as in Java's
// ExpressionMessageFilter.isMatchedByCommitLog.
func (e *Expr) Match(props Properties) bool {
	v, err := e.root.eval(props)
	return err == nil && v.k == kBool && v.b
}

// Eval returns the expression's value for props: true or false, known
// false when the value is NULL, and an error when Java's evaluation
// throws (a value it cannot convert).
func (e *Expr) Eval(props Properties) (val, known bool, err error) {
	v, err := e.root.eval(props)
	if err != nil {
		return false, false, err
	}
	if v.k != kBool {
		return false, false, nil
	}
	return v.b, true, nil
}

// errEval is a Java exception during evaluation.
var errEval = errors.New("rocketmq: SQL92 evaluation failed")

type kind uint8

// The Java classes values take: null, Boolean, Integer, Long, Double and
// String (Float and the small integers never arise).
const (
	kNull kind = iota
	kBool
	kInt
	kLong
	kDouble
	kString
)

type value struct {
	k kind
	b bool
	i int64
	f float64
	s string
}

func (v value) isNumber() bool { return v.k == kInt || v.k == kLong || v.k == kDouble }

func (v value) String() string {
	switch v.k {
	case kBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case kInt, kLong:
		return strconv.FormatInt(v.i, 10)
	case kDouble:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case kString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	}
	return "NULL"
}

var (
	nullV  = value{}
	trueV  = value{k: kBool, b: true}
	falseV = value{k: kBool}
)

func boolV(b bool) value {
	if b {
		return trueV
	}
	return falseV
}

type node interface {
	eval(Properties) (value, error)
}

type constNode struct {
	v         value
	boolConst bool // BooleanConstantExpression (TRUE, FALSE, NULL)
}

var (
	trueConst  = &constNode{v: trueV, boolConst: true}
	falseConst = &constNode{v: falseV, boolConst: true}
	nullConst  = &constNode{v: nullV, boolConst: true}
)

func (n *constNode) eval(Properties) (value, error) { return n.v, nil }

// propNode is PropertyExpression: a property's string value, or NULL.
type propNode struct{ name string }

func (n *propNode) eval(p Properties) (value, error) {
	if p == nil {
		return nullV, nil
	}
	if s, ok := p(n.name); ok {
		return value{k: kString, s: s}, nil
	}
	return nullV, nil
}

// negNode is UnaryExpression.createNegate: numbers negate in their own
// type (wrapping like Java's ints and longs), anything else is NULL.
type negNode struct{ x node }

func (n *negNode) eval(p Properties) (value, error) {
	v, err := n.x.eval(p)
	if err != nil {
		return v, err
	}
	switch v.k {
	case kInt:
		v.i = int64(-int32(v.i))
	case kLong:
		v.i = -v.i
	case kDouble:
		v.f = -v.f
	default:
		return nullV, nil
	}
	return v, nil
}

// notNode is UnaryExpression.createNOT.
type notNode struct{ x node }

func (n *notNode) eval(p Properties) (value, error) {
	v, err := n.x.eval(p)
	if err != nil || v.k == kNull {
		return v, err
	}
	if v.k != kBool {
		return nullV, errEval // Java's (Boolean) cast fails
	}
	return boolV(!v.b), nil
}

// boolCastNode is UnaryExpression.createBooleanCast of a property: a
// string is never a Boolean, so it is FALSE unless missing.
type boolCastNode struct{ x node }

func (n *boolCastNode) eval(p Properties) (value, error) {
	v, err := n.x.eval(p)
	if err != nil || v.k == kNull {
		return v, err
	}
	return boolV(v.k == kBool && v.b), nil
}

// logicNode is LogicExpression.createAND / createOR, three-valued.
type logicNode struct {
	or   bool
	l, r node
}

func (n *logicNode) eval(p Properties) (value, error) {
	lv, err := n.l.eval(p)
	if err != nil {
		return lv, err
	}
	if lv.k != kNull && lv.k != kBool {
		return nullV, errEval
	}
	// OR is decided by a TRUE, AND by a FALSE.
	if lv.k == kBool && lv.b == n.or {
		return lv, nil
	}
	rv, err := n.r.eval(p)
	if err != nil {
		return rv, err
	}
	if rv.k != kNull && rv.k != kBool {
		return nullV, errEval
	}
	if rv.k == kBool && rv.b == n.or {
		return rv, nil
	}
	if lv.k == kNull || rv.k == kNull {
		return nullV, nil
	}
	return boolV(!n.or), nil
}

type cmpOp uint8

const (
	opEq cmpOp = iota
	opGt
	opGe
	opLt
	opLe
)

type cmpNode struct {
	op   cmpOp
	l, r node
}

func (n *cmpNode) eval(p Properties) (value, error) {
	lv, err := n.l.eval(p)
	if err != nil {
		return lv, err
	}
	if n.op != opEq && lv.k == kNull {
		return nullV, nil
	}
	rv, err := n.r.eval(p)
	if err != nil {
		return rv, err
	}
	if n.op == opEq {
		// ComparisonExpression.doCreateEqual.
		if (lv.k == kNull) != (rv.k == kNull) {
			if lv.k == kNull {
				return nullV, nil
			}
			return falseV, nil
		}
		if lv.k == kNull || javaEquals(lv, rv) {
			return trueV, nil
		}
		c, err := compare(lv, rv)
		if err != nil {
			return nullV, err
		}
		return boolV(c == 0), nil
	}
	if rv.k == kNull {
		return nullV, nil
	}
	if lv.k == kString && rv.k == kString {
		// Strings are ordered as numbers (Double.valueOf) or not at all.
		a, ok1 := parseJavaDouble(lv.s)
		b, ok2 := parseJavaDouble(rv.s)
		if !ok1 || !ok2 {
			return nullV, errEval
		}
		lv, rv = value{k: kDouble, f: a}, value{k: kDouble, f: b}
	}
	c, err := compare(lv, rv)
	if err != nil {
		return nullV, err
	}
	switch n.op {
	case opGt:
		return boolV(c > 0), nil
	case opGe:
		return boolV(c >= 0), nil
	case opLt:
		return boolV(c < 0), nil
	}
	return boolV(c <= 0), nil
}

// javaEquals is Object.equals on the two values.
func javaEquals(a, b value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case kBool:
		return a.b == b.b
	case kInt, kLong:
		return a.i == b.i
	case kDouble:
		return doubleBits(a.f) == doubleBits(b.f)
	case kString:
		return a.s == b.s
	}
	return true
}

// doubleBits is Double.doubleToLongBits: one NaN.
func doubleBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

// compare is ComparisonExpression.__compare with convertStringExpressions
// on (as SelectorParser.parse sets it): the operand of the other type is
// converted where Java converts, -1 where Java gives up, and an error
// where Java throws.
func compare(lv, rv value) (int, error) {
	if lv.k != rv.k {
		switch lv.k {
		case kBool:
			if rv.k == kString {
				return 0, errEval // Java casts the Boolean to String
			}
			return -1, nil
		case kInt, kLong:
			switch rv.k {
			case kInt, kLong:
				// int widens to long; both are held as int64
			case kDouble:
				lv = value{k: kDouble, f: float64(lv.i)}
			case kString:
				bits := 64
				if lv.k == kInt {
					bits = 32
				}
				i, err := parseJavaInt(rv.s, bits)
				if err != nil {
					return 0, errEval
				}
				rv = value{k: lv.k, i: i}
			default:
				return -1, nil
			}
		case kDouble:
			switch rv.k {
			case kInt, kLong:
				rv = value{k: kDouble, f: float64(rv.i)}
			case kString:
				f, ok := parseJavaDouble(rv.s)
				if !ok {
					return 0, errEval
				}
				rv = value{k: kDouble, f: f}
			default:
				return -1, nil
			}
		case kString:
			switch rv.k {
			case kBool:
				lv = value{k: kBool, b: strings.EqualFold(lv.s, "true")}
			case kInt, kLong:
				bits := 64
				if rv.k == kInt {
					bits = 32
				}
				i, err := parseJavaInt(lv.s, bits)
				if err != nil {
					return 0, errEval
				}
				lv = value{k: rv.k, i: i}
			case kDouble:
				f, ok := parseJavaDouble(lv.s)
				if !ok {
					return 0, errEval
				}
				lv = value{k: kDouble, f: f}
			default:
				return -1, nil
			}
		default:
			return -1, nil
		}
	}
	switch lv.k {
	case kBool:
		return cmp3(b2i(lv.b), b2i(rv.b)), nil
	case kInt, kLong:
		return cmp3(lv.i, rv.i), nil
	case kDouble:
		return compareDouble(lv.f, rv.f), nil
	case kString:
		return compareUTF16(lv.s, rv.s), nil
	}
	return 0, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareDouble is Double.compare: -0.0 below 0.0, NaN above everything
// and equal to itself.
func compareDouble(a, b float64) int {
	if c := cmp3(a, b); c != 0 {
		return c
	}
	ab, bb := int64(doubleBits(a)), int64(doubleBits(b))
	return cmp3(ab, bb)
}

// compareUTF16 orders strings as Java's String.compareTo does, by UTF-16
// code unit; it differs from byte order only for supplementary characters
// against U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmp3(utf16Key(ra), utf16Key(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp3(int64(len(a)), int64(len(b)))
}

// utf16Key maps a rune to a key ordered like its first UTF-16 unit:
// surrogate pairs (0xD800..) sort below U+E000.
func utf16Key(r rune) int64 {
	if r >= 0x10000 {
		return 0xD800<<16 | int64(r)
	}
	return int64(r) << 16
}

// parseJavaInt is Integer.parseInt (bits 32) or Long.parseLong (64): an
// optional sign and decimal digits, which, as Java's Character.digit
// says, may be any Unicode decimal digit of the Basic Multilingual Plane.
func parseJavaInt(s string, bits int) (int64, error) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		b := make([]byte, 0, len(s))
		for _, r := range s {
			switch {
			case r < utf8.RuneSelf:
				b = append(b, byte(r))
			case r <= 0xFFFF && unicode.Is(unicode.Nd, r):
				// Decimal digits come in runs of ten from zero.
				first := r
				for unicode.Is(unicode.Nd, first-1) {
					first--
				}
				b = append(b, byte('0'+(r-first)%10))
			default:
				return 0, errEval
			}
		}
		s = string(b)
	}
	return strconv.ParseInt(s, 10, bits)
}

// parseJavaDouble is Double.valueOf: surrounding whitespace and control
// characters trimmed, an optional sign, NaN, Infinity, decimal digits with
// an optional point and exponent, a hexadecimal form with a binary
// exponent, and an optional f, F, d or D suffix.
func parseJavaDouble(s string) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch body {
	case "NaN", "Infinity":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	case "":
		return 0, false
	}
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if n := len(body); body[n-1] == 'f' || body[n-1] == 'F' || body[n-1] == 'd' || body[n-1] == 'D' {
		if !hex || strings.ContainsAny(body, "pP") {
			s, body = s[:len(s)-1], body[:n-1]
		}
	}
	if hex {
		// Go's ParseFloat checks the rest; it also takes underscores.
		if !strings.ContainsAny(body, "pP") || strings.Contains(body, "_") {
			return 0, false
		}
	} else if !validDecimalFloat(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// validDecimalFloat: digits, an optional point with digits on at least
// one side, an optional exponent with digits.
func validDecimalFloat(s string) bool {
	n, i := len(s), 0
	for i < n && isDigit(s[i]) {
		i++
	}
	digits := i
	if i < n && s[i] == '.' {
		i++
		for i < n && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i == n {
		return true
	}
	return exponentLen(s[i:]) == n-i
}

// inNode is UnaryExpression.createInExpression on a property.
type inNode struct {
	x    *propNode
	list map[string]struct{}
	not  bool
}

func newInNode(x *propNode, list []string, not bool) *inNode {
	m := make(map[string]struct{}, len(list))
	for _, s := range list {
		m[s] = struct{}{}
	}
	return &inNode{x: x, list: m, not: not}
}

func (n *inNode) eval(p Properties) (value, error) {
	v, err := n.x.eval(p)
	if err != nil || v.k != kString {
		return nullV, err
	}
	_, in := n.list[v.s]
	return boolV(in != n.not), nil
}

// strOpNode is 5.x's CONTAINS, STARTSWITH and ENDSWITH and their NOT
// forms: FALSE for an empty search, a missing or non-string value.
type strOpNode struct {
	op     tokKind
	not    bool
	x      node
	search string
}

func (n *strOpNode) eval(p Properties) (value, error) {
	if n.search == "" {
		return falseV, nil
	}
	v, err := n.x.eval(p)
	if err != nil {
		return nullV, err
	}
	if v.k != kString {
		return falseV, nil
	}
	var r bool
	switch n.op {
	case tContains:
		r = strings.Contains(v.s, n.search)
	case tStartsWith:
		r = strings.HasPrefix(v.s, n.search)
	default:
		r = strings.HasSuffix(v.s, n.search)
	}
	return boolV(r != n.not), nil
}
