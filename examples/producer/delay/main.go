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
	level := flag.Int("level", 2, "delay level 1..18 (1s 5s 10s 30s 1m 2m ... 2h)")
	flag.Parse()

	// The delay is part of the message; NewMessage checks the level.
	msg, err := producer.NewMessage("TopicTest", []byte("delayed hello"), producer.DelayLevel(*level))
	check(err)

	ctx := context.Background()
	p, err := producer.New(producer.WithGroup("example_delay"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	res, err := p.Send(ctx, msg)
	check(err)
	fmt.Printf("sent %s at %s with delay level %d\n", res.MsgID, time.Now().Format(time.TimeOnly), *level)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
