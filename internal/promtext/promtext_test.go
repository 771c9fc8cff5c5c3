package promtext

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var s Set
	s.Add("b_total", "B things.", Counter, 3, "topic", `a"b\c`+"\nd")
	s.Add("a_gauge", "Help with \\ and \n.", Gauge, 1.5)
	s.Add("b_total", "ignored", Counter, 1e6, "topic", "x")
	s.Add("c", "C.", Gauge, math.Inf(1))
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	want := `# HELP a_gauge Help with \\ and \n.
# TYPE a_gauge gauge
a_gauge 1.5
# HELP b_total B things.
# TYPE b_total counter
b_total{topic="a\"b\\c\nd"} 3
b_total{topic="x"} 1e+06
# HELP c C.
# TYPE c gauge
c +Inf
`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	got, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[`b_total{topic="x"}`] != 1e6 || got["a_gauge"] != 1.5 || !math.IsInf(got["c"], 1) {
		t.Fatalf("parsed %v", got)
	}
}

func TestAddRejectsBadNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{"9x", nil}, {"a-b", nil}, {"", nil}, {"ok", []string{"bad-label", "v"}}, {"ok", []string{"odd"}}, {"ok", []string{"a:b", "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("Add(%q, %q) did not panic", tc.name, tc.labels)
				}
			}()
			var s Set
			s.Add(tc.name, "h", Gauge, 1, tc.labels...)
		})
	}
}

func TestParseRejects(t *testing.T) {
	for name, in := range map[string]string{
		"no family":       "x 1\n",
		"no type":         "# HELP x h\nx 1\n",
		"bad value":       "# HELP x h\n# TYPE x gauge\nx one\n",
		"bad labels":      "# HELP x h\n# TYPE x gauge\nx{a=b} 1\n",
		"bad escape":      "# HELP x h\n# TYPE x gauge\nx{a=\"\\t\"} 1\n",
		"unterminated":    "# HELP x h\n# TYPE x gauge\nx{a=\"b} 1\n",
		"duplicate":       "# HELP x h\n# TYPE x gauge\nx 1\nx 2\n",
		"family repeated": "# HELP x h\n# TYPE x gauge\nx 1\n# HELP x h\n# TYPE x gauge\n",
		"other family":    "# HELP x h\n# TYPE x gauge\ny 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(strings.NewReader(in)); err == nil {
				t.Fatalf("Parse(%q) accepted", in)
			}
		})
	}
}
