package remoting

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

const wireDir = "../testdata/wire"

// wireFrame is one entry of testdata/wire/index.json.
type wireFrame struct {
	N             int                `json:"n"`
	File          string             `json:"file"`
	Sender        string             `json:"sender"`
	Direction     string             `json:"direction"`
	Code          json.Number        `json:"code"`
	CodeName      string             `json:"codeName"`
	RequestCode   json.Number        `json:"requestCode"`
	RequestName   string             `json:"requestCodeName"`
	SerializeType string             `json:"serializeType"`
	Opaque        json.Number        `json:"opaque"`
	Flag          json.Number        `json:"flag"`
	Language      string             `json:"language"`
	Version       json.Number        `json:"version"`
	Remark        *string            `json:"remark"`
	ExtFields     map[string]*string `json:"extFields"`
	ExtFieldOrder []string           `json:"extFieldOrder"`
	JSONKeyOrder  []string           `json:"jsonKeyOrder"`
	FrameLength   json.Number        `json:"frameLength"`
	HeaderLength  json.Number        `json:"headerLength"`
	BodyLength    json.Number        `json:"bodyLength"`

	raw []byte
}

func num32(t *testing.T, n json.Number) int32 {
	t.Helper()
	v, err := strconv.ParseInt(string(n), 10, 32)
	if err != nil {
		t.Fatalf("bad number %q: %v", n, err)
	}
	return int32(v)
}

func loadWire(t testing.TB) []wireFrame {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(wireDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Frames []wireFrame `json:"frames"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Frames) != 390 {
		t.Fatalf("index.json has %d frames, want 390", len(idx.Frames))
	}
	for i := range idx.Frames {
		f := &idx.Frames[i]
		f.raw, err = os.ReadFile(filepath.Join(wireDir, f.File))
		if err != nil {
			t.Fatal(err)
		}
	}
	return idx.Frames
}

// hexDiff reports the first differing offset with a dump of both sides.
func hexDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return "first difference at offset " + strconv.Itoa(i) + " (got " + strconv.Itoa(len(got)) +
		" bytes, want " + strconv.Itoa(len(want)) + ")\ngot:\n" + hex.Dump(got) + "want:\n" + hex.Dump(want)
}

// reencodeExact says whether our encoder must reproduce the captured bytes:
// Java frames whose header layout is deterministic given the decoded field
// order. Go-client JSON uses another top-level key order, and Java writes
// "remark":"" for an empty non-null remark, which we do not.
func reencodeExact(f *wireFrame) bool {
	if f.Sender == "go-client" && f.SerializeType == "JSON" {
		return false
	}
	if f.Remark != nil && *f.Remark == "" {
		return false
	}
	for _, v := range f.ExtFields {
		if v == nil || *v == "" { // binary null entries are dropped on decode
			return f.SerializeType == "JSON"
		}
	}
	return true
}

func checkWireHeader(t *testing.T, f *wireFrame, c *Command) {
	t.Helper()
	wantST := SerializeJSON
	if f.SerializeType == "ROCKETMQ" {
		wantST = SerializeRocketMQ
	}
	if c.Serialize != wantST {
		t.Errorf("serialize = %v, want %v", c.Serialize, wantST)
	}
	if c.Code != num32(t, f.Code) || c.Opaque != num32(t, f.Opaque) || c.Flag != num32(t, f.Flag) ||
		c.Version != num32(t, f.Version) || c.Language.String() != f.Language {
		t.Errorf("header = code %d opaque %d flag %d version %d lang %v; want %s %s %s %s %s",
			c.Code, c.Opaque, c.Flag, c.Version, c.Language, f.Code, f.Opaque, f.Flag, f.Version, f.Language)
	}
	wantRemark := ""
	if f.Remark != nil {
		wantRemark = *f.Remark
	}
	if c.Remark != wantRemark {
		t.Errorf("remark = %q, want %q", c.Remark, wantRemark)
	}
	// extFields: nil map in index = no extFields at all.
	if (f.ExtFields == nil) != (c.Ext == nil) && !(f.SerializeType == "ROCKETMQ" && len(f.ExtFields) == 0) {
		t.Errorf("ext nil = %v, want nil = %v", c.Ext == nil, f.ExtFields == nil)
	}
	want := map[string]string{}
	var wantOrder []string
	for _, k := range f.ExtFieldOrder {
		if v := f.ExtFields[k]; v != nil && (*v != "" || f.SerializeType == "JSON") {
			wantOrder = append(wantOrder, k)
		}
	}
	for k, v := range f.ExtFields {
		if v != nil && (*v != "" || f.SerializeType == "JSON") {
			want[k] = *v
		}
	}
	got := c.Ext.Map()
	if got == nil {
		got = map[string]string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extFields = %q\nwant %q", got, want)
	}
	var gotOrder []string
	for _, fl := range c.Ext {
		gotOrder = append(gotOrder, fl.Key)
	}
	if !reflect.DeepEqual(gotOrder, wantOrder) {
		t.Errorf("ext order = %q, want %q", gotOrder, wantOrder)
	}
	if len(c.Body) != int(num32(t, f.BodyLength)) {
		t.Errorf("body length = %d, want %s", len(c.Body), f.BodyLength)
	}
}

func TestWireFrames(t *testing.T) {
	frames := loadWire(t)
	exact := 0
	for i := range frames {
		f := &frames[i]
		t.Run(f.File, func(t *testing.T) {
			if len(f.raw) != int(num32(t, f.FrameLength)) {
				t.Fatalf("file size %d != frameLength %s", len(f.raw), f.FrameLength)
			}
			c, n, err := DecodeFrame(f.raw, DefaultMaxFrameSize)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if n != len(f.raw) {
				t.Fatalf("consumed %d of %d", n, len(f.raw))
			}
			checkWireHeader(t, f, c)
			if f.Direction == "req" {
				if got := RequestCodeName(c.Code); got != f.CodeName {
					t.Errorf("RequestCodeName(%d) = %q, want %q", c.Code, got, f.CodeName)
				}
			} else {
				if got := ResponseCodeName(c.Code); got != f.CodeName {
					t.Errorf("ResponseCodeName(%d) = %q, want %q", c.Code, got, f.CodeName)
				}
				if got := RequestCodeName(num32(t, f.RequestCode)); got != f.RequestName {
					t.Errorf("RequestCodeName(%s) = %q, want %q", f.RequestCode, got, f.RequestName)
				}
			}

			// Round trip: encode what we decoded and decode it again.
			out, err := c.AppendFrame(nil)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if reencodeExact(f) {
				exact++
				if !bytes.Equal(out, f.raw) {
					t.Fatalf("re-encoded frame differs: %s", hexDiff(out, f.raw))
				}
			}
			c2, n2, err := DecodeFrame(out, DefaultMaxFrameSize)
			if err != nil || n2 != len(out) {
				t.Fatalf("decode of re-encoded: n=%d err=%v", n2, err)
			}
			if !reflect.DeepEqual(c, c2) {
				t.Fatalf("round trip changed command:\n%+v\n%+v", c, c2)
			}
		})
	}
	t.Logf("%d of %d frames re-encoded byte for byte", exact, len(frames))
	if exact < 300 {
		t.Errorf("only %d frames compared byte for byte", exact)
	}
}

func TestWireFramesSplit(t *testing.T) {
	frames := loadWire(t)
	for i := range frames {
		f := &frames[i]
		t.Run(f.File, func(t *testing.T) {
			want, _, err := DecodeFrame(f.raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, len(f.raw))
			copy(buf, f.raw)
			for cut := 0; cut < len(f.raw); cut++ {
				c, n, err := DecodeFrame(buf[:cut], 0)
				if !errors.Is(err, ErrIncomplete) || n != 0 || c != nil {
					t.Fatalf("cut %d: got n=%d err=%v, want ErrIncomplete", cut, n, err)
				}
				// Decoding is stateless, so the second read only needs
				// checking at a sample of cuts: all of them in small
				// frames, then the first 64 and 32 spread over the rest.
				if len(f.raw) > 512 && cut >= 64 && cut%(len(f.raw)/32+1) != 0 {
					continue
				}
				c, n, err = DecodeFrame(buf, 0)
				if err != nil || n != len(buf) {
					t.Fatalf("cut %d: full decode n=%d err=%v", cut, n, err)
				}
				// Scribble over the input: the command must not alias it.
				for j := range buf {
					buf[j] = 0xA5
				}
				if !reflect.DeepEqual(c, want) {
					t.Fatalf("cut %d: decoded command aliases its input", cut)
				}
				copy(buf, f.raw)
			}
		})
	}
}
