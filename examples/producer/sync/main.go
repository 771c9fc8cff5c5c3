// Command sync sends a few messages and waits for each result.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	flag.Parse()

	ctx := context.Background()
	p, err := producer.New(producer.WithGroup("example_sync"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	for i := 0; i < 10; i++ {
		msg, err := producer.NewMessage("TopicTest", []byte(fmt.Sprintf("hello %d", i)),
			producer.Tag("TagA"), producer.Keys(fmt.Sprintf("key-%d", i)), producer.Property("index", fmt.Sprint(i)))
		check(err)
		res, err := p.Send(ctx, msg) // waits for the broker; retries on another broker within 3 s
		check(err)
		fmt.Printf("sent %s status=%s queue=%s/%d offset=%d\n", res.MsgID, res.Status, res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
