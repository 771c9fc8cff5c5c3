// Command delay sends a message with a delay level (level 2 = 5 s with the
// broker's default table); every broker version supports it.
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
	level := flag.Int("level", 2, "delay level 1..18 (1s 5s 10s 30s 1m 2m ... 2h)")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_delay"), producer.WithNameServers(*namesrv))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Shutdown(context.Background())

	msg, err := producer.NewMessage(*topic, []byte("delayed hello"), producer.DelayLevel(*level))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Send(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent %s at %s with delay level %d\n", res.MsgID, time.Now().Format(time.TimeOnly), *level)
}
