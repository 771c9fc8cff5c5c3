package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer) *table { return &table{tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)} }

func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(t.tw, "\t")
		}
		fmt.Fprint(t.tw, cell(c))
	}
	fmt.Fprint(t.tw, "\n")
}

func (t *table) flush() error { return t.tw.Flush() }

// cell renders a table cell on one line, so that a value with tabs or
// newlines (a message body, a broker's remark) cannot break the columns.
func cell(v any) string {
	s := fmt.Sprint(v)
	if strings.ContainsAny(s, "\t\n\r") {
		s = strconv.Quote(s)
		s = s[1 : len(s)-1]
	}
	return s
}

// writeJSON writes v as one indented JSON document, the keys of every
// object sorted, whatever struct or map they came from.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// emit writes v as JSON with -o json, else calls tbl.
func (a *app) emit(v any, tbl func(t *table)) error {
	if a.json {
		return writeJSON(a.out, v)
	}
	t := newTable(a.out)
	tbl(t)
	return t.flush()
}

// humanTime formats a millisecond timestamp as Java's tools do
// (UtilAll.timeMillisToHumanString2, local time); "" for 0.
func humanTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000")
}
