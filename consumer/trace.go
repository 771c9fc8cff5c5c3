package consumer

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/trace"
)

// WithTrace turns message tracing on for a push consumer, as Java's
// enableMsgTrace: each handler call is recorded before (SubBefore) and
// after (SubAfter, with its cost and outcome), and the records go in
// batches, asynchronously, to topic on the same cluster; empty means
// RMQ_SYS_TRACE_TOPIC (docs/PROTOCOL.md §8.16). Tracing never blocks or
// fails consumption: records that cannot be queued or sent are dropped.
// Messages whose TRACE_ON property is "false" are not recorded. Default
// off.
func WithTrace(topic string) Option {
	return func(c *config) { c.trace = &traceConfig{topic: topic} }
}

type traceConfig struct {
	topic string
	last  atomic.Pointer[trace.Dispatcher] // of the running or last run, for TraceDropped
}

// consumeTracer is a running consumer's trace dispatcher and its client.
type consumeTracer struct {
	d       *trace.Dispatcher
	sender  *trace.ClientSender
	group   string
	timeout time.Duration
	ids     *rocketmq.UniqIDGenerator
}

// startTrace starts tracing when configured; a failure leaves the
// consumer untraced, as Java only logs it.
func (c *PushConsumer) startTrace(ctx context.Context, r *runState) {
	if c.cfg.trace == nil {
		return
	}
	s, err := trace.NewClientSender(c.cfg.client, c.cfg.group, trace.Consume)
	if err == nil {
		err = s.Start(ctx)
		if err != nil {
			_ = s.Close(ctx)
		}
	}
	if err != nil {
		c.log.Warn("rocketmq: message trace off: its client did not start", "group", c.cfg.group, "err", err)
		return
	}
	r.trace = &consumeTracer{
		d:       trace.NewDispatcher(c.cfg.trace.topic, s, c.log),
		sender:  s,
		group:   c.cfg.group,
		timeout: c.cfg.consumeTimeout,
		ids:     rocketmq.NewUniqIDGenerator(),
	}
	c.cfg.trace.last.Store(r.trace.d)
}

// close sends the queued records within ctx, then closes the client.
func (t *consumeTracer) close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	err := t.d.Close(ctx)
	if cerr := t.sender.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// before records a handler call about to run, as
// ConsumeMessageTraceHookImpl.consumeMessageBefore; the result goes to
// after. msgs have the user's topics.
func (t *consumeTracer) before(msgs []*rocketmq.MessageExt) *trace.Context {
	if t == nil {
		return nil
	}
	c := &trace.Context{Type: trace.SubBefore, Group: t.group, RequestID: t.ids.NewID()}
	for _, m := range msgs {
		if m.Property(rocketmq.PropertyTraceSwitch) == "false" {
			continue
		}
		c.RegionID = m.Property(rocketmq.PropertyMsgRegion)
		c.Beans = append(c.Beans, trace.Bean{
			Topic:      m.Topic,
			MsgID:      m.MsgID,
			Tags:       m.Tag(),
			Keys:       m.Properties[rocketmq.PropertyKeys],
			BodyLength: int(m.StoreSize),
			RetryTimes: int(m.ReconsumeTimes),
		})
	}
	if len(c.Beans) == 0 {
		return nil
	}
	c.TimeStamp = time.Now().UnixMilli()
	t.d.Append(c)
	return c
}

// after records the outcome of the call before recorded, as
// consumeMessageAfter: the cost is per message of the batch, the context
// code Java's ConsumeReturnType.
func (t *consumeTracer) after(before *trace.Context, n int, res Result, err error) {
	if t == nil || before == nil || n == 0 {
		return
	}
	elapsed := time.Since(time.UnixMilli(before.TimeStamp))
	code := trace.ReturnSuccess
	switch {
	case err != nil:
		code = trace.ReturnException
	case elapsed >= t.timeout:
		code = trace.ReturnTimeout
	case res != Success:
		code = trace.ReturnFailed
	}
	t.d.Append(&trace.Context{
		Type:        trace.SubAfter,
		TimeStamp:   before.TimeStamp,
		RegionID:    before.RegionID,
		Group:       before.Group,
		RequestID:   before.RequestID,
		Success:     err == nil && res == Success,
		CostTime:    int(elapsed.Milliseconds()) / n,
		ContextCode: code,
		Beans:       before.Beans,
	})
}

// TraceDropped returns how many trace records the running consumer, or
// the last one to run, dropped (queue full, or a failed send); 0 without
// tracing.
func (c *PushConsumer) TraceDropped() int64 {
	if c.cfg.trace == nil {
		return 0
	}
	if d := c.cfg.trace.last.Load(); d != nil {
		return d.Dropped()
	}
	return 0
}
