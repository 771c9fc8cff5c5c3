// Command quickstart sends 10 messages and consumes them with a push
// consumer, printing each. With -namesrv it uses that cluster; without, it
// starts a NameServer and a broker in this process (rmqtest.NewCluster,
// loopback ports, data in a temporary directory) and stops them at the
// end, so it needs nothing but Go.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

const (
	topic = "QuickStart"
	count = 10
)

func main() {
	namesrv := flag.String("namesrv", "", "NameServer address(es), ';' separated; empty: start a cluster in this process")
	flag.Parse()
	if err := run(*namesrv, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(namesrv string, out io.Writer) error {
	if namesrv == "" {
		c, err := rmqtest.NewCluster()
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		namesrv = c.NameServerAddr()
		fmt.Fprintln(out, "started a NameServer at", namesrv, "and broker-a")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, namesrv, topic, 4); err != nil {
		return err
	}

	// The consumer prints what it receives and notes each message id.
	var mu sync.Mutex // guards out and received
	received := map[string]bool{}
	arrived := make(chan struct{}, 1)
	c, err := consumer.NewPush(consumer.WithGroup("quickstart_consumer"), consumer.WithNameServers(namesrv),
		consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		return err
	}
	err = c.Subscribe(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			fmt.Fprintf(out, "received %s: tag=%s keys=%v body=%q (queue %d, offset %d)\n", m.MsgID, m.Tag(), m.Keys(), m.Body, m.QueueID, m.QueueOffset)
			received[m.MsgID] = true
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		return consumer.Success, nil
	})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.Shutdown(context.Background())

	p, err := producer.New(producer.WithGroup("quickstart"), producer.WithNameServers(namesrv))
	if err != nil {
		return err
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	defer p.Shutdown(context.Background())
	var sent []string
	for i := range count {
		tag := []string{"TagA", "TagB"}[i%2]
		msg, err := producer.NewMessage(topic, []byte(fmt.Sprintf("hello %d", i)), producer.Tag(tag), producer.Keys(fmt.Sprintf("order-%d", i)))
		if err != nil {
			return err
		}
		res, err := p.Send(ctx, msg)
		if err != nil {
			return err
		}
		mu.Lock()
		sent = append(sent, res.MsgID)
		fmt.Fprintf(out, "sent     %s: tag=%s (queue %d, offset %d)\n", res.MsgID, tag, res.Queue.QueueID, res.QueueOffset)
		mu.Unlock()
	}

	// Messages of earlier runs against the same cluster may come too.
	for {
		mu.Lock()
		n := 0
		for _, id := range sent {
			if received[id] {
				n++
			}
		}
		mu.Unlock()
		if n == count {
			break
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return fmt.Errorf("quickstart: %d of %d messages consumed: %w", n, count, ctx.Err())
		}
	}
	mu.Lock()
	fmt.Fprintf(out, "consumed all %d messages\n", count)
	mu.Unlock()
	return nil
}
