package promtext

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Parse reads the text format strictly (tests check scrapes with it): every
// sample must follow the HELP and TYPE lines of its family, and names,
// label syntax and values must be valid. It returns the samples keyed by
// the metric name and its labels as written ("name{a=\"x\"}").
func Parse(r io.Reader) (map[string]float64, error) {
	out := make(map[string]float64)
	typed := make(map[string]bool)
	var help string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, _, _ := strings.Cut(line[len("# HELP "):], " ")
			if !validName(name, true) || typed[name] {
				return nil, fmt.Errorf("line %d: HELP of %q", n, name)
			}
			help = name
		case strings.HasPrefix(line, "# TYPE "):
			name, kind, _ := strings.Cut(line[len("# TYPE "):], " ")
			if name != help || (kind != string(Counter) && kind != string(Gauge)) {
				return nil, fmt.Errorf("line %d: TYPE %q %q after HELP %q", n, name, kind, help)
			}
			typed[name] = true
		case line == "" || strings.HasPrefix(line, "#"):
			return nil, fmt.Errorf("line %d: unexpected %q", n, line)
		default:
			key, val, ok := strings.Cut(line, " ")
			if !ok {
				return nil, fmt.Errorf("line %d: no value: %q", n, line)
			}
			name, labels, hasLabels := strings.Cut(key, "{")
			if name != help || !typed[name] {
				return nil, fmt.Errorf("line %d: sample of %q outside its family", n, name)
			}
			if hasLabels {
				if err := checkLabels(labels); err != nil {
					return nil, fmt.Errorf("line %d: %w", n, err)
				}
			}
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value: %w", n, err)
			}
			if _, dup := out[key]; dup {
				return nil, fmt.Errorf("line %d: duplicate sample %q", n, key)
			}
			out[key] = v
		}
	}
	return out, sc.Err()
}

// checkLabels checks `a="x",b="y"}`.
func checkLabels(s string) error {
	for {
		name, rest, ok := strings.Cut(s, "=")
		if !ok || !validName(name, false) || !strings.HasPrefix(rest, `"`) {
			return fmt.Errorf("bad labels %q", s)
		}
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' {
				if i+1 >= len(rest) || !strings.ContainsRune(`\n"`, rune(rest[i+1])) {
					return fmt.Errorf("bad escape in %q", s)
				}
				i++
			}
		}
		if i >= len(rest) {
			return fmt.Errorf("unterminated label value in %q", s)
		}
		s = rest[i+1:]
		switch {
		case s == "}":
			return nil
		case strings.HasPrefix(s, ","):
			s = s[1:]
		default:
			return fmt.Errorf("bad labels after value: %q", s)
		}
	}
}
