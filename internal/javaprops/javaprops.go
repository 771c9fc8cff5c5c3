// Package javaprops reads and writes the java.util.Properties text format
// that RocketMQ's broker.conf, namesrv.conf and the UPDATE_BROKER_CONFIG /
// GET_BROKER_CONFIG bodies use.
package javaprops

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Entry is one key and value in file order, with the line it starts on.
type Entry struct {
	Key, Value string
	Line       int
}

// ErrMalformed reports a \u escape without four hex digits, which
// java.util.Properties.load refuses ("Malformed \uxxxx encoding").
var ErrMalformed = errors.New("rocketmq: properties: malformed \\uxxxx encoding")

// Parse reads text as Properties.load does: '#' and '!' comment lines,
// '=', ':' or white space between key and value, backslash escapes and
// line continuations. Input is read as UTF-8 (Java reads an InputStream as
// ISO-8859-1; ASCII files read the same either way). Later keys replace
// earlier ones in Map; Parse keeps them all in order.
func Parse(text string) ([]Entry, error) {
	var out []Entry
	lines := splitLines(text)
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := trimLeft(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes.
		for endsContinued(line) && i+1 < len(lines) {
			line = line[:len(line)-1] + trimLeft(lines[i+1])
			i++
		}
		if endsContinued(line) { // continuation at end of input
			line = line[:len(line)-1]
		}
		k, v := splitKeyValue(line)
		key, err := unescape(k)
		if err != nil {
			return nil, fmt.Errorf("%w (line %d)", err, start)
		}
		val, err := unescape(v)
		if err != nil {
			return nil, fmt.Errorf("%w (line %d)", err, start)
		}
		out = append(out, Entry{Key: key, Value: val, Line: start})
	}
	return out, nil
}

// Map is Parse's entries as a map, the last of a repeated key winning.
func Map(text string) (map[string]string, error) {
	es, err := Parse(text)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(es))
	for _, e := range es {
		m[e.Key] = e.Value
	}
	return m, nil
}

// Format writes m as RocketMQ's MixAll.properties2String does: one
// "key=value\n" per entry, nothing escaped. Keys are sorted (Java's order
// is its Hashtable's).
func Format(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte('\n')
	}
	return b.String()
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeft(s string) string {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return s[i:]
}

func endsContinued(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line at the first unescaped '=', ':' or
// white space; white space and one '=' or ':' after the key are skipped.
func splitKeyValue(line string) (key, value string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || isSpace(c) {
			break
		}
		i++
	}
	if i > len(line) {
		i = len(line)
	}
	key, rest := line[:i], line[i:]
	rest = trimLeft(rest)
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeft(rest[1:])
	}
	return key, rest
}

func unescape(s string) (string, error) {
	if !strings.ContainsRune(s, '\\') {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", ErrMalformed
			}
			var r rune
			for _, h := range []byte(s[i+1 : i+5]) {
				d, ok := hexDigit(h)
				if !ok {
					return "", ErrMalformed
				}
				r = r<<4 | d
			}
			b.WriteRune(r)
			i += 4
		default:
			// Any other escaped character stands for itself; a multi-byte
			// UTF-8 character is copied whole.
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n - 1
		}
	}
	return b.String(), nil
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// Store writes m so that Parse (and Java's Properties.load) reads back
// exactly m: like Format, with backslashes, line breaks, tabs and form
// feeds escaped, and in keys also '=', ':', '#', '!' and spaces. Non-ASCII
// text is written as UTF-8, not as \u escapes.
func Store(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		escape(&b, k, true)
		b.WriteByte('=')
		escape(&b, m[k], false)
		b.WriteByte('\n')
	}
	return b.String()
}

func escape(b *strings.Builder, s string, key bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!':
			if key {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case ' ':
			if key || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
}
