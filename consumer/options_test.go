package consumer

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq"
)

func TestNewConfig(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		ok   bool
		is   error
	}{
		{"valid", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876")}, true, nil},
		{"no group", []Option{WithNameServers("127.0.0.1:9876")}, false, nil},
		{"reserved group", []Option{WithGroup("DEFAULT_CONSUMER"), WithNameServers("127.0.0.1:9876")}, false, nil},
		{"bad group", []Option{WithGroup("a b"), WithNameServers("127.0.0.1:9876")}, false, nil},
		{"no NameServer", []Option{WithGroup("g")}, false, rocketmq.ErrNoNameServer},
		{"bad namespace", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithNamespace("a%b")}, false, nil},
		{"no goroutines", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithConsumeGoroutines(0)}, false, nil},
		{"batch too big", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithConsumeBatchSize(1025)}, false, nil},
		{"topic cap", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithPullThresholdForTopic(0)}, false, nil},
		{"reconsume -2", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithMaxReconsumeTimes(-2)}, false, nil},
		{"reconsume -1", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithMaxReconsumeTimes(-1)}, true, nil},
		{"no timeout", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithConsumeTimeout(0)}, false, nil},
		{"bad model", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithModel(Model(7))}, false, nil},
		{"nil strategy", []Option{WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithStrategy(nil)}, false, nil},
	}
	t.Setenv("NAMESRV_ADDR", "")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := newConfig(tc.opts...)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			if tc.ok && (cfg.group != "g" || cfg.client.NameServers[0] != "127.0.0.1:9876") {
				t.Fatalf("config %+v", cfg)
			}
		})
	}
}

func TestNewPushDefaults(t *testing.T) {
	c, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithMaxReconsumeTimes(-1), WithNamespace("ns"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.maxReconsume(); got != 16 {
		t.Fatalf("max reconsume times %d, want 16 for -1", got)
	}
	noop := func(context.Context, []*rocketmq.MessageExt) (OrderlyResult, error) { return OrderlySuccess, nil }
	o, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.SubscribeOrderly("T", All, noop); err != nil {
		t.Fatal(err)
	}
	if got := o.maxReconsume(); got != math.MaxInt32 {
		t.Fatalf("orderly max reconsume times %d, want unlimited for -1", got)
	}
	if err := o.Subscribe("U", All, func(context.Context, []*rocketmq.MessageExt) (Result, error) { return Success, nil }); err == nil {
		t.Fatal("a concurrent handler was accepted on an orderly consumer")
	}
	if err := c.Subscribe("U", All, func(context.Context, []*rocketmq.MessageExt) (Result, error) { return Success, nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.SubscribeOrderly("T", All, noop); err == nil {
		t.Fatal("an orderly handler was accepted on a concurrent consumer")
	}
	if _, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithSuspendTime(time.Millisecond)); err == nil {
		t.Fatal("a 1ms suspend time was accepted")
	}
	if c.wireGroup != "ns%g" || c.Group() != "g" {
		t.Fatalf("groups %q %q", c.wireGroup, c.Group())
	}
	if c.subscription("%RETRY%ns%g") == nil {
		t.Fatal("clustering consumer lacks its retry subscription")
	}
	b, err := NewPush(WithGroup("g"), WithNameServers("127.0.0.1:9876"), WithModel(Broadcasting))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.subscriptionList()) != 0 {
		t.Fatal("broadcasting consumer subscribes to a retry topic")
	}
	if b.Assigned() != nil || b.Stats() != nil {
		t.Fatal("a consumer not started holds queues")
	}
}
