package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-rocketmq/rocketmq"
)

// ErrCorruptBatch reports a SEND_BATCH_MESSAGE body whose lengths do not
// add up.
var ErrCorruptBatch = errors.New("rocketmq: corrupt batch body")

// batchHeaderSize is totalSize, magic, bodyCRC, flag and bodyLen.
const batchHeaderSize = 20

// BatchElement is one message of a batch body, as the broker reads it.
type BatchElement struct {
	Flag       int32
	Body       []byte
	Properties string // the element's properties string (includes its UNIQ_KEY)
}

// AppendBatch appends the SEND_BATCH_MESSAGE body of msgs (docs/PROTOCOL.md
// §5.4): per message totalSize, magic 0, bodyCRC 0, flag, body and the
// message's own properties string, keys sorted. Topics are not written (the
// batch's topic travels in the header). Each message should already carry
// its UNIQ_KEY; AppendBatch adds nothing.
func AppendBatch(dst []byte, msgs []*rocketmq.Message) ([]byte, error) {
	for i, m := range msgs {
		var start int
		dst, start = BeginBatchElement(dst, m.Flag, m.Body)
		dst = AppendProperties(dst, m.Properties)
		var err error
		if dst, err = EndBatchElement(dst, start); err != nil {
			return dst, fmt.Errorf("rocketmq: batch message %d: %w", i, err)
		}
	}
	return dst, nil
}

// BeginBatchElement appends the fixed part and the body of one batch
// element and returns the element's start for EndBatchElement. The caller
// appends the element's properties string in between.
func BeginBatchElement(dst []byte, flag int32, body []byte) ([]byte, int) {
	start := len(dst)
	be := binary.BigEndian
	dst = be.AppendUint32(dst, 0) // totalSize, set by EndBatchElement
	dst = be.AppendUint32(dst, 0) // magic
	dst = be.AppendUint32(dst, 0) // bodyCRC
	dst = be.AppendUint32(dst, uint32(flag))
	dst = be.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, body...)
	dst = be.AppendUint16(dst, 0) // propertiesLength, set by EndBatchElement
	return dst, start
}

// EndBatchElement completes the element that starts at dst[start:]: it
// writes its totalSize and propertiesLength. A properties string over
// MaxPropertiesLength fails with ErrPropertiesTooLong.
func EndBatchElement(dst []byte, start int) ([]byte, error) {
	be := binary.BigEndian
	pstart := start + batchHeaderSize + int(be.Uint32(dst[start+16:])) + 2
	plen := len(dst) - pstart
	if plen > MaxPropertiesLength {
		return dst, ErrPropertiesTooLong
	}
	be.PutUint32(dst[start:], uint32(len(dst)-start))
	be.PutUint16(dst[pstart-2:], uint16(plen))
	return dst, nil
}

// scanBatchElement checks the element at b[0:] and returns its size, body
// and properties positions.
func scanBatchElement(b []byte) (size, bodyLen, propsLen int, err error) {
	be := binary.BigEndian
	if len(b) < batchHeaderSize+2 {
		return 0, 0, 0, fmt.Errorf("%w: %d bytes left, an element needs at least %d", ErrCorruptBatch, len(b), batchHeaderSize+2)
	}
	total := int64(int32(be.Uint32(b)))
	if total < batchHeaderSize+2 || total > int64(len(b)) {
		return 0, 0, 0, fmt.Errorf("%w: totalSize %d out of bounds (%d bytes left)", ErrCorruptBatch, total, len(b))
	}
	bl := int64(int32(be.Uint32(b[16:])))
	if bl < 0 || bl > total-batchHeaderSize-2 {
		return 0, 0, 0, fmt.Errorf("%w: bodyLength %d out of bounds", ErrCorruptBatch, bl)
	}
	p := batchHeaderSize + int(bl)
	pl := int(int16(be.Uint16(b[p:])))
	if pl < 0 || int64(p+2+pl) != total {
		return 0, 0, 0, fmt.Errorf("%w: propertiesLength %d does not end at totalSize %d", ErrCorruptBatch, pl, total)
	}
	return int(total), int(bl), pl, nil
}

// DecodeBatchElements splits a batch body into its elements. Bodies alias
// body; properties strings share one allocation and do not.
func DecodeBatchElements(body []byte) ([]BatchElement, error) {
	n, strLen := 0, 0
	for off := 0; off < len(body); n++ {
		size, _, pl, err := scanBatchElement(body[off:])
		if err != nil {
			return nil, fmt.Errorf("rocketmq: batch element %d at offset %d: %w", n, off, err)
		}
		strLen += pl
		off += size
	}
	if n == 0 {
		return nil, nil
	}
	var sb strings.Builder
	sb.Grow(strLen)
	out := make([]BatchElement, n)
	for i, off := 0, 0; i < n; i++ {
		size, bl, pl, _ := scanBatchElement(body[off:])
		e := &out[i]
		e.Flag = int32(binary.BigEndian.Uint32(body[off+12:]))
		if bl > 0 {
			e.Body = body[off+batchHeaderSize : off+batchHeaderSize+bl : off+batchHeaderSize+bl]
		}
		start := sb.Len()
		p := off + batchHeaderSize + bl + 2
		sb.Write(body[p : p+pl])
		e.Properties = sb.String()[start:]
		off += size
	}
	return out, nil
}

// DecodeBatch decodes a batch body into messages with parsed properties
// (Topic is left empty). Bodies alias body.
func DecodeBatch(body []byte) ([]*rocketmq.Message, error) {
	els, err := DecodeBatchElements(body)
	if err != nil || len(els) == 0 {
		return nil, err
	}
	msgs := make([]rocketmq.Message, len(els))
	out := make([]*rocketmq.Message, len(els))
	for i := range els {
		m := &msgs[i]
		m.Flag = els[i].Flag
		m.Body = els[i].Body
		m.Properties = DecodeProperties(els[i].Properties)
		out[i] = m
	}
	return out, nil
}
