package message

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq"
)

// javaProperties is MessageDecoder.string2messageProperties written
// plainly: pairs split at 0x02, key and value at the first 0x01, pairs with
// an empty key or value dropped, the last duplicate winning.
func javaProperties(s string) map[string]string {
	m := map[string]string{}
	for _, seg := range strings.Split(s, string(rune(PropertySeparator))) {
		k, v, ok := strings.Cut(seg, string(rune(NameValueSeparator)))
		if ok && k != "" && v != "" {
			m[k] = v
		}
	}
	return m
}

// FuzzProperties parses arbitrary properties strings: every parser must
// agree with Java's reading of them, and what was read must come back
// unchanged through EncodeProperties and AppendProperties.
func FuzzProperties(f *testing.F) {
	for _, s := range []string{
		"", "\x02", "\x01", "a\x01", "\x01b", "a\x01b", "a\x01b\x02", "a\x01b\x02\x02c\x01d",
		"a\x01b\x01c\x02a\x01e", "UNIQ_KEY\x01AC1100017D6F18B4AAC2\x02TAGS\x01t\x02KEYS\x01k1 k2",
		"a\x01\x02\x01b\x02c", "\xff\x01\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := javaProperties(s)
		got := DecodeProperties(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeProperties(%q) = %q, Java reads %q", s, got, want)
		}
		into := map[string]string{}
		DecodePropertiesInto(into, s)
		if !reflect.DeepEqual(into, want) {
			t.Fatalf("DecodePropertiesInto(%q) = %q, Java reads %q", s, into, want)
		}
		for _, it := range []map[string]string{iterString(s), iterBytes(s)} {
			if !reflect.DeepEqual(it, want) {
				t.Fatalf("Properties(%q) iterates %q, Java reads %q", s, it, want)
			}
		}
		for k, v := range want {
			if pv, ok := PropertyValue(s, k); !ok || pv != v {
				t.Fatalf("PropertyValue(%q, %q) = %q, %v; want %q", s, k, pv, ok, v)
			}
		}
		if _, ok := PropertyValue(s, "\x01"); ok {
			t.Fatalf("PropertyValue found a key holding the separator in %q", s)
		}

		enc := EncodeProperties(want)
		if back := DecodeProperties(enc); !reflect.DeepEqual(back, want) {
			t.Fatalf("decode(encode(%q)) = %q via %q", want, back, enc)
		}
		if app := AppendProperties([]byte("pre"), want); string(app) != "pre"+enc {
			t.Fatalf("AppendProperties = %q, EncodeProperties = %q", app[3:], enc)
		}
		if n := PropertiesSize(want); n != len(enc) {
			t.Fatalf("PropertiesSize = %d, encoded %d bytes", n, len(enc))
		}
	})
}

func iterString(s string) map[string]string {
	m := map[string]string{}
	for it := Properties(s); it.Next(); {
		m[it.Key()] = it.Value()
	}
	return m
}

func iterBytes(s string) map[string]string {
	m := map[string]string{}
	for it := Properties([]byte(s)); it.Next(); {
		m[string(it.Key())] = string(it.Value())
	}
	return m
}

// FuzzBatchBody decodes arbitrary bytes as a SEND_BATCH_MESSAGE body, as
// the broker does for every batch it is sent. It must never panic, fail
// only with ErrCorruptBatch, and what it accepts must come back unchanged
// through AppendBatch.
func FuzzBatchBody(f *testing.F) {
	one := func(flag int32, body string, props map[string]string) []byte {
		b, err := AppendBatch(nil, []*rocketmq.Message{{Flag: flag, Body: []byte(body), Properties: props}})
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add([]byte{})
	f.Add(one(0, "hello", map[string]string{"UNIQ_KEY": "AC1100017D6F18B4AAC2", "TAGS": "t"}))
	f.Add(append(one(-1, "", nil), one(7, "x", map[string]string{"a": "b\x01c"})...))
	f.Add(one(1, "body", nil)[:10])
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := DecodeBatch(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("error does not match ErrCorruptBatch: %v", err)
			}
			return
		}
		els, err := DecodeBatchElements(data)
		if err != nil || len(els) != len(msgs) {
			t.Fatalf("DecodeBatchElements: %d elements (%v), DecodeBatch: %d messages", len(els), err, len(msgs))
		}
		for i, m := range msgs {
			if want := DecodeProperties(els[i].Properties); !maps.Equal(m.Properties, want) {
				t.Fatalf("message %d: properties %q, element reads %q", i, m.Properties, want)
			}
		}
		// Re-encoding drops what Java drops (empty keys or values,
		// duplicates) and sorts the keys: it cannot grow past the limit,
		// and gives the input back when its properties were written so.
		enc, err := AppendBatch(nil, msgs)
		if err != nil {
			t.Fatalf("re-encoding an accepted batch: %v", err)
		}
		// Magic and bodyCRC are read past, as Java's decodeMessages does,
		// and written as zeros.
		canonical, zeroed := true, slices.Clone(data)
		for i, off := 0, 0; i < len(els); i++ {
			canonical = canonical && EncodeProperties(DecodeProperties(els[i].Properties)) == els[i].Properties
			clear(zeroed[off+4 : off+12])
			off += batchHeaderSize + len(els[i].Body) + 2 + len(els[i].Properties)
		}
		if canonical && string(enc) != string(zeroed) {
			t.Fatalf("re-encoded batch differs\n got %q\nwant %q", enc, zeroed)
		}
		back, err := DecodeBatch(enc)
		if err != nil {
			t.Fatalf("own output does not decode: %v\n%q", err, enc)
		}
		if len(back) != len(msgs) {
			t.Fatalf("%d messages back of %d", len(back), len(msgs))
		}
		for i := range msgs {
			if back[i].Flag != msgs[i].Flag || string(back[i].Body) != string(msgs[i].Body) || !maps.Equal(back[i].Properties, msgs[i].Properties) {
				t.Fatalf("message %d differs after a round trip\n got %+v\nwant %+v", i, back[i], msgs[i])
			}
		}
	})
}
