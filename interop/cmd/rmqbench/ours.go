package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/consumer"
	"github.com/go-rocketmq/rocketmq/producer"
)

// oursDriver drives this module's producer with its defaults (3 s send
// timeout, 2 retries, compression over 4 KiB), like the official driver.
type oursDriver struct {
	cfg  driverConfig
	body []byte
	p    *producer.Producer
}

func newOursDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	p, err := producer.New(
		producer.WithGroup("rmqbench_producer"),
		producer.WithNameServers(cfg.namesrv...),
		producer.WithInstanceName("rmqbench_p_"+cfg.runID),
	)
	if err != nil {
		return nil, fmt.Errorf("our producer: %w", err)
	}
	if err := p.Start(ctx); err != nil {
		return nil, fmt.Errorf("our producer start: %w", err)
	}
	return &oursDriver{cfg: cfg, body: makeBody(cfg.size), p: p}, nil
}

// message builds a fresh message per send, as the official driver must;
// our producer would accept one shared message, but applications build
// one per send.
func (d *oursDriver) message() (*rocketmq.Message, error) {
	m, err := producer.NewMessage(d.cfg.topic, d.body)
	if err != nil {
		return nil, err
	}
	if err := m.SetUserProperty(runProperty, d.cfg.runID); err != nil {
		return nil, err
	}
	if d.cfg.stamp {
		if err := m.SetUserProperty(sentProperty, strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (d *oursDriver) SendSync(ctx context.Context, n int) error {
	msgs := make([]*rocketmq.Message, n)
	for i := range msgs {
		m, err := d.message()
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	res, err := d.p.Send(ctx, msgs...)
	if err != nil {
		return err
	}
	if res.Status != rocketmq.SendOK {
		return fmt.Errorf("send status %d", res.Status)
	}
	return nil
}

func (d *oursDriver) SendAsync(ctx context.Context, done func(error)) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	return d.p.SendAsync(ctx, func(res *rocketmq.SendResult, err error) {
		if err == nil && res.Status != rocketmq.SendOK {
			err = fmt.Errorf("send status %d", res.Status)
		}
		done(err)
	}, m)
}

func (d *oursDriver) SendOneway(ctx context.Context) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	return d.p.SendOneway(ctx, m)
}

// Consume runs our push consumer with its defaults (as the official
// driver runs the official one with its own), reading from the first
// offset with -callers handler goroutines; with -orderly it subscribes
// an orderly handler.
func (d *oursDriver) Consume(ctx context.Context, group string, sink consumeSink) (func() error, error) {
	opts := []consumer.Option{
		consumer.WithGroup(group),
		consumer.WithNameServers(d.cfg.namesrv...),
		consumer.WithInstanceName("rmqbench_c_" + d.cfg.runID),
		consumer.WithConsumeFrom(consumer.FromFirst),
		consumer.WithConsumeGoroutines(d.cfg.consumers),
	}
	if d.cfg.cbatch > 0 {
		opts = append(opts, consumer.WithConsumeBatchSize(d.cfg.cbatch))
	}
	c, err := consumer.NewPush(opts...)
	if err != nil {
		return nil, fmt.Errorf("our consumer: %w", err)
	}
	count := func(msgs []*rocketmq.MessageExt) {
		n := 0
		for _, m := range msgs {
			if m.Property(runProperty) != d.cfg.runID {
				continue
			}
			n++
			if sink.sent != nil {
				if ns, err := strconv.ParseInt(m.Property(sentProperty), 10, 64); err == nil {
					sink.sent(ns)
				}
			}
		}
		sink.delivered(n)
	}
	if d.cfg.orderly {
		err = c.SubscribeOrderly(d.cfg.topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.OrderlyResult, error) {
			count(msgs)
			return consumer.OrderlySuccess, nil
		})
	} else {
		err = c.Subscribe(d.cfg.topic, consumer.All, func(_ context.Context, msgs []*rocketmq.MessageExt) (consumer.Result, error) {
			count(msgs)
			return consumer.Success, nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("our consumer subscribe: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("our consumer start: %w", err)
	}
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return c.Shutdown(ctx)
	}, nil
}

// closeTimeout bounds Shutdown, which drains in-flight sends.
const closeTimeout = 10 * time.Second

func (d *oursDriver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return d.p.Shutdown(ctx)
}
