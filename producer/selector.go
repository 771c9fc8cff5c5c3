package producer

import (
	"math/rand/v2"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// QueueSelector picks the queue of one send attempt.
//
// queues are the topic's writable queues in Java's order (never empty);
// lastBroker is the broker of the previous failed attempt of this send, ""
// on the first. For a batch, msg is its first message. Select must be safe
// for concurrent use. A returned queue need not be in queues (ToQueue), but
// its broker must be known from the route.
type QueueSelector interface {
	Select(msg *rocketmq.Message, queues []rocketmq.MessageQueue, lastBroker string) rocketmq.MessageQueue
}

// roundRobin is a marker: the producer rotates over the queues itself,
// per topic, with the fault strategy.
type roundRobin struct{}

func (roundRobin) Select(_ *rocketmq.Message, queues []rocketmq.MessageQueue, lastBroker string) rocketmq.MessageQueue {
	// Only reached when used outside a producer: no rotation state here.
	return randomQueue(queues, lastBroker)
}

// RoundRobin is the default selector: a per-topic rotation over the
// queues that skips the broker of the previous failed attempt and, with
// the latency fault strategy on, brokers that recently failed or were slow
// (Java's MQFaultStrategy, docs/PROTOCOL.md §8.4).
func RoundRobin() QueueSelector { return roundRobin{} }

type random struct{}

func (random) Select(_ *rocketmq.Message, queues []rocketmq.MessageQueue, lastBroker string) rocketmq.MessageQueue {
	return randomQueue(queues, lastBroker)
}

func randomQueue(queues []rocketmq.MessageQueue, lastBroker string) rocketmq.MessageQueue {
	n := len(queues)
	if lastBroker != "" {
		start := rand.IntN(n)
		for i := 0; i < n; i++ {
			if q := queues[(start+i)%n]; q.BrokerName != lastBroker {
				return q
			}
		}
	}
	return queues[rand.IntN(n)]
}

// Random picks a random queue, another broker's on a retry when there is
// one.
func Random() QueueSelector { return random{} }

// ShardingKey is a value hashed the way the Java client hashes the
// argument of SelectMessageQueueByHash, so that Go and Java producers of
// one ordered stream pick the same queue for the same key. Make one with
// StringKey, LongKey or IntKey, matching the Java type of the argument.
type ShardingKey struct{ hash int32 }

// StringKey hashes like java.lang.String.hashCode (over UTF-16 units).
func StringKey(s string) ShardingKey { return ShardingKey{message.JavaHashCode(s)} }

// LongKey hashes like java.lang.Long.hashCode: (int)(v ^ (v >>> 32)).
func LongKey(v int64) ShardingKey { return ShardingKey{int32(uint64(v) ^ uint64(v)>>32)} }

// IntKey hashes like java.lang.Integer.hashCode: the value itself.
func IntKey(v int32) ShardingKey { return ShardingKey{v} }

// HashCode returns the Java hash code of the key.
func (k ShardingKey) HashCode() int32 { return k.hash }

// Index returns the position Java's SelectMessageQueueByHash picks among
// n queues: |hash % n|.
func (k ShardingKey) Index(n int) int {
	v := int(k.hash) % n
	if v < 0 {
		v = -v
	}
	return v
}

type hashSelector struct{ key ShardingKey }

func (h hashSelector) Select(_ *rocketmq.Message, queues []rocketmq.MessageQueue, _ string) rocketmq.MessageQueue {
	// Retries stay on the same queue: moving would break the order.
	return queues[h.key.Index(len(queues))]
}

// Hash returns a selector that always picks queue |hash(key) % n|, the
// same queue as Java's SelectMessageQueueByHash with the same argument.
// Retries stay on that queue.
func Hash(key ShardingKey) QueueSelector { return hashSelector{key} }

type manual struct{ mq rocketmq.MessageQueue }

func (m manual) Select(*rocketmq.Message, []rocketmq.MessageQueue, string) rocketmq.MessageQueue {
	return m.mq
}

// Manual returns a selector that always picks mq (its topic must be the
// message's topic, with or without the namespace). Retries stay on mq.
func Manual(mq rocketmq.MessageQueue) QueueSelector { return manual{mq} }
