package otelmetrics

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/go-rocketmq/rocketmq/metrics"
)

func newHook(t *testing.T) (*Hook, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	h, err := New(mp)
	if err != nil {
		t.Fatal(err)
	}
	return h, r
}

// collect returns the metrics read by r, by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			t.Fatalf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// point returns the value of the data point of a sum or gauge whose
// attributes include every key=value of want; ok is false without one.
func point(t *testing.T, data metricdata.Aggregation, want ...string) (int64, bool) {
	t.Helper()
	var pts []metricdata.DataPoint[int64]
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		pts = d.DataPoints
	case metricdata.Gauge[int64]:
		pts = d.DataPoints
	case nil:
		return 0, false
	default:
		t.Fatalf("aggregation %T", data)
	}
next:
	for _, p := range pts {
		if v, _ := p.Attributes.Value("messaging.system"); v.AsString() != "rocketmq" {
			t.Fatalf("data point without messaging.system: %v", p.Attributes)
		}
		for i := 0; i < len(want); i += 2 {
			if v, ok := p.Attributes.Value(attribute.Key(want[i])); !ok || v.Emit() != want[i+1] {
				continue next
			}
		}
		return p.Value, true
	}
	return 0, false
}

func TestHookInstruments(t *testing.T) {
	h, r := newHook(t)
	h.Send("T", metrics.OK, 3, 2*time.Millisecond)
	h.Send("T", metrics.OK, 1, time.Millisecond)
	h.Send("T", metrics.Error, 1, time.Second)
	h.Consume("T", "g", metrics.OK, 4, time.Millisecond)
	h.Consume("T", "g", metrics.Retry, 1, time.Millisecond)
	h.Consume("T", "g", metrics.OK, 2, 0) // a poll: no handler time
	q0 := metrics.Queue{Topic: "T", Group: "g", Broker: "broker-a", ID: 0}
	q1 := q0
	q1.ID = 1
	h.Cached(q0, 5)
	h.Cached(q1, 7)
	h.Cached(q1, 0)
	h.Lag(q0, 12)
	h.Rebalance("T", "g", 4)
	h.Rebalance("T", "g", 2)
	h.Conn("127.0.0.1:10911", metrics.Connected)
	h.Conn("127.0.0.1:10911", metrics.Closed)
	h.Conn("127.0.0.1:10911", metrics.Connected)

	got := collect(t, r)
	for _, tc := range []struct {
		metric string
		attrs  []string
		want   int64
	}{
		{"messaging.client.sent.messages", []string{"messaging.destination.name", "T", "rocketmq.result", "ok"}, 4},
		{"messaging.client.sent.messages", []string{"rocketmq.result", "error"}, 1},
		{"messaging.client.consumed.messages", []string{"messaging.consumer.group.name", "g", "rocketmq.result", "ok"}, 6},
		{"messaging.client.consumed.messages", []string{"rocketmq.result", "retry"}, 1},
		{"rocketmq.consumer.cached.messages", []string{"rocketmq.queue.id", "0", "rocketmq.broker.name", "broker-a"}, 5},
		{"rocketmq.consumer.lag", []string{"rocketmq.queue.id", "0"}, 12},
		{"rocketmq.consumer.rebalances", []string{"messaging.consumer.group.name", "g"}, 2},
		{"rocketmq.consumer.queues", []string{"messaging.destination.name", "T"}, 2},
		{"rocketmq.client.connection.events", []string{"rocketmq.connection.event", "connected", "server.address", "127.0.0.1:10911"}, 2},
		{"rocketmq.client.connection.events", []string{"rocketmq.connection.event", "closed"}, 1},
	} {
		if v, ok := point(t, got[tc.metric], tc.attrs...); !ok || v != tc.want {
			t.Errorf("%s %v = %d (found %v), want %d", tc.metric, tc.attrs, v, ok, tc.want)
		}
	}
	if _, ok := point(t, got["rocketmq.consumer.cached.messages"], "rocketmq.queue.id", "1"); ok {
		t.Errorf("a queue back at 0 cached messages is still reported")
	}
	sendDur, ok := got["messaging.client.operation.duration"].(metricdata.Histogram[float64])
	if !ok || len(sendDur.DataPoints) != 2 {
		t.Fatalf("send durations %+v", got["messaging.client.operation.duration"])
	}
	var n uint64
	var sum float64
	for _, p := range sendDur.DataPoints {
		n += p.Count
		sum += p.Sum
	}
	if n != 3 || sum < 1.003-1e-9 || sum > 1.003+1e-9 {
		t.Errorf("send durations: %d recorded, sum %v s; want 3, 1.003 s", n, sum)
	}
	proc, ok := got["messaging.process.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("process durations %+v", got["messaging.process.duration"])
	}
	n = 0
	for _, p := range proc.DataPoints {
		n += p.Count
	}
	if n != 2 {
		t.Errorf("%d handler durations, want 2 (polls have none)", n)
	}
}
