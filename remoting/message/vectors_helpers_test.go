package message

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// loadVectors decodes one group of testdata/java-vectors.json into v.
// Numbers go straight into int64 fields (encoding/json parses the literal
// text, never through float64).
func loadVectors(t testing.TB, group string, v any) {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/java-vectors.json")
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

// vfile is a .bin reference of java-vectors.json.
type vfile struct {
	File string `json:"file"`
	Size int    `json:"size"`
	Hex  string `json:"hex"`
}

func readVFile(t testing.TB, f vfile) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata", f.File))
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

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// diffBytes fails with hex dumps of both sides.
func diffBytes(t testing.TB, what string, got, want []byte) {
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

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
