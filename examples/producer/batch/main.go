// Command batch sends several messages of one topic in one request.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicTest", "topic")
	n := flag.Int("n", 8, "messages in the batch")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_batch"), producer.WithNameServers(*namesrv))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Shutdown(context.Background())

	msgs := make([]*rocketmq.Message, *n)
	for i := range msgs {
		msgs[i], err = producer.NewMessage(*topic, []byte(fmt.Sprintf("batch %d", i)), producer.Keys(fmt.Sprintf("batch-%d", i)))
		if err != nil {
			log.Fatal(err)
		}
	}
	res, err := p.Send(ctx, msgs...) // one SEND_BATCH_MESSAGE frame
	if err != nil {
		log.Fatal(err)
	}
	ids := strings.Split(res.MsgID, ",")
	fmt.Printf("batch of %d stored in %s/%d from offset %d\n", len(ids), res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
	for _, id := range ids {
		fmt.Println(" ", id)
	}
}
