package mqclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// FetchRoute asks the NameServers for the route of topic, bypassing the
// cache. A topic unknown to the NameServer gives an error matching
// rocketmq.ErrNoRoute and remoting.ErrTopicNotExist; an address that
// answers but is not a NameServer one matching rocketmq.ErrNotNameServer.
func (c *Client) FetchRoute(ctx context.Context, topic string) (*remoting.TopicRouteData, error) {
	h := remoting.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: remoting.Ptr(true)}
	resp, addr, err := c.invokeNameServer(ctx, func() *remoting.Command {
		return remoting.NewRequest(remoting.GetRouteInfoByTopic, h.AppendExt(nil), nil)
	})
	if err != nil {
		return nil, Errorf("no route for topic %q: %w", topic, err)
	}
	if err := remoting.ResponseError(resp); err != nil {
		return nil, routeError(topic, addr, err.(*remoting.Error))
	}
	r := new(remoting.TopicRouteData)
	if err := r.DecodeJSON(resp.Body); err != nil {
		return nil, Errorf("route of %q from %s: %w", topic, addr, err)
	}
	return r, nil
}

// routeError explains a failed GET_ROUTEINFO_BY_TOPIC in the user's terms.
func routeError(topic, addr string, re *remoting.Error) error {
	switch re.Code {
	case remoting.TopicNotExist:
		return &textError{
			text: fmt.Sprintf("rocketmq: topic %q does not exist: NameServer %s has no route for it", topic, addr),
			errs: []error{rocketmq.ErrNoRoute, re},
		}
	case remoting.RequestCodeNotSupported:
		// Every NameServer serves code 105; brokers answer it so.
		return NotNameServer(addr, re)
	}
	return Errorf("no route for topic %q: NameServer %s answered %w", topic, addr, re)
}

// NotNameServer is the error for a NameServer address whose server
// answered re (REQUEST_CODE_NOT_SUPPORTED) to a request every NameServer
// serves: a broker, most likely. It matches rocketmq.ErrNotNameServer
// and re.
func NotNameServer(addr string, re *remoting.Error) error {
	return &textError{
		text: fmt.Sprintf("rocketmq: %s is not a NameServer (it looks like a broker: it does not serve route lookups); check the NameServer address, 9876 by default", addr),
		errs: []error{rocketmq.ErrNotNameServer, re},
	}
}

// Route returns the cached route of topic, fetching it on a miss.
func (c *Client) Route(ctx context.Context, topic string) (*remoting.TopicRouteData, error) {
	c.mu.RLock()
	e := c.routes[topic]
	c.mu.RUnlock()
	if e != nil && e.route != nil && (e.pub == nil || !e.pub.FromDefault) {
		return e.route, nil
	}
	if err := c.load(ctx, topic, "", 0); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.routes[topic]; e != nil && e.route != nil {
		return e.route, nil
	}
	return nil, Errorf("%w %q", ErrNoRoute, topic)
}

// SubscribeQueues returns the readable queues of topic (route cached or
// fetched).
func (c *Client) SubscribeQueues(ctx context.Context, topic string) ([]rocketmq.MessageQueue, error) {
	if _, err := c.Route(ctx, topic); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.routes[topic].subs, nil
}

// PublishInfo returns the publish queues of topic from the cache, fetching
// the route on a miss. When the topic has no route and createTopicKey is
// set, the queues come from the template topic's route with
// min(defaultQueueNums, its read queues) queues per broker, so that the
// first send makes a broker create the topic (docs/PROTOCOL.md §8.3).
func (c *Client) PublishInfo(ctx context.Context, topic, createTopicKey string, defaultQueueNums int) (*PublishInfo, error) {
	c.mu.RLock()
	e := c.routes[topic]
	c.mu.RUnlock()
	if e != nil && e.pub != nil && len(e.pub.Queues) > 0 {
		return e.pub, nil
	}
	if err := c.load(ctx, topic, createTopicKey, defaultQueueNums); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.routes[topic]; e != nil && e.pub != nil && len(e.pub.Queues) > 0 {
		return e.pub, nil
	}
	return nil, Errorf("%w %q: no writable queue", ErrNoRoute, topic)
}

// load fetches the route of topic once for every concurrent caller.
func (c *Client) load(ctx context.Context, topic, createTopicKey string, defaultQueueNums int) error {
	key := topic + "\x00" + createTopicKey
	c.mu.Lock()
	f := c.flights[key]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		c.flights[key] = f
		c.mu.Unlock()
		f.err = c.updateRoute(ctx, topic, createTopicKey, defaultQueueNums)
		c.mu.Lock()
		delete(c.flights, key)
		c.mu.Unlock()
		close(f.done)
		return f.err
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// UpdateRoute fetches the route of topic now and stores it.
func (c *Client) UpdateRoute(ctx context.Context, topic string) error {
	return c.updateRoute(ctx, topic, "", 0)
}

func (c *Client) updateRoute(ctx context.Context, topic, createTopicKey string, defaultQueueNums int) error {
	r, err := c.FetchRoute(ctx, topic)
	if err == nil {
		pub, _ := PublishQueues(topic, r)
		if len(pub) > 0 || createTopicKey == "" {
			c.storeRoute(topic, r, false)
			return nil
		}
	}
	if createTopicKey == "" || (err != nil && !errors.Is(err, remoting.ErrTopicNotExist)) {
		return err
	}
	def, derr := c.FetchRoute(ctx, createTopicKey)
	if derr != nil {
		if err == nil {
			return Errorf("%w %q: no writable queue (%w)", ErrNoRoute, topic, derr)
		}
		if errors.Is(derr, remoting.ErrTopicNotExist) {
			// No template topic: the brokers do not create topics on
			// their own (autoCreateTopicEnable=false). Say it about the
			// user's topic only.
			return err
		}
		return Errorf("%w (%w)", err, derr)
	}
	c.storeRoute(topic, cloneFromDefault(def, defaultQueueNums), true)
	return nil
}

// storeRoute caches a route, rebuilds the broker table when it changed and
// tells consumers about new subscribe queues. A route derived from the
// template never replaces a real one.
func (c *Client) storeRoute(topic string, r *remoting.TopicRouteData, fromDefault bool) {
	c.mu.Lock()
	old := c.routes[topic]
	if fromDefault && old != nil && old.pub != nil && !old.pub.FromDefault && len(old.pub.Queues) > 0 {
		c.mu.Unlock()
		return
	}
	if old != nil && !fromDefault && old.pub != nil && !old.pub.FromDefault && routeEqual(old.route, r) {
		c.mu.Unlock()
		return
	}
	pq, ordered := PublishQueues(topic, r)
	e := &topicRoute{
		route: r,
		pub:   &PublishInfo{Topic: topic, Ordered: ordered, Queues: pq, FromDefault: fromDefault, Route: r},
		subs:  SubscribeQueues(topic, r),
	}
	c.routes[topic] = e
	newAddr := c.rebuildBrokersLocked()
	subsChanged := old == nil || !slices.Equal(old.subs, e.subs)
	c.mu.Unlock()

	c.log.Debug("rocketmq: route updated", "topic", topic, "queues", len(pq), "template", fromDefault)
	if newAddr {
		c.TriggerHeartbeat()
	}
	if subsChanged && !fromDefault {
		for _, nc := range c.snapshot().consumers {
			nc.c.SubscribeQueuesChanged(topic, e.subs)
		}
	}
}

// rebuildBrokersLocked recomputes the broker address table from every cached
// route, which also drops brokers no route names any more (Java
// cleanOfflineBroker). It reports whether an address appeared.
func (c *Client) rebuildBrokersLocked() bool {
	nb := make(map[string]map[int64]string, len(c.brokers))
	added := false
	for _, e := range c.routes {
		for _, bd := range e.route.BrokerDatas {
			m := nb[bd.BrokerName]
			if m == nil {
				m = make(map[int64]string, len(bd.BrokerAddrs))
				nb[bd.BrokerName] = m
			}
			maps.Copy(m, bd.BrokerAddrs)
			for id, addr := range bd.BrokerAddrs {
				if c.brokers[bd.BrokerName][id] != addr {
					added = true
				}
			}
		}
	}
	c.brokers = nb
	return added
}

// BrokerAddr returns the master address of a broker name.
func (c *Client) BrokerAddr(brokerName string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.brokers[brokerName][remoting.MasterID]
	return a, ok && a != ""
}

// BrokerAddrs returns every known broker address (all replicas).
func (c *Client) BrokerAddrs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, m := range c.brokers {
		for _, a := range m {
			out = append(out, a)
		}
	}
	return out
}

// BrokerVersion returns the version a broker reported in its last
// heartbeat reply.
func (c *Client) BrokerVersion(addr string) (int32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.versions[addr]
	return v, ok
}

// TriggerRouteRefresh asks the poller to refresh topic soon (after a send
// error, say) without waiting for it.
func (c *Client) TriggerRouteRefresh(topic string) {
	c.mu.Lock()
	c.pending[topic] = struct{}{}
	c.mu.Unlock()
	select {
	case c.refreshNow <- struct{}{}:
	default:
	}
}

// topicsInUse lists the cached topics and the consumers' subscriptions.
func (c *Client) topicsInUse() []string {
	c.mu.RLock()
	set := make(map[string]struct{}, len(c.routes))
	for t := range c.routes {
		set[t] = struct{}{}
	}
	c.mu.RUnlock()
	for _, nc := range c.snapshot().consumers {
		for _, s := range nc.c.ConsumerData().SubscriptionDataSet {
			set[s.Topic] = struct{}{}
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	return out
}
