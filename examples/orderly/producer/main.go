// Command producer sends the steps of several orders so that each order's
// steps land on one queue, in order, for examples/orderly/consumer: the
// hash selector picks the queue from the order id, the same queue as the
// Java client's SelectMessageQueueByHash with the same String argument.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq/producer"
)

// steps are what happens to every order, in this order.
var steps = []string{"created", "paid", "packed", "shipped", "delivered"}

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicOrderly", "topic to send to")
	orders := flag.Int("orders", 10, "number of orders")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, *namesrv, *topic, *orders, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, namesrv, topic string, orders int, out io.Writer) error {
	p, err := producer.New(producer.WithGroup("example_orderly_producer"), producer.WithNameServers(namesrv))
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer p.Shutdown(context.Background())

	// Steps of different orders interleave; the steps of one order are sent
	// one after the other, each after the previous one was stored.
	for i, step := range steps {
		for o := range orders {
			id := fmt.Sprintf("order-%d", 1000+o)
			msg, err := producer.NewMessage(topic, fmt.Appendf(nil, "%s %s", id, step),
				producer.Keys(id), producer.Tag(step), producer.Property("step", strconv.Itoa(i)))
			if err != nil {
				return err
			}
			// StringKey hashes like java.lang.String; producer.ShardBy(key)
			// is the same as Select(Hash(key)).
			res, err := p.With(producer.Select(producer.Hash(producer.StringKey(id)))).Send(ctx, msg)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%s %-9s -> %s/%d offset %d\n", id, step, res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
		}
	}
	return nil
}
