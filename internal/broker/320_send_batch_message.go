package broker

import (
	"context"
	"slices"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/internal/store"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// SEND_BATCH_MESSAGE (320) carries the V2 send header with m=true and a
// body of batch elements (docs/PROTOCOL.md §3.2, §5.4). It is served by the send
// pipeline (send.go), on the event loop when sendInline allows, which hands
// every batch to sendBatch below.

// maxPooledBatch is the most elements whose scratch sendBatch keeps.
const maxPooledBatch = 256

// handleSendBatchMessage serves SEND_BATCH_MESSAGE on a worker.
func (b *Broker) handleSendBatchMessage(ctx context.Context, c *server.Conn, req *remoting.Command) *remoting.Command {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err)
	}
	return b.send(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}

// sendBatchMessageInline is SEND_BATCH_MESSAGE's event-loop fast path.
func (b *Broker) sendBatchMessageInline(ctx context.Context, c *server.Conn, req *remoting.Command) (*remoting.Command, bool) {
	var h remoting.SendMessageRequestHeaderV2
	if err := h.FromExt(req.Ext); err != nil {
		return b.sendHeaderError(err), true
	}
	return b.sendInline(ctx, c, req, (*remoting.SendMessageRequestHeader)(&h))
}

// sendBatch stores the elements of a batch in one queue with consecutive
// offsets. Like 4.9.8 it appends the batch-level properties (the header's,
// plus CLUSTER) to every element's own; unlike 4.9.8 it also gives an
// element without UNIQ_KEY one (the official Go client sends none).
func (b *Broker) sendBatch(ctx context.Context, c *server.Conn, req *remoting.Command, h *remoting.SendMessageRequestHeader) *remoting.Command {
	tc, queueID, resp := b.sendCheck(c, h)
	if resp != nil {
		return resp
	}
	topic := h.Topic
	if len(topic) > rocketmq.TopicMaxLength {
		return b.sendResponse(remoting.MessageIllegal, "message topic length too long "+strconv.Itoa(len(topic)))
	}
	if rocketmq.IsRetryTopic(topic) { // 5.x rule; 4.9.8 would store the batch
		return b.sendResponse(remoting.MessageIllegal, "batch request does not support retry group "+topic)
	}
	sysFlag := h.SysFlag
	if tc.TopicFilterType == "MULTI_TAG" {
		sysFlag |= message.FlagMultiTags
	}
	raw := orZero(h.Properties)
	bp := scanSendProps(raw)
	// The 4.9.8 store refuses delayed and transactional batches.
	if bp.delayLevel() > 0 || sysFlag&message.FlagTransactionMask != message.FlagTransactionNot {
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	}
	if len(req.Body) > b.cfg.MaxMessageSize {
		return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
	}
	els, err := message.DecodeBatchElements(req.Body)
	if err != nil {
		return b.sendResponse(remoting.MessageIllegal, err.Error())
	}
	if len(els) == 0 {
		return b.sendResponse(remoting.MessageIllegal, "the batch holds no message")
	}

	pb := propsBufs.Get().(*propsBuf)
	defer propsBufs.Put(pb)
	suffix := appendProps(pb.b[:0], raw, 0)
	suffix = message.AppendProperty(suffix, 0, rocketmq.PropertyCluster, b.cfg.ClusterName)
	buf := suffix
	sufLen := len(suffix)

	// All element property strings go into one buffer and become one
	// string; ends[i] is where element i's ends.
	reqs := slices.Grow(pb.reqs[:0], len(els))[:len(els)]
	ends := slices.Grow(pb.ends[:0], len(els))[:len(els)]
	defer func() {
		if cap(reqs) > maxPooledBatch {
			return // a rare huge batch does not stay in the pool
		}
		clear(reqs) // no pointer into this request stays in the pool
		pb.reqs, pb.ends = reqs[:0], ends[:0]
	}()
	born := bornHost(c)
	wait := bp.waitStoreMsgOK()
	reconsume := orZero(h.ReconsumeTimes)
	for i := range els {
		el := &els[i]
		start := len(buf)
		buf = appendProps(buf, el.Properties, 0)
		p := scanSendProps(el.Properties)
		uniq := p.uniq
		if uniq == "" {
			uniq = b.ids.NewID()
			buf = message.AppendProperty(buf, start, rocketmq.PropertyUniqKey, uniq)
		}
		if len(buf) > start {
			buf = append(buf, message.PropertySeparator)
		}
		buf = append(buf, buf[:sufLen]...)
		if len(buf)-start > message.MaxPropertiesLength {
			pb.b = buf
			return b.sendResponse(remoting.MessageIllegal, msgIllegalRemark(b.cfg.MaxMessageSize))
		}
		ends[i] = len(buf)
		reqs[i] = store.PutRequest{
			RecordFields: message.RecordFields{
				QueueID:        queueID,
				Flag:           el.Flag,
				SysFlag:        sysFlag,
				BornTimestamp:  h.BornTimestamp,
				BornHost:       born,
				StoreHost:      b.storeHost,
				ReconsumeTimes: reconsume,
				Body:           el.Body,
				Topic:          topic,
			},
			TagsCode: message.TagHash(p.tags),
			UniqKey:  uniq,
			Keys:     p.keys,
		}
	}
	pb.b = buf
	all := string(buf[sufLen:])
	from := 0
	for i := range reqs {
		to := ends[i] - sufLen
		reqs[i].Properties = all[from:to]
		from = to
	}

	res, err := b.store.PutMessages(ctx, reqs)
	if err != nil {
		return b.storeErrorResponse(err)
	}
	b.stats.addPut(res.MsgCount, res.WroteBytes)
	b.metrics.in(topic, res.MsgCount, res.WroteBytes)
	ids := make([]byte, 0, len(res.PhysicalOffsets)*33)
	for i, off := range res.PhysicalOffsets {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = rocketmq.AppendOffsetMsgID(ids, b.storeHost, off)
	}
	return b.replyWhenDurable(c, req, b.sendOKResponse(&res, queueID, ids), &res, wait)
}
