// Command broadcasting gives every message of TopicTest to every running
// copy of itself. Each copy keeps its offsets in a local file named by its
// instance name, so a copy restarted with the same -instance resumes where
// it stopped.
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
	instance := flag.String("instance", "member-1", "instance name: one per running copy")
	dir := flag.String("offsets", "", "offset directory (default $HOME/.rocketmq_offsets)")
	flag.Parse()

	opts := []consumer.Option{consumer.WithGroup("example_broadcasting"), consumer.WithNameServers(*namesrv),
		consumer.WithModel(consumer.Broadcasting), consumer.WithInstanceName(*instance)}
	if *dir != "" {
		opts = append(opts, consumer.WithOffsetStoreDir(*dir))
	}
	c, err := consumer.NewPush(opts...)
	check(err)
	check(c.Subscribe("TopicTest", consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			fmt.Printf("[%s] %s/%d@%d %s body=%q\n", *instance, m.BrokerName, m.QueueID, m.QueueOffset, m.MsgID, m.Body)
		}
		// In broadcasting mode there are no retries: RetryLater drops the
		// message (as Java does).
		return consumer.Success, nil
	}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	check(c.Start(ctx))
	fmt.Printf("consuming as %s; Ctrl-C stops\n", *instance)
	<-ctx.Done()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(c.Shutdown(sctx)) // writes the offset file
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
