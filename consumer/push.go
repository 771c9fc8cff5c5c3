package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/internal/mqclient"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// PushConsumer receives the messages of its subscriptions and hands them
// to their handlers (Java DefaultMQPushConsumer). Create it with NewPush,
// Subscribe (concurrent consumption) or SubscribeOrderly (orderly
// consumption), then Start. A consumer is one or the other: its first
// subscription decides, as a Java consumer has one listener.
type PushConsumer struct {
	cfg       config
	log       *slog.Logger
	wireGroup string // the group in the namespace, as brokers see it

	subMu sync.RWMutex
	subs  map[string]*subscription // by wire topic, the retry topic included
	kind  consumeKind              // set by the first subscription

	lifeMu sync.Mutex
	state  int
	run    *runState
	done   chan struct{} // closed when Shutdown has finished
}

const (
	stateNew = iota
	stateRunning
	stateClosing
	stateClosed
)

// consumeKind is whether a consumer consumes concurrently or orderly.
type consumeKind int

const (
	kindUnset consumeKind = iota
	kindConcurrent
	kindOrderly
)

// subscription is one subscribed topic.
type subscription struct {
	topic     string // the user's topic
	wireTopic string
	sel       Selector
	handler   Handler        // nil for the retry topic: its messages go to their original topic's handler
	orderly   OrderlyHandler // the user's handler of an orderly consumer; handler then adapts it
	chain     Handler        // handler inside the interceptors
	data      remoting.SubscriptionData
	filter    message.Subscription // TAG selectors: the client-side re-check
}

// NewPush checks the options and returns a consumer that is not started.
func NewPush(opts ...Option) (*PushConsumer, error) {
	cfg, err := newConfig(opts...)
	if err != nil {
		return nil, err
	}
	log := cfg.client.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		cfg.client.Logger = log
	}
	c := &PushConsumer{
		cfg:       cfg,
		log:       log,
		wireGroup: mqclient.WrapNamespace(cfg.client.Namespace, cfg.group),
		subs:      map[string]*subscription{},
		done:      make(chan struct{}),
	}
	if cfg.model == Clustering {
		// Java copySubscription: a clustering consumer subscribes to its
		// group's retry topic itself.
		rt := mqclient.RetryTopicOf(cfg.client.Namespace, cfg.group)
		c.subs[rt] = newSubscription(rt, rt, All, nil)
	}
	return c, nil
}

func newSubscription(topic, wireTopic string, sel Selector, h Handler) *subscription {
	s := &subscription{topic: topic, wireTopic: wireTopic, sel: sel, handler: h}
	s.data = remoting.SubscriptionData{
		Topic:          wireTopic,
		SubString:      sel.Expression,
		SubVersion:     time.Now().UnixMilli(),
		ExpressionType: sel.Type,
	}
	if sel.Type == SelectorTag {
		s.filter = message.BuildSubscription(sel.Expression)
		s.data.SubString = s.filter.Expression
		s.data.TagsSet = s.filter.Tags
		s.data.CodeSet = s.filter.Codes
	}
	return s
}

// Subscribe adds topic with selector sel and its handler. It may be
// called before or after Start; a topic subscribed twice keeps the last
// selector and handler.
func (c *PushConsumer) Subscribe(topic string, sel Selector, h Handler) error {
	if h == nil {
		return fmt.Errorf("rocketmq: subscribe %s: nil handler", topic)
	}
	return c.subscribe(topic, sel, h, nil)
}

// SubscribeOrderly adds topic with selector sel and its orderly handler:
// each queue's messages are consumed one batch at a time in offset order
// (see OrderlyHandler). It may be called before or after Start on a
// consumer whose subscriptions are orderly; a topic subscribed twice
// keeps the last selector and handler.
func (c *PushConsumer) SubscribeOrderly(topic string, sel Selector, h OrderlyHandler) error {
	if h == nil {
		return fmt.Errorf("rocketmq: subscribe %s: nil handler", topic)
	}
	return c.subscribe(topic, sel, adaptOrderly(h), h)
}

// adaptOrderly lets an orderly handler run inside the interceptor chain:
// OrderlySuccess is Success, anything else RetryLater.
func adaptOrderly(h OrderlyHandler) Handler {
	return func(ctx context.Context, msgs []*rocketmq.MessageExt) (Result, error) {
		res, err := h(ctx, msgs)
		if res == OrderlySuccess {
			return Success, err
		}
		return RetryLater, err
	}
}

func (c *PushConsumer) subscribe(topic string, sel Selector, h Handler, oh OrderlyHandler) error {
	if err := rocketmq.ValidateTopic(topic); err != nil {
		return fmt.Errorf("rocketmq: subscribe: %w", err)
	}
	switch sel.Type {
	case "":
		sel.Type = SelectorTag
	case SelectorTag, SelectorSQL92:
	default:
		return fmt.Errorf("rocketmq: subscribe %s: selector type %q: want TAG or SQL92", topic, sel.Type)
	}
	if sel.Type == SelectorSQL92 && strings.TrimSpace(sel.Expression) == "" {
		return fmt.Errorf("rocketmq: subscribe %s: empty SQL92 expression", topic)
	}
	wt := mqclient.WrapNamespace(c.cfg.client.Namespace, topic)
	if wt == mqclient.RetryTopicOf(c.cfg.client.Namespace, c.cfg.group) {
		return fmt.Errorf("rocketmq: subscribe %s: the group's retry topic is subscribed by the consumer itself", topic)
	}
	s := newSubscription(topic, wt, sel, h)
	s.orderly = oh
	s.chain = chainOf(h, c.cfg.interceptors)
	kind := kindConcurrent
	if oh != nil {
		kind = kindOrderly
	}
	c.subMu.Lock()
	if c.kind != kindUnset && c.kind != kind {
		c.subMu.Unlock()
		if kind == kindOrderly {
			return fmt.Errorf("rocketmq: subscribe %s: consumer %s consumes concurrently: an orderly handler needs a consumer of its own", topic, c.cfg.group)
		}
		return fmt.Errorf("rocketmq: subscribe %s: consumer %s consumes orderly: use SubscribeOrderly or a consumer of its own", topic, c.cfg.group)
	}
	c.kind = kind
	c.subs[wt] = s
	c.subMu.Unlock()
	c.subscriptionsChanged(wt)
	return nil
}

// Unsubscribe removes topic: its queues stop being pulled and their
// offsets are persisted.
func (c *PushConsumer) Unsubscribe(topic string) error {
	wt := mqclient.WrapNamespace(c.cfg.client.Namespace, topic)
	c.subMu.Lock()
	s := c.subs[wt]
	if s == nil || s.handler == nil {
		c.subMu.Unlock()
		return fmt.Errorf("rocketmq: unsubscribe %s: not subscribed", topic)
	}
	delete(c.subs, wt)
	c.subMu.Unlock()
	c.subscriptionsChanged("")
	return nil
}

// subscriptionsChanged tells a running consumer: the new topic's route is
// fetched, the brokers hear of it and the queues are rebalanced.
func (c *PushConsumer) subscriptionsChanged(topic string) {
	c.lifeMu.Lock()
	r := c.run
	running := c.state == stateRunning
	c.lifeMu.Unlock()
	if !running {
		return
	}
	if topic != "" {
		r.cli.TriggerRouteRefresh(topic)
	}
	r.cli.TriggerHeartbeat()
	r.rebalanceSoon()
}

func (c *PushConsumer) subscription(wireTopic string) *subscription {
	c.subMu.RLock()
	defer c.subMu.RUnlock()
	return c.subs[wireTopic]
}

// subscriptionList returns the subscriptions sorted by wire topic.
func (c *PushConsumer) subscriptionList() []*subscription {
	c.subMu.RLock()
	out := make([]*subscription, 0, len(c.subs))
	for _, s := range c.subs {
		out = append(out, s)
	}
	c.subMu.RUnlock()
	slices.SortFunc(out, func(a, b *subscription) int { return strings.Compare(a.wireTopic, b.wireTopic) })
	return out
}

// handlerFor returns the subscription whose handler takes a message of
// wireTopic: for the retry topic, the one of the message's original topic.
func (c *PushConsumer) handlerFor(originWireTopic string) *subscription {
	s := c.subscription(originWireTopic)
	if s == nil || s.handler == nil {
		return nil
	}
	return s
}

// Start connects to the NameServers, registers the group with the brokers
// and starts consuming. ctx bounds the first route lookups and heartbeat.
func (c *PushConsumer) Start(ctx context.Context) error {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	switch c.state {
	case stateRunning:
		return ErrAlreadyStarted
	case stateClosing, stateClosed:
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, ErrClosed)
	}
	r, err := c.newRunState()
	if err != nil {
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, err)
	}
	c.startTrace(ctx, r) // before the workers, which read r.trace
	if err := r.start(ctx); err != nil {
		r.abort()
		_ = r.trace.close(ctx)
		return fmt.Errorf("rocketmq: start consumer %s: %w", c.cfg.group, err)
	}
	c.run = r
	c.state = stateRunning
	c.log.Info("rocketmq: consumer started", "group", c.cfg.group, "client", r.cli.ClientID(), "model", c.cfg.model.String())
	return nil
}

// Shutdown stops pulling, waits within ctx for the handlers running now
// to return, persists the offsets of what was consumed, unlocks the
// queues of an orderly consumer, unregisters from the brokers and waits
// for every goroutine of the consumer. It may be
// called from a handler. Messages pulled but not consumed are delivered
// again to whoever takes their queues.
//
// Messages already pulled are still handed to the handlers while ctx
// allows. When ctx ends first, what is left is dropped (not
// acknowledged), the handlers' contexts are cancelled, and Shutdown
// returns ctx's error after a short grace; a handler that ignores its
// cancelled ctx is not waited for and its result is dropped; an orderly
// handler's queue then stays locked until the broker lets the lock
// expire (Java brokers: 60 s), so that no other member consumes it while
// that call still runs (likewise the queue of an orderly handler calling
// Shutdown). A second call waits for the first.
func (c *PushConsumer) Shutdown(ctx context.Context) error {
	c.lifeMu.Lock()
	switch c.state {
	case stateNew:
		c.lifeMu.Unlock()
		return ErrNotStarted
	case stateClosing, stateClosed:
		c.lifeMu.Unlock()
		r := c.run
		if r != nil && r.workers.Detach() {
			// A handler calling Shutdown again while the first waits for
			// it: waiting here would wait for ourselves.
			return nil
		}
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.state = stateClosing
	r := c.run
	c.lifeMu.Unlock()

	err := r.shutdown(ctx)
	// After the handlers: their records are queued.
	if terr := r.trace.close(ctx); terr != nil && err == nil {
		err = terr
	}

	c.lifeMu.Lock()
	c.state = stateClosed
	c.lifeMu.Unlock()
	close(c.done)
	c.log.Info("rocketmq: consumer shut down", "group", c.cfg.group)
	return err
}

// Stats returns the consume statistics per subscribed topic.
func (c *PushConsumer) Stats() []Stats {
	c.lifeMu.Lock()
	r := c.run
	c.lifeMu.Unlock()
	var out []Stats
	for _, s := range c.subscriptionList() {
		if s.handler == nil {
			continue
		}
		st := Stats{Topic: s.topic}
		if r != nil {
			r.stats.fill(s.wireTopic, &st)
		}
		out = append(out, st)
	}
	return out
}

// orderly reports whether the consumer's subscriptions are orderly.
func (c *PushConsumer) orderly() bool {
	c.subMu.RLock()
	defer c.subMu.RUnlock()
	return c.kind == kindOrderly
}

// concurrent reports whether the consumer's subscriptions are concurrent.
func (c *PushConsumer) concurrent() bool {
	c.subMu.RLock()
	defer c.subMu.RUnlock()
	return c.kind == kindConcurrent
}

// maxReconsume is the max reconsume times in effect: the option, or for
// -1 Java's defaults, 16 (concurrent) and unlimited (orderly, Java
// Integer.MAX_VALUE).
func (c *PushConsumer) maxReconsume() int {
	switch {
	case c.cfg.maxReconsumeTimes != -1:
		return c.cfg.maxReconsumeTimes
	case c.orderly():
		return math.MaxInt32
	}
	return 16
}

// Group returns the consumer group, without the namespace.
func (c *PushConsumer) Group() string { return c.cfg.group }

// Assigned returns the queues this consumer pulls from now, topics
// without the namespace, in Java's queue order. In clustering mode they
// include the queues of the group's retry topic (%RETRY%group), which the
// consumer subscribes to itself.
func (c *PushConsumer) Assigned() []rocketmq.MessageQueue {
	c.lifeMu.Lock()
	r := c.run
	running := c.state == stateRunning
	c.lifeMu.Unlock()
	if !running {
		return nil
	}
	mqs := r.heldQueues("")
	for i := range mqs {
		mqs[i].Topic = mqclient.UnwrapNamespace(c.cfg.client.Namespace, mqs[i].Topic)
	}
	slices.SortFunc(mqs, compareQueues)
	return mqs
}

func compareQueues(a, b rocketmq.MessageQueue) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	if c := strings.Compare(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return a.QueueID - b.QueueID
}
