package producer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// envelope is a send prepared once and sent by every attempt: the wire
// topic, encoded body and properties, and the ids.
type envelope struct {
	kind      SendKind
	userTopic string
	topic     string // with the namespace
	msgs      []*rocketmq.Message
	code      int32
	batch     bool
	timer     bool
	body      []byte
	pooled    *[]byte // body's buffer, from Producer.bufs
	sysFlag   int32
	flag      int32
	props     string
	ids       string // UNIQ_KEY, comma-joined for a batch
	reconsume *int32
	maxRecons *int32
	size      int64

	// Storage the send header points into, so that building a request
	// allocates no pointer per field: one1 backs msgs of a single message,
	// the rest are rewritten by each attempt (attempts are sequential).
	one1     [1]*rocketmq.Message
	hdrProps string
	hdrBName string
	hdrRecon int32
	// The request of the current attempt, from Producer.reqs, back there
	// on release: the transport is done with it when the attempt's call
	// returns (sync, oneway) or its callback runs (async).
	req *reqStorage
}

// reqStorage is a send request and room for its header fields, in one
// allocation that sends reuse.
type reqStorage struct {
	cmd remoting.Command
	ext [16]remoting.Field
}

// prop is an extra property added on the wire when the message lacks it.
type prop struct{ k, v string }

// idPlaceholder reserves the room of a generated UNIQ_KEY among sorted
// properties; the id is then written over it (ids are at most 56 hex
// characters).
const idPlaceholder = "0000000000000000000000000000000000000000000000000000000000000000"

func (p *Producer) checkMessage(m *rocketmq.Message) error {
	if m == nil {
		return rocketmq.ErrNilMessage
	}
	if err := rocketmq.ValidateMessage(m, p.cfg.maxMessageSize); err != nil {
		if errors.Is(err, rocketmq.ErrBodyTooLarge) {
			return &sizeError{what: "message body", size: len(m.Body), limit: p.cfg.maxMessageSize, cause: err}
		}
		return err
	}
	if d, ok := m.Properties[rocketmq.PropertyDelayLevel]; ok {
		if n, err := strconv.Atoi(d); err != nil || n < 0 {
			return fmt.Errorf("%w: %q", ErrInvalidDelayLevel, d)
		}
	}
	return nil
}

// prepare validates and encodes msgs once for every attempt. extra holds
// request-reply properties.
func (p *Producer) prepare(kind SendKind, msgs []*rocketmq.Message, extra ...prop) (*envelope, error) {
	switch len(msgs) {
	case 0:
		return nil, ErrNoMessage
	case 1:
		return p.prepareOne(kind, msgs[0], extra)
	}
	return p.prepareBatch(kind, msgs)
}

func (p *Producer) prepareOne(kind SendKind, m *rocketmq.Message, extra []prop) (*envelope, error) {
	if err := p.checkMessage(m); err != nil {
		return nil, err
	}
	e := &envelope{
		kind:      kind,
		userTopic: mqclient.UnwrapNamespace(p.cfg.namespace, m.Topic),
		topic:     mqclient.WrapNamespace(p.cfg.namespace, m.Topic),
		code:      remoting.SendMessageV2,
		timer:     isTimer(m),
		body:      m.Body,
		flag:      m.Flag,
	}
	e.one1[0] = m
	e.msgs = e.one1[:]
	if m.Properties[rocketmq.PropertyMessageType] == rocketmq.ReplyMessageFlag {
		e.code = remoting.SendReplyMessageV2
	}
	if len(m.Body) >= p.cfg.compressOver {
		c, err := message.CompressWith(p.cfg.compressType, m.Body, p.cfg.compressLevel)
		if err != nil {
			return nil, err
		}
		e.body = c
		e.sysFlag = p.cfg.compressType.ProducerSysFlag()
	}
	if m.TransactionPrepared() {
		e.sysFlag |= message.FlagTransactionPrep
	}
	var skip func(string) bool
	if rocketmq.IsRetryTopic(m.Topic) {
		// Java moves these two into the header for %RETRY% topics.
		if v, err := strconv.Atoi(m.Properties[rocketmq.PropertyReconsumeTime]); err == nil {
			e.reconsume = remoting.Ptr(int32(v))
		}
		if v, err := strconv.Atoi(m.Properties[rocketmq.PropertyMaxReconsumeTimes]); err == nil {
			e.maxRecons = remoting.Ptr(int32(v))
		}
		skip = func(k string) bool {
			return k == rocketmq.PropertyReconsumeTime || k == rocketmq.PropertyMaxReconsumeTimes
		}
	}
	// The properties are built in a stack buffer, keys sorted (one
	// allocation for the string); a generated UNIQ_KEY is written straight
	// into them and the id is a substring of the result.
	var stack [512]byte
	var exStack [8]message.Property
	ex := exStack[:0]
	for _, e := range extra {
		ex = append(ex, message.Property{Key: e.k, Value: e.v})
	}
	var idStack [64]byte
	var newID []byte
	id := m.Properties[rocketmq.PropertyUniqKey]
	if _, ok := m.Properties[rocketmq.PropertyUniqKey]; !ok {
		newID = p.ids.AppendNewID(idStack[:0])
		ex = append(ex, message.Property{Key: rocketmq.PropertyUniqKey, Value: idPlaceholder[:len(newID)]})
	} else if id == "" {
		id = p.ids.NewID() // present but empty: kept on the wire, like Java
	}
	ex = append(ex, message.Property{Key: rocketmq.PropertyWaitStoreMsgOK, Value: "true"})
	var pairs [16]message.Property
	props, idStart := message.AppendPropertyList(stack[:0],
		message.SortProperties(m.Properties, skip, ex, pairs[:]), rocketmq.PropertyUniqKey)
	idEnd := -1
	if newID != nil {
		idEnd = idStart + copy(props[idStart:], newID)
	} else {
		idStart = -1
	}
	if len(props) > message.MaxPropertiesLength {
		return nil, fmt.Errorf("%w: %d bytes", message.ErrPropertiesTooLong, len(props))
	}
	e.props = string(props)
	if idStart >= 0 {
		id = e.props[idStart:idEnd]
	}
	e.ids = id
	e.size = int64(len(e.body) + len(props))
	return e, nil
}

// prepareBatch encodes a SEND_BATCH_MESSAGE body (docs/PROTOCOL.md §5.4): each
// element with its own UNIQ_KEY, the batch-level WAIT in the header. The
// body comes from the producer's buffer pool; release returns it.
func (p *Producer) prepareBatch(kind SendKind, msgs []*rocketmq.Message) (*envelope, error) {
	first := msgs[0]
	if first == nil {
		return nil, rocketmq.ErrNilMessage
	}
	wait := first.WaitStoreMsgOK()
	size := 0
	for i, m := range msgs {
		if err := p.checkMessage(m); err != nil {
			return nil, fmt.Errorf("batch message %d: %w", i, err)
		}
		switch {
		case m.Topic != first.Topic:
			return nil, fmt.Errorf("%w: %q and %q", ErrBatchTopics, first.Topic, m.Topic)
		case rocketmq.IsRetryTopic(m.Topic):
			return nil, ErrBatchRetryTopic
		}
		size += 20 + len(m.Body) + 2 + 48 + 48*len(m.Properties)
	}
	buf := p.getBuf(size)
	body, ids, err := p.appendBatch((*buf)[:0], make([]byte, 0, len(msgs)*33), msgs, wait)
	*buf = body
	if err == nil && len(body) > p.cfg.maxMessageSize {
		err = &sizeError{what: "batch", size: len(body), limit: p.cfg.maxMessageSize}
	}
	if err != nil {
		p.putBuf(buf)
		return nil, err
	}
	return &envelope{
		kind:      kind,
		userTopic: mqclient.UnwrapNamespace(p.cfg.namespace, first.Topic),
		topic:     mqclient.WrapNamespace(p.cfg.namespace, first.Topic),
		msgs:      msgs,
		code:      remoting.SendBatchMessage,
		batch:     true,
		body:      body,
		pooled:    buf,
		props:     rocketmq.PropertyWaitStoreMsgOK + "\x01" + strconv.FormatBool(wait),
		ids:       string(ids),
		size:      int64(len(body)),
	}, nil
}

// appendBatch appends the batch elements to body and their ids, comma
// separated, to ids, checking each element's properties (checkBatchProps)
// in the same pass over its map.
func (p *Producer) appendBatch(body, ids []byte, msgs []*rocketmq.Message, wait bool) ([]byte, []byte, error) {
	var pairs [16]message.Property
	for i, m := range msgs {
		if i > 0 {
			ids = append(ids, ',')
		}
		idStart := len(ids)
		id, idProp := m.Properties[rocketmq.PropertyUniqKey]
		if id != "" {
			ids = append(ids, id...)
		} else {
			ids = p.ids.AppendNewID(ids)
		}
		// A UNIQ_KEY property that is present but empty is kept as is
		// (like prepareOne); only a missing one is added, as a placeholder
		// the id is copied over. WAIT is added when missing.
		var exStack [2]message.Property
		ex := exStack[:0]
		if !idProp {
			ex = append(ex, message.Property{Key: rocketmq.PropertyUniqKey, Value: idPlaceholder[:len(ids)-idStart]})
		}
		ex = append(ex, message.Property{Key: rocketmq.PropertyWaitStoreMsgOK, Value: "true"})
		kv := message.SortProperties(m.Properties, nil, ex, pairs[:])
		if err := checkBatchProps(kv, wait); err != nil {
			return body, ids, err
		}
		var start, at int
		body, start = message.BeginBatchElement(body, m.Flag, m.Body)
		body, at = message.AppendPropertyList(body, kv, rocketmq.PropertyUniqKey)
		if !idProp {
			copy(body[at:], ids[idStart:])
		}
		var err error
		if body, err = message.EndBatchElement(body, start); err != nil {
			return body, ids, fmt.Errorf("batch message %d: %w", i, err)
		}
	}
	return body, ids, nil
}

// checkBatchProps checks the properties of a batch element, WAIT included
// even when it is added: WAIT as in the first message, no delay level, no
// timer, no reply.
func checkBatchProps(kv []message.Property, wait bool) error {
	for _, e := range kv {
		switch e.Key {
		case rocketmq.PropertyWaitStoreMsgOK:
			if (e.Value == "true") != wait {
				return ErrBatchWait
			}
		case rocketmq.PropertyDelayLevel:
			if n, _ := strconv.Atoi(e.Value); n > 0 {
				return ErrBatchDelay
			}
		case rocketmq.PropertyTimerDeliverMS, rocketmq.PropertyTimerDelaySec, rocketmq.PropertyTimerDelayMS:
			return ErrBatchDelay
		case rocketmq.PropertyMessageType:
			if e.Value == rocketmq.ReplyMessageFlag {
				return ErrBatchReply
			}
		}
	}
	return nil
}

// maxPooledBuf: batch bodies larger than this are left to the GC.
const maxPooledBuf = 1 << 20

// getBuf returns a pooled buffer with room for at least n bytes.
func (p *Producer) getBuf(n int) *[]byte {
	if b, _ := p.bufs.Get().(*[]byte); b != nil {
		if cap(*b) >= n {
			return b
		}
		p.bufs.Put(b)
	}
	b := make([]byte, 0, n)
	return &b
}

func (p *Producer) putBuf(b *[]byte) {
	if cap(*b) <= maxPooledBuf {
		*b = (*b)[:0]
		p.bufs.Put(b)
	}
}

// release returns the envelope's pooled body once no attempt can use it
// any more: the transport has encoded (copied) it by the time a call
// returns or an async call's callback runs.
func (p *Producer) release(e *envelope) {
	if e.pooled != nil {
		e.body = nil
		p.putBuf(e.pooled)
		e.pooled = nil
	}
	if e.req != nil {
		*e.req = reqStorage{} // keeps nothing of this send alive
		p.reqs.Put(e.req)
		e.req = nil
	}
}

// request builds the command of one attempt, born at now.
func (p *Producer) request(e *envelope, mq rocketmq.MessageQueue, now time.Time) *remoting.Command {
	defTopic := p.cfg.createTopicKey
	if defTopic == "" {
		defTopic = rocketmq.TopicAutoCreate
	}
	e.hdrProps = e.props
	e.hdrBName = mq.BrokerName
	reconsume := e.reconsume
	if reconsume == nil {
		e.hdrRecon = 0
		reconsume = &e.hdrRecon
	}
	h := remoting.SendMessageRequestHeaderV2{
		ProducerGroup:         p.cfg.wireGroup,
		Topic:                 e.topic,
		DefaultTopic:          defTopic,
		DefaultTopicQueueNums: int32(p.cfg.defaultTopicQueueNums),
		QueueID:               int32(mq.QueueID),
		SysFlag:               e.sysFlag,
		BornTimestamp:         now.UnixMilli(),
		Flag:                  e.flag,
		Properties:            &e.hdrProps,
		ReconsumeTimes:        reconsume,
		MaxReconsumeTimes:     e.maxRecons,
		Batch:                 e.batch,
		BrokerName:            &e.hdrBName,
	}
	if e.req == nil {
		if e.req, _ = p.reqs.Get().(*reqStorage); e.req == nil {
			e.req = new(reqStorage)
		}
	}
	rs := e.req
	rs.cmd = remoting.Command{Code: e.code, Language: remoting.LanguageGo, Version: remoting.DefaultVersion,
		Ext: h.AppendExt(rs.ext[:0]), Body: e.body}
	return &rs.cmd
}

// result turns a send response into a SendResult (Java processSendResponse).
func (p *Producer) result(e *envelope, mq rocketmq.MessageQueue, resp *remoting.Command) (*rocketmq.SendResult, error) {
	var st rocketmq.SendStatus
	switch resp.Code {
	case remoting.Success:
		st = rocketmq.SendOK
	case remoting.FlushDiskTimeout:
		st = rocketmq.SendFlushDiskTimeout
	case remoting.FlushSlaveTimeout:
		st = rocketmq.SendFlushSlaveTimeout
	case remoting.SlaveNotAvailable:
		st = rocketmq.SendSlaveNotAvailable
	default:
		return nil, remoting.ResponseError(resp)
	}
	r := &rocketmq.SendResult{
		Status:   st,
		MsgID:    e.ids,
		Queue:    rocketmq.MessageQueue{Topic: e.userTopic, BrokerName: mq.BrokerName},
		RegionID: rocketmq.DefaultTraceRegionID,
		TraceOn:  true,
	}
	if !readSendResponse(resp.Ext, r) {
		// Something is missing or malformed: the header decoder says what.
		var h remoting.SendMessageResponseHeader
		if err := h.FromExt(resp.Ext); err != nil {
			return nil, fmt.Errorf("rocketmq: send response: %w", err)
		}
		return nil, fmt.Errorf("rocketmq: send response: unreadable header %v", resp.Ext)
	}
	return r, nil
}

// readSendResponse fills r from a SEND_MESSAGE response header in one
// pass, with SendMessageResponseHeader.FromExt's rules (the last entry of a
// key wins; msgId, queueId and queueOffset are required; TRACE_ON is
// Java's Boolean.parseBoolean) but without its pointer fields, which cost
// allocations on every send. false: a required field is missing or bad.
func readSendResponse(ext remoting.ExtFields, r *rocketmq.SendResult) bool {
	var haveID, haveQueue, haveOffset bool
	for _, f := range ext {
		switch f.Key {
		case "msgId":
			r.OffsetMsgID, haveID = f.Value, true
		case "queueId":
			n, err := strconv.ParseInt(f.Value, 10, 32)
			r.Queue.QueueID, haveQueue = int(n), err == nil
		case "queueOffset":
			n, err := strconv.ParseInt(f.Value, 10, 64)
			r.QueueOffset, haveOffset = n, err == nil
		case "transactionId":
			r.TransactionID = f.Value
		case "MSG_REGION":
			r.RegionID = f.Value
		case "TRACE_ON":
			r.TraceOn = len(f.Value) == 4 && strings.EqualFold(f.Value, "true")
		}
	}
	if r.RegionID == "" {
		r.RegionID = rocketmq.DefaultTraceRegionID
	}
	return haveID && haveQueue && haveOffset
}
