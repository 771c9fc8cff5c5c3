package e2e

import (
	"fmt"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq/internal/testutil"
)

// TestOfficialOrderlyPush runs the official client's orderly push
// consumer, which pulls a queue only after the broker granted it the
// queue's lock (LOCK_BATCH_MQ): it must get every one of 200 messages
// sent with the hash-by-sharding-key selector, each key's messages in
// the order they were sent, each once. The consumer runs in a process of its own (see officialChildFlag): it has
// data races of its own, which would fail a -race run of this process.
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
	l := newCallLog(e.prefix)
	m := e.startOfficialOrderly(t, group, topic, e.name("O"), l)

	s := &orderlySender{
		e: e, topic: topic, queue: make(map[string]int),
		p: e.officialProducer(t, producer.WithQueueSelector(producer.NewHashQueueSelector())),
	}
	for k := 0; k < keys; k++ {
		s.keys = append(s.keys, fmt.Sprintf("key-%d", k))
	}
	if err := s.send(perKey, 0); err != nil {
		t.Fatal(err)
	}
	if !testutil.Poll(consumeTimeout, func() bool { return l.covered(s.keys, perKey) }) {
		t.Fatalf("orderly consumer missed %d of %d messages", l.missing(s.keys, perKey), keys*perKey)
	}
	m.stop(t)
	calls := l.snapshot()
	r := reviewOrderlyCalls(calls, s.keys, perKey, s.queue)
	for _, p := range r.problems {
		t.Error(p)
	}
	n := 0
	for _, c := range calls {
		n += len(c.msgs)
	}
	if n != keys*perKey {
		t.Errorf("orderly consumer got %d deliveries, want %d", n, keys*perKey)
	}
	if r.officialSelf > 0 {
		t.Logf("%d handler calls overlapped another on the same queue", r.officialSelf)
	}
}
