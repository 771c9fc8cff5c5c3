// Command quickstart sends a few messages and prints where they were stored.
// With -namesrv it uses that cluster; without, it starts a NameServer and a
// broker in this process (rmqtest.NewCluster, data in a temporary directory)
// and stops them at the end, so it needs nothing but Go.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

func main() {
	namesrv := flag.String("namesrv", "", "NameServer address(es), ';' separated; empty: start a cluster in this process")
	flag.Parse()
	if err := run(*namesrv); err != nil {
		log.Fatal(err)
	}
}

func run(namesrv string) error {
	if namesrv == "" {
		c, err := rmqtest.NewCluster()
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		namesrv = c.NameServerAddr()
		fmt.Println("started a NameServer at", namesrv, "and broker-a")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := producer.New(producer.WithGroup("quickstart"), producer.WithNameServers(namesrv))
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer p.Shutdown(ctx)

	for i := 1; i <= 3; i++ {
		msg, err := producer.NewMessage("QuickStart", []byte(fmt.Sprintf("hello %d", i)), producer.Tag("TagA"))
		if err != nil {
			return err
		}
		// The first send creates the topic on the broker (auto-creation is on).
		res, err := p.Send(ctx, msg)
		if err != nil {
			return err
		}
		fmt.Printf("sent %s: %s, queue %s/%d, offset %d\n", res.MsgID, res.Status, res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset)
	}
	return nil
}
