package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// officialDriver drives github.com/apache/rocketmq-client-go/v2 with its
// defaults, except a distinct instance name so that its producer and
// consumer do not share one client instance.
type officialDriver struct {
	cfg  driverConfig
	body []byte
	p    rmq.Producer
}

func newOfficialDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	if !cfg.verbose {
		// The official client logs through a package-level logrus logger
		// at info level; only its errors are worth seeing here.
		rlog.SetLogLevel("error")
	}
	p, err := rmq.NewProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver(cfg.namesrv)),
		producer.WithGroupName("rmqbench_producer"),
		producer.WithInstanceName("rmqbench_p_"+cfg.runID),
		producer.WithRetry(2),
	)
	if err != nil {
		return nil, fmt.Errorf("official producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("official producer start: %w", err)
	}
	return &officialDriver{cfg: cfg, body: makeBody(cfg.size), p: p}, nil
}

// makeBody returns a printable, poorly compressible-looking body.
func makeBody(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 'a' + byte((i*7+i/26)%26)
	}
	return b
}

// message builds a fresh message per send: the client writes UNIQ_KEY and
// other properties into it, so messages cannot be shared between sends.
func (d *officialDriver) message() *primitive.Message {
	m := primitive.NewMessage(d.cfg.topic, d.body)
	m.WithProperty(runProperty, d.cfg.runID)
	if d.cfg.stamp {
		m.WithProperty(sentProperty, strconv.FormatInt(time.Now().UnixNano(), 10))
	}
	return m
}

func (d *officialDriver) SendSync(ctx context.Context, n int) error {
	var res *primitive.SendResult
	var err error
	if n == 1 {
		res, err = d.p.SendSync(ctx, d.message())
	} else {
		msgs := make([]*primitive.Message, n)
		for i := range msgs {
			msgs[i] = d.message()
		}
		res, err = d.p.SendSync(ctx, msgs...)
	}
	if err != nil {
		return err
	}
	if res.Status != primitive.SendOK {
		return fmt.Errorf("send status %d", res.Status)
	}
	return nil
}

func (d *officialDriver) SendAsync(ctx context.Context, done func(error)) error {
	return d.p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
		if err == nil && res.Status != primitive.SendOK {
			err = fmt.Errorf("send status %d", res.Status)
		}
		done(err)
	}, d.message())
}

func (d *officialDriver) SendOneway(ctx context.Context) error {
	return d.p.SendOneWay(ctx, d.message())
}

func (d *officialDriver) Consume(ctx context.Context, group string, sink consumeSink) (func() error, error) {
	opts := []consumer.Option{
		consumer.WithNsResolver(primitive.NewPassthroughResolver(d.cfg.namesrv)),
		consumer.WithGroupName(group),
		consumer.WithInstance("rmqbench_c_" + d.cfg.runID),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeGoroutineNums(d.cfg.consumers),
	}
	if d.cfg.orderly {
		opts = append(opts, consumer.WithConsumerOrder(true))
	}
	if d.cfg.cbatch > 0 {
		opts = append(opts, consumer.WithConsumeMessageBatchMaxSize(d.cfg.cbatch))
	}
	c, err := rmq.NewPushConsumer(opts...)
	if err != nil {
		return nil, fmt.Errorf("official consumer: %w", err)
	}
	err = c.Subscribe(d.cfg.topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		n := 0
		for _, m := range msgs {
			if m.GetProperty(runProperty) != d.cfg.runID {
				continue
			}
			n++
			if sink.sent != nil {
				if ns, err := strconv.ParseInt(m.GetProperty(sentProperty), 10, 64); err == nil {
					sink.sent(ns)
				}
			}
		}
		sink.delivered(n)
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return nil, fmt.Errorf("official consumer subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("official consumer start: %w", err)
	}
	return c.Shutdown, nil
}

func (d *officialDriver) Close() error {
	return d.p.Shutdown()
}
