package mqclient

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// BrokerResult is a broker address found for a broker name.
type BrokerResult struct {
	Addr  string
	ID    int64
	Slave bool // ID is not the master's
}

// FindBroker returns the address of broker id of brokerName, as Java's
// findBrokerAddressInSubscribe does: the exact id; for a slave id without
// an address, the next id; else, unless onlyThisBroker, any replica of the
// broker (the lowest id, the master when there is one). ok is false when
// no route names the broker.
func (c *Client) FindBroker(brokerName string, id int64, onlyThisBroker bool) (BrokerResult, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := c.brokers[brokerName]
	if a := m[id]; a != "" {
		return BrokerResult{Addr: a, ID: id, Slave: id != remoting.MasterID}, true
	}
	if id != remoting.MasterID {
		if a := m[id+1]; a != "" {
			return BrokerResult{Addr: a, ID: id + 1, Slave: true}, true
		}
	}
	if onlyThisBroker || len(m) == 0 {
		return BrokerResult{}, false
	}
	ids := make([]int64, 0, len(m))
	for i, a := range m {
		if a != "" {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return BrokerResult{}, false
	}
	low := slices.Min(ids)
	return BrokerResult{Addr: m[low], ID: low, Slave: low != remoting.MasterID}, true
}

// ConsumerIDs asks the broker at addr for the client ids of the consumers
// of group it knows (GET_CONSUMER_LIST_BY_GROUP, docs/PROTOCOL.md §3.12).
// A broker that knows none answers SYSTEM_ERROR, returned as a
// *remoting.Error.
func (c *Client) ConsumerIDs(ctx context.Context, addr, group string) ([]string, error) {
	h := remoting.GetConsumerListByGroupRequestHeader{ConsumerGroup: group}
	resp, err := c.Invoke(ctx, addr, remoting.NewRequest(remoting.GetConsumerListByGroup, h.AppendExt(nil), nil), 0)
	if err != nil {
		return nil, Errorf("consumers of group %s: %w", group, err)
	}
	if err := remoting.ResponseError(resp); err != nil {
		return nil, Errorf("consumers of group %s at %s: %w", group, addr, err)
	}
	var body remoting.ConsumerListByGroupBody
	if err := body.DecodeJSON(resp.Body); err != nil {
		return nil, Errorf("consumers of group %s at %s: %w", group, addr, err)
	}
	return body.ConsumerIDList, nil
}

// FindConsumerIDs asks a broker of topic's route for the consumers of
// group (Java findConsumerIdList): a random broker of the route, its
// master when it has one.
func (c *Client) FindConsumerIDs(ctx context.Context, topic, group string) ([]string, error) {
	r, err := c.Route(ctx, topic)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, bd := range r.BrokerDatas {
		if a := bd.MasterAddr(); a != "" {
			addrs = append(addrs, a)
		} else {
			for _, a := range bd.BrokerAddrs {
				addrs = append(addrs, a)
				break
			}
		}
	}
	if len(addrs) == 0 {
		return nil, Errorf("%w %q: no broker", ErrNoRoute, topic)
	}
	return c.ConsumerIDs(ctx, addrs[rand.IntN(len(addrs))], group)
}
