package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/rmqtest"
)

// The steps sent as examples/orderly/producer sends them arrive in order,
// a suspended "paid" step included.
func TestRun(t *testing.T) {
	c := rmqtest.StartCluster(t)
	ns := c.NameServerAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rmqtest.CreateTopic(ctx, ns, "TopicOrderly", 4); err != nil {
		t.Fatal(err)
	}
	p, err := producer.New(producer.WithGroup("example_orderly_test"), producer.WithNameServers(ns))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	const orders = 5
	steps := []string{"created", "paid", "shipped"}
	for i, step := range steps {
		for o := range orders {
			id := fmt.Sprint("order-", o)
			m, err := producer.NewMessage("TopicOrderly", []byte(id+" "+step), producer.Keys(id), producer.Tag(step), producer.Property("step", strconv.Itoa(i)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.With(producer.ShardBy(producer.StringKey(id))).Send(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	if err := run(ctx, ns, "TopicOrderly", orders*len(steps), true, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{fmt.Sprintf("%d messages of %d orders, every order in order", orders*len(steps), orders), `"order-0 paid": not now`, `"order-0 paid" reconsume=1`} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
