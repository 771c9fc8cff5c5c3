package remoting

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
)

// TopicConfig is one topic's configuration (docs/PROTOCOL.md §4.6): in
// topics.json, GET_ALL_TOPIC_CONFIG and RegisterBrokerBody.
type TopicConfig struct {
	TopicName       string
	ReadQueueNums   int32
	WriteQueueNums  int32
	Perm            int32
	TopicFilterType string // "SINGLE_TAG" or "MULTI_TAG"
	TopicSysFlag    int32
	Order           bool
	Attributes      map[string]string // 5.x; written when non-empty
}

// Java's TopicConfig defaults.
const (
	DefaultTopicQueueNums = 16
	TopicFilterSingleTag  = "SINGLE_TAG"
	TopicFilterMultiTag   = "MULTI_TAG"
)

// NewTopicConfig returns a TopicConfig with Java's defaults: 16 read and
// write queues, read+write permission, SINGLE_TAG.
func NewTopicConfig(name string) TopicConfig {
	return TopicConfig{
		TopicName:       name,
		ReadQueueNums:   DefaultTopicQueueNums,
		WriteQueueNums:  DefaultTopicQueueNums,
		Perm:            6,
		TopicFilterType: TopicFilterSingleTag,
	}
}

// AppendJSON implements JSONBody.
func (t *TopicConfig) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	t.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (t *TopicConfig) DecodeJSON(data []byte) error { return fjDecode(data, t.decode) }

func (t *TopicConfig) write(w *fjWriter) {
	w.open()
	if len(t.Attributes) > 0 {
		w.key("attributes")
		w.strMap(t.Attributes)
	}
	w.fBool("order", t.Order)
	w.fI32("perm", t.Perm)
	w.fI32("readQueueNums", t.ReadQueueNums)
	w.fOptStr("topicFilterType", t.TopicFilterType)
	w.fStr("topicName", t.TopicName)
	w.fI32("topicSysFlag", t.TopicSysFlag)
	w.fI32("writeQueueNums", t.WriteQueueNums)
	w.close()
}

func (t *TopicConfig) decode(r *fjReader) {
	*t = TopicConfig{}
	r.object(func(k []byte) {
		switch string(k) {
		case "topicName":
			t.TopicName = r.str()
		case "readQueueNums":
			t.ReadQueueNums = r.i32()
		case "writeQueueNums":
			t.WriteQueueNums = r.i32()
		case "perm":
			t.Perm = r.i32()
		case "topicFilterType":
			t.TopicFilterType = r.str()
		case "topicSysFlag":
			t.TopicSysFlag = r.i32()
		case "order":
			t.Order = r.bool()
		case "attributes":
			t.Attributes = r.strMap()
		default:
			r.skip()
		}
	})
}

// AppendText appends the compact form used inside the compressed register
// body: "name read write perm filterType", plus the attributes JSON as a
// sixth token when there are attributes (5.x). TopicSysFlag and Order are
// not part of this form.
func (t *TopicConfig) AppendText(dst []byte) []byte {
	dst = append(dst, t.TopicName...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.ReadQueueNums), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.WriteQueueNums), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(t.Perm), 10)
	dst = append(dst, ' ')
	dst = append(dst, t.TopicFilterType...)
	if len(t.Attributes) > 0 {
		dst = append(dst, ' ')
		w := fjWriter{b: dst}
		w.strMap(t.Attributes)
		dst = w.b
	}
	return dst
}

// ParseText reads the compact form written by AppendText (4.x: five
// tokens; 5.x: a sixth, the attributes JSON, which may contain spaces).
func (t *TopicConfig) ParseText(s string) error {
	parts := strings.SplitN(strings.TrimRight(s, " "), " ", 6)
	if len(parts) < 5 {
		return &bodyError{msg: "topic config text has " + strconv.Itoa(len(parts)) + " fields", offset: 0}
	}
	var nums [3]int32
	for i := range nums {
		n, err := strconv.ParseInt(parts[i+1], 10, 32)
		if err != nil {
			return &bodyError{msg: "bad number in topic config text " + strconv.Quote(parts[i+1])}
		}
		nums[i] = int32(n)
	}
	*t = TopicConfig{TopicName: parts[0], ReadQueueNums: nums[0], WriteQueueNums: nums[1], Perm: nums[2], TopicFilterType: parts[4]}
	if len(parts) == 6 {
		// Java ignores unparsable attributes; so do we.
		_ = fjDecode([]byte(parts[5]), func(r *fjReader) { t.Attributes = r.strMap() })
	}
	return nil
}

// DataVersion versions a broker's topic set (§4.6).
type DataVersion struct {
	Timestamp    int64
	Counter      int64
	StateVersion int64 // 5.x; written when non-zero
}

// AppendJSON implements JSONBody.
func (d *DataVersion) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	d.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (d *DataVersion) DecodeJSON(data []byte) error { return fjDecode(data, d.decode) }

func (d *DataVersion) write(w *fjWriter) {
	w.open()
	w.fI64("counter", d.Counter)
	if d.StateVersion != 0 {
		w.fI64("stateVersion", d.StateVersion)
	}
	w.fI64("timestamp", d.Timestamp)
	w.close()
}

// fjWriteOptDataVersion writes the 5.x dataVersion member if dv is set.
func fjWriteOptDataVersion(w *fjWriter, dv *DataVersion) {
	if dv != nil {
		w.key("dataVersion")
		dv.write(w)
	}
}

// fjReadOptDataVersion reads a 5.x dataVersion member, which may be null.
func fjReadOptDataVersion(r *fjReader) *DataVersion {
	if r.null() {
		return nil
	}
	dv := new(DataVersion)
	dv.decode(r)
	return dv
}

func (d *DataVersion) decode(r *fjReader) {
	*d = DataVersion{}
	r.object(func(k []byte) {
		switch string(k) {
		case "timestamp":
			d.Timestamp = r.i64()
		case "counter":
			d.Counter = r.i64()
		case "stateVersion":
			d.StateVersion = r.i64()
		default:
			r.skip()
		}
	})
}

// TopicConfigSerializeWrapper is topics.json and the GET_ALL_TOPIC_CONFIG
// body; with the 5.x mapping fields it is TopicConfigAndMappingSerializeWrapper.
type TopicConfigSerializeWrapper struct {
	TopicConfigTable map[string]TopicConfig
	DataVersion      DataVersion
	// 5.x static-topic fields, kept as raw JSON (nil when absent).
	MappingDataVersion         []byte
	TopicQueueMappingInfoMap   []byte
	TopicQueueMappingDetailMap []byte
}

// AppendJSON implements JSONBody.
func (t *TopicConfigSerializeWrapper) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	t.write(&w)
	return w.b
}

// DecodeJSON implements JSONBody.
func (t *TopicConfigSerializeWrapper) DecodeJSON(data []byte) error {
	return fjDecode(data, t.decode)
}

func (t *TopicConfigSerializeWrapper) write(w *fjWriter) {
	w.open()
	w.key("dataVersion")
	t.DataVersion.write(w)
	w.fRaw("mappingDataVersion", t.MappingDataVersion)
	w.key("topicConfigTable")
	w.open()
	for _, name := range fjSortedKeys(t.TopicConfigTable) {
		w.mapKeyStr(name)
		tc := t.TopicConfigTable[name]
		tc.write(w)
	}
	w.close()
	w.fRaw("topicQueueMappingDetailMap", t.TopicQueueMappingDetailMap)
	w.fRaw("topicQueueMappingInfoMap", t.TopicQueueMappingInfoMap)
	w.close()
}

func (t *TopicConfigSerializeWrapper) decode(r *fjReader) {
	*t = TopicConfigSerializeWrapper{}
	r.object(func(k []byte) {
		switch string(k) {
		case "dataVersion":
			t.DataVersion.decode(r)
		case "topicConfigTable":
			t.TopicConfigTable = fjReadStrMap(r, func() TopicConfig {
				var tc TopicConfig
				tc.decode(r)
				return tc
			})
		case "mappingDataVersion":
			t.MappingDataVersion = fjCopy(r.raw())
		case "topicQueueMappingInfoMap":
			t.TopicQueueMappingInfoMap = fjCopy(r.raw())
		case "topicQueueMappingDetailMap":
			t.TopicQueueMappingDetailMap = fjCopy(r.raw())
		default:
			r.skip()
		}
	})
}

// RegisterBrokerBody is the REGISTER_BROKER (103) body (§4.7), sent as JSON
// (AppendJSON) or, when the header's Compressed is set, in the zlib
// compressed binary form (AppendCompressed).
type RegisterBrokerBody struct {
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper
	FilterServerList            []string
}

// AppendJSON implements JSONBody.
func (b *RegisterBrokerBody) AppendJSON(dst []byte, style JSONStyle) []byte {
	w := fjWriter{b: dst, style: style}
	w.open()
	w.key("filterServerList")
	w.strList(b.FilterServerList)
	w.key("topicConfigSerializeWrapper")
	b.TopicConfigSerializeWrapper.write(&w)
	w.close()
	return w.b
}

// DecodeJSON implements JSONBody.
func (b *RegisterBrokerBody) DecodeJSON(data []byte) error {
	*b = RegisterBrokerBody{}
	return fjDecode(data, func(r *fjReader) {
		r.object(func(k []byte) {
			switch string(k) {
			case "filterServerList":
				b.FilterServerList = r.strList()
			case "topicConfigSerializeWrapper":
				b.TopicConfigSerializeWrapper.decode(r)
			default:
				r.skip()
			}
		})
	})
}

// brokerVersionV500 is MQVersion V5_0_0: from it on the compressed body
// carries the topic-queue-mapping section.
const brokerVersionV500 = 413

// AppendCompressed appends the compressed form: a zlib stream of
//
//	int32 len, DataVersion JSON; int32 topicCount; per topic int32 len +
//	TopicConfig text; int32 len, filterServerList JSON; and, when
//	brokerVersion >= 413 (5.0.0), int32 count + per entry int32 len +
//	TopicQueueMappingInfo JSON.
//
// brokerVersion is the sender's MQVersion ordinal, the version field of the
// REGISTER_BROKER request. TopicSysFlag and Order do not survive this form.
func (b *RegisterBrokerBody) AppendCompressed(dst []byte, brokerVersion int32) ([]byte, error) {
	var raw []byte
	putBlock := func(p []byte) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(p)))
		raw = append(raw, p...)
	}
	w := fjWriter{style: JSONFastjson}
	b.TopicConfigSerializeWrapper.DataVersion.write(&w)
	putBlock(w.b)
	table := b.TopicConfigSerializeWrapper.TopicConfigTable
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(table)))
	var text []byte
	for _, name := range fjSortedKeys(table) {
		tc := table[name]
		text = tc.AppendText(text[:0])
		putBlock(text)
	}
	w = fjWriter{style: JSONFastjson}
	w.strList(b.FilterServerList)
	putBlock(w.b)
	if brokerVersion >= brokerVersionV500 {
		var infos [][]byte
		if m := b.TopicConfigSerializeWrapper.TopicQueueMappingInfoMap; len(m) > 0 {
			if err := fjDecode(m, func(r *fjReader) {
				r.object(func([]byte) { infos = append(infos, r.raw()) })
			}); err != nil {
				return dst, err
			}
		}
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(infos)))
		for _, info := range infos {
			putBlock(info)
		}
	}
	var buf bytes.Buffer
	buf.Write(dst)
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if err != nil {
		return dst, err
	}
	if _, err := zw.Write(raw); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// DecodeCompressed replaces b with the compressed form in data (see
// AppendCompressed). maxInflated bounds the inflated size (<= 0: 64 MiB).
func (b *RegisterBrokerBody) DecodeCompressed(data []byte, brokerVersion int32, maxInflated int) error {
	if maxInflated <= 0 {
		maxInflated = 64 << 20
	}
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return &bodyError{msg: "compressed register body: " + err.Error()}
	}
	raw, err := io.ReadAll(io.LimitReader(zr, int64(maxInflated)+1))
	if err != nil {
		return &bodyError{msg: "compressed register body: " + err.Error()}
	}
	if len(raw) > maxInflated {
		return &bodyError{msg: "compressed register body inflates beyond " + strconv.Itoa(maxInflated) + " bytes"}
	}
	d := compressedReader{raw: raw}
	*b = RegisterBrokerBody{}
	wrap := &b.TopicConfigSerializeWrapper
	if err := wrap.DataVersion.DecodeJSON(d.block()); err != nil && d.err == nil {
		d.err = err
	}
	n := d.count()
	for i := 0; i < n && d.err == nil; i++ {
		var tc TopicConfig
		if err := tc.ParseText(string(d.block())); err != nil {
			if d.err == nil {
				d.err = err
			}
			break
		}
		if wrap.TopicConfigTable == nil {
			wrap.TopicConfigTable = map[string]TopicConfig{}
		}
		wrap.TopicConfigTable[tc.TopicName] = tc
	}
	if fl := d.block(); d.err == nil {
		// Java logs and ignores a bad filter list; so do we.
		_ = fjDecode(fl, func(r *fjReader) { b.FilterServerList = r.strList() })
	}
	if brokerVersion >= brokerVersionV500 && d.err == nil {
		n := d.count()
		var w fjWriter
		w.open()
		for i := 0; i < n && d.err == nil; i++ {
			info := d.block()
			var topic string
			if err := fjDecode(info, func(r *fjReader) {
				r.object(func(k []byte) {
					if string(k) == "topic" {
						topic = r.str()
					} else {
						r.skip()
					}
				})
			}); err != nil {
				d.err = err
				break
			}
			w.mapKeyStr(topic)
			w.raw(info)
		}
		w.close()
		if n > 0 {
			wrap.TopicQueueMappingInfoMap = w.b
		}
	}
	return d.err
}

// compressedReader reads the length-prefixed blocks of the inflated body
// with a sticky error.
type compressedReader struct {
	raw []byte
	err error
}

const shortRegisterBody = "truncated compressed register body"

func (c *compressedReader) count() int {
	if c.err != nil {
		return 0
	}
	if len(c.raw) < 4 {
		c.err = &bodyError{msg: shortRegisterBody}
		return 0
	}
	n := int32(binary.BigEndian.Uint32(c.raw))
	c.raw = c.raw[4:]
	// Every entry needs at least its 4-byte length.
	if n < 0 || int(n) > len(c.raw)/4 {
		c.err = &bodyError{msg: "bad count " + strconv.Itoa(int(n)) + " in compressed register body"}
		return 0
	}
	return int(n)
}

func (c *compressedReader) block() []byte {
	if c.err != nil {
		return nil
	}
	if len(c.raw) < 4 {
		c.err = &bodyError{msg: shortRegisterBody}
		return nil
	}
	n := int32(binary.BigEndian.Uint32(c.raw))
	if n < 0 || int(n) > len(c.raw)-4 {
		c.err = &bodyError{msg: "bad block length " + strconv.Itoa(int(n)) + " in compressed register body"}
		return nil
	}
	p := c.raw[4 : 4+n]
	c.raw = c.raw[4+n:]
	return p
}
