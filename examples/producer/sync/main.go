// Command sync sends a few messages and waits for each result.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicTest", "topic")
	n := flag.Int("n", 10, "messages to send")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_sync"), producer.WithNameServers(*namesrv))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Shutdown(context.Background())

	for i := 0; i < *n; i++ {
		msg, err := producer.NewMessage(*topic, []byte(fmt.Sprintf("hello %d", i)),
			producer.Tag("TagA"), producer.Keys(fmt.Sprintf("key-%d", i)), producer.Property("index", fmt.Sprint(i)))
		if err != nil {
			log.Fatal(err)
		}
		res, err := p.Send(ctx, msg)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("sent %s status=%s queue=%s/%d offset=%d\n", res.MsgID, res.Status, res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
	}
}
