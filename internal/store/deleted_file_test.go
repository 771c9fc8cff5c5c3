package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A deletedTopics.json written by earlier versions (encoding/json) loads,
// and saving it again gives the same bytes.
func TestDeletedTopicsFileFromEarlierVersion(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", deletedTopicsFile))
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{cfg: Config{Dir: t.TempDir()}}
	if err := os.WriteFile(s.dirPath(deletedTopicsFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.loadDeleted(); err != nil {
		t.Fatal(err)
	}
	if len(s.deleted) != 2 || s.deleted["TopicA"] != 1048576 || s.deleted["%RETRY%G"] != 0 {
		t.Fatalf("loaded %v", s.deleted)
	}
	if err := s.saveDeleted(); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(s.dirPath(deletedTopicsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, old) {
		t.Fatalf("saved %s, want the earlier bytes %s", again, old)
	}
}
