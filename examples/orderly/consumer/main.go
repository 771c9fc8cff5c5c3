// Command consumer consumes the order steps sent by
// examples/orderly/producer with an orderly handler: one handler call at a
// time per queue, in queue order, so every order's steps arrive in the
// order they were sent, across any number of members of the group (each
// queue is locked on its broker by the one member consuming it). It
// reports any step that arrives out of order.
//
// With -suspend, the first delivery of every "paid" step is refused with
// SuspendQueue: its queue pauses for the suspend time and the same
// message comes again, before anything after it in that queue.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
)

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	topic := flag.String("topic", "TopicOrderly", "topic to consume")
	count := flag.Int("count", 0, "stop after this many messages; 0: until interrupted")
	suspend := flag.Bool("suspend", false, "suspend the first delivery of every \"paid\" step")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *namesrv, *topic, *count, *suspend, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run consumes until ctx ends or count messages were consumed, and
// returns an error when a step arrived out of order.
func run(ctx context.Context, namesrv, topic string, count int, suspend bool, out io.Writer) error {
	c, err := consumer.NewPush(consumer.WithGroup("example_orderly"), consumer.WithNameServers(namesrv),
		consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithSuspendTime(500*time.Millisecond)) // pause of a suspended queue (default 1 s)
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex // guards out and the rest: calls of different queues run in parallel
		last     = map[string]int{}
		consumed int
		disorder int
	)
	done := make(chan struct{})
	err = c.SubscribeOrderly(topic, consumer.All, func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.OrderlyResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if suspend && m.Tag() == "paid" && m.ReconsumeTimes == 0 {
				fmt.Fprintf(out, "%s/%d@%d %q: not now, suspending the queue\n", m.BrokerName, m.QueueID, m.QueueOffset, m.Body)
				// Nothing of this call counts: the whole batch comes again.
				return consumer.SuspendQueue, nil
			}
		}
		for _, m := range msgs {
			step, err := strconv.Atoi(m.Property("step"))
			if err != nil || len(m.Keys()) == 0 {
				// Not from examples/orderly/producer: acknowledged and skipped.
				continue
			}
			order := m.Keys()[0]
			prev, seen := last[order]
			note := ""
			switch {
			case !seen && step != 0, seen && step > prev+1:
				note = " OUT OF ORDER"
				disorder++
			case seen && step <= prev:
				note = " (again)" // delivered again after a crash or a lost commit
			}
			last[order] = max(prev, step)
			fmt.Fprintf(out, "%s/%d@%d %q reconsume=%d%s\n", m.BrokerName, m.QueueID, m.QueueOffset, m.Body, m.ReconsumeTimes, note)
			if consumed++; consumed == count {
				close(done)
			}
		}
		return consumer.OrderlySuccess, nil // an error, a panic or SuspendQueue: the same messages again later
	})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	mu.Lock()
	fmt.Fprintln(out, "consuming; Ctrl-C stops")
	mu.Unlock()
	select {
	case <-ctx.Done():
	case <-done:
	}
	// Shutdown waits for the calls in hand, commits the offsets and
	// unlocks the queues, so another member takes them at once.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(sctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if disorder > 0 {
		return fmt.Errorf("%d steps out of order", disorder)
	}
	fmt.Fprintf(out, "%d messages of %d orders, every order in order\n", consumed, len(last))
	return nil
}
