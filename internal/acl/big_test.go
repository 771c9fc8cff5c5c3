package acl

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseLargeFileIsFast: a file at the size bound parses in linear
// time (keys, list items and lines of the largest accepted file).
func TestParseLargeFileIsFast(t *testing.T) {
	var b strings.Builder
	b.WriteString("dataVersion:\n")
	for i := 0; b.Len() < maxFileSize-64; i++ {
		b.WriteString("  k" + strconv.Itoa(i) + ": v\n")
	}
	start := time.Now()
	if _, err := Parse([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a %d-byte file took %v", b.Len(), d)
	}
}

// TestParseNestedFlowIsFast: brackets nested to the size bound are refused
// without descending into them.
func TestParseNestedFlowIsFast(t *testing.T) {
	n := maxFileSize/2 - 8
	data := "a: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
	start := time.Now()
	_, err := Parse([]byte(data))
	if err == nil || !strings.Contains(err.Error(), "nested flow") {
		t.Fatalf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestParseManyQuotesIsFast: a line of the size bound full of quotes
// costs linear time.
func TestParseManyQuotesIsFast(t *testing.T) {
	data := "a: " + strings.Repeat("x'", maxFileSize/2-8) + "\n"
	start := time.Now()
	if _, err := Parse([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
