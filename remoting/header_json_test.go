package remoting

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"
)

// TestJSONStringEscapes pins the fastjson 1.2.69 default escaping: short
// escapes for \b \t \n \f \r " \, \u00XX (upper-case hex) for the other
// controls, DEL and U+0080..U+009F, \u2028/\u2029, everything else raw.
func TestJSONStringEscapes(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `""`},
		{"plain", `"plain"`},
		{"a\x00b", `"a\u0000b"`},
		{"\x01\x02", `"\u0001\u0002"`},
		{"\x07\x0b\x0e\x1f", `"\u0007\u000B\u000E\u001F"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{`q"b\`, `"q\"b\\"`},
		{"/", `"/"`},
		{"'<>()&", `"'<>()&"`},
		{"\x7f", `"\u007F"`},
		{"\u0080\u009f", `"\u0080\u009F"`},
		{"\u00a0é", "\"\u00a0é\""},
		{"\u2027\u2028\u2029\u202a", "\"\u2027\\u2028\\u2029\u202a\""},
		{"主题 ✗ 😀", `"主题 ✗ 😀"`},
		{"\xff\xc2", "\"\xff\xc2\""}, // invalid UTF-8 is copied
		{"\xe2\x80", "\"\xe2\x80\""},
		{"TAGS\x01TagA\x02KEYS", `"TAGS\u0001TagA\u0002KEYS"`},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.in), func(t *testing.T) {
			got := string(appendJSONString(nil, tt.in))
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			// And our reader turns it back into the input.
			r := jsonReader{jsonScan: jsonScan{data: []byte(got), maxDepth: maxJSONDepth, strict: true}, s: got}
			if back := r.str(); r.failed || back != tt.in {
				t.Fatalf("read back %q, %s", back, r.msg)
			}
			// Valid UTF-8 output is standard JSON.
			if utf8.ValidString(tt.in) {
				var s string
				if err := json.Unmarshal([]byte(got), &s); err != nil || s != tt.in {
					t.Fatalf("encoding/json reads %q, %v", s, err)
				}
			}
		})
	}
}

func TestJSONHeaderWriter(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want string
	}{
		{"nil ext no remark", Command{Code: 0, Flag: 1, Opaque: 3, Version: 409},
			`{"code":0,"flag":1,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":409}`},
		{"empty ext", Command{Code: 0, Flag: 1, Ext: ExtFields{}, Language: LanguageGo},
			`{"code":0,"extFields":{},"flag":1,"language":"GO","opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`},
		{"remark and ext order kept", Command{Code: -1, Remark: "x\ny", Ext: ExtFields{{"b", "1"}, {"a", "2"}}, Language: LanguageNodeJS, Opaque: -5},
			`{"code":-1,"extFields":{"b":"1","a":"2"},"flag":0,"language":"NODE_JS","opaque":-5,"remark":"x\ny","serializeTypeCurrentRPC":"JSON","version":0}`},
		{"unknown language as number", Command{Language: 42},
			`{"code":0,"flag":0,"language":42,"opaque":0,"serializeTypeCurrentRPC":"JSON","version":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendJSONHeader(nil, &tt.cmd)); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			var back Command
			if err := decodeJSONHeader([]byte(tt.want), &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.cmd) {
				t.Fatalf("read back %+v, want %+v", back, tt.cmd)
			}
		})
	}
}

func TestJSONHeaderReaderLenient(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Command
	}{
		{"empty object", `{}`, Command{}},
		{"whitespace and any order",
			" {\n\t\"version\" : 317 , \"opaque\":2,\r\n\"code\":17,\"language\":\"GO\",\"flag\":0,\"remark\":\"\",\"extFields\":{ }} \n",
			Command{Code: 17, Version: 317, Opaque: 2, Language: LanguageGo, Ext: ExtFields{}}},
		{"unknown keys skipped",
			`{"x":{"a":[1,2,{"b":null}],"c":"d"},"code":5,"y":[],"z":true,"w":-1.5e3,"serializeTypeCurrentRPC":"ROCKETMQ"}`,
			Command{Code: 5}},
		{"quoted numbers", `{"code":"105","opaque":"-7","flag":"1","version":"409"}`,
			Command{Code: 105, Opaque: -7, Flag: 1, Version: 409}},
		{"nulls", `{"code":null,"remark":null,"extFields":null,"language":null}`, Command{Language: LanguageOther}},
		{"unknown language name", `{"language":"COBOL"}`, Command{Language: LanguageOther}},
		{"language by number", `{"language":9}`, Command{Language: LanguageGo}},
		{"non-string ext values", `{"extFields":{"n":12,"b":true,"f":false,"z":null,"s":"v","neg":-3}}`,
			Command{Ext: ExtFields{{"n", "12"}, {"b", "true"}, {"f", "false"}, {"s", "v"}, {"neg", "-3"}}}},
		{"duplicate ext keys kept", `{"extFields":{"a":"1","a":"2"}}`, Command{Ext: ExtFields{{"a", "1"}, {"a", "2"}}}},
		{"duplicate top-level key last wins", `{"code":1,"code":2}`, Command{Code: 2}},
		{"escapes", `{"remark":"\/\'\x41\u00e9\uD83D\uDE00\uD83D\u0041\uDE00"}`,
			Command{Remark: "/'Aé😀\uFFFDA\uFFFD"}},
		{"raw control characters", "{\"remark\":\"a\x01b\tc\"}", Command{Remark: "a\x01b\tc"}},
		{"many ext fields", `{"extFields":{"1":"a","2":"a","3":"a","4":"a","5":"a","6":"a","7":"a","8":"a","9":"a","10":"a",` +
			`"11":"a","12":"a","13":"a","14":"a","15":"a","16":"a","17":"a","18":"a","19":"a","20":"a","21":"a","22":"a","23":"a","24":"a","25":"a","26":"a"}}`,
			Command{Ext: func() ExtFields {
				var e ExtFields
				for i := 1; i <= 26; i++ {
					e.Add(strconv.Itoa(i), "a")
				}
				return e
			}()}},
		{"long strings", `{"remark":"0123456789012345678901234567890123456789\n0123456789"}`,
			Command{Remark: "0123456789012345678901234567890123456789\n0123456789"}},
		{"min int32", `{"opaque":-2147483648}`, Command{Opaque: -2147483648}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Command
			if err := decodeJSONHeader([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Strings decoded from escapes must not share memory with the input.
func TestJSONHeaderReaderOwnsEscapedStrings(t *testing.T) {
	h := []byte(`{"remark":"a\nb","extFields":{"i":"TAGS\u0001x","k":"plain"}}`)
	var c Command
	if err := decodeJSONHeader(h, &c); err != nil {
		t.Fatal(err)
	}
	for i := range h {
		h[i] = 'X'
	}
	if c.Remark != "a\nb" || c.Ext[0].Value != "TAGS\x01x" || c.Ext[1].Value != "plain" {
		t.Fatalf("decoded values changed: %+v", c)
	}
}
