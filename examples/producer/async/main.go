// Command async sends messages without waiting; callbacks report results.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_async"), producer.WithNameServers(*namesrv),
		producer.WithAsyncInflight(64, 16<<20, false)) // at most 64 sends in flight; SendAsync waits beyond
	check(err)
	ctx := context.Background()
	check(p.Start(ctx))

	var ok, failed atomic.Int64
	for i := 0; i < 100; i++ {
		msg, err := producer.NewMessage("TopicTest", []byte(fmt.Sprintf("async %d", i)))
		check(err)
		err = p.SendAsync(ctx, func(res *rocketmq.SendResult, err error) {
			if err != nil {
				failed.Add(1)
				log.Printf("send failed: %v", err)
				return
			}
			ok.Add(1)
		}, msg)
		check(err)
	}
	// Shutdown waits for the sends still in flight and runs their callbacks
	// before it returns.
	check(p.Shutdown(ctx))
	fmt.Printf("%d sent, %d failed\n", ok.Load(), failed.Load())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
