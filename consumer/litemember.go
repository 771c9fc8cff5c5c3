package consumer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// liteMember is what the client instance sees of a pull consumer (Java
// DefaultLitePullConsumerImpl as MQConsumerInner).
type liteMember struct{ c *PullConsumer }

var _ mqclient.Consumer = (*liteMember)(nil)

// ConsumerData: a pull consumer consumes actively; its subscriptions are
// those of Subscribe (none when assigned).
func (m *liteMember) ConsumerData() remoting.ConsumerData {
	c := m.c
	cd := remoting.ConsumerData{
		GroupName:        c.wireGroup,
		ConsumeType:      remoting.ConsumeTypeActively,
		MessageModel:     c.cfg.model.String(),
		ConsumeFromWhere: fromNames[c.cfg.from],
	}
	c.mu.Lock()
	for _, wt := range slices.Sorted(maps.Keys(c.subs)) {
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, c.subs[wt].data)
	}
	c.mu.Unlock()
	return cd
}

func (m *liteMember) SubscribeQueuesChanged(topic string, _ []rocketmq.MessageQueue) {
	m.c.mu.Lock()
	sub := m.c.subs[topic] != nil
	m.c.mu.Unlock()
	if sub {
		m.c.rebalanceSoon()
	}
}

func (m *liteMember) RebalanceSoon() { m.c.rebalanceSoon() }

// RunningInfo answers admin tools with the settings, subscriptions and
// held queues.
func (m *liteMember) RunningInfo() *remoting.ConsumerRunningInfo {
	c := m.c
	cfg := &c.cfg
	info := &remoting.ConsumerRunningInfo{
		Properties: map[string]string{
			"consumerGroup":                c.wireGroup,
			"messageModel":                 cfg.model.String(),
			"consumeFromWhere":             fromNames[cfg.from],
			"allocateMessageQueueStrategy": cfg.strategy.Name(),
			"pullBatchSize":                strconv.Itoa(cfg.pullBatchSize),
			"pullThresholdForQueue":        strconv.Itoa(cfg.pullThresholdForQueue),
			"pullThresholdSizeForQueue":    strconv.Itoa(cfg.pullThresholdSizeForQueue),
			"pullThresholdForAll":          strconv.Itoa(cfg.lite.thresholdForAll),
			"autoCommit":                   strconv.FormatBool(cfg.lite.autoCommit),
			"autoCommitIntervalMillis":     strconv.FormatInt(cfg.lite.autoCommitInterval.Milliseconds(), 10),
			remoting.PropConsumeType:       remoting.ConsumeTypeActively,
		},
		MQTable: map[rocketmq.MessageQueue]remoting.ProcessQueueInfo{},
	}
	c.mu.Lock()
	for _, wt := range slices.Sorted(maps.Keys(c.subs)) {
		info.SubscriptionSet = append(info.SubscriptionSet, c.subs[wt].data)
	}
	for mq, q := range c.queues {
		pi := remoting.ProcessQueueInfo{
			CommitOffset:       q.consumed.Load(),
			CachedMsgCount:     int32(q.count),
			CachedMsgSizeInMiB: int32(q.bytes >> 20),
		}
		if q.count > 0 {
			// Java ProcessQueue.fillProcessQueueInfo: first and last held.
			pi.CachedMsgMinOffset, pi.CachedMsgMaxOffset = q.lo, q.hi
		}
		info.MQTable[mq] = pi
	}
	c.mu.Unlock()
	return info
}

// ConsumeDirectly: a pull consumer has no listener to hand a message to;
// the broker hears the group is not consumed here.
func (m *liteMember) ConsumeDirectly(context.Context, *rocketmq.MessageExt, string) *remoting.ConsumeMessageDirectlyResult {
	return nil
}

// ResetOffset seeks the held queues of topic to offsets (an admin's reset
// of the group's offsets), off the caller's goroutine.
func (m *liteMember) ResetOffset(topic string, offsets map[rocketmq.MessageQueue]int64) {
	c := m.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateRunning {
		return
	}
	// Counted under mu while running, so never after Shutdown's wait began.
	c.gs.Go(func() {
		for mq, off := range offsets {
			if mq.Topic != topic {
				continue
			}
			if err := c.Seek(c.ctx, c.unwrap(mq), off); err != nil && !errors.Is(err, ErrNotAssigned) && c.ctx.Err() == nil {
				c.log.Warn("rocketmq: reset offset", "group", c.cfg.group, "queue", queueLog(mq), "err", err)
			}
		}
	})
}

// Offsets returns the consumed offsets of topic's held queues.
func (m *liteMember) Offsets(topic string) map[rocketmq.MessageQueue]int64 {
	c := m.c
	out := map[rocketmq.MessageQueue]int64{}
	c.mu.Lock()
	for mq, q := range c.queues {
		if mq.Topic == topic {
			if off := q.consumed.Load(); off >= 0 {
				out[mq] = off
			}
		}
	}
	c.mu.Unlock()
	return out
}
