// Command oneway sends messages without any answer from the broker.
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

	p, err := producer.New(producer.WithGroup("example_oneway"), producer.WithNameServers(*namesrv))
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
		msg, err := producer.NewMessage(*topic, []byte(fmt.Sprintf("oneway %d", i)))
		if err != nil {
			log.Fatal(err)
		}
		if err := p.SendOneway(ctx, msg); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%d messages written (no result is returned for oneway sends)\n", *n)
}
