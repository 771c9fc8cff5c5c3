// Package otelmetrics reports what the go-rocketmq clients measure as
// OpenTelemetry metrics. It is a module of its own, so that the SDK does
// not depend on OpenTelemetry.
//
//	h, err := otelmetrics.New(otel.GetMeterProvider())
//	p, err := producer.New(producer.WithMetrics(h), ...)
//
// Instruments (names follow the OpenTelemetry messaging conventions where
// they have one; every data point carries messaging.system=rocketmq):
//
//   - messaging.client.sent.messages (counter): messages sent, by
//     messaging.destination.name and rocketmq.result (ok, error).
//   - messaging.client.operation.duration (histogram, s): one send call
//     including its retries, with messaging.operation.name=send.
//   - messaging.client.consumed.messages (counter): messages handed to
//     handlers, by topic, messaging.consumer.group.name and rocketmq.result
//     (ok, retry, error).
//   - messaging.process.duration (histogram, s): one handler call.
//   - rocketmq.consumer.cached.messages (gauge): messages held per queue
//     (rocketmq.broker.name, rocketmq.queue.id), pulled and not yet
//     acknowledged.
//   - rocketmq.consumer.lag (gauge): per queue, the messages on the broker
//     not yet pulled, as of the last pull.
//   - rocketmq.consumer.rebalances (counter) and rocketmq.consumer.queues
//     (gauge): rebalances that changed a group's queues of a topic, and the
//     queues held after the last one.
//   - rocketmq.client.connection.events (counter): by server.address and
//     rocketmq.connection.event (connected, dial_failed, closed).
package otelmetrics
