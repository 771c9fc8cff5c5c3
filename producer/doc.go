// Package producer sends messages to Apache RocketMQ brokers over the
// remoting protocol, the way the Java DefaultMQProducer does.
//
//	p, err := producer.New(producer.WithGroup("pg"), producer.WithNameServers("127.0.0.1:9876"))
//	...
//	if err := p.Start(ctx); err != nil { ... }
//	defer p.Shutdown(context.Background())
//	msg, _ := producer.NewMessage("TopicTest", []byte("hello"), producer.Tag("TagA"))
//	res, err := p.Send(ctx, msg)
//
// # Send kinds
//
// Send waits for the broker (one message, or several as one
// SEND_BATCH_MESSAGE); SendAsync calls back from a producer goroutine, with
// a bound on sends in flight; SendOneway sends once and does not wait;
// Request and RequestAsync send a request and wait for its reply
// (request-reply). Per-call options go through With:
//
//	p.With(producer.ShardBy(producer.StringKey(orderID))).Send(ctx, msg)
//
// # Retries and fault tolerance
//
// The send timeout (3 s) is a budget for all attempts (3 by default), as
// in Java. A retriable failure (transport errors and the Java retry codes,
// SYSTEM_BUSY included; see remoting.IsRetriable) moves the next attempt
// to another broker when the topic has one. The latency fault strategy is
// on by default: a broker that failed or answered slowly is avoided for a
// window from Java 5.x's table, then tried again. Hash and manual
// selectors keep their queue across retries so ordered streams stay
// ordered.
//
// # Lifecycle
//
// Every producer has its own client instance (client id, connections,
// heartbeats), so producers and consumers in one process never share
// callbacks. Shutdown drains in-flight sends within its ctx, then fails
// the rest, unregisters from the brokers and stops every goroutine; it
// always returns, also when called from a SendAsync callback. A producer
// can be started again after Shutdown; Start on a running producer fails
// with ErrAlreadyStarted.
//
// # Options and errors
//
// The client options (WithNameServers, WithNamespace, WithACL, WithTLS,
// WithLogger, WithDialer, WithCallTimeout, ...) are the same in the
// producer, consumer and admin packages. Errors match the module's
// sentinels with errors.Is (rocketmq.ErrTimeout, rocketmq.ErrNoRoute,
// rocketmq.ErrClosed, ...) and broker answers match remoting's codes
// (remoting.ErrSystemBusy, ...); a failed send is a *SendError.
//
// # Differences from the Java client
//
// Messages are never modified: the UNIQ_KEY, WAIT, namespace and
// request-reply properties are added on the wire only, so one message
// value may be sent concurrently or again (it then gets a new id). Async
// sends retry like sync ones, broker error codes included (Java retries
// async sends only on network failures).
package producer
