package rmqtest

import (
	"context"
	"fmt"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/transport"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// consumedWait bounds WaitConsumed when ctx has no deadline.
const consumedWait = 30 * time.Second

// WaitConsumed waits until the committed offsets of group on topic add up
// to at least n, that is until the group has acknowledged n messages of a
// topic it read from the first message. It polls the brokers, so it sees
// what a consumer has committed, not what its handler has seen: consumers
// commit every few seconds (the offset persist interval, 5 s by default)
// and with their pulls. When ctx has no deadline it gives up after 30 s.
func (c *Cluster) WaitConsumed(ctx context.Context, group, topic string, n int64) error {
	return WaitConsumed(ctx, c.NameServerAddr(), group, topic, n)
}

// Consumed returns the sum of the committed offsets of group on topic.
func (c *Cluster) Consumed(ctx context.Context, group, topic string) (int64, error) {
	return Consumed(ctx, c.NameServerAddr(), group, topic)
}

// WaitConsumed is Cluster.WaitConsumed for any cluster reachable at the
// NameServer address nameServer, such as an external RocketMQ. Group and
// topic are the names on the wire (with the namespace, if any).
func WaitConsumed(ctx context.Context, nameServer, group, topic string, n int64) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, consumedWait)
		defer cancel()
	}
	cli, err := transport.New()
	if err != nil {
		return err
	}
	defer cli.Close()
	var got int64
	var lastErr error
	polled := false
	for pause := time.Millisecond; ; {
		m, err := consumed(ctx, cli, nameServer, group, topic)
		switch {
		case err == nil:
			if m >= n {
				return nil
			}
			got, lastErr = m, nil
		case ctx.Err() == nil || !polled:
			lastErr = err
		}
		// A poll cut off by the deadline keeps the answer before it.
		polled = true
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("rocketmq: rmqtest: group %s on topic %s: %w (%w)", group, topic, lastErr, ctx.Err())
			}
			return fmt.Errorf("rocketmq: rmqtest: group %s committed %d of %d messages of topic %s: %w", group, got, n, topic, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// Consumed is Cluster.Consumed for any cluster reachable at the NameServer
// address nameServer.
func Consumed(ctx context.Context, nameServer, group, topic string) (int64, error) {
	cli, err := transport.New()
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	return consumed(ctx, cli, nameServer, group, topic)
}

// consumed asks every master serving topic for the consume stats of group
// (GET_CONSUME_STATS, docs/PROTOCOL.md §9.8) and adds up the committed
// offsets of the topic's queues.
func consumed(ctx context.Context, cli *transport.Client, nameServer, group, topic string) (int64, error) {
	rh := remoting.GetRouteInfoRequestHeader{Topic: topic}
	resp, err := cli.Invoke(ctx, nameServer, remoting.NewRequest(remoting.GetRouteInfoByTopic, rh.AppendExt(nil), nil))
	if err == nil {
		err = remoting.ResponseError(resp)
	}
	if err != nil {
		return 0, fmt.Errorf("route of topic %s: %w", topic, err)
	}
	var rd remoting.TopicRouteData
	if err := rd.DecodeJSON(resp.Body); err != nil {
		return 0, fmt.Errorf("route of topic %s: %w", topic, err)
	}
	var sum int64
	for _, bd := range rd.BrokerDatas {
		addr, ok := bd.BrokerAddrs[0]
		if !ok {
			continue
		}
		h := remoting.GetConsumeStatsRequestHeader{ConsumerGroup: group, Topic: &topic}
		resp, err := cli.Invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumeStats, h.AppendExt(nil), nil))
		if err == nil {
			err = remoting.ResponseError(resp)
		}
		if err != nil {
			return 0, fmt.Errorf("consume stats of %s from %s: %w", group, bd.BrokerName, err)
		}
		var cs remoting.ConsumeStats
		if err := cs.DecodeJSON(resp.Body); err != nil {
			return 0, fmt.Errorf("consume stats of %s from %s: %w", group, bd.BrokerName, err)
		}
		for q, w := range cs.OffsetTable {
			if q.Topic == topic {
				sum += w.ConsumerOffset
			}
		}
	}
	return sum, nil
}
