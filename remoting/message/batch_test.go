package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/go-rocketmq/rocketmq"
	"maps"
	"testing"
)

type batchVectors struct {
	BatchPropertiesString string `json:"batchPropertiesString"`
	Encoded               vfile  `json:"encoded"`
	Elements              []struct {
		Offset           int               `json:"offset"`
		Length           int               `json:"length"`
		Flag             int32             `json:"flag"`
		BodyHex          string            `json:"bodyHex"`
		PropertiesString string            `json:"propertiesString"`
		Properties       map[string]string `json:"properties"`
		Hex              string            `json:"hex"`
	} `json:"elements"`
	ProtocolMd54Example struct {
		Hex    string `json:"hex"`
		Length int    `json:"length"`
	} `json:"protocolMd54Example"`
}

func TestBatchJavaVectors(t *testing.T) {
	var v messagesVectors
	loadVectors(t, "messages", &v)
	bv := v.Batch
	bin := readVFile(t, bv.Encoded)
	if len(bv.Elements) != 3 {
		t.Fatalf("%d elements", len(bv.Elements))
	}

	els, err := DecodeBatchElements(bin)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := DecodeBatch(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(els) != 3 || len(msgs) != 3 {
		t.Fatalf("%d elements, %d messages", len(els), len(msgs))
	}
	var javaOrder []*rocketmq.Message
	for i, w := range bv.Elements {
		diffBytes(t, "element", bin[w.Offset:w.Offset+w.Length], mustHex(t, w.Hex))
		if els[i].Flag != w.Flag || els[i].Properties != w.PropertiesString {
			t.Errorf("element %d: flag %d props %q", i, els[i].Flag, els[i].Properties)
		}
		diffBytes(t, "element body", els[i].Body, mustHex(t, w.BodyHex))
		if msgs[i].Flag != w.Flag || !bytes.Equal(msgs[i].Body, mustHex(t, w.BodyHex)) || !maps.Equal(msgs[i].Properties, w.Properties) {
			t.Errorf("message %d: %+v", i, msgs[i])
		}
		javaOrder = append(javaOrder, &rocketmq.Message{Flag: w.Flag, Body: mustHex(t, w.BodyHex), Properties: w.Properties})
	}

	// Our properties are sorted; Java's come in HashMap order. Where they
	// agree the bytes must too, else compare element by element.
	got, err := AppendBatch(nil, javaOrder)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(bin) {
		t.Fatalf("batch of %d bytes, want %d", len(got), len(bin))
	}
	back, err := DecodeBatch(got)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range bv.Elements {
		if EncodeProperties(w.Properties) == w.PropertiesString {
			diffBytes(t, "encoded element", got[w.Offset:w.Offset+w.Length], mustHex(t, w.Hex))
		}
		if !maps.Equal(back[i].Properties, w.Properties) || back[i].Flag != w.Flag {
			t.Errorf("round trip element %d: %+v", i, back[i])
		}
	}
	if !maps.Equal(DecodeProperties(bv.BatchPropertiesString), map[string]string{"WAIT": "true"}) {
		t.Errorf("batch properties %q", bv.BatchPropertiesString)
	}

	t.Run("protocolMd54Example", func(t *testing.T) {
		want := mustHex(t, bv.ProtocolMd54Example.Hex)
		got, err := AppendBatch(nil, []*rocketmq.Message{{Body: []byte("A"), Properties: map[string]string{rocketmq.PropertyUniqKey: "X"}}})
		if err != nil {
			t.Fatal(err)
		}
		diffBytes(t, "5.4 example", got, want)
	})
}

// TestBatchWire decodes the SEND_BATCH_MESSAGE bodies captured from the
// Java and the official Go client.
func TestBatchWire(t *testing.T) {
	idx := loadWireIndex(t)
	seen := 0
	for _, f := range idx.Frames {
		if f.BodyKind != "batch-messages" {
			continue
		}
		seen++
		t.Run(f.File, func(t *testing.T) {
			msgs, err := DecodeBatch(wireBody(t, f.File))
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != len(f.BatchMessages) {
				t.Fatalf("%d messages, want %d", len(msgs), len(f.BatchMessages))
			}
			for i, w := range f.BatchMessages {
				if len(msgs[i].Body) != w.BodyLength || !maps.Equal(msgs[i].Properties, w.Properties) {
					t.Errorf("message %d: %d bytes %v, want %+v", i, len(msgs[i].Body), msgs[i].Properties, w)
				}
			}
		})
	}
	if seen != 3 {
		t.Errorf("%d batch frames, want 3", seen)
	}
}

func TestBatchCorrupt(t *testing.T) {
	good, err := AppendBatch(nil, []*rocketmq.Message{
		{Flag: 1, Body: []byte("one"), Properties: map[string]string{"UNIQ_KEY": "A"}},
		{Flag: 2, Body: []byte("two"), Properties: map[string]string{"UNIQ_KEY": "B"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	cases := []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"short tail", func(b []byte) []byte { return append(b, 0, 0, 0) }},
		{"totalSize negative", func(b []byte) []byte { be.PutUint32(b, 0xFFFFFFF0); return b }},
		{"totalSize too small", func(b []byte) []byte { be.PutUint32(b, 21); return b }},
		{"bodyLength negative", func(b []byte) []byte { be.PutUint32(b[16:], 0xFFFFFFFF); return b }},
		{"bodyLength too long", func(b []byte) []byte { be.PutUint32(b[16:], 1000); return b }},
		{"propertiesLength mismatch", func(b []byte) []byte { be.PutUint16(b[23:], 9); return b }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := DecodeBatch(c.edit(bytes.Clone(good))); !errors.Is(err, ErrCorruptBatch) {
				t.Errorf("got %v, want ErrCorruptBatch", err)
			}
		})
	}
	for cut := 1; cut < len(good); cut++ {
		if cut == len(good)/2 {
			continue // both elements have the same size: a whole element
		}
		if _, err := DecodeBatchElements(good[:cut]); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("cut %d: %v", cut, err)
		}
	}
	if els, err := DecodeBatchElements(nil); err != nil || els != nil {
		t.Errorf("empty body: %v %v", els, err)
	}
	big := map[string]string{"k": string(bytes.Repeat([]byte{'v'}, MaxPropertiesLength))}
	if _, err := AppendBatch(nil, []*rocketmq.Message{{Body: []byte("x"), Properties: big}}); !errors.Is(err, ErrPropertiesTooLong) {
		t.Errorf("oversized properties: %v", err)
	}
}
