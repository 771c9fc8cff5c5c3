package producer

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/trace"
)

// WithTrace turns message tracing on, as Java's enableMsgTrace: every
// send stored by a broker is recorded (a Pub record; a transactional
// producer also records each decision, EndTransaction) and the records go
// in batches, asynchronously, to topic on the same cluster; empty means
// RMQ_SYS_TRACE_TOPIC (docs/PROTOCOL.md §8.16). Tracing never blocks or
// fails a send: records that cannot be queued or sent are dropped. The
// topic must exist or be auto-created (a broker's traceTopicEnable
// creates RMQ_SYS_TRACE_TOPIC). Default off.
func WithTrace(topic string) Option {
	return func(c *config) { c.trace = &traceConfig{topic: topic} }
}

type traceConfig struct {
	topic string
	last  atomic.Pointer[trace.Dispatcher] // of the running or last run, for TraceDropped
}

// tracer is a running producer's trace dispatcher and its client.
type tracer struct {
	d      *trace.Dispatcher
	sender *trace.ClientSender
	group  string
}

// startTrace starts tracing when configured; a failure leaves the
// producer untraced, as Java only logs it.
func (p *Producer) startTrace(ctx context.Context, r *runState) {
	if p.cfg.trace == nil {
		return
	}
	s, err := trace.NewClientSender(p.cfg.client, p.cfg.group, trace.Produce)
	if err == nil {
		err = s.Start(ctx)
		if err != nil {
			_ = s.Close(ctx)
		}
	}
	if err != nil {
		p.log.Warn("rocketmq: message trace off: its client did not start", "group", p.cfg.group, "err", err)
		return
	}
	r.trace = &tracer{d: trace.NewDispatcher(p.cfg.trace.topic, s, p.log), sender: s, group: p.cfg.group}
	p.cfg.trace.last.Store(r.trace.d)
}

// close sends the queued records within ctx, then closes the client.
func (t *tracer) close(ctx context.Context) error {
	err := t.d.Close(ctx)
	if cerr := t.sender.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// pub records an attempt as SendMessageTraceHookImpl does: only one the
// broker answered with a result and TRACE_ON true.
func (t *tracer) pub(e *envelope, at try, res *rocketmq.SendResult) {
	if res == nil || !res.TraceOn || strings.HasPrefix(e.userTopic, t.d.Topic()) {
		return
	}
	cost := time.Since(at.now)
	b := trace.Bean{
		Topic:       e.userTopic,
		MsgID:       res.MsgID,
		OffsetMsgID: res.OffsetMsgID,
		StoreHost:   at.addr,
		BodyLength:  len(e.body),
		MsgType:     trace.NormalMsg,
	}
	if !e.batch && len(e.msgs) == 1 {
		m := e.msgs[0]
		b.Tags, b.Keys = m.Tag(), m.Properties[rocketmq.PropertyKeys]
		if m.Property(rocketmq.PropertyTransactionPrepared) == "true" {
			b.MsgType = trace.TransMsgHalf
		}
		if m.Property(rocketmq.PropertyStartDeliverTime) != "" || m.Property(rocketmq.PropertyDelayLevel) != "" {
			b.MsgType = trace.DelayMsg
		}
	}
	t.d.Append(&trace.Context{
		Type:      trace.Pub,
		TimeStamp: at.now.UnixMilli(),
		RegionID:  res.RegionID,
		Group:     t.group,
		CostTime:  int(cost.Milliseconds()),
		Success:   res.Status == rocketmq.SendOK,
		Beans:     []trace.Bean{b},
	})
}

// endTransaction records a decision as EndTransactionTraceHookImpl does,
// before it is sent. msg has the user's topic.
func (t *tracer) endTransaction(msg *rocketmq.Message, msgID, transactionID, brokerAddr string, state LocalState, fromCheck bool) {
	if t == nil || strings.HasPrefix(msg.Topic, t.d.Topic()) {
		return
	}
	region := msg.Property(rocketmq.PropertyMsgRegion)
	if region == "" {
		region = rocketmq.DefaultTraceRegionID
	}
	t.d.Append(&trace.Context{
		Type:      trace.EndTransaction,
		TimeStamp: time.Now().UnixMilli(),
		RegionID:  region,
		Group:     t.group,
		Beans: []trace.Bean{{
			Topic:                msg.Topic,
			MsgID:                msgID,
			Tags:                 msg.Tag(),
			Keys:                 msg.Properties[rocketmq.PropertyKeys],
			StoreHost:            brokerAddr,
			MsgType:              trace.TransMsgCommit,
			TransactionID:        transactionID,
			TransactionState:     state.known().String(),
			FromTransactionCheck: fromCheck,
		}},
	})
}

// TraceDropped returns how many trace records the running producer, or
// the last one to run, dropped (queue full, or a failed send); 0 without
// tracing.
func (p *Producer) TraceDropped() int64 {
	if p.cfg.trace == nil {
		return 0
	}
	if d := p.cfg.trace.last.Load(); d != nil {
		return d.Dropped()
	}
	return 0
}
