package message

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/go-rocketmq/rocketmq"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type vMessage struct {
	Topic                     string            `json:"topic"`
	QueueID                   int32             `json:"queueId"`
	Flag                      int32             `json:"flag"`
	QueueOffset               int64             `json:"queueOffset"`
	CommitLogOffset           int64             `json:"commitLogOffset"`
	SysFlag                   int32             `json:"sysFlag"`
	BornTimestamp             int64             `json:"bornTimestamp"`
	BornHost                  string            `json:"bornHost"`
	StoreTimestamp            int64             `json:"storeTimestamp"`
	StoreHost                 string            `json:"storeHost"`
	ReconsumeTimes            int32             `json:"reconsumeTimes"`
	PreparedTransactionOffset int64             `json:"preparedTransactionOffset"`
	BodyCRC                   int32             `json:"bodyCRC"`
	BodyLength                *int              `json:"bodyLength"`
	BodyHex                   *string           `json:"bodyHex"`
	BodySha256                string            `json:"bodySha256"`
	Properties                map[string]string `json:"properties"`
	StoreSize                 int32             `json:"storeSize"`
	MsgID                     string            `json:"msgId"`
	OffsetMsgID               string            `json:"offsetMsgId"`
}

type messagesVectors struct {
	Cases []struct {
		Name             string   `json:"name"`
		Input            vMessage `json:"input"`
		PropertiesString string   `json:"propertiesString"`
		Encoded          vfile    `json:"encoded"`
		ClientDecode     vMessage `json:"clientDecode"`
	} `json:"cases"`
	PullBody struct {
		Encoded      vfile `json:"encoded"`
		DecodedCount int   `json:"decodedCount"`
		Decoded      []struct {
			Topic       string `json:"topic"`
			MsgID       string `json:"msgId"`
			OffsetMsgID string `json:"offsetMsgId"`
			QueueOffset int64  `json:"queueOffset"`
		} `json:"decoded"`
	} `json:"pullBody"`
	Batch batchVectors `json:"batch"`
}

// javaAddr parses Java's InetSocketAddress text ("1.2.3.4:5" or
// "[2001:db8:0:0:0:0:0:10]:5").
func javaAddr(t testing.TB, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatalf("address %q: %v", s, err)
	}
	return a
}

// checkDecoded compares every field of m with the Java decode.
func checkDecoded(t *testing.T, m *rocketmq.MessageExt, want vMessage) {
	t.Helper()
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"topic", m.Topic, want.Topic},
		{"queueId", m.QueueID, want.QueueID},
		{"flag", m.Flag, want.Flag},
		{"queueOffset", m.QueueOffset, want.QueueOffset},
		{"commitLogOffset", m.CommitLogOffset, want.CommitLogOffset},
		{"sysFlag", m.SysFlag, want.SysFlag},
		{"bornTimestamp", m.BornTimestamp, want.BornTimestamp},
		{"bornHost", m.BornHost, javaAddr(t, want.BornHost)},
		{"storeTimestamp", m.StoreTimestamp, want.StoreTimestamp},
		{"storeHost", m.StoreHost, javaAddr(t, want.StoreHost)},
		{"reconsumeTimes", m.ReconsumeTimes, want.ReconsumeTimes},
		{"preparedTransactionOffset", m.PreparedTransactionOffset, want.PreparedTransactionOffset},
		{"bodyCRC", m.BodyCRC, want.BodyCRC},
		{"storeSize", m.StoreSize, want.StoreSize},
		{"msgId", m.MsgID, want.MsgID},
		{"offsetMsgId", m.OffsetMsgID, want.OffsetMsgID},
	} {
		if f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	switch {
	case want.BodyLength == nil:
		if m.Body != nil {
			t.Errorf("body = %x, want nil (Java null)", m.Body)
		}
	case want.BodyHex != nil:
		diffBytes(t, "body", m.Body, mustHex(t, *want.BodyHex))
	default:
		sum := sha256.Sum256(m.Body)
		if len(m.Body) != *want.BodyLength || hex.EncodeToString(sum[:]) != want.BodySha256 {
			t.Errorf("body: %d bytes sha256 %x, want %d bytes %s", len(m.Body), sum, *want.BodyLength, want.BodySha256)
		}
	}
	if want.Properties == nil {
		if m.Properties != nil {
			t.Errorf("properties = %v, want nil", m.Properties)
		}
	} else if !maps.Equal(m.Properties, want.Properties) {
		t.Errorf("properties = %v, want %v", m.Properties, want.Properties)
	}
}

func TestDecodeRecordJavaVectors(t *testing.T) {
	var v messagesVectors
	loadVectors(t, "messages", &v)
	if len(v.Cases) < 11 {
		t.Fatalf("only %d cases", len(v.Cases))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			bin := readVFile(t, c.Encoded)

			// Client decode: body inflated, MsgID from UNIQ_KEY.
			m, n, err := DecodeRecord(bin)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(bin) {
				t.Errorf("consumed %d of %d bytes", n, len(bin))
			}
			checkDecoded(t, m, c.ClientDecode)

			// Broker view: body as stored.
			raw, _, err := DecodeOptions{KeepCompressed: true}.DecodeRecord(bin)
			if err != nil {
				t.Fatal(err)
			}
			stored := mustHex(t, *c.Input.BodyHex)
			if len(stored) == 0 {
				stored = nil
			}
			diffBytes(t, "stored body", raw.Body, stored)
			if raw.SysFlag != c.Input.SysFlag {
				t.Errorf("stored sysFlag %#x, want %#x", raw.SysFlag, c.Input.SysFlag)
			}

			// Encode from the Java fields and Java's property order: same bytes.
			f := RecordFields{
				QueueID: c.Input.QueueID, Flag: c.Input.Flag, QueueOffset: c.Input.QueueOffset,
				PhysicalOffset: c.Input.CommitLogOffset, SysFlag: c.Input.SysFlag,
				BornTimestamp: c.Input.BornTimestamp, BornHost: javaAddr(t, c.Input.BornHost),
				StoreTimestamp: c.Input.StoreTimestamp, StoreHost: javaAddr(t, c.Input.StoreHost),
				ReconsumeTimes: c.Input.ReconsumeTimes, PreparedTransactionOffset: c.Input.PreparedTransactionOffset,
				Body: stored, Topic: c.Input.Topic, Properties: c.PropertiesString,
			}
			enc, _, err := f.AppendRecord(nil)
			if err != nil {
				t.Fatal(err)
			}
			diffBytes(t, "RecordFields.AppendRecord", enc, bin)

			// Encode from the decoded rocketmq.MessageExt: our property order is
			// sorted, Java's is HashMap order, so compare bytes only where
			// the two agree.
			again, err := AppendMessageExt(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			if EncodeProperties(raw.Properties) == c.PropertiesString {
				diffBytes(t, "MessageExt.AppendRecord", again, bin)
			} else {
				m2, _, err := DecodeOptions{KeepCompressed: true}.DecodeRecord(again)
				if err != nil {
					t.Fatal(err)
				}
				if len(again) != len(bin) || !maps.Equal(m2.Properties, raw.Properties) {
					t.Errorf("re-encoded record differs beyond property order:\n%s", hex.Dump(again))
				}
			}
		})
	}

	t.Run("pullBody", func(t *testing.T) {
		body := readVFile(t, v.PullBody.Encoded)
		var concat []byte
		for _, c := range v.Cases {
			concat = append(concat, readVFile(t, c.Encoded)...)
		}
		diffBytes(t, "pull body", body, concat)
		msgs, err := DecodeRecords(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != v.PullBody.DecodedCount || len(msgs) != len(v.PullBody.Decoded) {
			t.Fatalf("%d messages, want %d", len(msgs), v.PullBody.DecodedCount)
		}
		for i, want := range v.PullBody.Decoded {
			m := msgs[i]
			if m.Topic != want.Topic || m.MsgID != want.MsgID || m.OffsetMsgID != want.OffsetMsgID || m.QueueOffset != want.QueueOffset {
				t.Errorf("message %d: %s %s %s %d, want %+v", i, m.Topic, m.MsgID, m.OffsetMsgID, m.QueueOffset, want)
			}
			t.Run(v.Cases[i].Name, func(t *testing.T) { checkDecoded(t, m, v.Cases[i].ClientDecode) })
		}
	})
}

// TestDecodeRecordsNoAliasing overwrites the input after decoding: only
// bodies may change (they alias the input by design).
func TestDecodeRecordsNoAliasing(t *testing.T) {
	var v messagesVectors
	loadVectors(t, "messages", &v)
	body := readVFile(t, v.PullBody.Encoded)
	want, err := DecodeRecords(bytes.Clone(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecords(body)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 0xEE
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Topic != w.Topic || g.MsgID != w.MsgID || g.OffsetMsgID != w.OffsetMsgID || !maps.Equal(g.Properties, w.Properties) {
			t.Errorf("message %d: strings changed with the input buffer", i)
		}
		if g.BornHost != w.BornHost || g.StoreHost != w.StoreHost {
			t.Errorf("message %d: hosts changed with the input buffer", i)
		}
	}
}

// TestDecodeRecordSplits feeds every prefix of every record: each must be
// an error (never a panic), and a pull body cut anywhere returns exactly
// the whole records before the cut.
func TestDecodeRecordSplits(t *testing.T) {
	var v messagesVectors
	loadVectors(t, "messages", &v)
	body := readVFile(t, v.PullBody.Encoded)
	var ends []int
	for off := 0; off < len(body); {
		size := int(binary.BigEndian.Uint32(body[off:]))
		off += size
		ends = append(ends, off)
	}
	raw := DecodeOptions{KeepCompressed: true} // inflating is not what is tested here
	for cut := 0; cut < len(body); cut++ {
		msgs, err := raw.DecodeRecords(body[:cut])
		whole := 0
		for _, e := range ends {
			if e <= cut {
				whole++
			}
		}
		atBoundary := cut == 0 || (whole > 0 && ends[whole-1] == cut)
		if atBoundary != (err == nil) {
			t.Fatalf("cut %d: err = %v, at boundary %v", cut, err, atBoundary)
		}
		if err != nil && !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("cut %d: error %v does not wrap ErrCorruptRecord", cut, err)
		}
		if len(msgs) != whole {
			t.Fatalf("cut %d: %d messages, want %d", cut, len(msgs), whole)
		}
	}
	for _, c := range v.Cases {
		bin := readVFile(t, c.Encoded)
		for cut := range len(bin) {
			if _, _, err := DecodeRecord(bin[:cut]); !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("%s cut at %d: %v", c.Name, cut, err)
			}
		}
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	f := RecordFields{
		BornHost: netip.MustParseAddrPort("192.168.0.10:54321"), StoreHost: netip.MustParseAddrPort("192.168.0.2:10911"),
		Body: []byte("Hello"), Topic: "TopicTest", Properties: "TAGS\x01TagA",
	}
	good, _, err := f.AppendRecord(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := DecodeRecord(good); err != nil {
		t.Fatal(err)
	}
	bodyLenPos := 84
	topicLenPos := bodyLenPos + 4 + 5
	propLenPos := topicLenPos + 1 + 9
	be := binary.BigEndian
	cases := []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"magic", func(b []byte) []byte { be.PutUint32(b[4:], 0xCBD43194); return b }},
		{"totalSize too small", func(b []byte) []byte { be.PutUint32(b, 90); return b }},
		{"totalSize negative", func(b []byte) []byte { be.PutUint32(b, 0x80000000); return b }},
		{"totalSize larger than input", func(b []byte) []byte { be.PutUint32(b, uint32(len(b)+1)); return b }},
		{"totalSize smaller than fields", func(b []byte) []byte {
			be.PutUint32(b, uint32(len(b)-1))
			return b
		}},
		{"totalSize larger than fields", func(b []byte) []byte {
			be.PutUint32(b, uint32(len(b)+1))
			return append(b, 0)
		}},
		{"bodyLength negative", func(b []byte) []byte { be.PutUint32(b[bodyLenPos:], 0xFFFFFFFF); return b }},
		{"bodyLength huge", func(b []byte) []byte { be.PutUint32(b[bodyLenPos:], 0x7FFFFFFF); return b }},
		{"topicLength negative", func(b []byte) []byte { b[topicLenPos] = 0x80; return b }},
		{"topicLength too long", func(b []byte) []byte { b[topicLenPos] = 100; return b }},
		{"propertiesLength negative", func(b []byte) []byte { be.PutUint16(b[propLenPos:], 0x8000); return b }},
		{"propertiesLength too long", func(b []byte) []byte { be.PutUint16(b[propLenPos:], 100); return b }},
		{"born port out of range", func(b []byte) []byte { be.PutUint32(b[52:], 70000); return b }},
		{"store port negative", func(b []byte) []byte { be.PutUint32(b[68:], 0xFFFFFFFF); return b }},
		{"v6 born flag without v6 room", func(b []byte) []byte { b[39] |= byte(FlagBornHostV6); return b }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.edit(bytes.Clone(good))
			if _, _, err := DecodeRecord(b); !errors.Is(err, ErrCorruptRecord) {
				t.Errorf("DecodeRecord: %v, want ErrCorruptRecord", err)
			}
			two := append(bytes.Clone(good), b...)
			msgs, err := DecodeRecords(two)
			if !errors.Is(err, ErrCorruptRecord) || len(msgs) != 1 {
				t.Errorf("DecodeRecords: %d messages, %v", len(msgs), err)
			}
		})
	}
	t.Run("corrupt compressed body", func(t *testing.T) {
		g := f
		g.SysFlag = CompressionZLIB.ProducerSysFlag()
		b, _, _ := g.AppendRecord(nil)
		if _, _, err := DecodeRecord(b); !errors.Is(err, ErrCorruptBody) {
			t.Errorf("got %v, want ErrCorruptBody", err)
		}
		m, _, err := DecodeOptions{KeepCompressed: true}.DecodeRecord(b)
		if err != nil || string(m.Body) != "Hello" {
			t.Errorf("KeepCompressed: %v %q", err, m.Body)
		}
		msgs, err := DecodeRecords(append(bytes.Clone(good), b...))
		if !errors.Is(err, ErrCorruptBody) || len(msgs) != 1 {
			t.Errorf("DecodeRecords: %d messages, %v", len(msgs), err)
		}
	})
	t.Run("unknown compression type", func(t *testing.T) {
		g := f
		g.SysFlag = FlagCompressed | 0x400
		b, _, _ := g.AppendRecord(nil)
		_, _, err := DecodeRecord(b)
		if !errors.Is(err, ErrUnknownCompression) || !strings.Contains(err.Error(), "4") {
			t.Errorf("got %v", err)
		}
	})
}

// TestDecodeRecordRoundTrip encodes with RecordFields and decodes: IPv6
// hosts, a magic v2 topic, an IPv4-mapped host, compressed bodies.
func TestDecodeRecordRoundTrip(t *testing.T) {
	body5k := bytes.Repeat([]byte("rocketmq body "), 400)
	zl, err := Compress(body5k, 5)
	if err != nil {
		t.Fatal(err)
	}
	lz, err := CompressWith(CompressionLZ4, body5k, 0)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := CompressWith(CompressionZSTD, body5k, 3)
	if err != nil {
		t.Fatal(err)
	}
	base := RecordFields{
		QueueID: 3, Flag: -7, QueueOffset: 1 << 40, PhysicalOffset: 1<<62 + 5, BornTimestamp: 1700000000000,
		BornHost: netip.MustParseAddrPort("192.168.0.10:54321"), StoreTimestamp: 1700000000123,
		StoreHost: netip.MustParseAddrPort("192.168.0.2:10911"), ReconsumeTimes: 16, PreparedTransactionOffset: 99,
		Body: []byte("x"), Topic: "T", Properties: "UNIQ_KEY\x01ABC\x02TAGS\x01t",
	}
	cases := []struct {
		name     string
		edit     func(f *RecordFields)
		wantBody []byte
		wantSys  int32
	}{
		{"plain", func(f *RecordFields) {}, []byte("x"), 0},
		{"ipv6 born", func(f *RecordFields) { f.BornHost = netip.MustParseAddrPort("[2001:db8::10]:1") }, []byte("x"), FlagBornHostV6},
		{"ipv6 store", func(f *RecordFields) { f.StoreHost = netip.MustParseAddrPort("[::1]:10911") }, []byte("x"), FlagStoreHostV6},
		{"v2 topic", func(f *RecordFields) { f.Topic = strings.Repeat("L", 300) }, []byte("x"), 0},
		{"zlib", func(f *RecordFields) { f.Body, f.SysFlag = zl, 0x301 }, body5k, 0x301},
		{"zlib legacy flag", func(f *RecordFields) { f.Body, f.SysFlag = zl, 0x1 }, body5k, 0x1},
		{"lz4", func(f *RecordFields) { f.Body, f.SysFlag = lz, 0x101 }, body5k, 0x101},
		{"zstd", func(f *RecordFields) { f.Body, f.SysFlag = zs, 0x201 }, body5k, 0x201},
		{"no properties", func(f *RecordFields) { f.Properties = "" }, []byte("x"), 0},
		{"empty body", func(f *RecordFields) { f.Body = nil }, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := base
			c.edit(&f)
			b, sys, err := f.AppendRecord(nil)
			if err != nil {
				t.Fatal(err)
			}
			if sys != c.wantSys {
				t.Errorf("sysFlag written %#x, want %#x", sys, c.wantSys)
			}
			m, n, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(b) || m.StoreSize != int32(len(b)) {
				t.Errorf("size %d / %d, want %d", n, m.StoreSize, len(b))
			}
			if m.Topic != f.Topic || m.QueueID != f.QueueID || m.Flag != f.Flag || m.QueueOffset != f.QueueOffset ||
				m.CommitLogOffset != f.PhysicalOffset || m.SysFlag != sys || m.BornTimestamp != f.BornTimestamp ||
				m.BornHost != f.BornHost || m.StoreTimestamp != f.StoreTimestamp || m.StoreHost != f.StoreHost ||
				m.ReconsumeTimes != f.ReconsumeTimes || m.PreparedTransactionOffset != f.PreparedTransactionOffset ||
				m.BodyCRC != BodyCRC(f.Body) {
				t.Errorf("fields differ: %+v", m)
			}
			diffBytes(t, "body", m.Body, c.wantBody)
			if m.OffsetMsgID != rocketmq.EncodeOffsetMsgID(f.StoreHost, f.PhysicalOffset) {
				t.Errorf("offset id %s", m.OffsetMsgID)
			}
			wantID := m.OffsetMsgID
			if f.Properties != "" {
				wantID = "ABC"
			}
			if m.MsgID != wantID {
				t.Errorf("MsgID %s, want %s", m.MsgID, wantID)
			}
			if (f.Properties == "") != (m.Properties == nil) {
				t.Errorf("properties %v for %q", m.Properties, f.Properties)
			}
		})
	}
	t.Run("decompression cap", func(t *testing.T) {
		f := base
		f.Body, f.SysFlag = zl, 0x301
		b, _, _ := f.AppendRecord(nil)
		_, _, err := DecodeOptions{MaxBodySize: len(body5k) - 1}.DecodeRecord(b)
		if !errors.Is(err, ErrDecompressedTooLarge) {
			t.Errorf("got %v", err)
		}
		if _, _, err := (DecodeOptions{MaxBodySize: len(body5k)}).DecodeRecord(b); err != nil {
			t.Errorf("exact cap: %v", err)
		}
	})
}

// wireBody returns the body of a captured frame (length, header word,
// header, body).
func wireBody(t testing.TB, file string) []byte {
	t.Helper()
	frame, err := os.ReadFile(filepath.Join("../../testdata", "wire", file))
	if err != nil {
		t.Fatal(err)
	}
	if len(frame) < 8 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("%s: bad frame length", file)
	}
	hl := int(binary.BigEndian.Uint32(frame[4:]) & 0xFFFFFF)
	return frame[8+hl:]
}

type wireIndex struct {
	Frames []struct {
		File     string `json:"file"`
		BodyKind string `json:"bodyKind"`
		Messages []struct {
			TotalSize                 int32             `json:"totalSize"`
			Magic                     string            `json:"magic"`
			QueueID                   int32             `json:"queueId"`
			QueueOffset               int64             `json:"queueOffset"`
			PhysicalOffset            int64             `json:"physicalOffset"`
			SysFlag                   int32             `json:"sysFlag"`
			ReconsumeTimes            int32             `json:"reconsumeTimes"`
			PreparedTransactionOffset int64             `json:"preparedTransactionOffset"`
			BodyLength                int               `json:"bodyLength"`
			Topic                     string            `json:"topic"`
			Properties                map[string]string `json:"properties"`
		} `json:"messages"`
		BatchMessages []struct {
			BodyLength int               `json:"bodyLength"`
			Properties map[string]string `json:"properties"`
		} `json:"batchMessages"`
	} `json:"frames"`
}

func loadWireIndex(t testing.TB) wireIndex {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/wire/index.json")
	if err != nil {
		t.Fatal(err)
	}
	var idx wireIndex
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// TestDecodeRecordsWire decodes every stored-message body captured from a
// 4.9.8 broker (PULL, QUERY, VIEW, CHECK_TRANSACTION_STATE).
func TestDecodeRecordsWire(t *testing.T) {
	idx := loadWireIndex(t)
	seen := 0
	for _, f := range idx.Frames {
		if f.BodyKind != "stored-messages" {
			continue
		}
		seen++
		t.Run(f.File, func(t *testing.T) {
			body := wireBody(t, f.File)
			raw, err := DecodeOptions{KeepCompressed: true}.DecodeRecords(body)
			if err != nil {
				t.Fatal(err)
			}
			msgs, err := DecodeRecords(body)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) != len(f.Messages) || len(msgs) != len(f.Messages) {
				t.Fatalf("%d messages, want %d", len(raw), len(f.Messages))
			}
			for i, w := range f.Messages {
				m := raw[i]
				if w.Magic != "V1" || m.StoreSize != w.TotalSize || m.QueueID != w.QueueID || m.QueueOffset != w.QueueOffset ||
					m.CommitLogOffset != w.PhysicalOffset || m.SysFlag != w.SysFlag || m.ReconsumeTimes != w.ReconsumeTimes ||
					m.PreparedTransactionOffset != w.PreparedTransactionOffset || len(m.Body) != w.BodyLength ||
					m.Topic != w.Topic || !maps.Equal(m.Properties, w.Properties) {
					t.Errorf("message %d: %+v\nwant %+v", i, m, w)
				}
				if m.BodyCRC != BodyCRC(m.Body) {
					t.Errorf("message %d: stored bodyCRC %d, computed %d", i, m.BodyCRC, BodyCRC(m.Body))
				}
				if u := w.Properties[rocketmq.PropertyUniqKey]; u != "" && msgs[i].MsgID != u {
					t.Errorf("message %d: MsgID %s, want %s", i, msgs[i].MsgID, u)
				}
				if w.SysFlag&FlagCompressed != 0 && bytes.Equal(msgs[i].Body, m.Body) {
					t.Errorf("message %d: compressed body not inflated", i)
				}
				// Re-encoding gives back the same message. (Not always the
				// same size: a 4.9.8 broker appends the batch properties to
				// batch elements, so WAIT can be stored twice.)
				again, err := AppendMessageExt(nil, m)
				if err != nil {
					t.Fatal(err)
				}
				m2, _, err := DecodeOptions{KeepCompressed: true}.DecodeRecord(again)
				if err != nil {
					t.Fatal(err)
				}
				m2.StoreSize = m.StoreSize
				if m2.Topic != m.Topic || !bytes.Equal(m2.Body, m.Body) || !maps.Equal(m2.Properties, m.Properties) ||
					m2.SysFlag != m.SysFlag || m2.BornHost != m.BornHost || m2.StoreHost != m.StoreHost ||
					m2.MsgID != m.MsgID || m2.OffsetMsgID != m.OffsetMsgID || m2.BodyCRC != m.BodyCRC {
					t.Errorf("message %d: re-encoded and decoded: %+v\nwant %+v", i, m2, m)
				}
			}
		})
	}
	if seen != 39 {
		t.Errorf("%d stored-message frames, want 39", seen)
	}
}

func BenchmarkDecodePullBody32x1KiB(b *testing.B) {
	body := pullBody32x1KiB(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		msgs, err := DecodeRecords(body)
		if err != nil || len(msgs) != 32 {
			b.Fatal(len(msgs), err)
		}
	}
}

// pullBody32x1KiB builds a PULL body of 32 records with 1 KiB bodies and
// the properties a 4.9.8 broker stores for a Java producer's message.
func pullBody32x1KiB(tb testing.TB) []byte {
	gen := rocketmq.NewUniqIDGenerator(rocketmq.WithIDAddr(netip.MustParseAddr("192.168.0.10")), rocketmq.WithIDPID(12345), rocketmq.WithIDHash(0x1B6D3586))
	var body []byte
	payload := bytes.Repeat([]byte{'m'}, 1024)
	for i := range 32 {
		props := map[string]string{
			rocketmq.PropertyTags: "TagA", rocketmq.PropertyKeys: "KEY" + string(rune('A'+i%26)), rocketmq.PropertyWaitStoreMsgOK: "true",
			rocketmq.PropertyUniqKey: gen.NewID(), rocketmq.PropertyCluster: "DefaultCluster", "orderId": "1001",
		}
		f := RecordFields{
			QueueID: 1, QueueOffset: int64(i), PhysicalOffset: int64(i) * 1200, BornTimestamp: 1700000000000,
			BornHost: netip.MustParseAddrPort("192.168.0.10:54321"), StoreTimestamp: 1700000000123,
			StoreHost: netip.MustParseAddrPort("192.168.0.2:10911"), Body: payload, Topic: "TopicTest",
			Properties: EncodeProperties(props),
		}
		var err error
		if body, _, err = f.AppendRecord(body); err != nil {
			tb.Fatal(err)
		}
	}
	return body
}

// TestDecodeRecordsBeyondKeptViews: a body of more records than
// DecodeRecords keeps views of between its passes decodes every record as
// DecodeRecord does, and a corrupt record past them still ends the batch
// with the records before it.
func TestDecodeRecordsBeyondKeptViews(t *testing.T) {
	const n = 2*keptViews + 3
	var body []byte
	var starts []int
	for i := range n {
		props := map[string]string{rocketmq.PropertyTags: "T" + strconv.Itoa(i%3)}
		if i%4 != 0 {
			props[rocketmq.PropertyUniqKey] = fmt.Sprintf("ID%030d", i)
		}
		f := RecordFields{
			QueueID: 2, QueueOffset: int64(i), PhysicalOffset: int64(i) * 300, BornTimestamp: 1700000000000,
			BornHost: netip.MustParseAddrPort("10.0.0.1:5000"), StoreTimestamp: 1700000000001,
			StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"), Body: []byte(strconv.Itoa(i)),
			Topic: "Topic" + strconv.Itoa(i/10), Properties: EncodeProperties(props),
		}
		starts = append(starts, len(body))
		var err error
		if body, _, err = f.AppendRecord(body); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := DecodeRecords(body)
	if err != nil || len(msgs) != n {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for i, m := range msgs {
		w, _, err := DecodeRecord(body[starts[i]:])
		if err != nil {
			t.Fatal(err)
		}
		if m.Topic != w.Topic || m.MsgID != w.MsgID || m.OffsetMsgID != w.OffsetMsgID || string(m.Body) != string(w.Body) ||
			m.QueueOffset != w.QueueOffset || !maps.Equal(m.Properties, w.Properties) {
			t.Fatalf("message %d: %+v, DecodeRecord gives %+v", i, m, w)
		}
		if want := fmt.Sprintf("ID%030d", i); i%4 != 0 && m.MsgID != want {
			t.Fatalf("message %d: MsgID %q, want %q", i, m.MsgID, want)
		}
	}
	bad := keptViews + 5
	binary.BigEndian.PutUint32(body[starts[bad]+RecordPosMagic:], 0x12345678)
	msgs, err = DecodeRecords(body)
	if !errors.Is(err, ErrCorruptRecord) || len(msgs) != bad {
		t.Fatalf("corrupt record %d: %d messages, %v", bad, len(msgs), err)
	}
}
