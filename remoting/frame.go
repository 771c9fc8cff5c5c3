package remoting

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
)

// DefaultMaxFrameSize is the Java default limit on a whole frame, length
// prefix included (com.rocketmq.remoting.frameMaxLength).
const DefaultMaxFrameSize = 16 << 20

// newCommand allocates a Command whose Ext has room for n fields, in the
// same allocation for small n: one malloc instead of two per decoded frame.
// Ext is empty and non-nil when n > 0.
func newCommand(n int) *Command {
	switch {
	case n == 0:
		return new(Command)
	case n <= 4:
		p := new(struct {
			c Command
			f [4]Field
		})
		p.c.Ext = p.f[:0]
		return &p.c
	case n <= 8:
		p := new(struct {
			c Command
			f [8]Field
		})
		p.c.Ext = p.f[:0]
		return &p.c
	case n <= 16:
		p := new(struct {
			c Command
			f [16]Field
		})
		p.c.Ext = p.f[:0]
		return &p.c
	}
	return &Command{Ext: make(ExtFields, 0, n)}
}

// maxHeaderLength is the largest header the 24-bit length of the header
// word can express.
const maxHeaderLength = 1<<24 - 1

// ErrIncomplete is returned while a buffer holds only part of a frame. It
// is not a protocol error: read more and call again.
var ErrIncomplete = errors.New("rocketmq: incomplete frame")

// Frame error kinds, matchable with errors.Is on a *FrameError.
var (
	// ErrFrameTooLarge: the length prefix exceeds the configured maximum.
	ErrFrameTooLarge = errors.New("rocketmq: frame too large")
	// ErrMalformedFrame: the bytes are not a valid frame or header.
	ErrMalformedFrame = errors.New("rocketmq: malformed frame")
	// ErrEncode: a command cannot be encoded (a length does not fit).
	ErrEncode = errors.New("rocketmq: cannot encode command")
)

// FrameError describes a frame that cannot be decoded or encoded. A stream
// that produced one is out of sync and must be closed.
type FrameError struct {
	Kind   error // ErrFrameTooLarge, ErrMalformedFrame or ErrEncode
	Detail string
}

func (e *FrameError) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap returns the kind so errors.Is(err, ErrMalformedFrame) works.
func (e *FrameError) Unwrap() error { return e.Kind }

func malformed(detail string) error {
	return &FrameError{Kind: ErrMalformedFrame, Detail: detail}
}

func encodeErr(detail string) error {
	return &FrameError{Kind: ErrEncode, Detail: detail}
}

// FrameSize returns the size of the frame at src[0:], length prefix
// included, as soon as the 4-byte prefix is present (ErrIncomplete before).
// The length is checked before anything is allocated: below 4 (no room for
// the header word) or above maxFrame gives a *FrameError. maxFrame <= 0
// means DefaultMaxFrameSize; like Java's frame decoder the limit applies to
// the whole frame including the prefix.
func FrameSize(src []byte, maxFrame int) (int, error) {
	if len(src) < 4 {
		return 0, ErrIncomplete
	}
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrameSize
	}
	n := int64(int32(binary.BigEndian.Uint32(src)))
	if n < 4 {
		return 0, malformed("frame length " + strconv.FormatInt(n, 10))
	}
	if n+4 > int64(maxFrame) {
		return 0, &FrameError{Kind: ErrFrameTooLarge,
			Detail: "frame length " + strconv.FormatInt(n, 10) + " exceeds " + strconv.Itoa(maxFrame)}
	}
	return int(n + 4), nil
}

// DecodeFrame decodes the frame at src[0:] and returns it with the number
// of bytes it occupied. With only part of a frame it returns ErrIncomplete
// and 0; nothing is consumed. Any other error is a *FrameError (consumed
// is 0) after which the stream cannot be resynchronised.
//
// The Command owns its memory: src may be reused as soon as this returns.
func DecodeFrame(src []byte, maxFrame int) (*Command, int, error) {
	return decodeFrame(src, maxFrame, true)
}

// DecodeFrameView is DecodeFrame except that the Command's Body is a view
// of src, valid only while src is: for a caller that is done with the
// command (or copies the body) before it reuses src. The header is owned.
func DecodeFrameView(src []byte, maxFrame int) (*Command, int, error) {
	return decodeFrame(src, maxFrame, false)
}

func decodeFrame(src []byte, maxFrame int, ownBody bool) (*Command, int, error) {
	n, err := FrameSize(src, maxFrame)
	if err != nil {
		return nil, 0, err
	}
	if len(src) < n {
		return nil, 0, ErrIncomplete
	}
	c, err := decodeCommand(src[4:n], ownBody)
	if err != nil {
		return nil, 0, err
	}
	return c, n, nil
}

// DecodeCommand decodes a frame without its 4-byte length prefix: header
// word, header and body, as Java's RemotingCommand.decode takes it. b must
// hold exactly one command; everything after the header is the body.
func DecodeCommand(b []byte) (*Command, error) { return decodeCommand(b, true) }

// decodeCommand is DecodeCommand; ownBody false leaves Body a view of b.
func decodeCommand(b []byte, ownBody bool) (*Command, error) {
	if len(b) < 4 {
		return nil, malformed("frame shorter than its header word")
	}
	word := binary.BigEndian.Uint32(b)
	st := SerializeType(word >> 24)
	hl := int(word & maxHeaderLength)
	if hl > len(b)-4 {
		return nil, malformed("header length " + strconv.Itoa(hl) + " exceeds frame")
	}
	hdr := b[4 : 4+hl]
	var c *Command
	var err error
	switch st {
	case SerializeJSON:
		c, err = decodeJSON(hdr)
	case SerializeRocketMQ:
		c, err = decodeBinary(hdr)
	default:
		return nil, malformed("unknown serialize type " + strconv.Itoa(int(st)))
	}
	if err != nil {
		return nil, err
	}
	c.Serialize = st
	if body := b[4+hl:]; len(body) > 0 {
		if ownBody {
			body = slices.Clone(body)
		}
		c.Body = body[:len(body):len(body)]
	}
	return c, nil
}

// AppendFrame appends the whole frame (length prefix, header word, header
// in c.Serialize, body) to dst. On error dst is returned unchanged.
func (c *Command) AppendFrame(dst []byte) ([]byte, error) {
	return c.appendFrame(dst, true)
}

// AppendFrameHeader appends the frame without the body: the length prefix
// (which counts the body), the header word and the header, like Java's
// encodeHeader. Writing c.Body right after it yields the same bytes as
// AppendFrame without copying the body.
func (c *Command) AppendFrameHeader(dst []byte) ([]byte, error) {
	return c.appendFrame(dst, false)
}

func (c *Command) appendFrame(dst []byte, withBody bool) ([]byte, error) {
	start := len(dst)
	var est int
	switch c.Serialize {
	case SerializeJSON:
		est = jsonHeaderEstimate(c)
	case SerializeRocketMQ:
		est = binaryHeaderSize(c)
	default:
		return dst, encodeErr("unknown serialize type " + strconv.Itoa(int(c.Serialize)))
	}
	if withBody {
		est += len(c.Body)
	}
	out := slices.Grow(dst, 8+est)
	out = append(out, 0, 0, 0, 0, 0, 0, 0, 0)
	var err error
	if c.Serialize == SerializeJSON {
		out = appendJSONHeader(out, c)
	} else {
		out, err = appendBinaryHeader(out, c)
		if err != nil {
			return dst, err
		}
	}
	hl := len(out) - start - 8
	if hl > maxHeaderLength {
		return dst, encodeErr("header of " + strconv.Itoa(hl) + " bytes exceeds 16 MiB")
	}
	total := int64(4) + int64(hl) + int64(len(c.Body))
	if total > math.MaxInt32 {
		return dst, encodeErr("frame of " + strconv.FormatInt(total, 10) + " bytes exceeds int32")
	}
	binary.BigEndian.PutUint32(out[start:], uint32(total))
	binary.BigEndian.PutUint32(out[start+4:], uint32(c.Serialize)<<24|uint32(hl))
	if withBody {
		out = append(out, c.Body...)
	}
	return out, nil
}

// NewRequest returns a request command with the given code, extFields and
// body, speaking Go's language code and JSON headers. Opaque is left 0 for
// the transport to assign.
func NewRequest(code int32, ext ExtFields, body []byte) *Command {
	return &Command{Code: code, Language: LanguageGo, Version: DefaultVersion, Ext: ext, Body: body}
}

// NewResponse returns a response command (response flag set) with the given
// code and remark. The caller copies the request's Opaque and, usually, its
// Serialize.
func NewResponse(code int32, remark string) *Command {
	return &Command{Code: code, Language: LanguageGo, Version: DefaultVersion, Flag: FlagResponse, Remark: remark}
}

// DefaultVersion is the version NewRequest and NewResponse put in the
// header: 409, the ordinal of MQVersion V4_9_8, whose protocol this package
// speaks (docs/PROTOCOL.md §1.7). Servers gate some behaviour on it (e.g. the
// standard JSON route body from 401 on).
const DefaultVersion int32 = 409
