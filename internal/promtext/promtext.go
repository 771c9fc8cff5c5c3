// Package promtext writes metrics in the Prometheus text exposition format
// (version 0.0.4): one HELP and one TYPE line per family, then its
// samples, families sorted by name. It holds no state beyond one Set.
package promtext

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of the format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Kind is a family's TYPE.
type Kind string

const (
	Counter Kind = "counter"
	Gauge   Kind = "gauge"
)

type family struct {
	help    string
	kind    Kind
	samples []byte // "name{labels} value\n" lines
}

// Set collects the samples of one scrape. The zero value is ready.
type Set struct {
	fams map[string]*family
}

// Add appends a sample of family name. labels are name, value pairs;
// label values are escaped. The first Add of a family sets its help and
// kind. A metric or label name that the format does not allow, or an odd
// labels list, panics: names are the program's constants.
func (s *Set) Add(name, help string, kind Kind, value float64, labels ...string) {
	if !validName(name, true) {
		panic("promtext: bad metric name " + strconv.Quote(name))
	}
	if len(labels)%2 != 0 {
		panic("promtext: odd label list for " + name)
	}
	if s.fams == nil {
		s.fams = make(map[string]*family)
	}
	f := s.fams[name]
	if f == nil {
		f = &family{help: help, kind: kind}
		s.fams[name] = f
	}
	b := append(f.samples, name...)
	if len(labels) > 0 {
		b = append(b, '{')
		for i := 0; i < len(labels); i += 2 {
			if !validName(labels[i], false) {
				panic("promtext: bad label name " + strconv.Quote(labels[i]))
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, labels[i]...)
			b = append(b, '=', '"')
			b = appendEscaped(b, labels[i+1], false)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendValue(b, value)
	f.samples = append(b, '\n')
}

// WriteTo writes every family, sorted by name.
func (s *Set) WriteTo(w io.Writer) (int64, error) {
	names := make([]string, 0, len(s.fams))
	for n := range s.fams {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []byte
	for _, n := range names {
		f := s.fams[n]
		out = append(out, "# HELP "...)
		out = append(out, n...)
		out = append(out, ' ')
		out = appendEscaped(out, f.help, true)
		out = append(out, "\n# TYPE "...)
		out = append(out, n...)
		out = append(out, ' ')
		out = append(out, f.kind...)
		out = append(out, '\n')
		out = append(out, f.samples...)
	}
	k, err := w.Write(out)
	return int64(k), err
}

// validName reports whether n matches [a-zA-Z_:][a-zA-Z0-9_:]* (colons
// only in metric names).
func validName(n string, metric bool) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (i > 0 && c >= '0' && c <= '9') || (metric && c == ':')
		if !ok {
			return false
		}
	}
	return true
}

// appendEscaped escapes a backslash and a newline, and a double quote in
// label values (not in HELP text).
func appendEscaped(b []byte, s string, help bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '"' && !help:
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
	}
	return b
}

func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
