package sql92

import (
	"errors"
	"math"
	"strconv"
)

// Bounds of what Compile accepts.
const (
	// MaxLength is the longest expression in bytes.
	MaxLength = 16 << 10
	// MaxDepth bounds the nesting of parentheses and unary operators.
	MaxDepth = 128
)

// ErrSyntax is matched (errors.Is) by every error of Compile.
var ErrSyntax = errors.New("rocketmq: invalid SQL92 expression")

// SyntaxError is an expression Compile refuses, as Java's SelectorParser
// does (or past this package's bounds).
type SyntaxError struct {
	Pos int // byte offset in the expression
	Msg string
}

func (e *SyntaxError) Error() string {
	return "rocketmq: invalid SQL92 expression at offset " + strconv.Itoa(e.Pos) + ": " + e.Msg
}

// Is makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func syntaxErr(pos int, msg string) error { return &SyntaxError{Pos: pos, Msg: msg} }

// Expr is a compiled expression; safe for concurrent use.
type Expr struct {
	src  string
	root node
}

// String returns the source text of the expression.
func (e *Expr) String() string { return e.src }

// Compile parses expr with the grammar and the construction checks of
// Java's SelectorParser. Like Java it stops after the first complete
// expression: text after it is ignored once the token that ends the
// expression has been read.
func Compile(expr string) (*Expr, error) {
	if len(expr) > MaxLength {
		return nil, syntaxErr(MaxLength, "expression longer than "+strconv.Itoa(MaxLength)+" bytes")
	}
	p := parser{lex: lexer{src: expr}}
	n, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if n, err = asBoolean(n, 0); err != nil {
		return nil, err
	}
	return &Expr{src: expr, root: n}, nil
}

type parser struct {
	lex   lexer
	buf   [2]token
	errs  [2]error
	n     int // tokens buffered
	depth int
}

// peek returns the i-th token ahead (i < 2), lexing it if needed.
func (p *parser) peek(i int) (token, error) {
	for p.n <= i {
		if p.n > 0 && p.errs[p.n-1] != nil {
			return token{}, p.errs[p.n-1]
		}
		p.buf[p.n], p.errs[p.n] = p.lex.next()
		p.n++
	}
	return p.buf[i], p.errs[i]
}

func (p *parser) kind(i int) (tokKind, error) {
	t, err := p.peek(i)
	return t.kind, err
}

func (p *parser) consume() token {
	t := p.buf[0]
	p.buf[0], p.errs[0] = p.buf[1], p.errs[1]
	p.n--
	return t
}

func (p *parser) expect(k tokKind, what string) (token, error) {
	t, err := p.peek(0)
	if err != nil {
		return t, err
	}
	if t.kind != k {
		return t, syntaxErr(t.pos, "expected "+what)
	}
	return p.consume(), nil
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > MaxDepth {
		return syntaxErr(pos, "expression nested deeper than "+strconv.Itoa(MaxDepth))
	}
	return nil
}

func (p *parser) orExpr() (node, error) { return p.logicExpr(tOr, p.andExpr) }

func (p *parser) andExpr() (node, error) { return p.logicExpr(tAnd, p.equalityExpr) }

// logicExpr parses operand (op operand)*, left-associative, for op OR or
// AND; both sides must be boolean expressions.
func (p *parser) logicExpr(op tokKind, operand func() (node, error)) (node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek(0)
		if err != nil {
			return nil, err
		}
		if t.kind != op {
			return left, nil
		}
		p.consume()
		right, err := operand()
		if err != nil {
			return nil, err
		}
		if left, err = asBoolean(left, t.pos); err != nil {
			return nil, err
		}
		if right, err = asBoolean(right, t.pos); err != nil {
			return nil, err
		}
		left = &logicNode{or: op == tOr, l: left, r: right}
	}
}

func (p *parser) equalityExpr() (node, error) {
	left, err := p.comparisonExpr()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek(0)
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tEq, tNe:
			p.consume()
			right, err := p.comparisonExpr()
			if err != nil {
				return nil, err
			}
			if left, err = createEqual(left, right, t.pos); err != nil {
				return nil, err
			}
			if t.kind == tNe {
				left = &notNode{x: left}
			}
		case tIs:
			k, err := p.kind(1)
			if err != nil {
				return nil, err
			}
			p.consume()
			not := false
			if k == tNot {
				p.consume()
				not = true
			}
			if _, err := p.expect(tNull, "NULL after IS"); err != nil {
				return nil, err
			}
			left = &cmpNode{op: opEq, l: left, r: nullConst}
			if not {
				left = &notNode{x: left}
			}
		default:
			return left, nil
		}
	}
}

func (p *parser) comparisonExpr() (node, error) {
	left, err := p.unaryExpr()
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek(0)
		if err != nil {
			return nil, err
		}
		not := false
		k := t.kind
		switch k {
		case tGt, tGe, tLt, tLe:
			p.consume()
			right, err := p.unaryExpr()
			if err != nil {
				return nil, err
			}
			if left, err = createOrdering(cmpOps[k], left, right, t.pos); err != nil {
				return nil, err
			}
			continue
		case tNot:
			// Java's LOOKAHEAD(2): NOT must start NOT BETWEEN, NOT IN or
			// a NOT string operator here.
			if k, err = p.kind(1); err != nil {
				return nil, err
			}
			switch k {
			case tBetween, tIn, tContains, tStartsWith, tEndsWith:
			default:
				return nil, syntaxErr(t.pos, "expected BETWEEN, IN, CONTAINS, STARTSWITH or ENDSWITH after NOT")
			}
			p.consume()
			not = true
		case tBetween, tIn, tContains, tStartsWith, tEndsWith:
		default:
			return left, nil
		}
		p.consume()
		switch k {
		case tBetween:
			low, err := p.unaryExpr()
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(tAnd, "AND in BETWEEN"); err != nil {
				return nil, err
			}
			high, err := p.unaryExpr()
			if err != nil {
				return nil, err
			}
			if left, err = createBetween(left, low, high, not, t.pos); err != nil {
				return nil, err
			}
		case tIn:
			if _, err := p.expect(tLParen, "( after IN"); err != nil {
				return nil, err
			}
			var list []string
			for {
				s, err := p.expect(tString, "string literal in IN list")
				if err != nil {
					return nil, err
				}
				list = append(list, s.text)
				c, err := p.kind(0)
				if err != nil {
					return nil, err
				}
				if c != tComma {
					break
				}
				p.consume()
			}
			if _, err := p.expect(tRParen, ") after IN list"); err != nil {
				return nil, err
			}
			prop, ok := left.(*propNode)
			if !ok {
				return nil, syntaxErr(t.pos, "expected a property for IN")
			}
			left = newInNode(prop, list, not)
		default:
			s, err := p.expect(tString, "string literal")
			if err != nil {
				return nil, err
			}
			left = &strOpNode{op: k, not: not, x: left, search: s.text}
		}
	}
}

func (p *parser) unaryExpr() (node, error) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tPlus, tMinus, tNot:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		p.consume()
		x, err := p.unaryExpr()
		p.depth--
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tPlus:
			return x, nil
		case tMinus:
			return &negNode{x: x}, nil
		}
		if x, err = asBoolean(x, t.pos); err != nil {
			return nil, err
		}
		return &notNode{x: x}, nil
	}
	return p.primaryExpr()
}

func (p *parser) primaryExpr() (node, error) {
	t, err := p.peek(0)
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tString:
		p.consume()
		return &constNode{v: value{k: kString, s: t.text}}, nil
	case tDecimal:
		p.consume()
		return decimalConst(t)
	case tFloat:
		p.consume()
		return floatConst(t)
	case tTrue:
		p.consume()
		return trueConst, nil
	case tFalse:
		p.consume()
		return falseConst, nil
	case tNull:
		p.consume()
		return nullConst, nil
	case tID:
		p.consume()
		return &propNode{name: t.text}, nil
	case tLParen:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		p.consume()
		x, err := p.orExpr()
		p.depth--
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen, ")"); err != nil {
			return nil, err
		}
		return x, nil
	case tEOF:
		return nil, syntaxErr(t.pos, "unexpected end of expression")
	}
	return nil, syntaxErr(t.pos, "unexpected "+strconv.Quote(clip(t.text)))
}

// decimalConst is ConstantExpression.createFromDecimal: a long, kept as an
// int when it fits one.
func decimalConst(t token) (node, error) {
	text := t.text
	if n := len(text); text[n-1] == 'l' || text[n-1] == 'L' {
		text = text[:n-1]
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, syntaxErr(t.pos, "number "+clip(t.text)+" out of range")
	}
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		return &constNode{v: value{k: kInt, i: v}}, nil
	}
	return &constNode{v: value{k: kLong, i: v}}, nil
}

// floatConst is ConstantExpression.createFloat, which refuses a literal
// that is infinite or below Double.MIN_VALUE (so also 0.0).
func floatConst(t token) (node, error) {
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, syntaxErr(t.pos, "bad number "+clip(t.text))
	}
	if math.IsInf(v, 0) || v < math.SmallestNonzeroFloat64 {
		return nil, syntaxErr(t.pos, "number "+clip(t.text)+" out of range")
	}
	return &constNode{v: value{k: kDouble, f: v}}, nil
}

// asBoolean is SelectorParser.asBooleanExpression: boolean expressions
// stay, a property is cast, anything else is refused.
func asBoolean(n node, pos int) (node, error) {
	if isBoolean(n) {
		return n, nil
	}
	if p, ok := n.(*propNode); ok {
		return &boolCastNode{x: p}, nil
	}
	return nil, syntaxErr(pos, "expression will not result in a boolean value")
}

// isBoolean reports whether n is one of Java's BooleanExpression classes.
func isBoolean(n node) bool {
	switch n := n.(type) {
	case *constNode:
		return n.boolConst
	case *propNode, *negNode:
		return false
	}
	return true
}

var cmpOps = map[tokKind]cmpOp{tGt: opGt, tGe: opGe, tLt: opLt, tLe: opLe}

// checkOrderingOperand is ComparisonExpression.checkLessThanOperand.
func checkOrderingOperand(n node, pos int) error {
	if c, ok := n.(*constNode); ok {
		if c.v.isNumber() {
			return nil
		}
		return syntaxErr(pos, "value "+clip(c.v.String())+" cannot be compared")
	}
	if isBoolean(n) {
		return syntaxErr(pos, "a boolean expression cannot be compared")
	}
	return nil
}

func createOrdering(op cmpOp, l, r node, pos int) (node, error) {
	if err := checkOrderingOperand(l, pos); err != nil {
		return nil, err
	}
	if err := checkOrderingOperand(r, pos); err != nil {
		return nil, err
	}
	return &cmpNode{op: op, l: l, r: r}, nil
}

// createEqual is ComparisonExpression.createEqual with its checks.
func createEqual(l, r node, pos int) (node, error) {
	for _, n := range [2]node{l, r} {
		if c, ok := n.(*constNode); ok && c.v.k == kNull {
			return nil, syntaxErr(pos, "NULL cannot be compared")
		}
	}
	lc, lok := l.(*constNode)
	rc, rok := r.(*constNode)
	if lok && rok && lc.boolConst && !rc.boolConst {
		return nil, syntaxErr(pos, clip(lc.v.String())+" cannot be compared with "+rc.v.String())
	}
	return &cmpNode{op: opEq, l: l, r: r}, nil
}

// createBetween is ComparisonExpression.createBetween (and NotBetween):
// constant bounds must be non-null and in order.
func createBetween(v, low, high node, not bool, pos int) (node, error) {
	if !not {
		lc, lok := low.(*constNode)
		hc, hok := high.(*constNode)
		if lok && hok {
			if lc.v.k == kNull || hc.v.k == kNull {
				return nil, syntaxErr(pos, "BETWEEN bounds can not be NULL")
			}
			c, err := compare(hc.v, lc.v)
			if err != nil {
				return nil, syntaxErr(pos, "BETWEEN bounds cannot be compared")
			}
			if c < 0 {
				return nil, syntaxErr(pos, "BETWEEN low bound "+clip(lc.v.String())+" above high bound "+hc.v.String())
			}
		}
	}
	ops := [2]cmpOp{opGe, opLe}
	if not {
		ops = [2]cmpOp{opLt, opGt}
	}
	a, err := createOrdering(ops[0], v, low, pos)
	if err != nil {
		return nil, err
	}
	b, err := createOrdering(ops[1], v, high, pos)
	if err != nil {
		return nil, err
	}
	return &logicNode{or: not, l: a, r: b}, nil
}
