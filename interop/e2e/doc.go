// Package e2e runs the official Apache RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2) against our NameServer and
// broker (rmqtest) or, with ROCKETMQ_NAMESRV=host:port, against an
// external cluster: its producer's send kinds, its push consumer in
// clustering and broadcasting mode, its pull consumer, our producer
// feeding its consumer, and transactions of its transaction producer and
// ours, checks answered across the two clients. Against an external
// cluster the transaction tests wait up to 150 s for the broker's checks
// (a Java broker checks every 60 s). The package holds tests only.
package e2e
