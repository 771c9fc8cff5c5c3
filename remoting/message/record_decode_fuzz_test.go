package message

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeRecord feeds arbitrary bytes to the record, batch and
// properties decoders: they must never panic, and what they accept must be
// self-consistent. Seeds: every java-vectors record and every stored-message
// body captured on the wire; the corpus found so far is committed under
// testdata/fuzz/FuzzDecodeRecord.
func FuzzDecodeRecord(f *testing.F) {
	bins, _ := filepath.Glob("../../testdata/java-vectors/message-*.bin")
	bins = append(bins, "../../testdata/java-vectors/batch-3-messages.bin")
	for _, p := range bins {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	idx := loadWireIndex(f)
	for _, fr := range idx.Frames {
		if fr.BodyKind == "stored-messages" || fr.BodyKind == "batch-messages" {
			f.Add(wireBody(f, fr.File))
		}
	}
	opts := DecodeOptions{MaxBodySize: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := opts.DecodeRecords(data)
		total := 0
		for _, m := range msgs {
			total += int(m.StoreSize)
			if m.OffsetMsgID == "" || m.MsgID == "" {
				t.Fatalf("message without ids: %+v", m)
			}
		}
		if err == nil && total != len(data) {
			t.Fatalf("no error but %d of %d bytes decoded", total, len(data))
		}
		if total > len(data) {
			t.Fatalf("decoded %d bytes of %d", total, len(data))
		}
		raw, rawErr := DecodeOptions{KeepCompressed: true}.DecodeRecords(data)
		if len(raw) < len(msgs) || (rawErr != nil && err == nil) {
			t.Fatalf("KeepCompressed decoded %d (%v), inflating %d (%v)", len(raw), rawErr, len(msgs), err)
		}
		// Every accepted record re-encodes into a record that decodes.
		for _, m := range raw {
			b, err := AppendMessageExt(nil, m)
			if err != nil {
				continue // e.g. properties that grew past 32767 when re-encoded
			}
			m2, n, err := DecodeOptions{KeepCompressed: true}.DecodeRecord(b)
			if err != nil || n != len(b) || m2.Topic != m.Topic || string(m2.Body) != string(m.Body) {
				t.Fatalf("re-encoded record: %v", err)
			}
		}
		if m, n, err := opts.DecodeRecord(data); err == nil && (n > len(data) || m == nil) {
			t.Fatalf("DecodeRecord consumed %d of %d", n, len(data))
		}
		if els, err := DecodeBatchElements(data); err == nil {
			size := 0
			for _, e := range els {
				size += batchHeaderSize + len(e.Body) + 2 + len(e.Properties)
			}
			if size != len(data) {
				t.Fatalf("batch: %d of %d bytes", size, len(data))
			}
		}
		props := DecodeProperties(string(data))
		if _, err := DecodeBatch(data); err != nil && len(data) == 0 {
			t.Fatal("empty batch body rejected")
		}
		for k, v := range props {
			if k == "" || v == "" {
				t.Fatalf("empty key or value kept: %q=%q", k, v)
			}
		}
	})
}
