package remoting

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Test helpers over the captured frames (../testdata/wire). They read
// index.json, which records each frame's decoded extFields in wire order,
// and cut bodies straight out of the .bin files, so these tests do not
// depend on the frame codec.

const hxWireDir = "../testdata/wire"

type hxFrame struct {
	N             int               `json:"n"`
	File          string            `json:"file"`
	Direction     string            `json:"direction"`
	Sender        string            `json:"sender"`
	Code          int32             `json:"code"`
	RequestCode   *int32            `json:"requestCode"`
	SerializeType string            `json:"serializeType"`
	ExtFields     map[string]string `json:"extFields"`
	ExtFieldOrder []string          `json:"extFieldOrder"`
	BodyLength    int               `json:"bodyLength"`
	BodyKind      string            `json:"bodyKind"`
	Description   string            `json:"description"`
	Version       int32             `json:"version"`
	Pair          *int              `json:"pair"`
}

// reqCode is the request code the frame belongs to (its own code for a
// request, the answered request's code for a response).
func (f *hxFrame) reqCode() int32 {
	if f.RequestCode != nil {
		return *f.RequestCode
	}
	return f.Code
}

// ext rebuilds the frame's extFields in wire order.
func (f *hxFrame) ext() ExtFields {
	if f.ExtFields == nil {
		return nil
	}
	e := make(ExtFields, 0, len(f.ExtFieldOrder))
	for _, k := range f.ExtFieldOrder {
		e = append(e, Field{Key: k, Value: f.ExtFields[k]})
	}
	return e
}

// body returns the frame's body bytes.
func (f *hxFrame) body(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hxWireDir, f.File))
	if err != nil {
		t.Fatalf("frame %d: %v", f.N, err)
	}
	if f.BodyLength > len(b) {
		t.Fatalf("frame %d: body length %d > file size %d", f.N, f.BodyLength, len(b))
	}
	return b[len(b)-f.BodyLength:]
}

var hxIndexOnce = sync.OnceValues(func() ([]hxFrame, error) {
	raw, err := os.ReadFile(filepath.Join(hxWireDir, "index.json"))
	if err != nil {
		return nil, err
	}
	var idx struct {
		Frames []hxFrame `json:"frames"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, err
	}
	return idx.Frames, nil
})

func hxFrames(t testing.TB) []hxFrame {
	t.Helper()
	fr, err := hxIndexOnce()
	if err != nil {
		t.Fatalf("load wire index: %v", err)
	}
	if len(fr) < 300 {
		t.Fatalf("wire index has only %d frames", len(fr))
	}
	return fr
}

// hxDump formats bytes for mismatch reports.
func hxDump(b []byte) string { return "\n" + hex.Dump(b) }
