package consumer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
)

// A clustering consumer of TopicTest's messages tagged TagA or TagB.
func ExampleNewPush() {
	c, err := consumer.NewPush(
		consumer.WithGroup("my_group"),
		consumer.WithNameServers("127.0.0.1:9876"),
		consumer.WithConsumeFrom(consumer.FromFirst),
	)
	if err != nil {
		log.Fatal(err)
	}
	err = c.Subscribe("TopicTest", consumer.Tags("TagA || TagB"), func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		for _, m := range msgs {
			fmt.Printf("%s %s\n", m.MsgID, m.Body)
		}
		return consumer.Success, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Shutdown(ctx) // consumes what was pulled while ctx allows, commits offsets
	}()
	// ... run until the application stops.
}

// A handler that asks for a message again: it returns from the group's
// retry topic with ReconsumeTimes one higher, and after the maximum
// (WithMaxReconsumeTimes, default 16) moves to %DLQ%group.
func ExampleHandler_retry() {
	var h consumer.Handler = func(ctx context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
		if msgs[0].ReconsumeTimes < 2 {
			return consumer.RetryLater, nil
		}
		return consumer.Success, nil
	}
	_ = h
}
