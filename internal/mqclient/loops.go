package mqclient

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// TriggerHeartbeat asks the heartbeat loop to send one now.
func (c *Client) TriggerHeartbeat() {
	select {
	case c.hbNow <- struct{}{}:
	default:
	}
}

func (c *Client) routeLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.PollNameServerInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.refreshTopics(c.topicsInUse())
		case <-c.refreshNow:
			c.mu.Lock()
			topics := make([]string, 0, len(c.pending))
			for tp := range c.pending {
				topics = append(topics, tp)
			}
			clear(c.pending)
			c.mu.Unlock()
			c.refreshTopics(topics)
		}
	}
}

func (c *Client) refreshTopics(topics []string) {
	sort.Strings(topics)
	for _, tp := range topics {
		select {
		case <-c.stop:
			return
		default:
		}
		r, err := c.FetchRoute(c.ctx, tp)
		if err != nil {
			// Keep the old route (Java keeps it too): a NameServer hiccup
			// must not take every queue away.
			c.log.Debug("rocketmq: route refresh failed", "topic", tp, "err", err)
			continue
		}
		c.storeRoute(tp, r, false)
	}
}

func (c *Client) heartbeatLoop() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		case <-c.hbNow:
		}
		_ = c.SendHeartbeat(c.ctx)
	}
}

// HeartbeatData returns the body this client sends in heartbeats. The
// consumers' data is asked for after the registry lock is released.
func (c *Client) HeartbeatData() *remoting.HeartbeatData {
	hb := &remoting.HeartbeatData{ClientID: c.id}
	m := c.snapshot()
	if len(m.producers) > 0 {
		hb.ProducerDataSet = append(hb.ProducerDataSet, remoting.ProducerData{GroupName: rocketmq.GroupClientInnerProducer})
		for _, g := range m.producers {
			hb.ProducerDataSet = append(hb.ProducerDataSet, remoting.ProducerData{GroupName: g})
		}
	}
	for _, nc := range m.consumers {
		hb.ConsumerDataSet = append(hb.ConsumerDataSet, nc.c.ConsumerData())
	}
	return hb
}

// SendHeartbeat sends HEART_BEAT to every master of every cached route,
// and to slaves as well when consumers are registered, in parallel. It
// records each broker's version and returns the joined errors.
func (c *Client) SendHeartbeat(ctx context.Context) error {
	hb := c.HeartbeatData()
	if len(hb.ProducerDataSet) == 0 && len(hb.ConsumerDataSet) == 0 {
		return nil
	}
	body := hb.AppendJSON(nil, remoting.JSONFastjson)
	withSlaves := len(hb.ConsumerDataSet) > 0
	c.mu.RLock()
	var addrs []string
	for _, m := range c.brokers {
		for id, a := range m {
			if id == remoting.MasterID || withSlaves {
				addrs = append(addrs, a)
			}
		}
	}
	c.mu.RUnlock()
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
	)
	for _, addr := range addrs {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			resp, err := c.tr.InvokeTimeout(ctx, addr, remoting.NewRequest(remoting.HeartBeat, nil, body), c.cfg.RequestTimeout)
			if err == nil {
				err = remoting.ResponseError(resp)
			}
			if err != nil {
				c.log.Debug("rocketmq: heartbeat failed", "addr", addr, "err", err)
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
				return
			}
			c.mu.Lock()
			c.versions[addr] = resp.Version
			c.mu.Unlock()
		}(addr)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Client) unregister(ctx context.Context, h *remoting.UnregisterClientRequestHeader) {
	addrs := c.BrokerAddrs()
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			resp, err := c.tr.InvokeTimeout(ctx, addr, remoting.NewRequest(remoting.UnregisterClient, h.AppendExt(nil), nil), c.cfg.RequestTimeout)
			if err == nil {
				err = remoting.ResponseError(resp)
			}
			if err != nil {
				c.log.Debug("rocketmq: unregister failed", "addr", addr, "err", err)
			}
		}(addr)
	}
	wg.Wait()
}
