package message

import (
	"github.com/go-rocketmq/rocketmq"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type propertiesVectors struct {
	Encode struct {
		Cases []struct {
			Name                         string            `json:"name"`
			Entries                      [][2]*string      `json:"entriesInIterationOrder"`
			IterationOrderIsHashMapOrder bool              `json:"iterationOrderIsHashMapOrder"`
			Output                       string            `json:"output"`
			OutputUtf8Hex                string            `json:"outputUtf8Hex"`
			OutputUtf8Length             int               `json:"outputUtf8Length"`
			Reparsed                     map[string]string `json:"reparsed"`
		} `json:"cases"`
	} `json:"encode"`
	Decode struct {
		Cases []struct {
			Name     string            `json:"name"`
			Input    string            `json:"input"`
			InputHex string            `json:"inputUtf8Hex"`
			Result   map[string]string `json:"result"`
		} `json:"cases"`
	} `json:"decode"`
}

func TestPropertiesJavaVectors(t *testing.T) {
	var v propertiesVectors
	loadVectors(t, "properties", &v)
	if len(v.Encode.Cases) == 0 || len(v.Decode.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Encode.Cases {
		t.Run("encode/"+c.Name, func(t *testing.T) {
			want := mustHex(t, c.OutputUtf8Hex)
			if string(want) != c.Output || len(want) != c.OutputUtf8Length {
				t.Fatalf("vector inconsistent")
			}
			// A Go map has no null: a null value is an absent entry, a
			// null key is the text Java writes for it.
			props := map[string]string{}
			var order []string
			for _, e := range c.Entries {
				if e[1] == nil {
					continue
				}
				k := "null"
				if e[0] != nil {
					k = *e[0]
				}
				props[k] = *e[1]
				order = append(order, k)
			}
			got := AppendProperties(nil, props)
			if s := EncodeProperties(props); s != string(got) {
				t.Fatalf("EncodeProperties %q != AppendProperties %q", s, got)
			}
			if PropertiesSize(props) != len(got) {
				t.Fatalf("PropertiesSize %d, encoded %d", PropertiesSize(props), len(got))
			}
			if !c.IterationOrderIsHashMapOrder && slices.IsSorted(order) {
				diffBytes(t, "properties", got, want)
			} else if len(got) != len(want) || !maps.Equal(DecodeProperties(string(got)), DecodeProperties(string(want))) {
				t.Errorf("got %q, want %q up to entry order", got, want)
			}
			if r := DecodeProperties(c.Output); !maps.Equal(r, c.Reparsed) {
				t.Errorf("reparsed %v, want %v", r, c.Reparsed)
			}
			if strings.HasSuffix(string(got), "\x02") {
				t.Errorf("final separator written: %q", got)
			}
		})
	}
	for _, c := range v.Decode.Cases {
		t.Run("decode/"+c.Name, func(t *testing.T) {
			if string(mustHex(t, c.InputHex)) != c.Input {
				t.Fatal("vector inconsistent")
			}
			got := DecodeProperties(c.Input)
			if got == nil || !maps.Equal(got, c.Result) {
				t.Errorf("DecodeProperties(%q) = %v, want %v", c.Input, got, c.Result)
			}
			checkDecodeMatchesIter(t, c.Input)
		})
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	cases := []map[string]string{
		nil,
		{},
		{"a": "1"},
		{rocketmq.PropertyTags: "TagA", rocketmq.PropertyKeys: "k1 k2", rocketmq.PropertyUniqKey: "C0A8000A30391B6D358600A1B2C30001", "x": "y"},
		{"键": "值", "emoji": "😀"},
	}
	big := map[string]string{}
	for i := range 40 { // more keys than the sort scratch array holds
		big[strings.Repeat("k", i+1)] = strings.Repeat("v", 40-i)
	}
	cases = append(cases, big)
	for i, props := range cases {
		s := EncodeProperties(props)
		got := DecodeProperties(s)
		if !maps.Equal(got, props) {
			t.Errorf("case %d: round trip %v -> %q -> %v", i, props, s, got)
		}
		// 5.2+ and the official Go client end with 0x02: still parsed.
		if s != "" && !maps.Equal(DecodeProperties(s+"\x02"), props) {
			t.Errorf("case %d: trailing separator not tolerated", i)
		}
		// The bytes do not depend on map iteration order.
		for range 5 {
			if again := EncodeProperties(props); again != s {
				t.Fatalf("case %d: unstable encoding %q vs %q", i, again, s)
			}
		}
		pre := []byte("prefix")
		if got := AppendProperties(pre, props); string(got) != "prefix"+s {
			t.Errorf("case %d: AppendProperties kept no prefix: %q", i, got)
		}
	}
}

func BenchmarkEncodeProperties(b *testing.B) {
	props := map[string]string{
		rocketmq.PropertyTags: "TagA", rocketmq.PropertyKeys: "KEY1 KEY2", rocketmq.PropertyUniqKey: "C0A8000A30391B6D358600A1B2C30001",
		rocketmq.PropertyWaitStoreMsgOK: "true", "orderId": "1001",
	}
	b.Run("Append", func(b *testing.B) {
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for range b.N {
			buf = AppendProperties(buf[:0], props)
		}
	})
	b.Run("String", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = EncodeProperties(props)
		}
	})
	b.Run("Decode", func(b *testing.B) {
		s := EncodeProperties(props)
		b.ReportAllocs()
		for range b.N {
			_ = DecodeProperties(s)
		}
	})
}

func TestAppendSortedProperties(t *testing.T) {
	props := map[string]string{"b": "2", "d": "4", "WAIT": "false", "RECONSUME_TIME": "3"}
	skipReconsume := func(k string) bool { return k == "RECONSUME_TIME" }
	cases := []struct {
		name  string
		props map[string]string
		skip  func(string) bool
		extra []Property
		want  string
	}{
		{"none", nil, nil, nil, ""},
		{"extras only", nil, nil, []Property{{"z", "1"}, {"a", "2"}}, "a\x012\x02z\x011"},
		{"map wins over extra", props, nil, []Property{{"WAIT", "true"}, {"c", "3"}, {"b", "x"}},
			"RECONSUME_TIME\x013\x02WAIT\x01false\x02b\x012\x02c\x013\x02d\x014"},
		{"skip", props, skipReconsume, []Property{{"WAIT", "true"}, {"a", "1"}},
			"WAIT\x01false\x02a\x011\x02b\x012\x02d\x014"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := AppendSortedProperties([]byte("p"), c.props, c.skip, c.extra...)
			if string(got) != "p"+c.want {
				t.Errorf("got %q, want %q", got[1:], c.want)
			}
		})
	}
	// More pairs than the stack scratch space: sorted all the same.
	many := map[string]string{}
	for i := range 40 {
		many[strconv.Itoa(100+i)] = "v"
	}
	got := EncodeProperties(many)
	out, _ := AppendPropertyList(nil, SortProperties(many, nil, []Property{{"100", "dup"}, {"999", "x"}}, nil), "")
	if !strings.HasPrefix(string(out), got) || !strings.HasSuffix(string(out), "\x02999\x01x") {
		t.Errorf("40 pairs: %q", out)
	}
}

// checkDecodeMatchesIter: the map decodePropertiesInto fills is the one the
// generic iterator yields, and the value it reports for a wanted key is the
// map's.
func checkDecodeMatchesIter(t *testing.T, s string) {
	t.Helper()
	it := map[string]string{}
	for p := Properties(s); p.Next(); {
		it[p.Key()] = p.Value()
	}
	for _, want := range append(slices.Collect(maps.Keys(it)), "", "absent") {
		m := map[string]string{}
		found := decodePropertiesInto(m, s, want)
		if !maps.Equal(m, it) {
			t.Fatalf("decodePropertiesInto(%q) = %v, iterator %v", s, m, it)
		}
		if want != "" && found != it[want] {
			t.Fatalf("decodePropertiesInto(%q) found %q for %q, map has %q", s, found, want, it[want])
		}
	}
}

func TestDecodePropertiesIntoMatchesIter(t *testing.T) {
	for _, s := range []string{
		"", "\x02", "\x01", "a", "a\x01", "\x01b", "a\x01b", "a\x01b\x02", "a\x01b\x02\x02c\x01d",
		"a\x01b\x02a\x01c", "a\x01\x01b", "a\x01b\x01c\x02d", "UNIQ_KEY\x01X\x02UNIQ_KEY\x01Y\x02UNIQ_KEY\x01",
		"\x02\x02k\x01v\x02\x02",
	} {
		checkDecodeMatchesIter(t, s)
	}
}
