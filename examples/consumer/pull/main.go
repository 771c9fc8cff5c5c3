// Command pull reads a topic at its own pace with the pull consumer. By
// default it subscribes, sharing the queues with the other members of
// -group. With -queue it reads that one queue of -broker instead, from
// -offset (or the group's committed offset when -offset is negative).
// Either way what it polled is committed every 5 s and on exit.
package main

import (
	"context"
	"errors"
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
	topic := flag.String("topic", "TopicTest", "topic to read")
	group := flag.String("group", "example_pull", "consumer group")
	queue := flag.Int("queue", -1, "read only this queue id (needs -broker)")
	broker := flag.String("broker", "", "broker name of -queue")
	offset := flag.Int64("offset", -1, "with -queue: offset to start at (-1: the committed one)")
	flag.Parse()

	c, err := consumer.NewPull(consumer.WithGroup(*group), consumer.WithNameServers(*namesrv),
		consumer.WithConsumeFrom(consumer.FromFirst))
	check(err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *queue < 0 {
		check(c.Subscribe(*topic, consumer.All))
		check(c.Start(ctx))
	} else {
		mq := rocketmq.MessageQueue{Topic: *topic, BrokerName: *broker, QueueID: *queue}
		check(c.Start(ctx))
		check(c.Assign(ctx, []rocketmq.MessageQueue{mq}))
		if *offset >= 0 {
			check(c.Seek(ctx, mq, *offset))
		}
	}
	fmt.Printf("group %s reading %s; Ctrl-C stops\n", *group, *topic)
	for {
		msgs, err := c.Poll(ctx)
		if errors.Is(err, context.Canceled) {
			break
		}
		check(err)
		for _, m := range msgs {
			fmt.Printf("%s queue %d offset %d body=%q\n", m.MsgID, m.QueueID, m.QueueOffset, m.Body)
		}
	}

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(c.Shutdown(sctx))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
