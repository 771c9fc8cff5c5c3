//go:build !race

// The official client's orderly consumer reads a queue's message tree
// without its lock (processQueue.takeMessages against the pull that
// fills it), which the race detector reports; orderly_race_test.go skips.

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestOfficialOrderlyPush runs the official client's orderly push
// consumer, which pulls a queue only after the broker granted it the
// queue's lock (LOCK_BATCH_MQ): it must get every one of 200 messages
// sent with the hash-by-sharding-key selector, each key's messages in
// the order they were sent.
func TestOfficialOrderlyPush(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	const (
		queues = 8
		keys   = 8
		perKey = 25
	)
	topic, _ := e.newTopic(t, queues)
	group := e.name("G")

	var (
		mu   sync.Mutex
		seen = make(map[string][]int) // key → sequence numbers in delivery order
		n    int
	)
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName(group),
		consumer.WithInstance(e.name("c")),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumerOrder(true),
	)
	if err != nil {
		t.Fatalf("official orderly consumer: %v", err)
	}
	err = pc.Subscribe(topic, selectAll, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if m.GetProperty(propRun) != e.prefix {
				continue
			}
			seq, _ := strconv.Atoi(m.GetProperty(propIdx))
			key := m.GetShardingKey()
			seen[key] = append(seen[key], seq)
			n++
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatalf("official orderly consumer subscribe: %v", err)
	}
	startOfficial(t, "official orderly consumer", pc)

	p := e.officialProducer(t, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queueOf := make(map[string]int)
	for i := 0; i < perKey; i++ {
		for k := 0; k < keys; k++ {
			key := fmt.Sprintf("key-%d", k)
			msg := primitive.NewMessage(topic, []byte(key+"/"+strconv.Itoa(i)))
			msg.WithShardingKey(key)
			msg.WithProperty(propRun, e.prefix)
			msg.WithProperty(propIdx, strconv.Itoa(i))
			res, err := p.SendSync(ctx, msg)
			if err != nil || res.Status != primitive.SendOK {
				t.Fatalf("send %s/%d: %v %v", key, i, res, err)
			}
			if q, ok := queueOf[key]; ok && q != res.MessageQueue.QueueId {
				t.Fatalf("key %s went to queues %d and %d: the selector does not hash", key, q, res.MessageQueue.QueueId)
			}
			queueOf[key] = res.MessageQueue.QueueId
		}
	}

	total := keys * perKey
	if !testutil.Poll(consumeTimeout, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return n >= total
	}) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("orderly consumer got %d of %d messages", n, total)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != total {
		t.Errorf("orderly consumer got %d deliveries, want %d", n, total)
	}
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("key-%d", k)
		got := seen[key]
		want := make([]int, perKey)
		for i := range want {
			want[i] = i
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("key %s delivered as %s, want 0..%d in order", key, strings.Trim(fmt.Sprint(got), "[]"), perKey-1)
		}
	}

}
