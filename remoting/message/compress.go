package message

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// CompressionType is a body codec, numbered as in the sysFlag bits 8-10
// (docs/PROTOCOL.md §5.3, §5.6).
type CompressionType int32

const (
	CompressionLZ4  CompressionType = 1 // LZ4 frame format
	CompressionZSTD CompressionType = 2 // zstd frame
	CompressionZLIB CompressionType = 3 // RFC 1950 zlib stream; also type 0
)

// DefaultMaxDecompressedSize caps an inflated body unless the caller sets
// another cap: 4 x rocketmq.DefaultMaxMessageSize. A Java producer checks the body
// against maxMessageSize before it compresses, so real bodies stay at or
// below 4 MiB; the headroom covers producers configured for more, and the
// cap keeps a small malicious body from inflating to gigabytes.
const DefaultMaxDecompressedSize = 4 * rocketmq.DefaultMaxMessageSize

var (
	ErrUnknownCompression   = errors.New("rocketmq: unknown compression type")
	ErrDecompressedTooLarge = errors.New("rocketmq: decompressed body exceeds the size limit")
	ErrCorruptBody          = errors.New("rocketmq: corrupt compressed body")
)

// String returns the Java enum name.
func (t CompressionType) String() string {
	switch t {
	case CompressionLZ4:
		return "LZ4"
	case CompressionZSTD:
		return "ZSTD"
	case CompressionZLIB:
		return "ZLIB"
	}
	return fmt.Sprintf("CompressionType(%d)", int32(t))
}

// Flag returns the sysFlag type bits of t (0x100, 0x200 or 0x300).
func (t CompressionType) Flag() int32 { return int32(t) << 8 & FlagCompressionMask }

// ProducerSysFlag returns the sysFlag a 4.9.4+ producer sets for a body
// compressed with t: FlagCompressed | type bits (0x101, 0x201, 0x301).
func (t CompressionType) ProducerSysFlag() int32 { return FlagCompressed | t.Flag() }

// CompressionTypeOf returns the codec named by the type bits of sysFlag,
// as Java's getCompressionType: 0 and 3 are zlib, 1 LZ4, 2 zstd; other
// values are an error naming the value.
func CompressionTypeOf(sysFlag int32) (CompressionType, error) {
	v := (sysFlag & FlagCompressionMask) >> 8
	switch v {
	case 0, 3:
		return CompressionZLIB, nil
	case 1:
		return CompressionLZ4, nil
	case 2:
		return CompressionZSTD, nil
	}
	return 0, fmt.Errorf("%w: value %d (sysFlag %#x)", ErrUnknownCompression, v, sysFlag)
}

// ParseCompressionType maps a name ("zlib", " LZ4 ", ...) to a codec like
// Java's CompressionType.of: trimmed, case-insensitive.
func ParseCompressionType(name string) (CompressionType, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "LZ4":
		return CompressionLZ4, nil
	case "ZSTD":
		return CompressionZSTD, nil
	case "ZLIB":
		return CompressionZLIB, nil
	}
	return 0, fmt.Errorf("%w: name %q", ErrUnknownCompression, name)
}

// Compress deflates body into a zlib stream at level (1..9), the default
// producer codec. Send it with sysFlag CompressionZLIB.ProducerSysFlag().
func Compress(body []byte, level int) ([]byte, error) {
	return CompressWith(CompressionZLIB, body, level)
}

// CompressWith compresses body with codec t. level is the zlib level
// (1..9), the zstd level (1..22, mapped to the nearest encoder level) or,
// for LZ4, 0 for the fast mode and 1..9 for the high-compression levels.
func CompressWith(t CompressionType, body []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body)/2 + 64)
	switch t {
	case CompressionZLIB:
		w, err := zlib.NewWriterLevel(&buf, level)
		if err != nil {
			return nil, fmt.Errorf("rocketmq: zlib level %d: %w", level, err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CompressionLZ4:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.CompressionLevelOption(lz4Level(level))); err != nil {
			return nil, fmt.Errorf("rocketmq: lz4 level %d: %w", level, err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CompressionZSTD:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			return nil, fmt.Errorf("rocketmq: zstd level %d: %w", level, err)
		}
		out := enc.EncodeAll(body, buf.Bytes())
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: %v", ErrUnknownCompression, t)
	}
	return buf.Bytes(), nil
}

func lz4Level(level int) lz4.CompressionLevel {
	if level <= 0 {
		return lz4.Fast
	}
	if level > 9 {
		level = 9
	}
	return lz4.CompressionLevel(1 << (8 + level))
}

// Decompress inflates body with the codec named by the type bits of
// sysFlag (bit 0 is not checked: the caller decides whether the body is
// compressed). The result may not exceed maxSize bytes (<= 0 means
// DefaultMaxDecompressedSize); a larger output fails with
// ErrDecompressedTooLarge without being read to the end.
func Decompress(body []byte, sysFlag int32, maxSize int) ([]byte, error) {
	t, err := CompressionTypeOf(sysFlag)
	if err != nil {
		return nil, err
	}
	if maxSize <= 0 {
		maxSize = DefaultMaxDecompressedSize
	}
	if len(body) == 0 { // every codec writes at least a header
		return nil, fmt.Errorf("%w: %v: empty input", ErrCorruptBody, t)
	}
	var r io.Reader
	switch t {
	case CompressionZLIB:
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: zlib: %w", ErrCorruptBody, err)
		}
		defer zr.Close()
		r = zr
	case CompressionLZ4:
		r = lz4.NewReader(bytes.NewReader(body))
	case CompressionZSTD:
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(uint64(maxSize)+1))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %w", ErrCorruptBody, err)
		}
		defer zr.Close()
		r = zr
	}
	return readLimited(r, t, len(body), maxSize)
}

// readLimited reads r to the end, failing once more than maxSize bytes
// come out.
func readLimited(r io.Reader, t CompressionType, inLen, maxSize int) ([]byte, error) {
	guess := inLen * 4
	if guess < 512 {
		guess = 512
	}
	if guess > maxSize+1 {
		guess = maxSize + 1
	}
	out := make([]byte, 0, guess)
	for {
		if len(out) == cap(out) {
			if len(out) > maxSize {
				return nil, fmt.Errorf("%w: %v output over %d bytes", ErrDecompressedTooLarge, t, maxSize)
			}
			grow := len(out)
			if len(out)+grow > maxSize+1 {
				grow = maxSize + 1 - len(out)
			}
			out = slices.Grow(out, grow)
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > maxSize {
			return nil, fmt.Errorf("%w: %v output over %d bytes", ErrDecompressedTooLarge, t, maxSize)
		}
		if err == io.EOF {
			return out, nil
		}
		if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			// The frame announces more output or window than the cap.
			return nil, fmt.Errorf("%w: %v: %w", ErrDecompressedTooLarge, t, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v: %w", ErrCorruptBody, t, err)
		}
	}
}
