package sql92

import (
	"errors"
	"testing"
)

// FuzzParse compiles arbitrary text and evaluates what compiles: neither
// may panic, errors are syntax errors, and evaluation is deterministic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a > 5 AND b = 'x'", "a BETWEEN 1 AND 2", "a NOT IN ('x', 'y')", "a IS NOT NULL",
		"NOT (a CONTAINS 'x') OR b STARTSWITH 'y'", "-a <= 5.5E3", "(((a)))", "a = 'it''s' -- c\n",
		"/* c */ TRUE", "a > 0x10", "a = 1 b", "5 = TRUE", "a > 9223372036854775807",
	} {
		f.Add(s, "6", "x")
	}
	f.Fuzz(func(t *testing.T, expr, a, b string) {
		e, err := Compile(expr)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			return
		}
		p := props("a", a, "b", b)
		m := e.Match(p)
		if m != e.Match(p) {
			t.Fatal("Match is not deterministic")
		}
		e.Match(nil)
	})
}
