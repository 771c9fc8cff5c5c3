// Command retry shows redelivery. It sends two messages to TopicTest,
// "hello" and "poison", then consumes them: its handler fails "hello"
// twice before accepting it, and always fails "poison", which ends in the
// dead-letter topic %DLQ%example_retry after -max-reconsume retries.
//
// A failed message comes back after the broker's retry delays, the delay
// levels 3, 4, 5, ... of a Java broker: 10 s after the first failure,
// 30 s after the second, then 1 min, 2 min, 3 min, ... 10 min, 20 min,
// 30 min, 1 h and 2 h from the 16th retry on. With the default of 3
// retries, "hello" is accepted about 40 s after it was sent and "poison"
// moves to the dead-letter topic after about 1 min 40 s; see it with
//
//	rmqadmin -n 127.0.0.1:9876 topicStatus -t %DLQ%example_retry
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
)

// tag marks this example's messages, so that it leaves other messages of
// TopicTest alone.
const tag = "example_retry"

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	maxRetries := flag.Int("max-reconsume", 3, "retries before a message moves to %DLQ%example_retry")
	send := flag.Bool("send", true, `send "hello" and "poison" before consuming`)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *namesrv, *maxRetries, *send, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run sends the two messages (with send) and consumes until ctx is done.
func run(ctx context.Context, namesrv string, maxRetries int, send bool, out io.Writer) error {
	if send {
		p, err := producer.New(producer.WithGroup("example_retry_producer"), producer.WithNameServers(namesrv))
		if err != nil {
			return err
		}
		if err := p.Start(ctx); err != nil {
			return err
		}
		for _, body := range []string{"hello", "poison"} {
			msg, err := producer.NewMessage("TopicTest", []byte(body), producer.Tag(tag))
			if err != nil {
				return err
			}
			res, err := p.Send(ctx, msg)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "sent %q as %s\n", body, res.MsgID)
		}
		if err := p.Shutdown(ctx); err != nil {
			return err
		}
	}

	// A new group starts at the first message, so it gets the two just
	// sent.
	c, err := consumer.NewPush(consumer.WithGroup("example_retry"), consumer.WithNameServers(namesrv),
		consumer.WithMaxReconsumeTimes(maxRetries), consumer.WithConsumeFrom(consumer.FromFirst))
	if err != nil {
		return err
	}
	err = c.Subscribe("TopicTest", consumer.Tags(tag), func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		m := msgs[0] // the batch size is 1 by default
		since := time.Since(time.UnixMilli(m.BornTimestamp)).Round(time.Second)
		fmt.Fprintf(out, "%s attempt %d, %v after it was sent: body=%q\n", m.MsgID, m.ReconsumeTimes+1, since, m.Body)
		switch {
		case string(m.Body) == "poison":
			if int(m.ReconsumeTimes) >= maxRetries {
				fmt.Fprintf(out, "%s: no retry left, it moves to %%DLQ%%example_retry\n", m.MsgID)
			}
			return consumer.RetryLater, nil
		case m.ReconsumeTimes < 2:
			// An error counts as RetryLater.
			return consumer.RetryLater, errors.New("not yet")
		}
		fmt.Fprintf(out, "%s accepted\n", m.MsgID)
		return consumer.Success, nil
	})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "consuming; retries come after 10 s, 30 s, 1 min, ...; Ctrl-C stops")
	<-ctx.Done()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Shutdown(sctx)
}
