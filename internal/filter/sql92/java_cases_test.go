package sql92

import (
	"bufio"
	"net/url"
	"os"
	"strings"
	"testing"
)

// TestJavaCases checks Compile and evaluation against the answers of
// Java's filter module (5.3.3's SelectorParser and expression classes,
// which 4.9.8's grammar is a subset of) in testdata/java_cases.txt. Each
// line is the query-escaped expression, then tab-separated escaped
// name=value properties, then Java's compile result (ok, error) and value
// (TRUE, FALSE, NULL, ERROR for an exception, - when it did not compile).
// testdata/javagen writes the input and its JavaCases.java the last two
// columns.
func TestJavaCases(t *testing.T) {
	f, err := os.Open("testdata/java_cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 {
			t.Fatalf("line %d: %d fields", n, len(fields))
		}
		expr, err := url.QueryUnescape(fields[0])
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		m := make(map[string]string)
		for _, kv := range fields[1 : len(fields)-2] {
			k, v, _ := strings.Cut(kv, "=")
			k, err1 := url.QueryUnescape(k)
			v, err2 := url.QueryUnescape(v)
			if err1 != nil || err2 != nil {
				t.Fatalf("line %d: bad property %q", n, kv)
			}
			m[k] = v
		}
		wantCompile, wantVal := fields[len(fields)-2], fields[len(fields)-1]
		e, err := Compile(expr)
		gotCompile, gotVal := "ok", "-"
		if err != nil {
			gotCompile = "error"
		} else {
			val, known, err := e.Eval(func(name string) (string, bool) {
				v, ok := m[name]
				return v, ok
			})
			switch {
			case err != nil:
				gotVal = "ERROR"
			case !known:
				gotVal = "NULL"
			case val:
				gotVal = "TRUE"
			default:
				gotVal = "FALSE"
			}
		}
		if gotCompile != wantCompile || gotVal != wantVal {
			t.Errorf("line %d: %q with %v: got %s %s, Java %s %s (compile error: %v)", n, expr, m, gotCompile, gotVal, wantCompile, wantVal, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d cases", n)
	}
}
