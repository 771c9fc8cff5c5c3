package sql92

import (
	"errors"
	"strings"
	"testing"
)

func props(kv ...string) Properties {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// The expressions of Java's ParserTest and ExpressionTest, and the
// grammar's corners.
func TestCompile(t *testing.T) {
	long := "1" + strings.Repeat("111111111111111111111111111111111111111111111111111", 2048) + "." +
		strings.Repeat("111111111111111111111111111111111111111111111111111", 2048)
	tests := []struct {
		expr string
		ok   bool
	}{
		{"a=3 and b<>4 And c>5 AND d<=4", true},
		{"a=3  and    b<>4 And c>5 AND d<=4", true},
		{"a=3 or b<>4 Or c>5 OR d<=4", true},
		{"a in ('3', '4', '5')", true},
		{"(a not in ('6', '4', '5')) or (b in ('3', '4', '5'))", true},
		{"(a between 2 and 10) AND (b not between 6 and 9)", true},
		{"a is null", true},
		{"a is not null", true},
		{"a <= now", true},
		{"TAGS is not null and TAGS='''''tag'''''", true},
		{"a and between 2 and 10", false},
		{"a > 100000000000000000000000", false},
		{" a between 10 and 0", false},
		{"a > " + long, false},
		{"a > " + long[:400] + ".5", false},
		{"a > " + long[:300] + ".5", true},
		{"a > 1e400", false},
		{"a > 0.0", false}, // below Double.MIN_VALUE, as createFloat says
		{"a > 1e-400", false},
		{"a > 9223372036854775807", true},
		{"a > 9223372036854775808", false},
		{"a > -9223372036854775808", false},
		{"a > 5L", true},
		{"a > .5", true},
		{"a > 5.", true},
		{"a > 5.E3", true},
		{"a > 5e3", true},
		{"a > 0x10", true}, // "0", then the rest is never looked at
		{"a = 1 b = 2", true},
		{"a = 1 )", true},
		{"a = 1 #", false},        // the token after is lexed
		{"a = 1 NOT x", false},    // NOT must start NOT BETWEEN or NOT IN
		{"a = 1 IS x", false},     // IS must start IS [NOT] NULL
		{"a = 1 -- note", true},   // no line break: "-" is a token, ignored
		{"a = -- note\n 1", true}, // a comment
		{"a = /* note */ 1", true},
		{"a = /* note 1", false},
		{"a = 'x", false},
		{"", false},
		{"a", true},
		{"TRUE", true},
		{"NULL", true},
		{"5", false},
		{"'x'", false},
		{"a = NULL", false},
		{"NULL = a", false},
		{"TRUE = 5", false},
		{"5 = TRUE", true},
		{"a > 'x'", false},
		{"a > TRUE", false},
		{"(a > 1) > 2", false},
		{"NOT a > 5", false}, // (NOT a) > 5
		{"NOT (a > 5)", true},
		{"NOT 5", false},
		{"-a > 5", true},
		{"+a > 5", true},
		{"'a' IN ('a')", false},
		{"a IN ()", false},
		{"a IN (1)", false},
		{"a BETWEEN 1 AND", false},
		{"a NOT BETWEEN 10 AND 0", true}, // no bound check
		{"a BETWEEN NULL AND 3", false},
		{"a CONTAINS 'x'", true},
		{"a NOT STARTSWITH 'x' AND b ENDSWITH 'y'", true},
		{"a CONTAINS b", false},
		{"contains = 'x'", false},
		{"a.b = 1", false},
		{"$a_1 = 1", true},
		{"a = \"x\"", false},
		{"a != 1", false},
		{strings.Repeat("(", MaxDepth) + "a" + strings.Repeat(")", MaxDepth), true},
		{strings.Repeat("(", MaxDepth+1) + "a" + strings.Repeat(")", MaxDepth+1), false},
		{strings.Repeat("NOT ", MaxDepth+1) + "a", false},
		{"a = '" + strings.Repeat("x", MaxLength) + "'", false},
	}
	for _, tc := range tests {
		name := tc.expr
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			e, err := Compile(tc.expr)
			if tc.ok != (err == nil) {
				t.Fatalf("Compile: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			if err == nil && e.String() != tc.expr {
				t.Fatalf("String() = %q", e.String())
			}
		})
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		expr  string
		props []string
		want  bool
	}{
		// Java's ExpressionTest.
		{"TAGS is not null and TAGS='''''tag'''''", []string{"TAGS", "''tag''"}, true},
		{"a between up and low", []string{"a", "3.14"}, false},
		{"a between up and low", []string{"a", "3.14", "up", "up", "low", "low"}, false},
		{"key is not null and key between 0 and 100", []string{"key", "con"}, false},
		{"a between 0 and 100", []string{"a", "abc"}, false},
		{"a=b", []string{"a", "3.14", "b", "3.14"}, true},
		{"a<>b", []string{"a", "3.14", "b", "3.14"}, false},
		{"a<>b", []string{"a", "3.14", "b", "3.141"}, true},
		{"a > 3.1E10", []string{"a", "3.1415E10"}, true},
		{"a > 3.14", []string{"a", "3.1415"}, true},
		{"a > b", []string{"a", "10", "b", "20"}, false},
		{"a > b", []string{"a", "20", "b", "10"}, true},
		{"a is null OR a='hello'", nil, true},
		{"a is null OR a='hello'", []string{"a", "hello"}, true},
		{"a is null OR a='hello'", []string{"a", "abc"}, false},
		{"a=TRUE OR b=FALSE", []string{"a", "true", "b", "false"}, true},
		{"a=TRUE OR b=FALSE", []string{"a", "false", "b", "true"}, false},
		{"a is not null and a='hello'", []string{"a", "hello"}, true},
		{"a is not null and a='hello'", nil, false},
		{"a=3 and b<>4 And c>5 AND d<=4", []string{"a", "3", "b", "5", "c", "6", "d", "1"}, true},
		{"a=3 and b<>4 And c>5 AND d<=4", []string{"a", "4", "b", "5", "c", "6", "d", "1"}, false},
		{"a=3 or b<>4 Or c>5 OR d<=4", []string{"a", "3"}, true},
		{"a=3 or b<>4 Or c>5 OR d<=4", []string{"a", "4", "b", "5"}, true},
		{"a=3 or b<>4 Or c>5 OR d<=4", []string{"a", "4", "b", "4", "c", "6"}, true},
		{"a=3 or b<>4 Or c>5 OR d<=4", []string{"a", "4", "b", "4", "c", "3", "d", "2"}, true},
		{"a=3 or b<>4 Or c>5 OR d<=4", []string{"a", "4", "b", "4", "c", "3", "d", "10"}, false},
		{"a in ('3', '4', '5')", []string{"a", "3"}, true},
		{"a in ('3', '4', '5')", []string{"a", "5"}, true},
		{"a in ('3', '4', '5')", []string{"a", "8"}, false},
		{"a not in ('3', '4', '5')", []string{"a", "8"}, true},
		{"a not in ('3', '4', '5')", []string{"a", "4"}, false},
		{"a between 2 and 10", []string{"a", "2"}, true},
		{"a between 2 and 10", []string{"a", "10"}, true},
		{"a between 2 and 10", []string{"a", "3"}, true},
		{"a between 2 and 10", []string{"a", "1"}, false},
		{"a between 2 and 10", []string{"a", "11"}, false},
		{"a not between 2 and 10", []string{"a", "1"}, true},
		{"a not between 2 and 10", []string{"a", "11"}, true},
		{"a not between 2 and 10", []string{"a", "2"}, false},
		{"a not between 2 and 10", []string{"a", "10"}, false},
		{"a is null", []string{"abc", "2"}, true},
		{"a is null", []string{"a", "2"}, false},
		{"a is not null", []string{"a", "2"}, true},
		{"a is not null", []string{"abc", "2"}, false},

		// A missing property is unknown: never TRUE, also under NOT.
		{"a > 5", nil, false},
		{"NOT (a > 5)", nil, false},
		{"a <> 'x'", nil, false},
		{"a not in ('x')", nil, false},
		{"NOT (a > 5) OR TRUE", nil, true},
		{"a > 5 AND FALSE", nil, false},
		{"NOT (a > 5 AND FALSE)", nil, true},
		// A value Java cannot convert fails the whole evaluation, even
		// where the other side of OR is TRUE.
		{"a > 5 OR b = 'x'", []string{"a", "abc", "b", "x"}, false},
		{"b = 'x' OR a > 5", []string{"a", "abc", "b", "x"}, true},
		{"a = 5", []string{"a", "abc"}, false},
		{"a <> 5", []string{"a", "abc"}, false},
		// An int constant parses the property as an int.
		{"a > 5", []string{"a", "6"}, true},
		{"a > 5", []string{"a", "+6"}, true},
		{"a > 5", []string{"a", "5.5"}, false},
		{"a > 5", []string{"a", "3000000000"}, false},
		{"a > 5", []string{"a", " 6"}, false},
		{"a > 5000000000", []string{"a", "6000000000"}, true},
		{"a > 5.0", []string{"a", "5.5"}, true},
		{"a > 5.0", []string{"a", " 5.5 "}, true},
		{"a > 5.0", []string{"a", "5.5f"}, true},
		{"a > 5.0", []string{"a", "0x1.8p3"}, true},
		{"a > 5.0", []string{"a", "Infinity"}, true},
		{"a > 5.0", []string{"a", "inf"}, false},
		{"a > 5.0", []string{"a", "NaN"}, true}, // Double.compareTo puts NaN last
		{"a = 5", []string{"a", "05"}, true},
		{"a = 5.0", []string{"a", "5"}, true},
		{"a = '5'", []string{"a", "5"}, true},
		{"a = '5'", []string{"a", "05"}, false},
		{"5 = a", []string{"a", "5"}, true},
		{"a = TRUE", []string{"a", "TrUe"}, true},
		{"a = TRUE", []string{"a", "yes"}, false},
		{"a = b", []string{"a", "x", "b", "x"}, true},
		{"a > b", []string{"a", "x", "b", "y"}, false},
		{"a", []string{"a", "true"}, false},
		{"TRUE", nil, true},
		{"NULL", nil, false},
		{"5 = TRUE", nil, false},
		{"(a > 1) = TRUE", []string{"a", "2"}, true},
		{"(a > 1) = 'x'", []string{"a", "2"}, false},
		{"-a > 5", []string{"a", "-6"}, false},
		{"a > -5", []string{"a", "-4"}, true},
		{"a > --5", []string{"a", "6"}, true},
		{"a between -1 and 1", []string{"a", "0"}, true},
		{"a BETWEEN 1 AND 2 AND b = 'x'", []string{"a", "1", "b", "x"}, true},
		{"a > 5 AND b = 'x'", []string{"a", "6", "b", "x"}, true},
		{"a > 5 AND b = 'x'", []string{"a", "6", "b", "y"}, false},
		{"a > 5 AND b = 'x'", []string{"a", "5", "b", "x"}, false},
		{"a = 1 b = 2", []string{"a", "1"}, true},
		{"a CONTAINS 'bc'", []string{"a", "abcd"}, true},
		{"a CONTAINS 'bc'", []string{"a", "acbd"}, false},
		{"a NOT CONTAINS 'bc'", []string{"a", "acbd"}, true},
		{"a NOT CONTAINS 'bc'", nil, false},
		{"a CONTAINS ''", []string{"a", "abc"}, false},
		{"a NOT CONTAINS ''", []string{"a", "abc"}, false},
		{"a STARTSWITH 'ab'", []string{"a", "abc"}, true},
		{"a NOT STARTSWITH 'ab'", []string{"a", "abc"}, false},
		{"a ENDSWITH 'bc'", []string{"a", "abc"}, true},
		{"a NOT ENDSWITH 'bc'", []string{"a", "abd"}, true},
		{"5 CONTAINS '5'", nil, false},
		{"a IN ('x') OR a CONTAINS 'y'", []string{"a", "zyz"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Match(props(tc.props...)); got != tc.want {
				t.Fatalf("Match(%q) = %v, want %v", tc.props, got, tc.want)
			}
		})
	}
}

func TestEval(t *testing.T) {
	tests := []struct {
		expr       string
		props      []string
		val, known bool
		failed     bool
	}{
		{"a > 5", []string{"a", "6"}, true, true, false},
		{"a > 5", []string{"a", "4"}, false, true, false},
		{"a > 5", nil, false, false, false},
		{"a > 5", []string{"a", "x"}, false, false, true},
		{"TRUE = a", []string{"a", "true"}, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := Compile(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			val, known, err := e.Eval(props(tc.props...))
			if val != tc.val || known != tc.known || (err != nil) != tc.failed {
				t.Fatalf("Eval = %v, %v, %v; want %v, %v, failed %v", val, known, err, tc.val, tc.known, tc.failed)
			}
		})
	}
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "b", -1},
		{"b", "a", 1},
		{"a", "a", 0},
		{"a", "ab", -1},
		{"\U0001F600", "\uFF01", -1}, // a surrogate pair sorts below U+FF01
		{"\uFF01", "\U0001F600", 1},
	}
	for _, tc := range tests {
		if got := compareUTF16(tc.a, tc.b); got != tc.want {
			t.Errorf("compareUTF16(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	e, err := Compile("a > 5 AND b = 'x' AND c IN ('p', 'q')")
	if err != nil {
		b.Fatal(err)
	}
	p := props("a", "6", "b", "x", "c", "q")
	b.ReportAllocs()
	for b.Loop() {
		if !e.Match(p) {
			b.Fatal("no match")
		}
	}
}
