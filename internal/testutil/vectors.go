package testutil

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// LoadJavaVectors decodes one group of dir/java-vectors.json (the outputs of
// the real Java classes) into v. Numbers go straight into int64 fields
// (encoding/json parses the literal text, never through float64).
func LoadJavaVectors(t testing.TB, dir, group string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "java-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	g, ok := all[group]
	if !ok {
		t.Fatalf("group %q missing", group)
	}
	if err := json.Unmarshal(g, v); err != nil {
		t.Fatalf("group %q: %v", group, err)
	}
}

// VectorFile is a .bin reference of java-vectors.json.
type VectorFile struct {
	File string `json:"file"`
	Size int    `json:"size"`
	Hex  string `json:"hex"`
}

// ReadVectorFile reads f below dir and checks its size and inline hex.
func ReadVectorFile(t testing.TB, dir string, f VectorFile) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, f.File))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != f.Size {
		t.Fatalf("%s: %d bytes, want %d", f.File, len(b), f.Size)
	}
	if f.Hex != "" && hex.EncodeToString(b) != f.Hex {
		t.Fatalf("%s: inline hex differs from the file", f.File)
	}
	return b
}

// MustHex decodes s or fails t.
func MustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// DiffBytes fails t with hex dumps of both sides when got and want differ.
func DiffBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if string(got) == string(want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: bytes differ at offset %d (got %d bytes, want %d)\ngot:\n%s\nwant:\n%s",
		what, i, len(got), len(want), hex.Dump(got), hex.Dump(want))
}
