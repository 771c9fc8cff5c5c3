// Package e2e runs the official Apache RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2) against our NameServer and
// broker (rmqtest) or, with ROCKETMQ_NAMESRV=host:port, against an
// external cluster: its producer's send kinds, its push consumer in
// clustering and broadcasting mode, its pull consumer, and our producer
// feeding its consumer. The package holds tests only.
package e2e
