// Command concurrent consumes TopicTest's messages tagged TagA or TagB on a
// pool of handler goroutines until interrupted. Members started with the
// same group split the topic's queues between them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicTest", "topic to consume")
	flag.Parse()

	c, err := consumer.NewPush(consumer.WithGroup("example_concurrent"), consumer.WithNameServers(*namesrv),
		consumer.WithConsumeGoroutines(8), // handler calls running at once
		consumer.WithConsumeBatchSize(4))  // messages of one queue per call
	check(err)
	check(c.Subscribe(*topic, consumer.Tags("TagA || TagB"), func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			fmt.Printf("%s/%d@%d %s tag=%s keys=%v body=%q\n", m.BrokerName, m.QueueID, m.QueueOffset, m.MsgID, m.Tag(), m.Keys(), m.Body)
		}
		return consumer.Success, nil // an error, a panic or RetryLater brings the batch back later
	}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	check(c.Start(ctx))
	fmt.Println("consuming; Ctrl-C stops")
	<-ctx.Done()

	// Shutdown waits for running handlers and commits what they consumed.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(c.Shutdown(sctx))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
