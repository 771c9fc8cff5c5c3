package message

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/go-rocketmq/rocketmq"
	"strings"
	"testing"
)

type compressionVectors struct {
	Body struct {
		Length int   `json:"length"`
		Data   vfile `json:"data"`
	} `json:"body"`
	UtilAllCompress struct {
		Output     vfile  `json:"output"`
		First2Hex  string `json:"first2BytesHex"`
		RoundTrips bool   `json:"roundTripEqual"`
	} `json:"utilAllCompress"`
	Compressors []struct {
		Type            string `json:"type"`
		Value           int32  `json:"value"`
		Level           int    `json:"level"`
		ProducerSysFlag int32  `json:"producerSysFlag"`
		Output          vfile  `json:"output"`
		First4Hex       string `json:"first4BytesHex"`
	} `json:"compressors"`
	SysFlagToType []struct {
		SysFlag   int32  `json:"sysFlag"`
		Type      string `json:"getCompressionType"`
		Exception string `json:"exception"`
	} `json:"sysFlagToType"`
	CompressionTypeOf []struct {
		Name      string `json:"name"`
		Of        string `json:"of"`
		Exception string `json:"exception"`
	} `json:"compressionTypeOf"`
}

func TestCompressionJavaVectors(t *testing.T) {
	var v compressionVectors
	loadVectors(t, "compression", &v)
	body := readVFile(t, v.Body.Data)
	for i := range body { // the documented generator
		if body[i] != byte('a'+(7*i+i/64)%26) {
			t.Fatalf("body byte %d differs from its definition", i)
		}
	}

	t.Run("utilAllCompress", func(t *testing.T) {
		z := readVFile(t, v.UtilAllCompress.Output)
		if hex.EncodeToString(z[:2]) != v.UtilAllCompress.First2Hex {
			t.Fatalf("header %x", z[:2])
		}
		for _, sys := range []int32{0x1, 0x301, 0x0} {
			got, err := Decompress(z, sys, 0)
			if err != nil {
				t.Fatalf("sysFlag %#x: %v", sys, err)
			}
			diffBytes(t, "inflated", got, body)
		}
	})
	if len(v.Compressors) != 3 {
		t.Fatalf("%d compressors", len(v.Compressors))
	}
	for _, c := range v.Compressors {
		t.Run(c.Type, func(t *testing.T) {
			out := readVFile(t, c.Output)
			if hex.EncodeToString(out[:4]) != c.First4Hex {
				t.Fatalf("magic %x", out[:4])
			}
			typ, err := ParseCompressionType(c.Type)
			if err != nil || int32(typ) != c.Value || typ.String() != c.Type {
				t.Fatalf("ParseCompressionType(%s) = %v, %v", c.Type, typ, err)
			}
			if typ.ProducerSysFlag() != c.ProducerSysFlag {
				t.Errorf("ProducerSysFlag %#x, want %#x", typ.ProducerSysFlag(), c.ProducerSysFlag)
			}
			got, err := Decompress(out, c.ProducerSysFlag, 0)
			if err != nil {
				t.Fatal(err)
			}
			diffBytes(t, "Java output inflated", got, body)

			// Go's own output decompresses too (Java reads standard streams).
			ours, err := CompressWith(typ, body, c.Level)
			if err != nil {
				t.Fatal(err)
			}
			if len(ours) >= len(body) {
				t.Errorf("%s output of %d bytes does not compress", c.Type, len(ours))
			}
			if !bytes.Equal(ours[:4], out[:4]) && c.Type != "ZLIB" {
				t.Errorf("frame magic %x, Java %x", ours[:4], out[:4])
			}
			back, err := Decompress(ours, typ.ProducerSysFlag(), 0)
			if err != nil {
				t.Fatal(err)
			}
			diffBytes(t, "Go output inflated", back, body)
		})
	}
	for _, c := range v.SysFlagToType {
		t.Run("sysFlagToType", func(t *testing.T) {
			typ, err := CompressionTypeOf(c.SysFlag)
			if c.Exception != "" {
				if !errors.Is(err, ErrUnknownCompression) || !strings.Contains(err.Error(), "value 4") {
					t.Errorf("sysFlag %#x: %v, want an error like %q", c.SysFlag, err, c.Exception)
				}
				if _, err := Decompress([]byte{1}, c.SysFlag, 0); !errors.Is(err, ErrUnknownCompression) {
					t.Errorf("Decompress: %v", err)
				}
				return
			}
			if err != nil || typ.String() != c.Type {
				t.Errorf("sysFlag %#x: %v %v, want %s", c.SysFlag, typ, err, c.Type)
			}
		})
	}
	for _, c := range v.CompressionTypeOf {
		t.Run("of/"+c.Name, func(t *testing.T) {
			typ, err := ParseCompressionType(c.Name)
			if c.Exception != "" {
				if !errors.Is(err, ErrUnknownCompression) {
					t.Errorf("%q: %v, want %q", c.Name, err, c.Exception)
				}
				return
			}
			if err != nil || typ.String() != c.Of {
				t.Errorf("%q: %v %v, want %s", c.Name, typ, err, c.Of)
			}
		})
	}
	t.Run("producerDefaults", func(t *testing.T) {
		if rocketmq.DefaultCompressLevel != 5 || rocketmq.DefaultCompressOverSize != 4096 || CompressionZLIB.ProducerSysFlag() != 0x301 {
			t.Error("producer defaults differ from 4.9.8")
		}
		z, err := Compress(body, rocketmq.DefaultCompressLevel)
		if err != nil {
			t.Fatal(err)
		}
		// Java's Inflater reads any RFC 1950 stream; stdlib's reader checks it.
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		diffBytes(t, "zlib round trip", buf.Bytes(), body)
	})
}

// TestDecompressBomb inflates highly compressible data past the cap.
func TestDecompressBomb(t *testing.T) {
	zeros := make([]byte, 2<<20)
	for _, typ := range []CompressionType{CompressionZLIB, CompressionLZ4, CompressionZSTD} {
		t.Run(typ.String(), func(t *testing.T) {
			z, err := CompressWith(typ, zeros, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(z) > 32<<10 {
				t.Fatalf("%d compressed bytes", len(z))
			}
			if _, err := Decompress(z, typ.ProducerSysFlag(), 256<<10); !errors.Is(err, ErrDecompressedTooLarge) {
				t.Errorf("cap 256 KiB: %v", err)
			}
			got, err := Decompress(z, typ.ProducerSysFlag(), len(zeros))
			if err != nil || len(got) != len(zeros) {
				t.Errorf("cap = size: %d bytes, %v", len(got), err)
			}
			if _, err := Decompress(z, typ.ProducerSysFlag(), len(zeros)-1); !errors.Is(err, ErrDecompressedTooLarge) {
				t.Errorf("cap = size-1: %v", err)
			}
		})
	}
}

func TestDecompressCorrupt(t *testing.T) {
	body := []byte(strings.Repeat("corrupt me ", 100))
	for _, typ := range []CompressionType{CompressionZLIB, CompressionLZ4, CompressionZSTD} {
		z, err := CompressWith(typ, body, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(typ.String(), func(t *testing.T) {
			for _, bad := range [][]byte{nil, {0}, z[:len(z)/2], z[:len(z)-1]} {
				if _, err := Decompress(bad, typ.ProducerSysFlag(), 0); !errors.Is(err, ErrCorruptBody) {
					t.Errorf("%d bytes: %v", len(bad), err)
				}
			}
		})
	}
	if _, err := CompressWith(CompressionType(9), body, 1); !errors.Is(err, ErrUnknownCompression) {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := Compress(body, 42); err == nil {
		t.Error("zlib level 42 accepted")
	}
}

func TestCRCJavaVectors(t *testing.T) {
	var v struct {
		Cases []struct {
			Name    string  `json:"name"`
			Length  *int    `json:"length"`
			DataHex *string `json:"dataHex"`
			Raw     *uint32 `json:"crc32Raw"`
			UtilAll int32   `json:"utilAllCrc32"`
		} `json:"cases"`
	}
	loadVectors(t, "crc", &v)
	patternB := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(31*i + i>>8)
		}
		return b
	}
	gen := map[string]func() []byte{
		"null":  func() []byte { return nil },
		"empty": func() []byte { return []byte{} },
		"pattern-a-1k": func() []byte {
			b := make([]byte, 1024)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		},
		"pattern-b-1k":               func() []byte { return patternB(1024) },
		"pattern-b-1m":               func() []byte { return patternB(1 << 20) },
		"zeros-1m":                   func() []byte { return make([]byte, 1<<20) },
		"ones-1k":                    func() []byte { return bytes.Repeat([]byte{0xFF}, 1024) },
		"pattern-b-1k-slice-100-200": func() []byte { return patternB(1024)[100:300] },
	}
	if len(v.Cases) != 13 {
		t.Fatalf("%d cases", len(v.Cases))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var data []byte
			if c.DataHex != nil {
				data = mustHex(t, *c.DataHex)
			} else if g, ok := gen[c.Name]; ok {
				data = g()
			} else {
				t.Fatalf("no data for %s", c.Name)
			}
			if c.Length != nil && len(data) != *c.Length {
				t.Fatalf("%d bytes, want %d", len(data), *c.Length)
			}
			if got := BodyCRC(data); got != c.UtilAll {
				sum := sha256.Sum256(data)
				t.Errorf("BodyCRC = %d, want %d (data sha256 %x)", got, c.UtilAll, sum[:8])
			}
			if c.Raw != nil && uint32(BodyCRC(data)) != *c.Raw&0x7FFFFFFF {
				t.Errorf("raw CRC mismatch")
			}
		})
	}
}
