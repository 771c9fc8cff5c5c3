package sql92

import (
	"strings"
)

type tokKind uint8

const (
	tEOF tokKind = iota
	tNot
	tAnd
	tOr
	tBetween
	tIn
	tTrue
	tFalse
	tNull
	tIs
	tContains
	tStartsWith
	tEndsWith
	tDecimal
	tFloat
	tString
	tID
	tEq     // =
	tNe     // <>
	tGt     // >
	tGe     // >=
	tLt     // <
	tLe     // <=
	tLParen // (
	tComma  // ,
	tRParen // )
	tPlus   // +
	tMinus  // -
)

// keywords are Java's reserved words (IGNORE_CASE), which win over an
// identifier of the same text.
var keywords = map[string]tokKind{
	"NOT": tNot, "AND": tAnd, "OR": tOr, "BETWEEN": tBetween, "IN": tIn,
	"TRUE": tTrue, "FALSE": tFalse, "NULL": tNull, "IS": tIs,
	"CONTAINS": tContains, "STARTSWITH": tStartsWith, "ENDSWITH": tEndsWith,
}

type token struct {
	kind tokKind
	pos  int
	text string // literal text; a string literal's value with '' undone
}

// lexer cuts tokens on demand, as Java's generated token manager does: the
// parser only lexes the tokens it looks at, so text after a complete
// expression is never lexed beyond the one or two tokens looked ahead at
// (Java ignores it, and so do we).
type lexer struct {
	src string
	pos int
}

func isIDStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIDPart(c byte) bool { return isIDStart(c) || c >= '0' && c <= '9' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next token or a lexical error.
func (l *lexer) next() (token, error) {
	s := l.src
	for l.pos < len(s) {
		switch c := s[l.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.pos++
			continue
		case c == '-' && strings.HasPrefix(s[l.pos:], "--"):
			// A line comment ends with a line break; without one it is
			// no comment and "-" is a minus sign.
			i := strings.IndexAny(s[l.pos:], "\r\n")
			if i < 0 {
				break
			}
			l.pos += i + 1
			if s[l.pos-1] == '\r' && l.pos < len(s) && s[l.pos] == '\n' {
				l.pos++
			}
			continue
		case c == '/' && strings.HasPrefix(s[l.pos:], "/*"):
			i := strings.Index(s[l.pos+2:], "*/")
			if i < 0 {
				return token{}, syntaxErr(l.pos, "unterminated comment")
			}
			l.pos += 2 + i + 2
			continue
		}
		break
	}
	start := l.pos
	if start >= len(s) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s[start]
	switch {
	case isIDStart(c):
		end := start + 1
		for end < len(s) && isIDPart(s[end]) {
			end++
		}
		l.pos = end
		text := s[start:end]
		if k, ok := keywords[strings.ToUpper(text)]; ok {
			return token{kind: k, pos: start, text: text}, nil
		}
		return token{kind: tID, pos: start, text: text}, nil
	case isDigit(c) || c == '.':
		dl, fl := decimalLen(s[start:]), floatLen(s[start:])
		switch {
		case fl > dl:
			l.pos = start + fl
			return token{kind: tFloat, pos: start, text: s[start:l.pos]}, nil
		case dl > 0:
			l.pos = start + dl
			return token{kind: tDecimal, pos: start, text: s[start:l.pos]}, nil
		}
		return token{}, syntaxErr(start, "unexpected character '.'")
	case c == '\'':
		var b strings.Builder
		for i := start + 1; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			l.pos = i + 1
			return token{kind: tString, pos: start, text: b.String()}, nil
		}
		return token{}, syntaxErr(start, "unterminated string literal")
	}
	k := tEOF
	n := 1
	switch c {
	case '=':
		k = tEq
	case '<':
		k = tLt
		if start+1 < len(s) {
			switch s[start+1] {
			case '>':
				k, n = tNe, 2
			case '=':
				k, n = tLe, 2
			}
		}
	case '>':
		k = tGt
		if start+1 < len(s) && s[start+1] == '=' {
			k, n = tGe, 2
		}
	case '(':
		k = tLParen
	case ')':
		k = tRParen
	case ',':
		k = tComma
	case '+':
		k = tPlus
	case '-':
		k = tMinus
	default:
		return token{}, syntaxErr(start, "unexpected character "+quoteByte(c))
	}
	l.pos = start + n
	return token{kind: k, pos: start, text: s[start:l.pos]}, nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return "0x" + string([]byte{hex[c>>4], hex[c&15]})
}

// decimalLen is the length of Java's DECIMAL_LITERAL at the start of s:
// "0" or a non-zero digit and digits, with an optional L suffix.
func decimalLen(s string) int {
	if len(s) == 0 || !isDigit(s[0]) {
		return 0
	}
	if s[0] == '0' {
		return 1
	}
	n := 1
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n < len(s) && (s[n] == 'l' || s[n] == 'L') {
		n++
	}
	return n
}

// floatLen is the length of Java's FLOATING_POINT_LITERAL at the start of
// s: digits "." digits* exponent?, "." digits+ exponent?, or digits
// exponent; 0 when there is none.
func floatLen(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	intDigits := n
	if n < len(s) && s[n] == '.' {
		n++
		frac := n
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		if intDigits == 0 && n == frac {
			return 0
		}
		return n + exponentLen(s[n:])
	}
	if intDigits == 0 {
		return 0
	}
	if e := exponentLen(s[n:]); e > 0 {
		return n + e
	}
	return 0
}

func exponentLen(s string) int {
	if len(s) == 0 || (s[0] != 'e' && s[0] != 'E') {
		return 0
	}
	n := 1
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	d := n
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n == d {
		return 0
	}
	return n
}
