// Command oneway sends messages without any answer from the broker.
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
	p, err := producer.New(producer.WithGroup("example_oneway"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))

	for i := 0; i < 10; i++ {
		// One attempt, no retry and no result: an error only means the
		// request could not be written.
		msg, err := producer.NewMessage("TopicTest", []byte(fmt.Sprintf("oneway %d", i)))
		check(err)
		check(p.SendOneway(ctx, msg))
	}
	check(p.Shutdown(ctx))
	fmt.Println("10 messages written")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
