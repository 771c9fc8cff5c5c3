package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/go-rocketmq/rocketmq"
)

// Property names the tests put on every message; receivers find the
// message they are looking at through propIdx.
const (
	propIdx  = "e2e_idx"
	propKind = "e2e_kind"
	propRun  = "e2e_run"
)

// Consumer settings: the official client's rebalance ticker (20 s) and
// its other intervals are constants; what brings members together
// quickly is that every Start rebalances at once and our broker sends
// NOTIFY_CONSUMER_IDS_CHANGED to the group's other members.
const (
	assignTimeout  = 30 * time.Second // members of a group settle on their queues
	consumeTimeout = 30 * time.Second // everything sent has been delivered
)

func (e *env) resolver() primitive.NsResolver {
	return primitive.NewPassthroughResolver([]string{e.ns})
}

// officialProducer starts a producer of the official client with its own
// group and client instance; it is shut down when the test ends.
func (e *env) officialProducer(t *testing.T, opts ...producer.Option) rmq.Producer {
	t.Helper()
	p, err := rmq.NewProducer(append([]producer.Option{
		producer.WithNsResolver(e.resolver()),
		producer.WithGroupName(e.name("PG")),
		producer.WithInstanceName(e.name("p")),
		producer.WithRetry(2),
	}, opts...)...)
	if err != nil {
		t.Fatalf("official producer: %v", err)
	}
	startOfficial(t, "official producer", p)
	return p
}

// member is one started push consumer (the official client's, or ours
// in TestMixedGroup).
type member struct {
	name     string
	shutdown func() error
	// assigned returns the member's live queues of the topic with the
	// offset it has committed for each (in memory, else on the broker).
	assigned func() map[primitive.MessageQueue]int64
	once     sync.Once
}

// startOfficial starts an official client and shuts it down at cleanup.
func startOfficial(t *testing.T, what string, c interface {
	Start() error
	Shutdown() error
}) {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatalf("%s start: %v", what, err)
	}
	t.Cleanup(func() {
		if err := c.Shutdown(); err != nil {
			t.Errorf("%s shutdown: %v", what, err)
		}
	})
}

// stop shuts the consumer down (persisting its offsets); idempotent.
func (m *member) stop(t *testing.T) {
	m.once.Do(func() {
		if err := m.shutdown(); err != nil {
			t.Errorf("consumer %s shutdown: %v", m.name, err)
		}
	})
}

// startPush starts a push consumer of the official client in group with a
// fresh instance name (so members of one group are separate clients), from
// the first offset, delivering into s.
func (e *env) startPush(t *testing.T, group, topic string, model consumer.MessageModel, sel consumer.MessageSelector, s *sink) *member {
	t.Helper()
	name := e.name("c")
	pc, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(e.resolver()),
		consumer.WithGroupName(group),
		consumer.WithInstance(name),
		consumer.WithConsumerModel(model),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		t.Fatalf("official consumer: %v", err)
	}
	if err := pc.Subscribe(topic, sel, s.handler(name)); err != nil {
		t.Fatalf("official consumer subscribe: %v", err)
	}
	m := &member{name: name, shutdown: pc.Shutdown}
	m.assigned = func() map[primitive.MessageQueue]int64 {
		out := make(map[primitive.MessageQueue]int64)
		for mq, pq := range pc.GetConsumerRunningInfo(false).MQTable {
			if mq.Topic == topic && !pq.Dropped {
				out[mq] = pq.CommitOffset
			}
		}
		return out
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("official consumer start: %v", err)
	}
	t.Cleanup(func() {
		m.stop(t)
		if model == consumer.BroadCasting {
			removeLocalOffsets(t, group)
		}
	})
	return m
}

// delivery is one message handed to a consumer callback.
type delivery struct {
	member string
	msg    *primitive.MessageExt
}

// sink collects what push consumers deliver.
type sink struct {
	mu  sync.Mutex
	got []delivery
}

func (s *sink) handler(member string) func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		s.mu.Lock()
		for _, m := range msgs {
			s.got = append(s.got, delivery{member: member, msg: m})
		}
		s.mu.Unlock()
		return consumer.ConsumeSuccess, nil
	}
}

func (s *sink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

func (s *sink) snapshot() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.got...)
}

// sent is one message a test sent and what the sender reported for it.
type sent struct {
	idx   int
	kind  string
	tag   string
	keys  []string
	props map[string]string // user properties, propIdx/propKind/propRun included
	body  []byte

	// Filled from the send result; "" / -1 when the sender reports none
	// (oneway).
	msgID       string
	offsetMsgID string
	queue       primitive.MessageQueue
	queueOffset int64
}

// plan is what a test sent, by propIdx.
type plan struct {
	run   string
	topic string
	msgs  []*sent
}

func newPlan(e *env, topic string) *plan { return &plan{run: e.prefix, topic: topic} }

// add registers a message to send: tag, keys, a few user properties
// (some with characters that need no escaping but look like they might)
// and a body of size bytes that zlib cannot shrink much.
func (p *plan) add(kind, tag string, size int) *sent {
	idx := len(p.msgs)
	s := &sent{
		idx:  idx,
		kind: kind,
		tag:  tag,
		keys: []string{fmt.Sprintf("K%d", idx), fmt.Sprintf("order-%d", idx%7)},
		props: map[string]string{
			propIdx:  strconv.Itoa(idx),
			propKind: kind,
			propRun:  p.run,
			"color":  []string{"red", "green", "blue"}[idx%3],
			"expr":   "a=b;c:d, ü ✓",
		},
		body:        makeBody(idx, size),
		queueOffset: -1,
	}
	p.msgs = append(p.msgs, s)
	return s
}

// makeBody returns size pseudo-random bytes, the first ones readable.
func makeBody(seed, size int) []byte {
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, fmt.Sprintf("msg %d;", seed))
	return b
}

// official builds the message for the official producer. It must be a
// fresh value per send: the client writes UNIQ_KEY into it.
func (s *sent) official(topic string) *primitive.Message {
	m := primitive.NewMessage(topic, s.body)
	m.WithTag(s.tag)
	m.WithKeys(s.keys)
	for k, v := range s.props {
		m.WithProperty(k, v)
	}
	return m
}

// find returns the sent message a delivered one stands for.
func (p *plan) find(m *primitive.MessageExt) (*sent, error) {
	if r := m.GetProperty(propRun); r != p.run {
		return nil, fmt.Errorf("message %s of another run %q", m.MsgId, r)
	}
	i, err := strconv.Atoi(m.GetProperty(propIdx))
	if err != nil || i < 0 || i >= len(p.msgs) {
		return nil, fmt.Errorf("message %s has bad %s %q", m.MsgId, propIdx, m.GetProperty(propIdx))
	}
	return p.msgs[i], nil
}

// recordResult checks an official send result for a single message and
// stores what it reported.
func recordResult(t *testing.T, masters map[string]string, s *sent, msg *primitive.Message, res *primitive.SendResult) {
	t.Helper()
	if res.Status != primitive.SendOK {
		t.Errorf("msg %d: status %v", s.idx, res.Status)
	}
	uniq := msg.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex)
	if len(uniq) != 32 || res.MsgID != uniq {
		t.Errorf("msg %d: MsgID %q, message UNIQ_KEY %q (want the same 32 hex digits)", s.idx, res.MsgID, uniq)
	}
	if res.MessageQueue == nil {
		t.Fatalf("msg %d: no queue in %v", s.idx, res)
	}
	checkOffsetMsgID(t, masters, fmt.Sprintf("msg %d", s.idx), res.OffsetMsgID, res.MessageQueue.BrokerName)
	s.msgID, s.offsetMsgID = res.MsgID, res.OffsetMsgID
	s.queue, s.queueOffset = *res.MessageQueue, res.QueueOffset
}

// checkOffsetMsgID checks that id decodes to the master address of
// brokerName and returns the commit-log offset in it.
func checkOffsetMsgID(t *testing.T, masters map[string]string, what, id, brokerName string) int64 {
	t.Helper()
	addr, off, err := rocketmq.DecodeOffsetMsgID(id)
	if err != nil {
		t.Errorf("%s: offsetMsgId %q: %v", what, id, err)
		return -1
	}
	if want := masters[brokerName]; addr.String() != want {
		t.Errorf("%s: offsetMsgId %s names store host %s, broker %s is at %s", what, id, addr, brokerName, want)
	}
	if off < 0 {
		t.Errorf("%s: offsetMsgId %s has commit-log offset %d", what, id, off)
	}
	return off
}

// checkDelivered compares a delivered message with what was sent: topic,
// body, tag, keys, user properties and, where the sender reported them,
// msgId, offsetMsgId, queue and queue offset. The offsetMsgId must name
// the record's store host and commit-log offset.
func checkDelivered(t *testing.T, masters map[string]string, topic string, want *sent, got *primitive.MessageExt) {
	t.Helper()
	what := fmt.Sprintf("msg %d (%s)", want.idx, want.kind)
	if got.Topic != topic {
		t.Errorf("%s: topic %q, want %q", what, got.Topic, topic)
	}
	if !bytes.Equal(got.Body, want.body) {
		t.Errorf("%s: body differs: %s", what, diffBytes(got.Body, want.body))
	}
	if tag := got.GetTags(); tag != want.tag {
		t.Errorf("%s: tag %q, want %q", what, tag, want.tag)
	}
	if keys := got.GetKeys(); keys != strings.Join(want.keys, " ") {
		t.Errorf("%s: keys %q, want %q", what, keys, strings.Join(want.keys, " "))
	}
	for k, v := range want.props {
		if g := got.GetProperty(k); g != v {
			t.Errorf("%s: property %s = %q, want %q", what, k, g, v)
		}
	}
	// The consumer's msgId is the record's UNIQ_KEY, or its offsetMsgId
	// when it has none. Every message a producer gave an id has it; the
	// official producer gives batch elements none (want.msgID is empty),
	// and a 4.9.8 broker stores them without one, while ours adds one.
	uniq := got.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex)
	switch {
	case want.msgID != "":
		if uniq != want.msgID || got.MsgId != uniq {
			t.Errorf("%s: consumer msgId %q, UNIQ_KEY %q, producer reported %s", what, got.MsgId, uniq, want.msgID)
		}
	case uniq != "":
		if len(uniq) != 32 && len(uniq) != 56 || got.MsgId != uniq {
			t.Errorf("%s: consumer msgId %q, UNIQ_KEY %q (want the same 32 or 56 hex digits)", what, got.MsgId, uniq)
		}
	case got.MsgId != got.OffsetMsgId:
		t.Errorf("%s: no UNIQ_KEY, consumer msgId %q, want the offsetMsgId %q", what, got.MsgId, got.OffsetMsgId)
	}
	if want.offsetMsgID != "" && got.OffsetMsgId != want.offsetMsgID {
		t.Errorf("%s: consumer offsetMsgId %s, producer reported %s", what, got.OffsetMsgId, want.offsetMsgID)
	}
	if got.Queue == nil {
		t.Errorf("%s: delivered without its queue", what)
		return
	}
	off := checkOffsetMsgID(t, masters, what, got.OffsetMsgId, got.Queue.BrokerName)
	if off != got.CommitLogOffset {
		t.Errorf("%s: offsetMsgId %s has commit-log offset %d, record says %d", what, got.OffsetMsgId, off, got.CommitLogOffset)
	}
	if got.StoreHost != masters[got.Queue.BrokerName] {
		t.Errorf("%s: store host %s, broker %s is at %s", what, got.StoreHost, got.Queue.BrokerName, masters[got.Queue.BrokerName])
	}
	if want.queueOffset >= 0 {
		if got.Queue.BrokerName != want.queue.BrokerName || got.Queue.QueueId != want.queue.QueueId {
			t.Errorf("%s: consumed from %s/%d, sent to %s/%d", what, got.Queue.BrokerName, got.Queue.QueueId,
				want.queue.BrokerName, want.queue.QueueId)
		}
		if got.QueueOffset != want.queueOffset {
			t.Errorf("%s: consumer queue offset %d, producer reported %d", what, got.QueueOffset, want.queueOffset)
		}
	}
}

// diffBytes describes where two byte strings first differ, with hex dumps.
func diffBytes(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo, hi := max(0, i-16), i+32
	win := func(b []byte) []byte { return b[min(lo, len(b)):min(hi, len(b))] }
	return fmt.Sprintf("len %d, want %d; first difference at %d\ngot:\n%swant:\n%s",
		len(got), len(want), i, hex.Dump(win(got)), hex.Dump(win(want)))
}

// queueKey names a queue in maps keyed across clients.
type queueKey struct {
	broker string
	id     int
}

func (q queueKey) String() string { return fmt.Sprintf("%s/%d", q.broker, q.id) }

// maxOffsets returns, per queue, one past the highest queue offset the
// senders reported: where a consumer that got everything has committed.
func (p *plan) maxOffsets() map[queueKey]int64 {
	out := make(map[queueKey]int64)
	for _, s := range p.msgs {
		if s.queueOffset < 0 {
			continue
		}
		k := queueKey{s.queue.BrokerName, s.queue.QueueId}
		out[k] = max(out[k], s.queueOffset+1)
	}
	return out
}

// committedAll reports whether the members together have committed
// offsets up to want on every queue in want.
func committedAll(want map[queueKey]int64, members ...*member) bool {
	have := make(map[queueKey]int64)
	for _, m := range members {
		for mq, off := range m.assigned() {
			k := queueKey{mq.BrokerName, mq.QueueId}
			have[k] = max(have[k], off)
		}
	}
	for k, w := range want {
		if have[k] < w {
			return false
		}
	}
	return true
}

// describeAssignment prints who holds which queues.
func describeAssignment(members ...*member) string {
	var b strings.Builder
	for _, m := range members {
		var qs []string
		for mq, off := range m.assigned() {
			qs = append(qs, fmt.Sprintf("%s/%d@%d", mq.BrokerName, mq.QueueId, off))
		}
		sort.Strings(qs)
		fmt.Fprintf(&b, "%s: %v; ", m.name, qs)
	}
	return b.String()
}
