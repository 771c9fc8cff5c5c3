package namesrv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A kvConfig.json written by earlier versions (encoding/json, HTML not
// escaped) loads, and saving it again gives the same bytes.
func TestKVConfigFileFromEarlierVersion(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "kvConfig.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	kv, err := newKVConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, key, want string }{
		{"ORDER_TOPIC_CONFIG", "OrderTopic", "broker-a:4;broker-b:4"},
		{"ns2", "k", "v<&>"},
		{"ns2", "ü", `é"\`},
	} {
		if v, ok := kv.get(c.ns, c.key); !ok || v != c.want {
			t.Errorf("get(%s, %s) = %q, %v; want %q", c.ns, c.key, v, ok, c.want)
		}
	}
	if err := kv.save(); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, old) {
		t.Fatalf("saved\n%s\nwant the earlier bytes\n%s", again, old)
	}
}
