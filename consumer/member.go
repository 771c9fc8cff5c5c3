package consumer

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// member is what the client instance sees of the consumer (Java
// MQConsumerInner): heartbeat data and the requests brokers and admin
// tools send to a consumer group.
type member struct{ r *runState }

var _ mqclient.Consumer = (*member)(nil)

var fromNames = map[From]string{
	FromLast:      remoting.ConsumeFromLastOffset,
	FromFirst:     remoting.ConsumeFromFirstOffset,
	FromTimestamp: remoting.ConsumeFromTimestamp,
}

// ConsumerData is the group's part of each heartbeat.
func (m *member) ConsumerData() remoting.ConsumerData {
	r := m.r
	cd := remoting.ConsumerData{
		GroupName:        r.c.wireGroup,
		ConsumeType:      remoting.ConsumeTypePassively,
		MessageModel:     r.cfg.model.String(),
		ConsumeFromWhere: fromNames[r.cfg.from],
	}
	for _, s := range r.c.subscriptionList() {
		cd.SubscriptionDataSet = append(cd.SubscriptionDataSet, s.data)
	}
	return cd
}

// SubscribeQueuesChanged: a subscribed topic's queues changed; Java
// rebalances at the next period, this consumer at once.
func (m *member) SubscribeQueuesChanged(topic string, _ []rocketmq.MessageQueue) {
	if m.r.c.subscription(topic) != nil {
		m.r.rebalanceSoon()
	}
}

// RebalanceSoon wakes the rebalance loop.
func (m *member) RebalanceSoon() { m.r.rebalanceSoon() }

// RunningInfo answers GET_CONSUMER_RUNNING_INFO with what Java's admin
// tool shows (DefaultMQPushConsumerImpl.consumerRunningInfo plus the
// client instance's properties).
func (m *member) RunningInfo() *remoting.ConsumerRunningInfo {
	r := m.r
	cfg := r.cfg
	props := map[string]string{
		"consumerGroup":                 r.c.wireGroup,
		"messageModel":                  cfg.model.String(),
		"consumeFromWhere":              fromNames[cfg.from],
		"consumeTimestamp":              cfg.fromTimestamp.Format("20060102150405"),
		"allocateMessageQueueStrategy":  cfg.strategy.Name(),
		"consumeThreadMin":              strconv.Itoa(cfg.consumeGoroutines),
		"consumeThreadMax":              strconv.Itoa(cfg.consumeGoroutines),
		"consumeConcurrentlyMaxSpan":    strconv.Itoa(cfg.maxSpan),
		"pullThresholdForQueue":         strconv.Itoa(cfg.pullThresholdForQueue),
		"pullThresholdSizeForQueue":     strconv.Itoa(cfg.pullThresholdSizeForQueue),
		"pullThresholdForTopic":         strconv.Itoa(cfg.pullThresholdForTopic),
		"pullThresholdSizeForTopic":     strconv.Itoa(cfg.pullThresholdSizeForTopic),
		"pullInterval":                  strconv.FormatInt(cfg.pullInterval.Milliseconds(), 10),
		"consumeMessageBatchMaxSize":    strconv.Itoa(cfg.consumeBatchSize),
		"pullBatchSize":                 strconv.Itoa(cfg.pullBatchSize),
		"postSubscriptionWhenPull":      "true",
		"unitMode":                      "false",
		"maxReconsumeTimes":             strconv.Itoa(r.c.maxReconsume()),
		"consumeTimeout":                strconv.FormatInt(int64(cfg.consumeTimeout/time.Minute), 10),
		"namesrvAddr":                   strings.Join(r.cli.NameServers(), ";"),
		"clientIP":                      clientIPOf(r.cli.ClientID()),
		"instanceName":                  instanceOf(r.cli.ClientID()),
		"pollNameServerInterval":        strconv.FormatInt(cfg.client.PollNameServerInterval.Milliseconds(), 10),
		"heartbeatBrokerInterval":       strconv.FormatInt(cfg.client.HeartbeatInterval.Milliseconds(), 10),
		"persistConsumerOffsetInterval": strconv.FormatInt(cfg.persistInterval.Milliseconds(), 10),
		"unitName":                      cfg.client.UnitName,
		"namespace":                     cfg.client.Namespace,
		"language":                      "GO",

		remoting.PropNamesrvAddr:            strings.Join(r.cli.NameServers(), ";"),
		remoting.PropConsumeType:            remoting.ConsumeTypePassively,
		remoting.PropClientVersion:          "V4_9_8",
		remoting.PropConsumeOrderly:         strconv.FormatBool(r.c.orderly()),
		remoting.PropThreadPoolCoreSize:     strconv.Itoa(cfg.consumeGoroutines),
		remoting.PropConsumerStartTimestamp: strconv.FormatInt(r.started.UnixMilli(), 10),
	}
	info := &remoting.ConsumerRunningInfo{
		Properties:  props,
		MQTable:     map[rocketmq.MessageQueue]remoting.ProcessQueueInfo{},
		StatusTable: map[string]remoting.ConsumeStatus{},
	}
	for _, s := range r.c.subscriptionList() {
		info.SubscriptionSet = append(info.SubscriptionSet, s.data)
		info.StatusTable[s.wireTopic] = r.stats.status(s.wireTopic)
	}
	r.qmu.Lock()
	qs := make([]*queueState, 0, len(r.queues))
	for _, q := range r.queues {
		qs = append(qs, q)
	}
	r.qmu.Unlock()
	for _, q := range qs {
		minOff, maxOff, count, bytes, dropped, lastPull, lastConsume := q.pq.info()
		info.MQTable[q.mq] = remoting.ProcessQueueInfo{
			CommitOffset:         q.cell.v.Load(),
			CachedMsgMinOffset:   minOff,
			CachedMsgMaxOffset:   maxOff,
			CachedMsgCount:       int32(count),
			CachedMsgSizeInMiB:   int32(bytes >> 20),
			Droped:               dropped,
			LastPullTimestamp:    lastPull,
			LastConsumeTimestamp: lastConsume,
			Locked:               q.locked.Load(),
			LastLockTimestamp:    q.lastLock.Load(),
			TryUnlockTimes:       q.tryUnlockTimes.Load(),
		}
	}
	return info
}

func clientIPOf(id string) string {
	ip, _, _ := strings.Cut(id, "@")
	return ip
}

func instanceOf(id string) string {
	_, rest, _ := strings.Cut(id, "@")
	inst, _, _ := strings.Cut(rest, "@")
	return inst
}

// ConsumeDirectly runs the handler of msg's topic on msg alone (Java
// ConsumeMessageConcurrentlyService / ConsumeMessageOrderlyService
// .consumeMessageDirectly); nothing is acknowledged or given back.
func (m *member) ConsumeDirectly(ctx context.Context, msg *rocketmq.MessageExt, brokerName string) *remoting.ConsumeMessageDirectlyResult {
	r := m.r
	// Java's orderly service answers with order set; SuspendQueue reads
	// as RetryLater through the adapter, CR_LATER as Java's
	// SUSPEND_CURRENT_QUEUE_A_MOMENT.
	res := &remoting.ConsumeMessageDirectlyResult{AutoCommit: true, Order: r.c.orderly()}
	if msg.BrokerName == "" {
		msg.BrokerName = brokerName
	}
	r.resetTopic(msg, r.retryTopic)
	start := time.Now()
	if msg.Properties == nil {
		msg.Properties = map[string]string{}
	}
	msg.Properties[rocketmq.PropertyConsumeStartTimestamp] = strconv.FormatInt(start.UnixMilli(), 10)
	s := r.c.handlerFor(mqclient.WrapNamespace(r.cfg.client.Namespace, msg.Topic))
	if s == nil {
		res.ConsumeResult = remoting.ConsumeResultThrowException
		res.Remark = fmt.Sprintf("no handler for topic %s", msg.Topic)
		return res
	}
	hctx, cancel := context.WithTimeout(ctx, r.cfg.consumeTimeout)
	defer cancel()
	result, err, panicked := m.callDirect(hctx, s, msg)
	res.SpentTimeMills = time.Since(start).Milliseconds()
	switch {
	case panicked != "":
		res.ConsumeResult = remoting.ConsumeResultThrowException
		res.Remark = panicked
	case err != nil:
		res.ConsumeResult = remoting.ConsumeResultThrowException
		res.Remark = err.Error()
	case result == Success:
		res.ConsumeResult = remoting.ConsumeResultSuccess
	case result == RetryLater:
		res.ConsumeResult = remoting.ConsumeResultLater
	default:
		res.ConsumeResult = remoting.ConsumeResultReturnNull
	}
	return res
}

func (m *member) callDirect(ctx context.Context, s *subscription, msg *rocketmq.MessageExt) (res Result, err error, panicked string) {
	defer func() {
		if p := recover(); p != nil {
			panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
			m.r.log.Error("rocketmq: handler panicked (consume directly)", "group", m.r.cfg.group, "topic", msg.Topic, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	res, err = s.chain(ctx, []*rocketmq.MessageExt{msg})
	return res, err, ""
}

// resetWait bounds how long a reset waits for the dropped queues' running
// handlers (Java sleeps this long unconditionally).
const resetWait = 10 * time.Second

// ResetOffset moves topic's offsets (RESET_CONSUMER_CLIENT_OFFSET, Java
// MQClientInstance.resetOffset): the queues held here that the table
// names are dropped, their pull loops and running handlers waited for
// (at most resetWait, never holding the rebalance lock), the new offsets
// set and persisted, and a rebalance takes the queues again from there.
// Until then the rebalance does not take those queues, and a later reset
// of the same queues hands its offsets to the one waiting (the latest
// wins, as Java's resets run one after the other).
func (m *member) ResetOffset(topic string, offsets map[rocketmq.MessageQueue]int64) {
	r := m.r
	if r.stopping.Load() {
		return
	}
	r.rebMu.Lock()
	var dropped []*queueState
	r.qmu.Lock()
	for mq, off := range offsets {
		if _, ok := r.resetting[mq]; ok && mq.Topic == topic {
			// An earlier reset is waiting for this queue: it stores the
			// latest offset, this one.
			r.resetting[mq] = off
		}
	}
	r.qmu.Unlock()
	for _, mq := range r.heldQueues(topic) {
		off, ok := offsets[mq]
		if !ok {
			continue
		}
		r.qmu.Lock()
		r.resetting[mq] = off
		r.qmu.Unlock()
		if q := r.dropQueue(r.pullCtx, mq, false); q != nil {
			dropped = append(dropped, q)
		}
	}
	r.rebMu.Unlock()
	// finish releases a queue to the rebalance: its offset leaves the
	// store's memory (the rebalance reads it back from the broker) in the
	// same step, so a rebalance cannot take the queue in between.
	finished := make([]bool, len(dropped))
	finish := func(i int) {
		r.qmu.Lock()
		r.store.remove(dropped[i].mq)
		delete(r.resetting, dropped[i].mq)
		r.qmu.Unlock()
		finished[i] = true
	}
	defer func() {
		for i := range dropped {
			if !finished[i] {
				finish(i)
			}
		}
		r.rebalanceSoon()
	}()

	deadline := time.Now().Add(resetWait)
	for _, q := range dropped {
		for {
			if isClosed(q.pullDone) && q.inflight.Load() == 0 {
				break
			}
			if time.Now().After(deadline) {
				r.log.Warn("rocketmq: offset reset: handlers of a dropped queue still running", "group", r.cfg.group, "queue", queueLog(q.mq))
				break
			}
			if !sleep(r.pullCtx, 10*time.Millisecond) {
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.pullCtx, 2*r.cfg.client.RequestTimeout)
	defer cancel()
	for i, q := range dropped {
		// A later reset may hand over a newer offset while this one is
		// being persisted: persist again until it stays the same, then
		// release the queue under the same lock as the last look.
		for stored := int64(-2); ; {
			r.qmu.Lock()
			off := r.resetting[q.mq]
			if off == stored {
				r.store.remove(q.mq)
				delete(r.resetting, q.mq)
				r.qmu.Unlock()
				finished[i] = true
				break
			}
			r.qmu.Unlock()
			r.store.update(q.mq, off, false)
			if err := r.store.persist(ctx, q.mq); err != nil {
				r.log.Warn("rocketmq: persist reset offset", "group", r.cfg.group, "queue", queueLog(q.mq), "err", err)
				finish(i)
				break
			}
			stored = off
		}
	}
	r.log.Info("rocketmq: offsets reset", "group", r.cfg.group, "topic", topic, "queues", len(dropped))
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Offsets returns the in-memory offsets of topic's queues
// (GET_CONSUMER_STATUS_FROM_CLIENT).
func (m *member) Offsets(topic string) map[rocketmq.MessageQueue]int64 {
	return m.r.store.snapshot(topic)
}
