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
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Shutdown(context.Background())

	msg, err := producer.NewMessage(*topic, []byte("ping"))
	if err != nil {
		log.Fatal(err)
	}
	reply, err := p.Request(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("reply %q from topic %s\n", reply.Body, reply.Topic)
}
