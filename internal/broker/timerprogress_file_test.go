package broker

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A timerProgress.json written by earlier versions loads, and writing it
// again gives the same bytes.
func TestTimerProgressFileFromEarlierVersion(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "timerProgress.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseOffsetRanges(old)
	if err != nil {
		t.Fatal(err)
	}
	want := offsetRanges{{0, 5}, {7, 9}, {12, 13}}
	if len(r) != len(want) {
		t.Fatalf("loaded %v, want %v", r, want)
	}
	for i := range want {
		if r[i] != want[i] {
			t.Fatalf("loaded %v, want %v", r, want)
		}
	}
	if again := r.appendJSON(nil); !bytes.Equal(again, old) {
		t.Fatalf("wrote %s, want the earlier bytes %s", again, old)
	}
}
