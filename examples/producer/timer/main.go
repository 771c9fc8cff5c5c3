// Command timer sends a message a 5.x broker delivers at a chosen time
// (TIMER_DELIVER_MS). Against a 4.x broker the send fails with
// producer.ErrTimerNotSupported once the broker has reported its version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/go-rocketmq/rocketmq/producer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	after := flag.Duration("after", 3*time.Second, "delivery delay")
	flag.Parse()

	at := time.Now().Add(*after)
	msg, err := producer.NewMessage("TopicTest", []byte("timer hello"), producer.DeliverAt(at))
	check(err)

	ctx := context.Background()
	p, err := producer.New(producer.WithGroup("example_timer"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	res, err := p.Send(ctx, msg)
	if errors.Is(err, producer.ErrTimerNotSupported) {
		log.Fatalf("this broker has no timer messages; use producer.DelayLevel instead: %v", err)
	}
	check(err)
	fmt.Printf("sent %s, due at %s\n", res.MsgID, at.Format(time.TimeOnly))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
