package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// floorDriver sends with our producer but "consumes" with bare
// PULL_MESSAGE requests that only count the records in each response
// body: no decoding, no handler, no offset bookkeeping. Several pulls per
// queue are in flight at once, each for its own range of offsets. What it
// reaches is what the broker and the loopback can deliver to any client,
// the floor under every consumer's figures.
type floorDriver struct {
	*oursDriver
}

func newFloorDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	d, err := newOursDriver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &floorDriver{d.(*oursDriver)}, nil
}

// floorPullBatch is the messages asked per pull: the broker's default cap.
const floorPullBatch = 32

// floorPullTimeout bounds one pull.
const floorPullTimeout = 10 * time.Second

// Consume pulls every queue of the topic from offset 0 with -callers pulls
// in flight per queue, until a pull finds no more messages.
func (d *floorDriver) Consume(ctx context.Context, group string, sink consumeSink) (func() error, error) {
	cfg := mqclient.DefaultConfig()
	cfg.NameServers = d.cfg.namesrv
	cfg.InstanceName = "rmqbench_floor_" + d.cfg.runID
	cli, err := mqclient.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("floor client: %w", err)
	}
	if err := cli.Start(ctx); err != nil {
		return nil, fmt.Errorf("floor client start: %w", err)
	}
	mqs, err := cli.SubscribeQueues(ctx, d.cfg.topic)
	if err != nil {
		cli.Close(context.Background())
		return nil, fmt.Errorf("floor client route: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var failed atomic.Value
	for _, mq := range mqs {
		addr, ok := cli.BrokerAddr(mq.BrokerName)
		if !ok {
			cancel()
			cli.Close(context.Background())
			return nil, fmt.Errorf("floor client: no address for broker %s", mq.BrokerName)
		}
		var next atomic.Int64
		for range d.cfg.consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					off := next.Add(floorPullBatch) - floorPullBatch
					n, err := floorPull(ctx, cli, addr, group, mq.Topic, int32(mq.QueueID), off)
					if err != nil {
						if ctx.Err() == nil {
							failed.CompareAndSwap(nil, err)
						}
						return
					}
					if n == 0 {
						return // past the end of the queue
					}
					sink.delivered(n)
				}
			}()
		}
	}
	return func() error {
		cancel()
		wg.Wait()
		err := cli.Close(context.Background())
		if f, _ := failed.Load().(error); f != nil {
			return f
		}
		return err
	}, nil
}

// floorPull pulls up to floorPullBatch messages at off without suspending
// and returns how many records the body holds.
func floorPull(ctx context.Context, cli *mqclient.Client, addr, group, topic string, queue int32, off int64) (int, error) {
	all := "*"
	h := remoting.PullMessageRequestHeader{
		ConsumerGroup: group,
		Topic:         topic,
		QueueID:       queue,
		QueueOffset:   off,
		MaxMsgNums:    floorPullBatch,
		SysFlag:       remoting.PullFlagSubscription,
		Subscription:  &all,
	}
	resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.PullMessage, h.AppendExt(nil), nil), floorPullTimeout)
	if err != nil {
		return 0, err
	}
	switch resp.Code {
	case remoting.Success:
	case remoting.PullNotFound, remoting.PullOffsetMoved:
		return 0, nil
	default:
		return 0, fmt.Errorf("floor pull: code %d %q", resp.Code, resp.Remark)
	}
	n := 0
	for b := resp.Body; len(b) > 0; n++ {
		if len(b) < 4 {
			return n, errors.New("floor pull: truncated record")
		}
		size := int(binary.BigEndian.Uint32(b))
		if size < 4 || size > len(b) {
			return n, errors.New("floor pull: bad record size")
		}
		b = b[size:]
	}
	return n, nil
}
