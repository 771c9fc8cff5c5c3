package acl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The accounts file is Java's plain_acl.yml. Only the YAML that file uses
// is read: block maps and block lists (a list item may open a map on its
// own line), plain, single- and double-quoted scalars, empty values, "[]"
// and simple one-line flow lists of scalars, and comments. Anchors, tags,
// multi-line scalars, flow maps and documents are refused with the line.

// Bounds on what a file may make the parser hold.
const (
	maxFileSize = 1 << 20
	maxDepth    = 32
)

type nodeKind int

const (
	nullNode nodeKind = iota
	scalarNode
	mapNode
	listNode
)

type node struct {
	kind   nodeKind
	line   int
	scalar string
	keys   []string // mapNode, in file order
	vals   []*node  // mapNode values, or listNode items
}

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

type yline struct {
	num    int // 1-based
	indent int
	text   string // without indentation and comment
}

type yparser struct {
	lines []yline
	pos   int
}

func parseYAML(data []byte) (*node, error) {
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("file is larger than %d bytes", maxFileSize)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("file is not UTF-8")
	}
	p := &yparser{}
	for i, raw := range strings.Split(string(data), "\n") {
		num := i + 1
		raw = strings.TrimSuffix(raw, "\r")
		if i == 0 {
			raw = strings.TrimPrefix(raw, "\ufeff")
		}
		indent := 0
		for indent < len(raw) && raw[indent] == ' ' {
			indent++
		}
		rest := raw[indent:]
		if strings.HasPrefix(rest, "\t") {
			return nil, fmt.Errorf("line %d: tab in indentation", num)
		}
		text, err := stripComment(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", num, err)
		}
		text = strings.TrimRight(text, " \t")
		if text == "" {
			continue
		}
		if text == "---" || text == "..." {
			if len(p.lines) > 0 && text == "---" {
				return nil, fmt.Errorf("line %d: more than one document", num)
			}
			continue
		}
		p.lines = append(p.lines, yline{num: num, indent: indent, text: text})
	}
	if len(p.lines) == 0 {
		return &node{kind: nullNode}, nil
	}
	n, err := p.block(p.lines[0].indent, 0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.lines) {
		l := p.lines[p.pos]
		return nil, fmt.Errorf("line %d: unexpected indentation", l.num)
	}
	return n, nil
}

// stripComment removes a "#" comment that starts the text or follows a
// space, outside quotes. A quote opens a quoted scalar only at the start
// of a value, a key or a list item; it looks back at the last non-space
// byte only, so a line costs linear time.
func stripComment(s string) (string, error) {
	var quote byte
	var last byte // last non-space byte outside quotes, 0 if none
	nonSpace := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
			continue
		case quote != 0:
			if c == quote {
				if quote == '\'' && i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				quote, last = 0, c
			}
			continue
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], nil
		case (c == '"' || c == '\'') && (nonSpace == 0 || (nonSpace == 1 && last == '-') || last == ':' || last == '[' || last == ','):
			quote = c
		}
		if c != ' ' && c != '\t' {
			last = c
			nonSpace++
		}
	}
	if quote != 0 {
		return "", fmt.Errorf("unterminated %c quote", quote)
	}
	return s, nil
}

func isListItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

func (p *yparser) block(indent, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", p.lines[p.pos].num, maxDepth)
	}
	if isListItem(p.lines[p.pos].text) {
		return p.list(indent, depth)
	}
	return p.mapping(indent, depth)
}

func (p *yparser) list(indent, depth int) (*node, error) {
	n := &node{kind: listNode, line: p.lines[p.pos].num}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, fmt.Errorf("line %d: unexpected indentation", l.num)
		}
		if !isListItem(l.text) {
			break // a key after a list at that key's indentation
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		if rest == "" {
			p.pos++
			item, err := p.nested(indent, l.num, depth)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, item)
			continue
		}
		col := indent + len(l.text) - len(rest)
		if _, _, ok, err := splitKey(rest); err != nil {
			return nil, fmt.Errorf("line %d: %v", l.num, err)
		} else if ok || isListItem(rest) {
			// "- key: value" opens a map (or "- - x" a list) whose
			// first line is the rest of this one.
			p.lines[p.pos] = yline{num: l.num, indent: col, text: rest}
			item, err := p.block(col, depth+1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, item)
			continue
		}
		item, err := scalar(rest, l.num)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, item)
		p.pos++
	}
	return n, nil
}

// nested parses the block after a line at indent that ended with ":" or
// "-": a deeper block, or nothing (null).
func (p *yparser) nested(indent, line, depth int) (*node, error) {
	if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
		return p.block(p.lines[p.pos].indent, depth+1)
	}
	return &node{kind: nullNode, line: line}, nil
}

func (p *yparser) mapping(indent, depth int) (*node, error) {
	n := &node{kind: mapNode, line: p.lines[p.pos].num}
	seen := map[string]bool{}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, fmt.Errorf("line %d: unexpected indentation", l.num)
		}
		if isListItem(l.text) {
			return nil, fmt.Errorf("line %d: list item where a key was expected", l.num)
		}
		key, val, ok, err := splitKey(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", l.num, err)
		}
		if !ok {
			return nil, fmt.Errorf("line %d: expected \"key: value\"", l.num)
		}
		if seen[key] {
			return nil, fmt.Errorf("line %d: duplicate key %q", l.num, key)
		}
		p.pos++
		var v *node
		switch {
		case val != "":
			v, err = scalar(val, l.num)
		case p.pos < len(p.lines) && p.lines[p.pos].indent == indent && isListItem(p.lines[p.pos].text):
			// "key:" followed by a list at the key's indentation.
			v, err = p.list(indent, depth+1)
		default:
			v, err = p.nested(indent, l.num, depth)
		}
		if err != nil {
			return nil, err
		}
		seen[key] = true
		n.keys = append(n.keys, key)
		n.vals = append(n.vals, v)
	}
	return n, nil
}

// splitKey splits "key: value" or "key:"; ok is false for a line that is
// not a key.
func splitKey(text string) (key, val string, ok bool, err error) {
	if text[0] == '"' || text[0] == '\'' {
		end := quotedEnd(text)
		if end < 0 {
			return "", "", false, fmt.Errorf("unterminated quote")
		}
		rest := text[end:]
		if rest != ":" && !strings.HasPrefix(rest, ": ") {
			return "", "", false, nil
		}
		k, err := unquote(text[:end])
		if err != nil {
			return "", "", false, err
		}
		return k, strings.TrimSpace(rest[1:]), true, nil
	}
	i := strings.Index(text, ": ")
	if i < 0 {
		if !strings.HasSuffix(text, ":") {
			return "", "", false, nil
		}
		i = len(text) - 1
	}
	key = strings.TrimRight(text[:i], " ")
	if key == "" || strings.ContainsAny(key[:1], "[{&*!|>%@`") {
		return "", "", false, fmt.Errorf("unsupported key %q", key)
	}
	return key, strings.TrimSpace(text[i+1:]), true, nil
}

// quotedEnd returns the index just past the quoted scalar text starts
// with, or -1.
func quotedEnd(text string) int {
	q := text[0]
	for i := 1; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			i++
		case text[i] == q:
			if q == '\'' && i+1 < len(text) && text[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return -1
}

func scalar(s string, line int) (*node, error) {
	switch {
	case s == "[]":
		return &node{kind: listNode, line: line}, nil
	case s[0] == '[':
		if !strings.HasSuffix(s, "]") {
			return nil, fmt.Errorf("line %d: unterminated flow list", line)
		}
		n := &node{kind: listNode, line: line}
		for _, item := range splitFlow(s[1 : len(s)-1]) {
			item = strings.TrimSpace(item)
			if item == "" {
				return nil, fmt.Errorf("line %d: empty flow list item", line)
			}
			if item[0] == '[' {
				return nil, fmt.Errorf("line %d: nested flow collections are not supported", line)
			}
			v, err := scalar(item, line)
			if err != nil {
				return nil, err
			}
			if v.kind != scalarNode {
				return nil, fmt.Errorf("line %d: nested flow collections are not supported", line)
			}
			n.vals = append(n.vals, v)
		}
		return n, nil
	case s[0] == '"' || s[0] == '\'':
		end := quotedEnd(s)
		if end != len(s) {
			return nil, fmt.Errorf("line %d: text after a quoted value", line)
		}
		v, err := unquote(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		return &node{kind: scalarNode, line: line, scalar: v}, nil
	case strings.ContainsAny(s[:1], "{&*!|>%@`"):
		return nil, fmt.Errorf("line %d: unsupported YAML (anchor, alias, tag, block scalar or flow map); quote the value", line)
	case s == "~" || s == "null" || s == "Null" || s == "NULL":
		return &node{kind: nullNode, line: line}, nil
	}
	return &node{kind: scalarNode, line: line, scalar: s}, nil
}

// splitFlow splits a flow list's inside at commas outside quotes.
func splitFlow(s string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unquote(s string) (string, error) {
	if s[0] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	v, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("bad escape in a double-quoted value")
	}
	return v, nil
}
