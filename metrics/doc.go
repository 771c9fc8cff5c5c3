// Package metrics defines the hook through which the producer, the
// consumers, the admin client and the in-repo broker report what they do:
// sends, consumption, cached messages, lag, rebalances and connections.
//
// The package has no dependencies. A client built without a hook calls
// nothing and allocates nothing for metrics; an application passes an
// implementation with producer.WithMetrics, consumer.WithMetrics or
// admin.WithMetrics. The otelmetrics module adapts the hook to
// OpenTelemetry instruments, so the SDK itself stays free of them.
//
// Hook methods are called on the send and consume paths, from many
// goroutines at once: an implementation must be safe for concurrent use,
// return quickly and never block.
package metrics
