// Command async sends messages without waiting; callbacks report results.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicTest", "topic")
	n := flag.Int("n", 100, "messages to send")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_async"), producer.WithNameServers(*namesrv),
		producer.WithAsyncInflight(64, 16<<20, false)) // at most 64 sends in flight; SendAsync waits beyond
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, failed := 0, 0
	for i := 0; i < *n; i++ {
		msg, err := producer.NewMessage(*topic, []byte(fmt.Sprintf("async %d", i)))
		if err != nil {
			log.Fatal(err)
		}
		wg.Add(1)
		err = p.SendAsync(ctx, func(res *rocketmq.SendResult, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				log.Printf("send failed: %v", err)
				return
			}
			ok++
		}, msg)
		if err != nil {
			wg.Done()
			log.Fatal(err)
		}
	}
	wg.Wait()
	// Shutdown would also wait for sends still in flight.
	if err := p.Shutdown(context.Background()); err != nil {
		log.Print(err)
	}
	fmt.Printf("%d sent, %d failed\n", ok, failed)
}
