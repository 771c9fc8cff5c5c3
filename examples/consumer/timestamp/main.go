// Command timestamp starts a new consumer group at the messages stored in
// the last -since (default 10 minutes). The start point applies only to a
// group without committed offsets, on queues whose first message is no
// longer in the broker's memory; elsewhere a new group reads from the
// beginning, and an existing group resumes where it stopped.
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
	since := flag.Duration("since", 10*time.Minute, "consume messages stored this long ago and later")
	group := flag.String("group", fmt.Sprintf("example_timestamp_%d", time.Now().Unix()), "consumer group (new by default)")
	flag.Parse()

	from := time.Now().Add(-*since)
	c, err := consumer.NewPush(consumer.WithGroup(*group), consumer.WithNameServers(*namesrv),
		consumer.WithConsumeFrom(consumer.FromTimestamp), consumer.WithConsumeTimestamp(from))
	check(err)
	check(c.Subscribe("TopicTest", consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			fmt.Printf("%s stored %s body=%q\n", m.MsgID, time.UnixMilli(m.StoreTimestamp).Format(time.DateTime), m.Body)
		}
		return consumer.Success, nil
	}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	check(c.Start(ctx))
	fmt.Printf("group %s consuming from %s; Ctrl-C stops\n", *group, from.Format(time.DateTime))
	<-ctx.Done()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(c.Shutdown(sctx))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
