// Package consumer holds the push and pull consumers of RocketMQ. The
// push consumer (docs/PROTOCOL.md §8.7–§8.10) is Java's
// DefaultMQPushConsumer with a concurrent or an orderly listener.
//
//	c, err := consumer.NewPush(consumer.WithGroup("my_group"), consumer.WithNameServers("127.0.0.1:9876"))
//	err = c.Subscribe("TopicTest", consumer.Tags("TagA || TagB"), func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
//		// ...
//		return consumer.Success, nil
//	})
//	err = c.Start(ctx)
//	defer c.Shutdown(ctx)
//
// The members of a group split the queues of its topics between them
// (clustering) or each read every queue (broadcasting). Each held queue
// has one long-polling pull loop; pulled messages are handed to a pool of
// handler goroutines, and the consume offset of a queue advances to its
// smallest message not yet consumed. Offsets are kept by the brokers in
// clustering mode and in a local file in broadcasting mode. A message a
// handler gives back (RetryLater, an error or a panic) returns later from
// the group's retry topic, up to the maximum reconsume times, then moves
// to the group's dead-letter topic %DLQ%group.
//
// SubscribeOrderly consumes each queue one batch at a time in offset
// order (Java MessageListenerOrderly); in clustering mode a queue is
// consumed only while this member holds its lock on the broker, so no
// two members of the group consume a queue at once. A batch the handler
// suspends comes again after the suspend time, before anything later.
//
// PullConsumer (NewPull) reads at the caller's pace, as Java's
// DefaultLitePullConsumer (docs/PROTOCOL.md §8.15): Subscribe or Assign,
// then Poll batches, Seek, Pause and Resume queues, and commit offsets
// automatically or with CommitSync and Commit; its Pull reads one batch of
// a queue from any offset.
//
//	c, err := consumer.NewPull(consumer.WithGroup("my_group"), consumer.WithNameServers("127.0.0.1:9876"))
//	err = c.Subscribe("TopicTest", consumer.All)
//	err = c.Start(ctx)
//	defer c.Shutdown(ctx)
//	msgs, err := c.Poll(ctx)
//
// The options shared with the producer and the admin package
// (WithNameServers, WithNamespace, WithACL, WithTLS, WithLogger, ...) have
// the same names, meaning and defaults in all three.
package consumer
