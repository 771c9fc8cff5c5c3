package javaprops

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
	}{
		{"equals", "a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"colon", "a:1\nb : 2", map[string]string{"a": "1", "b": "2"}},
		{"space", "a 1\nb\t\t2", map[string]string{"a": "1", "b": "2"}},
		{"comments", "# x=1\n  ! y=2\n\n  \na=3\n", map[string]string{"a": "3"}},
		{"comment not continued", "# c \\\na=1", map[string]string{"a": "1"}},
		{"leading space", "   a=1", map[string]string{"a": "1"}},
		{"value keeps trailing space", "a=1  ", map[string]string{"a": "1  "}},
		{"value keeps later separators", "a==b:c", map[string]string{"a": "=b:c"}},
		{"empty value", "a=\nb", map[string]string{"a": "", "b": ""}},
		{"continuation", "a=1 \\\n   2 \\\n\t3\nb=4", map[string]string{"a": "1 2 3", "b": "4"}},
		{"even backslashes end the line", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"continuation at end", "a=1\\", map[string]string{"a": "1"}},
		{"escaped separator in key", `a\=b\ c=d`, map[string]string{"a=b c": "d"}},
		{"escapes", `a=\t\n\r\f\q\\`, map[string]string{"a": "\t\n\r\fq\\"}},
		{"unicode", `a=\u00e9\u4E2D`, map[string]string{"a": "é中"}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"last wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"utf8", "path=/data/é", map[string]string{"path": "/data/é"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Map(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Map(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	es, err := Parse("# c\na=1\n\nb=2 \\\n 3\nc=4")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a", "1", 2}, {"b", "2 3", 4}, {"c", "4", 6}}
	if !reflect.DeepEqual(es, want) {
		t.Fatalf("Parse = %+v, want %+v", es, want)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\u12zz`, `\u=1`} {
		if _, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error %v, want ErrMalformed", in, err)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	m := map[string]string{"brokerName": "broker-a", "messageDelayLevel": "1s 5s", "a": ""}
	s := Format(m)
	if want := "a=\nbrokerName=broker-a\nmessageDelayLevel=1s 5s\n"; s != want {
		t.Fatalf("Format = %q, want %q", s, want)
	}
	back, err := Map(s)
	if err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("Map(Format) = %q, %v", back, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("a=1\\\n b\n#x\n\\u0041=\\")
	f.Fuzz(func(t *testing.T, s string) { Parse(s) })
}

func TestStoreRoundTrip(t *testing.T) {
	m := map[string]string{
		"plain": "v", "path": `C:\data\store`, "multi": "a\nb\r\tc\f", " key=with:odd#chars! ": "  lead",
		"brokerName": "broker-a", "empty": "", "utf8": "é中",
	}
	s := Store(m)
	back, err := Map(s)
	if err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("Map(Store(m)) = %q, %v\n%s", back, err, s)
	}
	if want := "brokerName=broker-a\n"; !strings.Contains(s, want) {
		t.Errorf("Store wrote %q, want the plain line %q", s, want)
	}
}
