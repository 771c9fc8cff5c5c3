package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	for _, data := range [][]byte{[]byte(`{"v":1}`), []byte(`{"v":2}`), nil} {
		if err := Write(path, data, 0o644); err != nil {
			t.Fatalf("Write(%q): %v", data, err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("after Write(%q) the file holds %q, %v", data, got, err)
		}
		if _, err := os.Stat(path + TempSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("temporary file left behind: %v", err)
		}
	}
}

// A write that stops before the rename, as a crash would, leaves the old
// file in place (never only the backup) and no temporary file behind.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	boom := errors.New("power cut")
	old, next := []byte(`{"v":"old"}`), []byte(`{"v":"new"}`)
	for _, tc := range []struct {
		name    string
		at      Step
		keep    bool
		wantBak bool
	}{
		{"after the temporary file is synced", StepTempWritten, false, false},
		{"after the temporary file is synced, with backup", StepTempWritten, true, false},
		{"after the backup is written", StepBackedUp, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := Write(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			var keep func([]byte) bool
			if tc.keep {
				keep = func([]byte) bool { return true }
			}
			hook := func(s Step) error {
				if s == tc.at {
					return boom
				}
				return nil
			}
			if err := WriteHooked(path, next, 0o644, keep, hook); !errors.Is(err, boom) {
				t.Fatalf("write: %v, want %v", err, boom)
			}
			if _, err := os.Stat(path + TempSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary file left behind: %v", err)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
				t.Errorf("file holds %q, %v; want the old content", got, err)
			}
			got, err := os.ReadFile(path + BackupSuffix)
			if tc.wantBak && (err != nil || !bytes.Equal(got, old)) {
				t.Errorf("backup holds %q, %v; want the old content", got, err)
			}
			if !tc.wantBak && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("backup %q, %v; want none", got, err)
			}
		})
	}
}

// At every step of a write with backup, the file itself holds a complete
// version: the old one until the rename, the new one after it.
func TestWriteKeepingBackupFileNeverMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	old, next := []byte(`{"v":"old"}`), []byte(`{"v":"new"}`)
	if err := Write(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []Step
	hook := func(s Step) error {
		seen = append(seen, s)
		want := old
		if s == StepRenamed {
			want = next
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("at step %d the file holds %q, %v; want %q", s, got, err, want)
		}
		return nil
	}
	keep := func([]byte) bool { return true }
	if err := WriteHooked(path, next, 0o644, keep, hook); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Errorf("steps seen: %v, want all three", seen)
	}
}

// The temporary file cannot be created: the target is untouched.
func TestWriteUncreatableTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := Write(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path+TempSuffix, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o644); err == nil {
		t.Fatal("Write succeeded with a directory in the temporary file's place")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("file holds %q, want old", got)
	}
}

func TestWriteKeepingBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	wellFormed := func(b []byte) bool { return len(b) > 0 && b[0] == '{' }
	for _, tc := range []struct {
		data, wantBak string
	}{
		{`{"v":1}`, ""},
		{`{"v":2}`, `{"v":1}`},
		{`broken`, `{"v":2}`},
		{`{"v":3}`, `{"v":2}`}, // a malformed file does not replace the backup
	} {
		if err := WriteKeepingBackup(path, []byte(tc.data), 0o644, wellFormed); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tc.data {
			t.Errorf("file holds %q, want %q", got, tc.data)
		}
		got, err := os.ReadFile(path + BackupSuffix)
		if tc.wantBak == "" {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("backup after the first write: %q, %v", got, err)
			}
			continue
		}
		if string(got) != tc.wantBak {
			t.Errorf("backup holds %q, want %q", got, tc.wantBak)
		}
	}
}
