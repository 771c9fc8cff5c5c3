// Command retry shows redelivery: its handler fails each message twice
// before accepting it, and gives up on messages whose body is "poison",
// which end in the dead-letter topic %DLQ%example_retry after
// -max-reconsume retries.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	maxRetries := flag.Int("max-reconsume", 3, "retries before a message moves to %DLQ%example_retry")
	flag.Parse()

	c, err := consumer.NewPush(consumer.WithGroup("example_retry"), consumer.WithNameServers(*namesrv),
		consumer.WithMaxReconsumeTimes(*maxRetries))
	check(err)
	check(c.Subscribe("TopicTest", consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		m := msgs[0] // the batch size is 1 by default
		fmt.Printf("%s attempt %d body=%q\n", m.MsgID, m.ReconsumeTimes+1, m.Body)
		switch {
		case string(m.Body) == "poison":
			return consumer.RetryLater, nil
		case m.ReconsumeTimes < 2:
			// An error counts as RetryLater; it returns after the
			// broker's delay level 3 + ReconsumeTimes (10 s, 30 s, ...).
			return consumer.RetryLater, errors.New("not yet")
		}
		return consumer.Success, nil
	}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	check(c.Start(ctx))
	fmt.Println("consuming; Ctrl-C stops")
	<-ctx.Done()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check(c.Shutdown(sctx))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
