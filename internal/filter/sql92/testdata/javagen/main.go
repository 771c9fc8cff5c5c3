// Command javagen writes the inputs of java_cases.txt: expressions from
// the package's tests, generated ones and token soups, each with property
// sets. JavaCases.java (compiled against the filter module's expression
// and parser classes and Guava) appends Java's answers:
//
//	go run ./internal/filter/sql92/testdata/javagen | java -cp <classes>:<guava.jar> JavaCases > internal/filter/sql92/testdata/java_cases.txt
package main

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
)

var r = rand.New(rand.NewPCG(1, 2))

func pick(s ...string) string { return s[r.IntN(len(s))] }

var props = []string{"a", "b", "c"}
var nums = []string{"0", "1", "5", "6", "10", "2147483647", "2147483648", "3000000000", "9223372036854775807", "5L", "5.0", "5.5", ".5", "5.", "1e3", "1E-3", "3.1E10", "0.0", "1e400"}
var strs = []string{"'x'", "'y'", "''", "'5'", "'it''s'", "'abc'", "'ab'", "'bc'"}

func lit() string {
	switch r.IntN(6) {
	case 0, 1, 2:
		n := pick(nums...)
		if r.IntN(4) == 0 {
			n = "-" + n
		}
		return n
	case 3:
		return pick(strs...)
	case 4:
		return pick("TRUE", "FALSE")
	}
	return "NULL"
}

func operand() string {
	if r.IntN(2) == 0 {
		p := pick(props...)
		if r.IntN(8) == 0 {
			p = "-" + p
		}
		return p
	}
	return lit()
}

func pred(d int) string {
	switch r.IntN(11) {
	case 0:
		return operand() + " " + pick("=", "<>", ">", ">=", "<", "<=") + " " + operand()
	case 1:
		return pick(props...) + pick(" ", " NOT ") + "BETWEEN " + operand() + " AND " + operand()
	case 2:
		l := []string{pick(strs...)}
		for r.IntN(2) == 0 {
			l = append(l, pick(strs...))
		}
		return operand() + pick(" IN (", " NOT IN (") + strings.Join(l, ", ") + ")"
	case 3:
		return operand() + pick(" IS NULL", " IS NOT NULL")
	case 4:
		return operand() + " " + pick("", "NOT ") + pick("CONTAINS", "STARTSWITH", "ENDSWITH") + " " + pick(strs...)
	case 5:
		return pick("TRUE", "FALSE", "NULL", pick(props...))
	case 6, 7:
		if d > 0 {
			return gen(d-1) + pick(" AND ", " OR ", " and ", " Or ") + gen(d-1)
		}
	case 8:
		if d > 0 {
			return "NOT " + pick("(", "") + gen(d-1) + pick(")", "")
		}
	case 9:
		if d > 0 {
			return "(" + gen(d-1) + ")" + pick("", " = TRUE", " = FALSE", " = 'x'", " IS NULL")
		}
	}
	return pick(props...) + " " + pick("=", "<>", ">", ">=", "<", "<=") + " " + lit()
}

func gen(d int) string { return pred(d) }

var toks = []string{"a", "b", "5", "5.5", "-", "+", "'x'", "TRUE", "NULL", "=", "<>", ">", "<=", "AND", "OR", "NOT", "BETWEEN", "IN", "(", ")", ",", "IS", "CONTAINS", "--", "/*", "*/", "\n", "#", "0x10", "007", "e5", ".", "$x", "_"}

func soup() string {
	var b strings.Builder
	for range 1 + r.IntN(8) {
		b.WriteString(pick(toks...))
		if r.IntN(3) > 0 {
			b.WriteString(" ")
		}
	}
	return b.String()
}

var vals = []string{"5", "6", "4", "5.5", "abc", "3000000000", "-1", "true", "TRUE", "x", "y", "", " 6", "0x10", "1e3", "NaN", "Infinity", "+7", "007", "it's", "xabcx", "5.5f", "0x1p3", "-0", "2147483648", "9223372036854775808"}

func propSet() string {
	var b strings.Builder
	for _, p := range props {
		if r.IntN(4) == 0 {
			continue
		}
		b.WriteString("\t" + url.QueryEscape(p) + "=" + url.QueryEscape(pick(vals...)))
	}
	return b.String()
}

func main() {
	var exprs []string
	for range 700 {
		exprs = append(exprs, gen(r.IntN(4)))
	}
	for range 600 {
		exprs = append(exprs, soup())
	}
	for _, f := range fixed {
		line := url.QueryEscape(f.expr)
		for i := 0; i+1 < len(f.props); i += 2 {
			line += "\t" + url.QueryEscape(f.props[i]) + "=" + url.QueryEscape(f.props[i+1])
		}
		fmt.Println(line)
	}
	seen := map[string]bool{}
	for _, e := range exprs {
		if seen[e] {
			continue
		}
		seen[e] = true
		for range 2 {
			fmt.Println(url.QueryEscape(e) + propSet())
		}
	}
}
