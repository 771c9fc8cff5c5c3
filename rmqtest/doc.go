// Package rmqtest starts an in-process RocketMQ NameServer and brokers on
// loopback, the way net/http/httptest starts an HTTP server: one line in a
// test gives a cluster that real RocketMQ clients (ours, the official Go
// client, the Java client) can use.
//
//	c := rmqtest.StartCluster(t, rmqtest.WithBrokers(2))
//	p, _ := producer.New(producer.WithNameServers(c.NameServerAddr()), ...)
//
// Brokers store into a temporary directory in RocketMQ's on-disk layout.
// CreateTopic creates a topic over the wire and returns once the
// NameServer routes it, so it works against an external cluster too.
// WaitConsumed waits until a consumer group has committed offsets adding
// up to N messages of a topic (also for an external cluster), which is how
// a test knows a consumer is done:
//
//	if err := c.WaitConsumed(ctx, "my_group", "Orders", 10); err != nil { ... }
//
// Fault controls let a test make a broker or the NameServer answer a
// request code (or only the requests a predicate picks) with a chosen
// response code, delay or drop it, and stop, restart or crash a broker (a
// crash skips the clean shutdown, so the restart runs recovery). A request
// handler that panics inside a cluster started by StartCluster fails the
// test.
//
// WithSlaves gives every broker slaves that replicate it over the HA port
// as Java 4.9.8's do, and WithBrokerRole("SYNC_MASTER") makes a send wait
// for a slave. StopBrokerID, CrashBrokerID and StartBrokerID act on one
// member of a broker group (id 0 its master), and Replication reports how
// far each slave is:
//
//	c := rmqtest.StartCluster(t, rmqtest.WithSlaves(1), rmqtest.WithBrokerRole("SYNC_MASTER"))
//	c.CrashBrokerID("broker-a", 0) // consumers go on reading from the slave
//
// NewCluster is the same for programs that are not tests.
package rmqtest
