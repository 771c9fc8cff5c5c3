package otelmetrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/go-rocketmq/rocketmq/metrics"
)

const scope = "github.com/go-rocketmq/rocketmq/otelmetrics"

var system = attribute.String("messaging.system", "rocketmq")

// Hook implements metrics.Hook with OpenTelemetry instruments. It is safe
// for concurrent use; pass one Hook to any number of clients.
type Hook struct {
	sent, consumed, rebalances, conns metric.Int64Counter
	sendDur, processDur               metric.Float64Histogram

	mu     sync.Mutex
	cached map[metrics.Queue]int64
	lag    map[metrics.Queue]int64
	queues map[[2]string]int64 // topic, group → queues held
}

var _ metrics.Hook = (*Hook)(nil)

// New creates the instruments on a meter of mp.
func New(mp metric.MeterProvider) (*Hook, error) {
	m := mp.Meter(scope)
	h := &Hook{cached: map[metrics.Queue]int64{}, lag: map[metrics.Queue]int64{}, queues: map[[2]string]int64{}}
	var err error
	counter := func(name, unit, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		if err != nil {
			return nil
		}
		var c metric.Float64Histogram
		c, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
		return c
	}
	h.sent = counter("messaging.client.sent.messages", "{message}", "Messages sent, after retries.")
	h.sendDur = histogram("messaging.client.operation.duration", "Duration of one send call including its retries.")
	h.consumed = counter("messaging.client.consumed.messages", "{message}", "Messages handed to consumer handlers.")
	h.processDur = histogram("messaging.process.duration", "Duration of one handler call.")
	h.rebalances = counter("rocketmq.consumer.rebalances", "{rebalance}", "Rebalances that changed the queues a group holds of a topic.")
	h.conns = counter("rocketmq.client.connection.events", "{event}", "Connection events by server address.")
	if err != nil {
		return nil, err
	}
	cached, err := m.Int64ObservableGauge("rocketmq.consumer.cached.messages", metric.WithUnit("{message}"),
		metric.WithDescription("Messages a consumer holds per queue, pulled and not yet acknowledged."))
	if err != nil {
		return nil, err
	}
	lag, err := m.Int64ObservableGauge("rocketmq.consumer.lag", metric.WithUnit("{message}"),
		metric.WithDescription("Messages of a queue on the broker not yet pulled, as of the last pull."))
	if err != nil {
		return nil, err
	}
	queues, err := m.Int64ObservableGauge("rocketmq.consumer.queues", metric.WithUnit("{queue}"),
		metric.WithDescription("Queues of a topic a group holds after its last rebalance."))
	if err != nil {
		return nil, err
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		for q, v := range h.cached {
			o.ObserveInt64(cached, v, metric.WithAttributes(queueAttrs(q)...))
		}
		for q, v := range h.lag {
			o.ObserveInt64(lag, v, metric.WithAttributes(queueAttrs(q)...))
		}
		for k, v := range h.queues {
			o.ObserveInt64(queues, v, metric.WithAttributes(system,
				attribute.String("messaging.destination.name", k[0]), attribute.String("messaging.consumer.group.name", k[1])))
		}
		return nil
	}, cached, lag, queues)
	if err != nil {
		return nil, err
	}
	return h, nil
}

func queueAttrs(q metrics.Queue) []attribute.KeyValue {
	return []attribute.KeyValue{system,
		attribute.String("messaging.destination.name", q.Topic),
		attribute.String("messaging.consumer.group.name", q.Group),
		attribute.String("rocketmq.broker.name", q.Broker),
		attribute.String("rocketmq.queue.id", strconv.Itoa(q.ID)),
	}
}

// Send implements metrics.Hook.
func (h *Hook) Send(topic string, r metrics.Result, msgs int, d time.Duration) {
	ctx := context.Background()
	dest := attribute.String("messaging.destination.name", topic)
	h.sent.Add(ctx, int64(msgs), metric.WithAttributes(system, dest, attribute.String("rocketmq.result", r.String())))
	h.sendDur.Record(ctx, d.Seconds(), metric.WithAttributes(system, dest, attribute.String("messaging.operation.name", "send"),
		attribute.String("rocketmq.result", r.String())))
}

// Consume implements metrics.Hook.
func (h *Hook) Consume(topic, group string, r metrics.Result, msgs int, d time.Duration) {
	ctx := context.Background()
	attrs := metric.WithAttributes(system, attribute.String("messaging.destination.name", topic),
		attribute.String("messaging.consumer.group.name", group), attribute.String("rocketmq.result", r.String()))
	h.consumed.Add(ctx, int64(msgs), attrs)
	if d > 0 { // a lite pull consumer's polls have no handler time
		h.processDur.Record(ctx, d.Seconds(), attrs)
	}
}

// Cached implements metrics.Hook; a queue at 0 is no longer reported.
func (h *Hook) Cached(q metrics.Queue, msgs int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if msgs == 0 {
		delete(h.cached, q)
		return
	}
	h.cached[q] = int64(msgs)
}

// Lag implements metrics.Hook.
func (h *Hook) Lag(q metrics.Queue, lag int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lag[q] = lag
}

// Rebalance implements metrics.Hook.
func (h *Hook) Rebalance(topic, group string, queues int) {
	h.rebalances.Add(context.Background(), 1, metric.WithAttributes(system,
		attribute.String("messaging.destination.name", topic), attribute.String("messaging.consumer.group.name", group)))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queues[[2]string{topic, group}] = int64(queues)
}

// Conn implements metrics.Hook.
func (h *Hook) Conn(addr string, e metrics.ConnEvent) {
	h.conns.Add(context.Background(), 1, metric.WithAttributes(system,
		attribute.String("server.address", addr), attribute.String("rocketmq.connection.event", e.String())))
}
