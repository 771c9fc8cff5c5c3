// Command batch sends several messages of one topic in one request.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strings"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	flag.Parse()

	// A batch: one topic, no delay, each message with its own keys and id.
	msgs := make([]*rocketmq.Message, 8)
	for i := range msgs {
		msg, err := producer.NewMessage("TopicTest", []byte(fmt.Sprintf("batch %d", i)), producer.Keys(fmt.Sprintf("batch-%d", i)))
		check(err)
		msgs[i] = msg
	}

	ctx := context.Background()
	p, err := producer.New(producer.WithGroup("example_batch"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	res, err := p.Send(ctx, msgs...) // one SEND_BATCH_MESSAGE request
	check(err)
	ids := strings.Split(res.MsgID, ",")
	fmt.Printf("batch of %d stored in %s/%d from offset %d\n", len(ids), res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
	for _, id := range ids {
		fmt.Println(" ", id)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
