package remoting

import (
	"errors"
	"reflect"
	"testing"
)

// Seeds live in testdata/fuzz/<FuzzName>/: the captured wire frames (bodies
// cut to 64 bytes) and the java-vectors frames.

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		c, n, err := DecodeFrame(in, 1<<20)
		if err != nil {
			if c != nil || n != 0 {
				t.Fatalf("error with result: %v %d", c, n)
			}
			var fe *FrameError
			if !errors.Is(err, ErrIncomplete) && !errors.As(err, &fe) {
				t.Fatalf("error %v is neither ErrIncomplete nor *FrameError", err)
			}
			return
		}
		if n < 8 || n > len(in) {
			t.Fatalf("consumed %d of %d", n, len(in))
		}
		out, err := c.AppendFrame(nil)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		c2, n2, err := DecodeFrame(out, 0)
		if err != nil || n2 != len(out) {
			t.Fatalf("decode re-encoded: %d %v", n2, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip differs:\n%#v\n%#v", c, c2)
		}
	})
}

func FuzzJSONHeader(f *testing.F) {
	f.Add([]byte(`{"code":0,"flag":1,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":409}`))
	f.Fuzz(func(t *testing.T, h []byte) {
		var c Command
		if err := decodeJSONHeader(h, &c); err != nil {
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error %v is not ErrMalformedFrame", err)
			}
			return
		}
		// The decoder scans a view of h: nothing it returns may alias h.
		before := appendJSONHeader(nil, &c)
		for i := range h {
			h[i] = 'X'
		}
		out := appendJSONHeader(nil, &c)
		if string(out) != string(before) {
			t.Fatalf("decoded header changed when its input was overwritten:\n%s\n%s", before, out)
		}
		var c2 Command
		if err := decodeJSONHeader(out, &c2); err != nil {
			t.Fatalf("decode re-encoded %q: %v", out, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip differs:\n%#v\n%#v\n%s", c, c2, out)
		}
		// Our own output is stable.
		if again := appendJSONHeader(nil, &c2); string(again) != string(out) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, again)
		}
	})
}

func FuzzBinaryHeader(f *testing.F) {
	f.Add(binHeader(5, []byte("FOUND"), 12, entry(5, "topic", 1, "T")))
	f.Fuzz(func(t *testing.T, h []byte) {
		var c Command
		if err := decodeBinaryHeader(h, &c); err != nil {
			if !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error %v is not ErrMalformedFrame", err)
			}
			return
		}
		out, err := appendBinaryHeader(nil, &c)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if len(out) > len(h) {
			t.Fatalf("re-encoded header grew from %d to %d bytes", len(h), len(out))
		}
		var c2 Command
		if err := decodeBinaryHeader(out, &c2); err != nil {
			t.Fatalf("decode re-encoded: %v", err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip differs:\n%#v\n%#v", c, c2)
		}
	})
}
