// Command request-reply sends a request and waits for the reply. A
// consumer of the topic must answer: it builds the reply with
// producer.NewReply(request, body) and sends it with any producer; the
// broker pushes it back to this client.
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
	topic := flag.String("topic", "RequestTopic", "topic a responder consumes")
	timeout := flag.Duration("timeout", 3*time.Second, "how long to wait for the reply (also the TTL)")
	flag.Parse()

	p, err := producer.New(producer.WithGroup("example_requester"), producer.WithNameServers(*namesrv),
		producer.WithRequestTimeout(*timeout))
	check(err)
	ctx := context.Background()
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	// The request waits for a reply to its correlation id, not for a queue.
	msg, err := producer.NewMessage(*topic, []byte("ping"))
	check(err)
	reply, err := p.Request(ctx, msg)
	check(err)
	fmt.Printf("reply %q from topic %s\n", reply.Body, reply.Topic)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
