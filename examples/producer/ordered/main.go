// Command ordered sends the events of several orders so that each order's
// events land on one queue, in order: the hash selector picks the same
// queue as the Java client's SelectMessageQueueByHash for the same key.
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
	p, err := producer.New(producer.WithGroup("example_ordered"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	for _, step := range []string{"created", "paid", "shipped"} {
		for order := int64(1000); order < 1004; order++ {
			msg, err := producer.NewMessage("TopicTest", []byte(fmt.Sprintf("order %d %s", order, step)))
			check(err)
			// LongKey hashes like java.lang.Long; use StringKey/IntKey for the
			// other Java argument types.
			res, err := p.With(producer.ShardBy(producer.LongKey(order))).Send(ctx, msg)
			check(err)
			fmt.Printf("order %d %-7s -> %s/%d\n", order, step, res.Queue.BrokerName, res.Queue.QueueID)
		}
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
