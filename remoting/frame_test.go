package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// frame builds a frame from a header word and the bytes after it, with a
// correct length prefix.
func frame(word uint32, rest ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, word)
	for _, r := range rest {
		b = append(b, r...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// binHeader builds a binary header with raw remark/ext length fields.
func binHeader(remarkLen int32, remark []byte, extLen int32, ext []byte) []byte {
	h := []byte{0, 105, 0, 0x01, 0x99, 0, 0, 0, 1, 0, 0, 0, 0}
	h = binary.BigEndian.AppendUint32(h, uint32(remarkLen))
	h = append(h, remark...)
	h = binary.BigEndian.AppendUint32(h, uint32(extLen))
	return append(h, ext...)
}

func entry(kl int16, k string, vl int32, v string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(kl))
	b = append(b, k...)
	b = binary.BigEndian.AppendUint32(b, uint32(vl))
	return append(b, v...)
}

func withHeader(h []byte, st byte) []byte {
	return frame(uint32(st)<<24|uint32(len(h)), h)
}

func TestFrameSize(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		max      int
		want     int
		wantErr  error
		wantKind error
	}{
		{"empty", nil, 0, 0, ErrIncomplete, nil},
		{"three bytes", []byte{0, 0, 0}, 0, 0, ErrIncomplete, nil},
		{"minimal", []byte{0, 0, 0, 4}, 0, 8, nil, nil},
		{"zero length", []byte{0, 0, 0, 0}, 0, 0, ErrMalformedFrame, nil},
		{"length 3", []byte{0, 0, 0, 3}, 0, 0, ErrMalformedFrame, nil},
		{"negative", []byte{0xff, 0xff, 0xff, 0xfe}, 0, 0, ErrMalformedFrame, nil},
		{"min int32", []byte{0x80, 0, 0, 0}, 0, 0, ErrMalformedFrame, nil},
		{"max int32", []byte{0x7f, 0xff, 0xff, 0xff}, 0, 0, ErrFrameTooLarge, nil},
		{"default max exactly", binary.BigEndian.AppendUint32(nil, DefaultMaxFrameSize-4), 0, DefaultMaxFrameSize, nil, nil},
		{"default max plus one", binary.BigEndian.AppendUint32(nil, DefaultMaxFrameSize-3), 0, 0, ErrFrameTooLarge, nil},
		{"custom max", []byte{0, 0, 1, 0}, 256, 0, ErrFrameTooLarge, nil},
		{"custom max ok", []byte{0, 0, 0, 252}, 256, 256, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := FrameSize(tt.in, tt.max)
			if n != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("FrameSize = %d, %v; want %d, %v", n, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrIncomplete) {
				var fe *FrameError
				if !errors.As(err, &fe) {
					t.Fatalf("%T is not a *FrameError", err)
				}
			}
		})
	}
}

// A huge length prefix must fail before anything is allocated, however
// much data follows.
func TestDecodeFrameHugeLengthNoAlloc(t *testing.T) {
	in := append([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, make([]byte, 64)...)
	allocs := testing.AllocsPerRun(100, func() {
		_, n, err := DecodeFrame(in, 1<<20)
		if n != 0 || !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("n=%d err=%v", n, err)
		}
	})
	// The only allocations allowed are for the error itself (the
	// FrameError and its detail text), a few hundred bytes at most.
	if allocs > 4 {
		t.Fatalf("%v allocations for a rejected frame", allocs)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 100; i++ {
		DecodeFrame(in, 1<<20)
	}
	runtime.ReadMemStats(&after)
	if perCall := (after.TotalAlloc - before.TotalAlloc) / 100; perCall > 1024 {
		t.Fatalf("%d bytes allocated per rejected frame", perCall)
	}
	// A frame that is incomplete allocates nothing at all.
	partial := frame(0x01000000|21, make([]byte, 21))[:20]
	if a := testing.AllocsPerRun(100, func() { DecodeFrame(partial, 0) }); a != 0 {
		t.Fatalf("%v allocations for an incomplete frame", a)
	}
}

func TestDecodeFrameMalformed(t *testing.T) {
	okExt := entry(5, "topic", 1, "T")
	tests := []struct {
		name string
		in   []byte
	}{
		{"frame shorter than header word", []byte{0, 0, 0, 4, 0, 0, 0, 0}[:8]},
		{"header longer than frame", frame(0x00000010, []byte("{}"))},
		{"header length max", frame(0x00ffffff, []byte("{}"))},
		{"serialize type 2", withHeader([]byte("{}"), 2)},
		{"serialize type 0xff", withHeader([]byte("{}"), 0xff)},
		{"json garbage", withHeader([]byte("garbage"), 0)},
		{"json empty header", withHeader(nil, 0)},
		{"json truncated", withHeader([]byte(`{"code":1`), 0)},
		{"json unterminated string", withHeader([]byte(`{"remark":"abc`), 0)},
		{"json trailing data", withHeader([]byte(`{"code":1}x`), 0)},
		{"json code overflow", withHeader([]byte(`{"code":2147483648}`), 0)},
		{"json code float", withHeader([]byte(`{"code":1.5}`), 0)},
		{"json ext array", withHeader([]byte(`{"extFields":["a"]}`), 0)},
		{"json ext object value", withHeader([]byte(`{"extFields":{"a":{}}}`), 0)},
		{"json bad escape", withHeader([]byte(`{"remark":"\q"}`), 0)},
		{"json short unicode escape", withHeader([]byte(`{"remark":"\u12"}`), 0)},
		{"json deep nesting", withHeader([]byte(`{"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`), 0)},
		{"binary empty header", withHeader(nil, 1)},
		{"binary 20 bytes", withHeader(make([]byte, 20), 1)},
		{"binary remark length negative", withHeader(binHeader(-1, nil, 0, nil), 1)},
		{"binary remark length too big", withHeader(binHeader(10, []byte("abc"), 0, nil), 1)},
		{"binary no ext length", withHeader(binHeader(3, []byte("abc"), 0, nil)[:20], 1)},
		{"binary ext length negative", withHeader(binHeader(0, nil, -5, okExt), 1)},
		{"binary ext length too big", withHeader(binHeader(0, nil, int32(len(okExt)+1), okExt), 1)},
		{"binary key length negative", withHeader(binHeader(0, nil, 12, entry(-1, "topic", 1, "T")), 1)},
		{"binary key length too big", withHeader(binHeader(0, nil, 12, entry(100, "topic", 1, "T")), 1)},
		{"binary value length negative", withHeader(binHeader(0, nil, 12, entry(5, "topic", -1, "T")), 1)},
		{"binary value length too big", withHeader(binHeader(0, nil, 12, entry(5, "topic", 2, "T")), 1)},
		{"binary entry truncated", withHeader(binHeader(0, nil, int32(len(okExt)+1), append(okExt, 0)), 1)},
		{"binary key cut", withHeader(binHeader(0, nil, 4, entry(5, "topic", 1, "T")[:4]), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, n, err := DecodeFrame(tt.in, 0)
			if err == nil || c != nil || n != 0 {
				t.Fatalf("DecodeFrame = %+v, %d, %v; want an error", c, n, err)
			}
			var fe *FrameError
			if !errors.As(err, &fe) || !errors.Is(err, ErrMalformedFrame) {
				t.Fatalf("error %v (%T) is not a malformed *FrameError", err, err)
			}
		})
	}
}

func TestBinaryHeaderDecoding(t *testing.T) {
	tests := []struct {
		name   string
		remark string
		ext    []byte
		want   ExtFields
	}{
		{"no map", "", nil, nil},
		{"one entry", "", entry(5, "topic", 1, "T"), ExtFields{{"topic", "T"}}},
		{"empty value dropped", "", append(entry(1, "a", 0, ""), entry(1, "b", 1, "x")...), ExtFields{{"b", "x"}}},
		{"empty key dropped", "", entry(0, "", 1, "x"), nil},
		{"duplicates kept in order", "r", append(append(entry(1, "a", 1, "1"), entry(1, "b", 1, "2")...), entry(1, "a", 1, "3")...),
			ExtFields{{"a", "1"}, {"b", "2"}, {"a", "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := withHeader(binHeader(int32(len(tt.remark)), []byte(tt.remark), int32(len(tt.ext)), tt.ext), 1)
			c, _, err := DecodeFrame(in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if c.Remark != tt.remark || !reflect.DeepEqual(c.Ext, tt.want) {
				t.Fatalf("remark %q ext %q; want %q %q", c.Remark, c.Ext, tt.remark, tt.want)
			}
			if c.Code != 105 || c.Version != 409 || c.Opaque != 1 || c.Serialize != SerializeRocketMQ {
				t.Fatalf("fixed fields %+v", c)
			}
		})
	}
	t.Run("last duplicate wins", func(t *testing.T) {
		ext := append(entry(1, "a", 1, "1"), entry(1, "a", 1, "2")...)
		c, _, err := DecodeFrame(withHeader(binHeader(0, nil, int32(len(ext)), ext), 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := c.Ext.Get("a"); v != "2" {
			t.Fatalf("Get = %q, want the last copy", v)
		}
	})
	t.Run("trailing header bytes ignored", func(t *testing.T) {
		h := append(binHeader(0, nil, 0, nil), 1, 2, 3)
		if _, _, err := DecodeFrame(withHeader(h, 1), 0); err != nil {
			t.Fatal(err)
		}
	})
}

func TestEncodeBinaryTruncatesCode(t *testing.T) {
	// Java writes (short)code; POP_MESSAGE 200050 becomes 3442.
	c := &Command{Code: PopMessage, Version: 100000, Serialize: SerializeRocketMQ}
	b, err := c.AppendFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := DecodeFrame(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Code != 3442 || d.Version != 100000-131072 {
		t.Fatalf("code %d version %d", d.Code, d.Version)
	}
	// JSON keeps the full value.
	c.Serialize = SerializeJSON
	b, _ = c.AppendFrame(nil)
	if d, _, _ = DecodeFrame(b, 0); d.Code != PopMessage {
		t.Fatalf("JSON code %d", d.Code)
	}
}

func TestAppendFrameErrors(t *testing.T) {
	prefix := []byte("keep")
	tests := []struct {
		name string
		cmd  Command
		kind error
	}{
		{"unknown serialize type", Command{Serialize: 7}, ErrEncode},
		{"binary key too long", Command{Serialize: SerializeRocketMQ, Ext: ExtFields{{strings.Repeat("k", 32768), "v"}}}, ErrEncode},
		{"header over 16 MiB", Command{Serialize: SerializeRocketMQ, Remark: strings.Repeat("r", 1<<24)}, ErrEncode},
		{"json header over 16 MiB", Command{Remark: strings.Repeat("\x01", 1<<22)}, ErrEncode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.cmd.AppendFrame(prefix)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if !bytes.Equal(out, prefix) || len(out) != len(prefix) {
				t.Fatalf("dst changed to %q", out)
			}
		})
	}
	t.Run("binary key of 32767 bytes", func(t *testing.T) {
		c := &Command{Serialize: SerializeRocketMQ, Ext: ExtFields{{strings.Repeat("k", 32767), "v"}}}
		b, err := c.AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := DecodeFrame(b, 0)
		if err != nil || len(d.Ext) != 1 || len(d.Ext[0].Key) != 32767 {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestAppendFrameAppends(t *testing.T) {
	c := NewRequest(GetRouteInfoByTopic, ExtFields{{"topic", "T"}}, []byte("body"))
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		t.Run(st.String(), func(t *testing.T) {
			c.Serialize = st
			one, err := c.AppendFrame(nil)
			if err != nil {
				t.Fatal(err)
			}
			two, err := c.AppendFrame(append([]byte(nil), one...))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(two, append(append([]byte(nil), one...), one...)) {
				t.Fatal("second frame not appended")
			}
			// Two frames back to back decode one at a time.
			d1, n1, err := DecodeFrame(two, 0)
			if err != nil || n1 != len(one) {
				t.Fatalf("first: %d %v", n1, err)
			}
			d2, n2, err := DecodeFrame(two[n1:], 0)
			if err != nil || n2 != len(one) || !reflect.DeepEqual(d1, d2) {
				t.Fatalf("second: %d %v", n2, err)
			}
			if string(d1.Body) != "body" || d1.Language != LanguageGo || d1.Version != DefaultVersion {
				t.Fatalf("decoded %+v", d1)
			}
			hdr, err := c.AppendFrameHeader(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(hdr, c.Body...), one) {
				t.Fatalf("AppendFrameHeader+body != AppendFrame: %s", hexDiff(append(hdr, c.Body...), one))
			}
		})
	}
}

func TestNewResponse(t *testing.T) {
	r := NewResponse(SystemBusy, "busy")
	if !r.IsResponse() || r.IsOneway() || r.Code != SystemBusy || r.Remark != "busy" || r.Language != LanguageGo {
		t.Fatalf("%+v", r)
	}
	q := NewRequest(SendMessageV2, nil, nil)
	if q.IsResponse() || q.Ext != nil || q.Code != SendMessageV2 {
		t.Fatalf("%+v", q)
	}
}

// DecodeFrameView leaves the body in the input (capacity capped, so an
// append cannot write into what follows); DecodeFrame copies it.
func TestDecodeFrameViewBody(t *testing.T) {
	cmd := NewRequest(SendMessageV2, ExtFields{{Key: "a", Value: "b"}}, []byte("body bytes"))
	for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		cmd.Serialize = st
		src, err := cmd.AppendFrame(nil)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, "next frame"...)
		view, n, err := DecodeFrameView(src, DefaultMaxFrameSize)
		if err != nil || n != len(src)-len("next frame") {
			t.Fatalf("%v: n %d err %v", st, n, err)
		}
		owned, _, err := DecodeFrame(src, DefaultMaxFrameSize)
		if err != nil {
			t.Fatal(err)
		}
		if string(view.Body) != "body bytes" || cap(view.Body) != len(view.Body) {
			t.Fatalf("%v: view body %q cap %d", st, view.Body, cap(view.Body))
		}
		if v, _ := view.Ext.Get("a"); v != "b" || view.Code != SendMessageV2 {
			t.Fatalf("%v: header %+v", st, view)
		}
		clear(src)
		if string(owned.Body) != "body bytes" {
			t.Fatalf("%v: DecodeFrame's body changed with its input: %q", st, owned.Body)
		}
		if v, _ := view.Ext.Get("a"); v != "b" {
			t.Fatalf("%v: the view's header changed with its input", st)
		}
		if !bytes.Equal(view.Body, make([]byte, len("body bytes"))) {
			t.Fatalf("%v: the view's body is not the input's bytes", st)
		}
	}
}
